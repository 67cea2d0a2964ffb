#!/usr/bin/env bash
# condense against Headroom (headroom-ai, PyPI) on the shared holdout and dev inputs: warm
# (in process, best of 5, a new query each time) and cold (whole process) times side by side.
#
#   scripts/bench/vs-headroom.sh            # RUNS=5 COLD_RUNS=3 by default
#
# Installs headroom-ai into target/headroom-venv on the first run (the package registry is the
# only network it uses); Headroom then runs with HEADROOM_OFFLINE=1 and its own offline token
# estimator registered, so it fetches nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=target/headroom-venv
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import headroom' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet headroom-ai
fi
cargo build --release --quiet --bin condense --example warm_bench

export HEADROOM_OFFLINE=1
echo "headroom-ai $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("headroom-ai"))'), condense $(git describe --always --dirty)"
exec "$venv/bin/python" scripts/bench/vs_headroom.py
