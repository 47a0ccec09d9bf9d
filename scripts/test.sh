#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing (scripts/setup.sh), builds
# the workspace including the eBPF object, then runs unit tests, integration tests against real
# MariaDB servers and real clients, and the privileged eBPF tests (root only; they print why they
# skip otherwise), then every fuzz target for a short while (`cargo xtask fuzz`, GATEWAY_FUZZ_TIME
# seconds each, default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
echo "[test] building"
cargo build --all-targets   # default members: the eBPF crate is built by gateway/build.rs
cargo build --release -p gateway
echo "[test] running"
cargo test --no-fail-fast -- --test-threads="${GATEWAY_TEST_THREADS:-2}"
echo "[test] fuzzing"
cargo xtask fuzz --time "${GATEWAY_FUZZ_TIME:-20}"
echo "[test] all tests passed"
