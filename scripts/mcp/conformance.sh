#!/usr/bin/env bash
# Runs the MCP conformance suite (server scenarios) twice: against server-everything in
# streamable-HTTP mode alone, and against `condense proxy --listen` in front of it. Prints the
# pass/fail counts of both per spec version and the scenarios whose outcome differs.
#
# Usage: scripts/mcp/conformance.sh [path/to/condense]   (default: target/release/condense)
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
eval "$("$root/scripts/mcp/install.sh")"
condense="${1:-$root/target/release/condense}"
node="$CONDENSE_TEST_NODE22"
nm="$CONDENSE_TEST_NODE_MODULES"
out="$root/target/mcp-conformance"
rm -rf "$out" && mkdir -p "$out"

upstream_port=3101
proxy_port=3102
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_for() { # url
  for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "conformance.sh: $1 did not come up" >&2; return 1
}

PORT=$upstream_port "$node" "$nm/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp \
  >"$out/upstream.log" 2>&1 & pids+=($!)
wait_for "http://127.0.0.1:$upstream_port/mcp"
# The suite opens a session per scenario and never ends one with DELETE: over 60 sessions in
# two spec versions, more than the default `max_sessions` (32) before the idle timeout frees them.
printf '[proxy]\nmax_sessions = 256\n' > "$out/condense.toml"
CONDENSE_LOG=warn "$condense" proxy --listen "127.0.0.1:$proxy_port" --config "$out/condense.toml" \
  --upstream-url "http://127.0.0.1:$upstream_port/mcp" >"$out/proxy.log" 2>&1 & pids+=($!)
wait_for "http://127.0.0.1:$proxy_port/health"

for version in 2025-06-18 2025-11-25; do
  for target in direct proxy; do
    port=$([ "$target" = direct ] && echo $upstream_port || echo $proxy_port)
    "$node" "$nm/.bin/conformance" server --url "http://127.0.0.1:$port/mcp" \
      --spec-version "$version" -o "$out/$target-$version" >"$out/$target-$version.txt" 2>&1 || true
  done
done

# Scenario lines ("✓ name: N passed, M failed") and the total, from the suite's own output.
for version in 2025-06-18 2025-11-25; do
  for target in direct proxy; do
    echo "$version $target: $(grep '^Total' "$out/$target-$version.txt")"
  done
  diff <(grep -E '^[✓✗]' "$out/direct-$version.txt") <(grep -E '^[✓✗]' "$out/proxy-$version.txt") \
    && echo "$version: every scenario has the same outcome through the proxy" \
    || echo "$version: the scenarios above differ (< direct, > proxy)"
done
