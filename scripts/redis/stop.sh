#!/usr/bin/env bash
# Stops the Redis server start.sh started (by the pid it wrote), if it still runs.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
state="${CONDENSE_REDIS_STATE:-$repo_root/target/redis}"
pid_file="$state/redis.pid"

[[ -f "$pid_file" ]] || exit 0
pid="$(cat "$pid_file")"
if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
fi
rm -f "$pid_file"
