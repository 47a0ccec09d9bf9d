#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing (scripts/setup.sh), builds
# the workspace including the eBPF object, then runs unit tests, integration tests against real
# MariaDB servers and real clients, and the privileged eBPF tests (root only; they print why they
# skip otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
echo "[test] building"
cargo build --all-targets   # default members: the eBPF crate is built by gateway/build.rs
cargo build --release -p gateway
echo "[test] running"
cargo test --no-fail-fast -- --test-threads="${GATEWAY_TEST_THREADS:-2}"
echo "[test] all tests passed"
