#!/bin/sh
# Renders the nginx config from the environment into /tmp (the only writable
# path) and runs nginx in the foreground. nginx's config cannot read the
# environment, hence this step.
set -eu

fail() { echo "nginx-baseline: $*" >&2; exit 2; }

HOST=${HOST:-0.0.0.0}
PORT=${PORT:-8080}
WORKER_PROCESSES=${WORKER_PROCESSES:-1}

case $WORKER_PROCESSES in
    ''|*[!0-9]*) fail "WORKER_PROCESSES must be an integer from 1 to 64, got '$WORKER_PROCESSES'" ;;
esac
[ "$WORKER_PROCESSES" -ge 1 ] && [ "$WORKER_PROCESSES" -le 64 ] \
    || fail "WORKER_PROCESSES must be an integer from 1 to 64, got '$WORKER_PROCESSES'"
WORKER_PROCESSES=$((WORKER_PROCESSES + 0))   # no leading zeros in /health
case $PORT in
    ''|*[!0-9]*) fail "PORT must be a TCP port, got '$PORT'" ;;
esac
case $HOST in
    ''|*[!0-9A-Za-z.:-]*) fail "HOST must be an address or host name, got '$HOST'" ;;
    *:*) LISTEN="[$HOST]:$PORT" ;;   # IPv6
    *) LISTEN="$HOST:$PORT" ;;
esac

# The nginx actually installed, read now rather than at build time.
VERSION=$(nginx -v 2>&1 | sed -n 's/^nginx version: //p')
[ -n "$VERSION" ] || fail "cannot read the nginx version"

HEALTH='{"server":"nginx-baseline","runtime":"nginx","runtime_version":"'$VERSION'","model":"event-loop-per-worker-process","settings":{"WORKER_PROCESSES":'$WORKER_PROCESSES',"HOST":"'$HOST'","PORT":"'$PORT'"},"contract":1}'

mkdir -p /tmp/nginx
sed -e "s|@WORKER_PROCESSES@|$WORKER_PROCESSES|" \
    -e "s|@LISTEN@|$LISTEN|" \
    -e "s|@HEALTH@|$HEALTH|" \
    /etc/loadlab/nginx.conf.template > /tmp/nginx/nginx.conf

echo "nginx-baseline: $VERSION listening on $LISTEN (WORKER_PROCESSES=$WORKER_PROCESSES)" >&2
exec nginx -p /tmp/nginx/ -e stderr -c /tmp/nginx/nginx.conf
