"""The load generators' command lines and output formats.

`wrk` is the closed loop (a fixed number of connections); `openloop`, the
project's own generator (servers/loadgen/openloop), is the open loop (a
constant or Poisson schedule, latency from each request's intended send
time); `vegeta`, the open loop before it, stays selectable and reads the runs
it measured. Building their commands and parsing what they write needs no
engine; running them in the loadgen image is `loadlab.harness.loadgen`.
"""
