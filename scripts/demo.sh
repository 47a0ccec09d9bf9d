#!/usr/bin/env bash
# The main job on an embedded default: installs what is missing, starts local MariaDB servers and
# the gateway in front of them, prints how to connect, and runs until Ctrl-C.
# Extra arguments go to `cargo xtask demo` (e.g. --once).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
exec cargo xtask demo "$@"
