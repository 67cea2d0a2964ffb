"""Writes the inputs of scripts/bench/memory.sh: one file per shape, each about SIZE_MB megabytes.

    python3 scripts/bench/memory_shapes.py DIR [SIZE_MB...]

Shapes: an array of small records (the worst case for a parsed tree), a log, one single-line
JSON object holding nested records, a CSV table, and a log of very short lines (the most units
per byte). Seeded, so every run writes the same bytes.
"""

import json
import os
import random
import sys


def records(rng, n):
    return [
        {
            "id": i,
            "name": "user%d" % i,
            "active": i % 3 == 0,
            "score": rng.random(),
            "tags": ["a", "b"],
        }
        for i in range(n)
    ]


def array(path, size, rng):
    # About 103 bytes a record.
    with open(path, "w") as out:
        json.dump(records(rng, size // 103), out)


def log(path, size, rng):
    levels = ["INFO"] * 30 + ["DEBUG"] * 8 + ["WARN"] * 2 + ["ERROR"]
    with open(path, "w") as out:
        written, i = 0, 0
        while written < size:
            level = rng.choice(levels)
            line = "2024-05-01 10:%02d:%02d.%03d %-5s [worker-%d] request %d served in %d ms user=u%d\n" % (
                i // 60000 % 60, i // 1000 % 60, i % 1000, level, i % 8, i, rng.randrange(900), rng.randrange(5000))
            out.write(line)
            written += len(line)
            i += 1


def single_line_object(path, size, rng):
    n = size // 148
    items = [
        {"id": i, "owner": {"login": "user%d" % (i % 977), "site_admin": False},
         "state": "closed" if i % 5 else "open", "labels": [{"name": "bug"}] if i % 7 == 0 else [],
         "comments": rng.randrange(40), "title": "Issue number %d about item %d" % (i, i * 7 % 1000)}
        for i in range(n)
    ]
    with open(path, "w") as out:
        json.dump({"total_count": n, "incomplete_results": False, "items": items}, out, separators=(",", ":"))


def csv(path, size, rng):
    with open(path, "w") as out:
        out.write("id,region,product,quantity,unit_price,status\n")
        written, i = 0, 0
        while written < size:
            line = "%d,%s,product-%d,%d,%.2f,%s\n" % (
                i, rng.choice(["eu-west", "us-east", "ap-south"]), i % 1500, rng.randrange(100),
                rng.random() * 300, "refunded" if i % 997 == 0 else "shipped")
            out.write(line)
            written += len(line)
            i += 1


def short_log(path, size, rng):
    # About 40 bytes a line: a unit per 40 bytes of input.
    words = ["ok", "ok", "ok", "retry", "slow", "ERROR"]
    with open(path, "w") as out:
        written, i = 0, 0
        while written < size:
            line = "%02d:%02d:%02d INFO job %d %s in %d ms\n" % (
                i // 3600 % 24, i // 60 % 60, i % 60, rng.randrange(100000), rng.choice(words),
                rng.randrange(1000))
            out.write(line)
            written += len(line)
            i += 1


SHAPES = {"array": (array, "json"), "log": (log, "log"), "object": (single_line_object, "json"), "csv": (csv, "csv"),
          "short-log": (short_log, "log")}

if __name__ == "__main__":
    out_dir = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2:]] or [62, 50, 50, 50, 50]
    os.makedirs(out_dir, exist_ok=True)
    for (name, (write, ext)), mb in zip(SHAPES.items(), sizes):
        path = os.path.join(out_dir, "%s-%dmb.%s" % (name, mb, ext))
        if not os.path.exists(path):
            write(path, mb * 1_000_000, random.Random(7))
        print(path)
