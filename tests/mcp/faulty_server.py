"""An MCP server over stdio that fails on purpose, for the proxy's fault tests.

Usage:
  faulty_server.py MODE [--good-calls N] [--fail-starts N] [--spawn-log FILE]
                        [--event-log FILE] [--secret VALUE]

MODE:
  healthy                every request is answered
  crash-mid-call         after N good tools/call (--good-calls, default 0) the next one makes the
                         process exit with status 1 before it answers
  exit-at-start          exits with status 3 before reading anything
  exit-after-initialize  answers initialize, then exits with status 4
  garbage                writes non-JSON lines and JSON that is not JSON-RPC to stdout, at start
                         and before every answer; the answers themselves are good
  close-stdout           on a tools/call closes stdout and keeps running (a hung server)

Tools: `echo` answers "echo: <text>"; `slow` sleeps `seconds` (default 30) and answers "slept"
(with `progress: true`, reporting progress every 0.2 s meanwhile);
`big` answers a log of `bytes` bytes (a text result); `deep` answers a structuredContent nested
`depth` levels deep; `flood` sends `count` notifications/message (and as many
notifications/progress when the call has a progress token) before it answers "flooded <count>".
--collide also lists a tool named `condense_retrieve`, like the proxy's own, that answers
"upstream condense_retrieve".
--fail-starts N makes the first N starts (counted in the spawn log) exit like exit-at-start.
--spawn-log appends the pid of every start; --event-log appends "cancelled <id>" for every
notifications/cancelled, and "<pid> level <level>", "<pid> subscribe <uri>" and
"<pid> unsubscribe <uri>" for logging/setLevel, resources/subscribe and resources/unsubscribe
(each answered with an empty result). --secret is accepted and ignored: tests check it never
reaches an error.

Only the standard library: a start takes a few milliseconds, so crash loops are cheap to test,
and every byte on stdout is under the test's control.
"""

import argparse
import json
import os
import sys
import threading
import time

write_lock = threading.Lock()


def send(message, garbage=False):
    with write_lock:
        if garbage:
            sys.stdout.write("this line is not JSON\n")
            sys.stdout.write('{"neither": "is this JSON-RPC"}\n')
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def append(path, line):
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")


def starts_so_far(path):
    if not path or not os.path.exists(path):
        return 0
    with open(path, encoding="utf-8") as file:
        return sum(1 for _ in file)


TOOLS = [
    {
        "name": "echo",
        "description": "Answers with its text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "slow",
        "description": "Sleeps, then answers.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
]

COLLIDING_TOOL = {
    "name": "condense_retrieve",
    "description": "The upstream's own tool, named like the proxy's.",
    "inputSchema": {"type": "object", "properties": {"ref": {"type": "string"}}},
}


def log_text(size):
    lines = []
    total = 0
    number = 0
    while total < size:
        if number % 5000 == 2500:
            line = f"2026-01-01 12:00:{number % 60:02d},000 ERROR [worker-{number % 8}] request {number} failed: disk quota exceeded on /var/data\n"
        else:
            line = f"2026-01-01 12:00:{number % 60:02d},000 INFO [worker-{number % 8}] request {number} served in {number % 97} ms\n"
        lines.append(line)
        total += len(line)
        number += 1
    return "".join(lines)[:size]


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": False}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--good-calls", type=int, default=0)
    parser.add_argument("--fail-starts", type=int, default=0)
    parser.add_argument("--spawn-log")
    parser.add_argument("--event-log")
    parser.add_argument("--secret")
    parser.add_argument("--collide", action="store_true")
    options = parser.parse_args()

    start_number = starts_so_far(options.spawn_log) + 1
    append(options.spawn_log, str(os.getpid()))
    if options.mode == "exit-at-start" or start_number <= options.fail_starts:
        sys.stderr.write("faulty_server: exiting at start, as asked\n")
        sys.exit(3)

    garbage = options.mode == "garbage"
    if garbage:
        with write_lock:
            sys.stdout.write("garbage before anything\n")
            sys.stdout.flush()
    calls = 0

    def call_tool(request_id, params):
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name == "echo":
            result = text_result(f"echo: {arguments.get('text', '')}")
        elif name == "slow":
            seconds = float(arguments.get("seconds", 30))
            token = (params.get("_meta") or {}).get("progressToken")
            if arguments.get("progress") and token is not None:
                # Reports progress every 0.2 s while it works.
                steps = int(seconds / 0.2)
                for step in range(steps):
                    time.sleep(0.2)
                    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                        "progressToken": token, "progress": step + 1, "total": steps}})
            else:
                time.sleep(seconds)
            result = text_result("slept")
        elif name == "big":
            result = text_result(log_text(int(arguments.get("bytes", 1 << 20))))
        elif name == "deep":
            nested = "leaf"
            for _ in range(int(arguments.get("depth", 200))):
                nested = {"level": nested}
            result = text_result("deep")
            result["structuredContent"] = nested
        elif name == "flood":
            count = int(arguments.get("count", 1000))
            token = (params.get("_meta") or {}).get("progressToken")
            for number in range(count):
                send({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                    "level": "info", "logger": "flood",
                    "data": f"notification {number} of {count}: " + "x" * 120}})
                if token is not None:
                    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                        "progressToken": token, "progress": number + 1, "total": count}})
            result = text_result(f"flooded {count}")
        elif name == "condense_retrieve" and options.collide:
            result = text_result("upstream condense_retrieve")
        else:
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32602, "message": f"unknown tool {name}"}})
            return
        send({"jsonrpc": "2.0", "id": request_id, "result": result}, garbage)

    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {
                    "tools": {"listChanged": True},
                    "logging": {},
                    "resources": {"subscribe": True},
                },
                "serverInfo": {"name": "faulty", "version": "1.0.0"},
            }}, garbage)
            if options.mode == "exit-after-initialize":
                sys.stdout.flush()
                os._exit(4)
        elif method == "notifications/cancelled":
            append(options.event_log, f"cancelled {params.get('requestId')}")
        elif method == "tools/list":
            tools = TOOLS + ([COLLIDING_TOOL] if options.collide else [])
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}}, garbage)
        elif method == "tools/call":
            if options.mode == "crash-mid-call" and calls >= options.good_calls:
                os._exit(1)
            if options.mode == "close-stdout":
                sys.stdout.close()
                os.close(1)
                time.sleep(60)
                os._exit(0)
            calls += 1
            threading.Thread(target=call_tool, args=(request_id, params), daemon=True).start()
        elif method == "logging/setLevel":
            append(options.event_log, f"{os.getpid()} level {params.get('level')}")
            send({"jsonrpc": "2.0", "id": request_id, "result": {}}, garbage)
        elif method in ("resources/subscribe", "resources/unsubscribe"):
            verb = method.split("/")[1]
            append(options.event_log, f"{os.getpid()} {verb} {params.get('uri')}")
            send({"jsonrpc": "2.0", "id": request_id, "result": {}}, garbage)
        elif method == "resources/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"resources": []}}, garbage)
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}}, garbage)
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32601, "message": f"unknown method {method}"}})


if __name__ == "__main__":
    main()
