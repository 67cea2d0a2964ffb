"""A scripted stand-in for the Anthropic Messages API, for driving Claude Code end to end.

Usage: fake_messages_api.py PORT_FILE LOG_FILE SCRIPT_JSON

Listens on 127.0.0.1 (a free port, written to PORT_FILE), appends every request to LOG_FILE
as one JSON line ({"path", "body"}), and answers POST /v1/messages by the script:
SCRIPT_JSON is {"first_tool": {"name", "input"}, "retrieve_tool": NAME, "retrieve_input": {...}}.

- A request whose last message holds no tool_result: the first tool_use.
- After the first tool's result: a tool_use of `retrieve_tool` with `retrieve_input`, its
  "ref" filled with the first condense ref ("cx_" and its hex digits) in that result.
- After that: a final text answer.
Requests without tools (Claude Code's own side requests, such as titles) get a short text.
Answers stream as server-sent events when the request asks for `stream`, else plain JSON.
"""

import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG_FILE, SCRIPT = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
REF = re.compile(r"cx_[0-9a-f]+")


def tool_results(message):
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if block.get("type") == "tool_result"]


def result_text(block):
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def decide(body):
    """The content blocks of the answer to `body`."""
    messages = body.get("messages") or []
    if not body.get("tools"):
        return [{"type": "text", "text": "ok"}]
    results = tool_results(messages[-1]) if messages else []
    answered = sum(len(tool_results(m)) for m in messages if m.get("role") == "user")
    if not results:
        first = SCRIPT["first_tool"]
        return [{"type": "tool_use", "id": "toolu_first", "name": first["name"], "input": first["input"]}]
    if answered == 1:
        found = REF.search(result_text(results[0]))
        if found:
            tool_input = dict(SCRIPT["retrieve_input"], ref=found.group(0))
            return [{"type": "tool_use", "id": "toolu_retrieve", "name": SCRIPT["retrieve_tool"], "input": tool_input}]
    return [{"type": "text", "text": "Done: the scripted conversation is over."}]


def message(blocks, model):
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def events(whole):
    """The server-sent events of a streamed `whole` message."""
    start = dict(whole, content=[], stop_reason=None)
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(whole["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            empty = dict(block, input={})
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": 10}}
    yield "message_stop", {"type": "message_stop"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.reply(200, {})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        with open(LOG_FILE, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.reply(200, {"input_tokens": 100})
        if not path.endswith("/v1/messages"):
            return self.reply(200, {})
        whole = message(decide(body), body.get("model", "claude-fake"))
        if not body.get("stream"):
            return self.reply(200, whole)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events(whole):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(PORT_FILE, "w", encoding="utf-8") as port_file:
        port_file.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
