#!/usr/bin/env bash
# Installs the LiteLLM proxy that the `litellm` integration tests run against, in a venv under
# target/ (ignored by git). Idempotent: a venv that already holds these versions is kept.
#
# Usage: scripts/litellm/install.sh   (venv: $CONDENSE_LITELLM_VENV, default target/litellm-venv)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${CONDENSE_LITELLM_VENV:-$repo_root/target/litellm-venv}"

# Releases 1.103.8 to 1.109.1 pin dependencies that PyPI does not have; without prisma a
# request with a wrong key gets 500 instead of an auth error, so it is part of the install.
litellm_spec='litellm[proxy]==1.103.7'
prisma_spec='prisma==0.15.0'

# Importing litellm otherwise tries to fetch a model cost map from the web, and retries.
export LITELLM_LOCAL_MODEL_COST_MAP=True

# Reading the installed versions is instant; importing the proxy takes seconds.
installed() {
    [[ -x "$venv/bin/litellm" ]] && "$venv/bin/python" - <<'PY' 2>/dev/null
from importlib.metadata import version
assert version("litellm") == "1.103.7" and version("prisma") == "0.15.0"
PY
}

if installed; then
    echo "litellm already installed in $venv"
    exit 0
fi

python="${PYTHON:-python3}"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$litellm_spec" "$prisma_spec"
"$venv/bin/python" -c 'import litellm.proxy.proxy_server'
echo "litellm installed in $venv"
