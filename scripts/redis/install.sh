#!/usr/bin/env bash
# Installs the Redis server that the `redis` integration tests run against: Debian's
# `redis-server` package. Idempotent: an installed `redis-server` is kept. When it cannot be
# installed (no root, no apt), it says so and exits 0: the tests then skip, naming the variable.
#
# Usage: scripts/redis/install.sh
set -euo pipefail

if command -v redis-server >/dev/null; then
    echo "redis-server already installed ($(redis-server --version | head -n 1))"
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    echo "redis-server is not installed and apt-get is missing: install Redis or Valkey yourself;" \
        "the redis tests skip until then" >&2
    exit 0
fi

as_root=()
if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        echo "redis-server is not installed and installing it needs root: run" \
            "'apt-get install redis-server' as root; the redis tests skip until then" >&2
        exit 0
    fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get update -qq >&2 ||
    ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends redis-server >&2; then
    echo "installing redis-server with apt-get failed; the redis tests skip until it is installed" >&2
    exit 0
fi
# The package starts a system-wide server on port 6379; the tests start their own, so that
# one is left alone.
echo "redis-server installed ($(redis-server --version | head -n 1))"
