"""Times Headroom's `compress` on one tool output, offline: run by vs_headroom.py.

    python headroom_driver.py warm FILE QUERY RUNS   # in process: best of RUNS, new query each
    python headroom_driver.py cold FILE QUERY        # one call (the caller times the process)

Prints `best_ms=<ms> tokens_before=<n> tokens_after=<n>`.
"""

import os
import sys
import time
import uuid

# Nothing may be fetched: no model download, no tokenizer files, no telemetry.
os.environ["HEADROOM_OFFLINE"] = "1"

from headroom import compress  # noqa: E402
from headroom.tokenizers.estimator import EstimatingTokenCounter  # noqa: E402
from headroom.tokenizers.registry import register_tokenizer  # noqa: E402

MODEL = "gpt-4o"
# A tool Headroom compresses (it leaves file reads alone by design).
TOOL = "search_logs"
# tiktoken would download its vocabulary; Headroom's own estimator needs nothing.
register_tokenizer(MODEL, EstimatingTokenCounter())


def messages(text, query):
    """The file as a tool result, the query as the last user turn."""
    return [
        {"role": "user", "content": "Read the file and answer my question."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": TOOL, "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": text},
        {"role": "user", "content": query},
    ]


def run(text, query):
    # Headroom caches by content alone, on disk too (shared across processes): a fresh line at
    # the end makes every call, warm or cold, compress for real.
    text = f"{text}\nrequest {uuid.uuid4()}\n"
    started = time.perf_counter()
    result = compress(messages(text, query), model=MODEL)
    return (time.perf_counter() - started) * 1000.0, result


def main():
    mode, path, query = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if mode == "cold":
        best, result = run(text, query)
    else:
        runs = int(sys.argv[4])
        run(text, query + " (warm-up)")
        best, result = min(
            (run(text, f"{query} (run {i})") for i in range(runs)), key=lambda r: r[0]
        )
    print(
        f"best_ms={best:.2f} tokens_before={result.tokens_before} "
        f"tokens_after={result.tokens_after}"
    )


if __name__ == "__main__":
    main()
