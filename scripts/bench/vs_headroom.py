"""condense and Headroom side by side on the shared corpus: run by vs-headroom.sh.

For every holdout and dev input: warm time (in process, best of RUNS, a new query each time so
no cache answers) and cold time (the whole process, median of COLD_RUNS) of each, the ratio
Headroom / condense, and the totals. condense runs the extractive compressor at budget 2,000;
Headroom runs `compress(messages)` with the file as a tool result and the query as the last
user turn, offline.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("CONDENSE_CORPUS", ROOT.parent / "shared" / "corpus"))
RUNS = int(os.environ.get("RUNS", "5"))
COLD_RUNS = int(os.environ.get("COLD_RUNS", "3"))
BUDGET = "2000"
# Holdout cases come without a query; each side gets this one.
HOLDOUT_QUERY = "What failed or went wrong, and what are the key identifiers and numbers?"
CONDENSE = ROOT / "target" / "release" / "condense"
WARM_BENCH = ROOT / "target" / "release" / "examples" / "warm_bench"
DRIVER = Path(__file__).with_name("headroom_driver.py")


def cases():
    for split in ["holdout", "dev"]:
        for case in sorted((CORPUS / split).iterdir()):
            inputs = [p for p in case.iterdir() if p.name.startswith("input.")]
            if not inputs:
                continue
            query = HOLDOUT_QUERY
            meta = case / "case.json"
            if meta.exists():
                query = json.loads(meta.read_text())["query"]
            yield f"{split}/{case.name}", inputs[0], query


def parse(output):
    fields = dict(item.split("=", 1) for item in output.split())
    return float(fields["best_ms"]), int(fields["tokens_before"]), int(fields["tokens_after"])


def run(cmd, env=None):
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        sys.exit(f"{cmd[0]} failed on {cmd[1:3]}: {done.stderr.strip()[-500:]}")
    return done.stdout


def cold_ms(cmd, own_store=False):
    """Median whole-process time of `cmd`. With `own_store`, each run gets an empty store
    directory: condense keeps condensed results on disk across processes, so a second run in
    one store would be a cache hit, not a cold condense."""
    times = []
    for _ in range(COLD_RUNS):
        with tempfile.TemporaryDirectory(prefix="condense-bench-") as store:
            env = {**os.environ, "CONDENSE_STORE_DIR": store} if own_store else None
            started = time.perf_counter()
            run(cmd, env)
            times.append((time.perf_counter() - started) * 1000.0)
    return statistics.median(times)


def main():
    rows = []
    header = (
        f"{'case':34} {'tokens':>7} {'c out':>6} {'h out':>6} "
        f"{'warm c ms':>9} {'warm h ms':>9} {'ratio':>6} "
        f"{'cold c ms':>9} {'cold h ms':>9} {'ratio':>6}"
    )
    print(header)
    for name, path, query in cases():
        c_warm, before, c_after = parse(
            run([str(WARM_BENCH), str(path), query, "--budget", BUDGET, "--runs", str(RUNS)])
        )
        h_warm, _, h_after = parse(
            run([sys.executable, str(DRIVER), "warm", str(path), query, str(RUNS)])
        )
        c_cold = cold_ms(
            [str(CONDENSE), "compress", str(path), "--query", query, "--budget", BUDGET,
             "--method", "extract"],
            own_store=True,
        )
        h_cold = cold_ms([sys.executable, str(DRIVER), "cold", str(path), query])
        rows.append((c_warm, h_warm, c_cold, h_cold))
        print(
            f"{name:34} {before:>7} {c_after:>6} {h_after:>6} "
            f"{c_warm:>9.1f} {h_warm:>9.1f} {h_warm / c_warm:>5.1f}x "
            f"{c_cold:>9.1f} {h_cold:>9.1f} {h_cold / c_cold:>5.1f}x",
            flush=True,
        )
    totals = [sum(column) for column in zip(*rows)]
    print(
        f"{'total':34} {'':>7} {'':>6} {'':>6} "
        f"{totals[0]:>9.1f} {totals[1]:>9.1f} {totals[1] / totals[0]:>5.1f}x "
        f"{totals[2]:>9.1f} {totals[3]:>9.1f} {totals[3] / totals[2]:>5.1f}x"
    )


if __name__ == "__main__":
    main()
