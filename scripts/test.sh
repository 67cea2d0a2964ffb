#!/usr/bin/env bash
# Runs condense's whole test suite on a fresh machine: installs what the tests talk to (a LiteLLM
# proxy in a venv, MCP servers and a Python MCP client — all under target/, ignored by git — and
# Debian's redis-server), starts the proxy and a Redis server on 127.0.0.1, checks formatting and
# lints, runs every test, and stops both. Re-runs skip the installs.
#
# Usage: scripts/test.sh [extra cargo test arguments]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*" >&2; }

if ! command -v cargo >/dev/null; then
    echo "scripts/test.sh: cargo is not installed; install Rust from https://rustup.rs" >&2
    exit 1
fi

# A CI run builds once from a clean clone: incremental caches and full debug info would only
# fill its disk (about half of a 14 GB target/), so it builds without them; line tables keep
# file:line in backtraces. Local runs keep cargo's defaults for fast rebuilds.
if [[ -n "${CI:-}" ]]; then
    export CARGO_INCREMENTAL=0
    export CARGO_PROFILE_DEV_DEBUG=line-tables-only
fi

step "LiteLLM proxy (mock models)"
scripts/litellm/install.sh >&2
# A proxy left running by an earlier, interrupted run would hold the state directory.
scripts/litellm/stop.sh
# Captured first: `eval "$(…)"` alone would hide a failed start from `set -e`.
litellm_env="$(scripts/litellm/start.sh)"
eval "$litellm_env"
trap 'scripts/litellm/stop.sh' EXIT

step "Redis server (no persistence)"
# Without redis-server (no root to install it) the redis tests skip, naming the variable.
scripts/redis/install.sh >&2
scripts/redis/stop.sh
redis_env="$(scripts/redis/start.sh)"
eval "$redis_env"
trap 'scripts/litellm/stop.sh; scripts/redis/stop.sh' EXIT

if [[ -x scripts/mcp/install.sh ]]; then
    step "MCP servers and client"
    mcp_env="$(scripts/mcp/install.sh)"
    eval "$mcp_env"
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --all-targets -- -D warnings

step "cargo doc (broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features

# Under CI the fuzz targets run too, 15 s each (about two minutes of fuzzing after their
# build); CONDENSE_FUZZ_SECONDS=0 skips them, a larger value fuzzes longer. Before the tests,
# so that cargo test's summary stays the last thing printed.
fuzz_seconds=${CONDENSE_FUZZ_SECONDS:-${CI:+15}}
if [[ -n "$fuzz_seconds" && "$fuzz_seconds" != 0 ]]; then
    step "fuzz targets, ${fuzz_seconds} s each"
    scripts/fuzz.sh "$fuzz_seconds"
    # Nothing after this step reads the fuzz build (about 2 GB); a CI disk needs the room for
    # the test build. Local runs keep it for fast re-runs.
    if [[ -n "${CI:-}" ]]; then
        rm -rf target/fuzz
    fi
fi

step "Claude Code end to end (skips itself when the CLI cannot be installed)"
# Before cargo test, for the same reason as the fuzz targets. The binary it drives is the one
# the test build makes (target/debug/condense): a separate `cargo build` would resolve the
# dependencies without the dev-dependencies' features and build most of them a second time.
cargo test --no-run --quiet "$@"
scripts/e2e/claude-code.sh

step "cargo test"
# Proxies and CLIs started by the tests keep originals on disk: in target/, never the user's cache.
export CONDENSE_STORE_DIR="$PWD/target/test-store"
# Unit, integration and doc tests (benches are built by clippy above; run them with cargo bench).
cargo test "$@"

