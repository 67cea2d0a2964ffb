#!/usr/bin/env bash
# Stops the proxy start.sh started (by the pid it wrote), if it still runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
state="${CONDENSE_LITELLM_STATE:-$here/../../target/litellm}"
exec "$here/../lib/stop-pid-file.sh" "$state/proxy.pid"
