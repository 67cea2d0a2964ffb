#!/usr/bin/env bash
# Stops the Redis server start.sh started (by the pid it wrote), if it still runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
state="${CONDENSE_REDIS_STATE:-$here/../../target/redis}"
exec "$here/../lib/stop-pid-file.sh" "$state/redis.pid"
