#!/usr/bin/env bash
# Peak memory of `condense compress` on large outputs of every shape, against the bound
# 3 × input + 100 MB, and 3 × input for a log of ordinary lines (docs/benchmarks.md,
# docs/reliability.md).
#
#   scripts/bench/memory.sh                 # 62 MB array, 50 MB log, 50 MB object, 50 MB CSV,
#                                           # 50 MB log of short lines
#   scripts/bench/memory.sh 8 8 8 8 8       # other sizes, in MB, in that order
#   CONDENSE_BIN=path/to/condense scripts/bench/memory.sh   # another build, e.g. to compare
#
# The inputs are generated (seeded) under target/bench-memory; peak RSS is read from
# /usr/bin/time -v. No LLM is configured, so the extractive rung answers.
set -euo pipefail
cd "$(dirname "$0")/../.."

bin=${CONDENSE_BIN:-target/release/condense}
if [ -z "${CONDENSE_BIN:-}" ]; then
    cargo build --release --quiet --bin condense
fi
dir=target/bench-memory
mapfile -t inputs < <(python3 scripts/bench/memory_shapes.py "$dir" "$@")

printf '%-22s %10s %12s %10s %8s %8s  %s\n' input "input MB" "peak RSS MB" "bound MB" ratio "time s" method
status=0
# Each run gets an empty store of its own: the default store answers a repeat from its cache,
# and would measure nothing.
store=$(mktemp -d)
trap 'rm -rf "$store"' EXIT
for input in "${inputs[@]}"; do
    report=$(mktemp)
    rm -rf "$store"/*
    CONDENSE_STORE_DIR=$store /usr/bin/time -v "$bin" compress --json --query "user 777 error" "$input" \
        2>"$report" >"$report.out"
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$report")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$report")
    method=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["method"])' "$report.out")
    bytes=$(stat -c %s "$input")
    python3 - "$input" "$bytes" "$kb" "$wall" "$method" <<'PY' || status=1
import os, sys
name, size, kb, wall, method = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
mb, peak = size / 1e6, kb * 1024 / 1e6
# A log of ordinary lines is held to 3 x its size (the CLI's promise for logs); every other
# shape, a log of very short lines included, to 3 x + 100 MB.
bound = 3 * mb if os.path.basename(name).startswith("log-") else 3 * mb + 100
minutes, seconds = wall.split(":")[-2:]
print("%-22s %10.1f %12.1f %10.1f %7.2fx %8.2f  %s%s" % (
    os.path.basename(name), mb, peak, bound, peak / mb, int(minutes) * 60 + float(seconds), method,
    "" if peak <= bound else "  OVER THE BOUND"))
sys.exit(0 if peak <= bound else 1)
PY
    rm -f "$report" "$report.out"
done
exit $status
