#!/usr/bin/env bash
# Starts a Redis server on 127.0.0.1 with a free port, without persistence, waits until it
# answers, and prints the variable the `redis` integration tests read:
#
#   eval "$(scripts/redis/start.sh)"     # exports CONDENSE_TEST_REDIS_URL, CONDENSE_REDIS_PID
#   cargo test --test tests redis::
#   scripts/redis/stop.sh
#
# When no `redis-server` is installed (see install.sh) it prints nothing to eval and exits 0:
# the tests then skip, naming the variable. Environment: CONDENSE_REDIS_STATE (where the pid
# file and the log go; default target/redis). Everything but the export lines goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
state="${CONDENSE_REDIS_STATE:-$repo_root/target/redis}"

if ! command -v redis-server >/dev/null; then
    echo "redis-server is not installed (scripts/redis/install.sh); the redis tests will skip" >&2
    exit 0
fi
mkdir -p "$state"
if [[ -f "$state/redis.pid" ]] && kill -0 "$(cat "$state/redis.pid")" 2>/dev/null; then
    echo "a redis-server is already running (pid $(cat "$state/redis.pid")); run stop.sh first" >&2
    exit 1
fi

port="$("$here/../litellm/free-port.sh")"
# No RDB snapshots, no append-only file: test data needs no persistence, and the state
# directory stays small. The server runs in the foreground of its own background job so that
# its pid is the one written.
nohup redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --dir "$state" --logfile "$state/redis.log" --daemonize no \
    >/dev/null 2>&1 </dev/null &
pid=$!
echo "$pid" >"$state/redis.pid"

deadline=$((SECONDS + 30))
until redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "redis-server exited during start-up; log: $state/redis.log" >&2
        tail -n 20 "$state/redis.log" >&2 || true
        rm -f "$state/redis.pid"
        exit 1
    fi
    if ((SECONDS > deadline)); then
        echo "redis-server not ready after 30s; log: $state/redis.log" >&2
        kill "$pid" 2>/dev/null || true
        rm -f "$state/redis.pid"
        exit 1
    fi
    sleep 0.1
done

echo "redis-server ready at 127.0.0.1:$port (pid $pid, log $state/redis.log)" >&2
echo "export CONDENSE_TEST_REDIS_URL=redis://127.0.0.1:$port"
echo "export CONDENSE_REDIS_PID=$pid"
