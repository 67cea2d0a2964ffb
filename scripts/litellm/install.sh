#!/usr/bin/env bash
# Installs the LiteLLM proxy that the `litellm` integration tests run against, in a venv under
# target/ (ignored by git). Idempotent: a venv whose `litellm` already imports is kept.
#
# Usage: scripts/litellm/install.sh        (venv path: $CONDENSE_LITELLM_VENV or target/litellm-venv)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${CONDENSE_LITELLM_VENV:-$repo_root/target/litellm-venv}"

# 1.103.7 is the last release whose pinned dependencies all resolve from PyPI; without prisma a
# request with a wrong key gets 500 instead of an auth error, so it is part of the install.
litellm_spec='litellm[proxy]==1.103.7'
prisma_spec='prisma==0.15.0'

# Importing litellm otherwise tries to fetch a model cost map from the web, and retries.
export LITELLM_LOCAL_MODEL_COST_MAP=True

if [[ -x "$venv/bin/litellm" ]] && "$venv/bin/python" -c 'import litellm.proxy.proxy_server' 2>/dev/null; then
    echo "litellm already installed in $venv"
    exit 0
fi

python="${PYTHON:-python3}"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$litellm_spec" "$prisma_spec"
"$venv/bin/python" -c 'import litellm.proxy.proxy_server'
echo "litellm installed in $venv"
