#!/usr/bin/env bash
# Stops the process whose pid PID_FILE holds, if it still runs (TERM, then KILL after 5 s), and
# removes the file. Shared by the scripts that start test servers (litellm/, redis/).
#
# Usage: scripts/lib/stop-pid-file.sh PID_FILE
set -euo pipefail

pid_file="$1"
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
