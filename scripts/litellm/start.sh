#!/usr/bin/env bash
# Starts a LiteLLM proxy on 127.0.0.1 with a free port, waits until it answers, and prints the
# variables the `litellm` integration tests read:
#
#   eval "$(scripts/litellm/start.sh)"     # exports CONDENSE_TEST_LITELLM_URL, _KEY, _FAULT_BACKEND_PORT
#   cargo test litellm
#   scripts/litellm/stop.sh
#
# Environment: CONDENSE_LITELLM_CONFIG (default scripts/litellm/mock.yaml), CONDENSE_LITELLM_VENV
# (default target/litellm-venv, made by install.sh), CONDENSE_LITELLM_STATE (where the pid file
# and the log go; default target/litellm), CONDENSE_LITELLM_READY_TIMEOUT (seconds, default 90:
# start-up takes ~8 s on an idle 2-core machine, ~50 s while a compile is running). Everything but
# the export lines goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
venv="${CONDENSE_LITELLM_VENV:-$repo_root/target/litellm-venv}"
config="${CONDENSE_LITELLM_CONFIG:-$here/mock.yaml}"
state="${CONDENSE_LITELLM_STATE:-$repo_root/target/litellm}"
ready_timeout_s="${CONDENSE_LITELLM_READY_TIMEOUT:-90}"

[[ -x "$venv/bin/litellm" ]] || "$here/install.sh" >&2
mkdir -p "$state"
if [[ -f "$state/proxy.pid" ]] && kill -0 "$(cat "$state/proxy.pid")" 2>/dev/null; then
    echo "a proxy is already running (pid $(cat "$state/proxy.pid")); run stop.sh first" >&2
    exit 1
fi

port="$("$here/free-port.sh")"
# The port where the tests serve a scripted OpenAI-compatible backend for the `faulty-backend`
# model: LiteLLM in front of a backend that fails in chosen ways.
fault_port="$("$here/free-port.sh")"
# A fresh key per start: auth is real, and no key lives in the repository.
master_key="sk-condense-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"

# Without LITELLM_LOCAL_MODEL_COST_MAP the proxy spends its start-up fetching a cost map from
# the web, and retrying.
CONDENSE_LITELLM_MASTER_KEY="$master_key" \
    CONDENSE_FAULT_BACKEND_URL="http://127.0.0.1:$fault_port/v1" \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    LITELLM_LOG=ERROR \
    nohup "$venv/bin/litellm" --config "$config" --host 127.0.0.1 --port "$port" \
    >"$state/proxy.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$state/proxy.pid"

url="http://127.0.0.1:$port"
deadline=$((SECONDS + ready_timeout_s))
until curl -fsS -o /dev/null "$url/health/liveliness" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "LiteLLM exited during start-up; log: $state/proxy.log" >&2
        tail -n 20 "$state/proxy.log" >&2 || true
        rm -f "$state/proxy.pid"
        exit 1
    fi
    if ((SECONDS > deadline)); then
        echo "LiteLLM not ready after ${ready_timeout_s}s; log: $state/proxy.log" >&2
        kill "$pid" 2>/dev/null || true
        rm -f "$state/proxy.pid"
        exit 1
    fi
    sleep 0.5
done

echo "LiteLLM proxy ready at $url (pid $pid, log $state/proxy.log)" >&2
echo "export CONDENSE_TEST_LITELLM_URL=$url"
echo "export CONDENSE_TEST_LITELLM_KEY=$master_key"
echo "export CONDENSE_LITELLM_PID=$pid"
echo "export CONDENSE_TEST_FAULT_BACKEND_PORT=$fault_port"
