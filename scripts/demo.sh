#!/usr/bin/env bash
# The main job on an embedded default: installs what is missing, starts three local MariaDB servers
# (the servers of the embedded multi-zone demo topology, each with the sample schema) and the
# gateway routing in front of them, runs a scripted session that prints each statement's EXPLAIN
# ROUTE summary and the server it actually ran on, prints how to connect, and runs until Ctrl-C.
# Extra arguments go to `cargo xtask demo` (e.g. --once, --strict).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
exec cargo xtask demo "$@"
