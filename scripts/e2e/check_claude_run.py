"""Checks what Claude Code sent the fake Messages API and how the proxy exited.

Usage: check_claude_run.py REQUESTS_JSONL CASE_JSON PROXY_EVENTS CLAUDE_JSON INPUT
Exits 1 with the failed checks listed; prints the measurements either way.
"""

import json
import re
import sys

requests_path, case_path, events_path, claude_path, input_path = sys.argv[1:6]
# Line endings kept: a window may end in its line's "\r".
original = open(input_path, encoding="utf-8", newline="").read()
requests = [json.loads(line) for line in open(requests_path, encoding="utf-8")]
case = json.load(open(case_path, encoding="utf-8"))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def text_of(block):
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


main = [r["body"] for r in requests if r["body"].get("tools")]
check(main, "no request to the model carried tools")
tools = {t.get("name"): t for t in (main[0].get("tools") if main else [])}
read = tools.get("mcp__fs__read_text_file", {})
properties = (read.get("input_schema") or {}).get("properties") or {}
check("condense_query" in properties, f"read_text_file is listed without condense_query: {sorted(properties)}")
check("mcp__fs__condense_retrieve" in tools, "condense_retrieve is not listed")
fs_tools = [name for name in tools if name.startswith("mcp__fs__")]
tool_chars = sum(len(json.dumps(tools[name])) for name in fs_tools)

results = {}
for body in main:
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                results[block["tool_use_id"]] = block

first = results.get("toolu_first")
check(first is not None, "the model never received the file read's tool_result")
first_text = text_of(first or {})
check(first_text.startswith("[condense"), f"the read was not condensed: {first_text[:200]!r}")
facts = case.get("facts", [])
found = [fact for fact in facts if fact.lower() in first_text.lower()]
check(len(found) == len(facts), f"facts missing from the condensed result: {[f for f in facts if f not in found]}")

retrieve = results.get("toolu_retrieve")
check(retrieve is not None, "condense_retrieve was never called with the ref")
retrieve_text = text_of(retrieve or {})
# A pattern answers "[match N at line L, character C]" and a window of the original's line
# around the match ("…" where the window cuts the line): each window must be the original's.
windows = [
    block.split("\n", 1)[1].split("\n[", 1)[0].rstrip("\n").strip("…")
    for block in re.split(r"(?m)^(?=\[match \d+ at line \d+, character \d+\]$)", retrieve_text)
    if block.startswith("[match ")
]
check(retrieve is not None and not retrieve.get("is_error") and windows
      and all(window in original for window in windows),
      f"condense_retrieve did not answer with windows of the original: {retrieve_text[:200]!r}")

events = [line.split() for line in open(events_path, encoding="utf-8")] if events_path else []
exits = [e for e in events if e[0] == "exit"]
signals = [e for e in events if e[0] == "signal"]
check(exits, f"the proxy never exited by itself (killed): events {events}")
if exits and signals:
    exit_ms = (int(exits[0][2]) - int(signals[0][2])) / 1e6
    check(exit_ms < 200, f"the proxy took {exit_ms:.0f} ms to exit after SIG{signals[0][1]}")
else:
    exit_ms = None

claude = json.load(open(claude_path, encoding="utf-8"))
check(not claude.get("is_error"), f"Claude Code reported an error: {claude.get('result')!r}")

print(json.dumps({
    "model_requests": len(requests),
    "fs_tools_listed": len(fs_tools),
    "fs_tool_definitions_chars": tool_chars,
    "read_result_chars": len(first_text),
    "facts_found": f"{len(found)}/{len(facts)}",
    "retrieve_result_chars": len(retrieve_text),
    "proxy_signals": [s[1] for s in signals],
    "proxy_exit_after_signal_ms": exit_ms,
    "proxy_exit_status": exits[0][1] if exits else None,
}, indent=1))
if failures:
    for failure in failures:
        print(f"check_claude_run.py: FAILED: {failure}", file=sys.stderr)
    sys.exit(1)
print("check_claude_run.py: all checks passed", file=sys.stderr)
