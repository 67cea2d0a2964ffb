#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time, each seeded from real tool output
# (the shared corpus, examples/data, tests/data), from the inputs earlier runs found
# (fuzz/regressions/<target>/) and from generated odd inputs (deep JSON, whitespace runs, NULs).
# Installs cargo-fuzz (pinned) under target/tools when it is missing. Exits non-zero when a
# target crashes, printing the reproducer's path and the command that replays it.
#
# Usage: scripts/fuzz.sh [seconds-per-target] [target ...]
#   CONDENSE_FUZZ_SANITIZER  address (slower, for long runs) or none (default: memory safety is
#                            the compiler's job here; the targets check behaviour)
#   CONDENSE_CORPUS          the tool-output corpus (default: ../shared/corpus)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

seconds=${1:-20}
shift || true

step() { printf '\n== %s\n' "$*" >&2; }

CARGO_FUZZ_VERSION=0.13.2
export PATH="$root/target/tools/bin:$PATH"
if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
    step "installing cargo-fuzz $CARGO_FUZZ_VERSION under target/tools"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --root "$root/target/tools" >&2
fi

# cargo-fuzz passes nightly-only flags (-Z, -Cpasses=sancov-module); the stable compiler accepts
# them when told it is building itself. No nightly toolchain is needed.
export RUSTC_BOOTSTRAP=1
sanitizer=${CONDENSE_FUZZ_SANITIZER:-none}
target_dir="$root/target/fuzz"
corpus_root="$root/target/fuzz-corpus"
artifacts_root="$root/target/fuzz-artifacts"

cd "$root/fuzz"
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

step "building ${#targets[@]} fuzz targets (sanitizer: $sanitizer)"
build_started=$SECONDS
if [[ $# -gt 0 ]]; then
    for target in "${targets[@]}"; do
        cargo fuzz build --sanitizer "$sanitizer" --target-dir "$target_dir" "$target" >&2
    done
else
    cargo fuzz build --sanitizer "$sanitizer" --target-dir "$target_dir" >&2
fi
echo "fuzz build: $((SECONDS - build_started)) s" >&2

# The seed corpus, built fresh each run: real outputs cut to the length libFuzzer tries, plus
# odd inputs no real tool prints.
seed_dir="$corpus_root/seeds"
rm -rf "$seed_dir"
mkdir -p "$seed_dir"
corpus=${CONDENSE_CORPUS:-$root/../shared/corpus}
i=0
for file in "$corpus"/dev/*/input.* "$root"/examples/data/*.log "$root"/tests/data/*; do
    [[ -f $file ]] || continue
    head -c 16384 "$file" >"$seed_dir/real-$i"
    i=$((i + 1))
done
printf '%*s' 8000 '' >"$seed_dir/spaces"
printf '\n%.0s' {1..4000} >"$seed_dir/newlines"
head -c 4000 /dev/zero >"$seed_dir/nuls"
python3 - "$seed_dir" <<'PY'
import sys, pathlib
out = pathlib.Path(sys.argv[1])
out.joinpath("deep-arrays").write_text("[" * 3000 + "]" * 3000)
out.joinpath("deep-objects").write_text('{"a":' * 2000 + "1" + "}" * 2000)
out.joinpath("mcp-result").write_text(
    '{"content":[{"type":"text","text":"line one\\nline two"},'
    '{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"x"}},'
    '{"type":"image","data":"AAAA","mimeType":"image/png"}],'
    '"structuredContent":{"rows":[1,2,3]},"isError":true,"_meta":{"k":"v"}}'
)
out.joinpath("config").write_text(
    '[defaults]\nthreshold_tokens = 10\nmode = "extract"\n[limits]\nmax_input_bytes = 4096\n'
    '[[tools]]\nmatch = "read_*[a]?{x}"\nbudget_tokens = 5\n'
)
out.joinpath("glob").write_text("*a*a*a*a*a*b\0" + "a" * 3000)
out.joinpath("mixed").write_text("Grüße мир 你好 🙂👩‍👩‍👧 e\u0301\u0302 \ufffd\r\n" * 50)
PY
cp "$root/examples/condense.toml" "$seed_dir/example-config"

failed=()
for target in "${targets[@]}"; do
    step "fuzzing $target for ${seconds} s"
    corpus_dir="$corpus_root/$target"
    artifacts="$artifacts_root/$target/"
    mkdir -p "$corpus_dir" "$artifacts"
    regressions="$root/fuzz/regressions/$target"
    dirs=("$corpus_dir" "$seed_dir")
    [[ -d $regressions ]] && dirs+=("$regressions")
    log="$artifacts_root/$target.log"
    if cargo fuzz run --sanitizer "$sanitizer" --target-dir "$target_dir" "$target" "${dirs[@]}" -- \
        -max_total_time="$seconds" -max_len=65536 -timeout=120 -rss_limit_mb=4096 \
        -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1; then
        grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$log" >&2 || true
    else
        tail -40 "$log" >&2
        reproducer=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -1 | sed 's/Test unit written to //')
        echo "fuzz target $target crashed; reproducer: ${reproducer:-see $log}" >&2
        echo "replay: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer $sanitizer --target-dir $target_dir $target ${reproducer:-<reproducer>})" >&2
        failed+=("$target")
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: ${#failed[@]} of ${#targets[@]} targets crashed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds} s each without a crash" >&2
