#!/bin/sh
# Starts the JVM as PID 1 (exec), with the flags every run gets; JAVA_OPTS
# (default -XX:+UseG1GC, set in the Dockerfile) is the knob and comes last so
# it can override them. Everything written goes to /tmp (the root is read-only):
#   JFR     a continuous recording named "loadlab" in /tmp/jfr, dumped on demand:
#           jcmd 1 JFR.dump name=loadlab filename=/tmp/loadlab.jfr
#           Settings $JFR ("profile" unless set; "default" or "off" measure what
#           the recorder costs), except jdk.ThreadStart/ThreadEnd: with a platform
#           thread per request they fire (with a stack trace) on every request,
#           while their virtual-thread twins are off by default; off for both.
#   GC log  unified logging of gc* and safepoint to /tmp/gc.log
set -eu
set -f  # JAVA_OPTS is split on white space below, never glob-expanded
case "${JFR:-profile}" in
    off) recording="" ;;
    default|profile) recording="-XX:StartFlightRecording=name=loadlab,settings=${JFR:-profile},jdk.ThreadStart#enabled=false,jdk.ThreadEnd#enabled=false,disk=true,maxsize=64m,dumponexit=false -XX:FlightRecorderOptions=repository=/tmp/jfr" ;;
    *) echo "JFR must be profile, default or off, not '$JFR'" >&2; exit 2 ;;
esac
exec java \
    $recording \
    -Xlog:gc*,safepoint:file=/tmp/gc.log:uptime,level,tags \
    -XX:+ExitOnOutOfMemoryError \
    -Djava.io.tmpdir=/tmp \
    -Dsun.net.httpserver.nodelay=true \
    -Dsun.net.httpserver.maxIdleConnections=65536 \
    -Dsun.net.httpserver.maxReqTime=10 \
    ${JAVA_OPTS:-} \
    -cp /opt/java-threads/java-threads.jar loadlab.Server "$@"
