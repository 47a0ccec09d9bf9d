#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing (scripts/setup.sh), checks
# formatting (rustfmt) and lints (clippy, warnings denied), builds the workspace including the eBPF
# object, then runs unit tests, integration tests against real MariaDB servers and real clients,
# the peer suites (PyMySQL's and MariaDB's client tests, directly and through the gateway), and the
# privileged eBPF tests (root only; they print why they skip otherwise), then every fuzz target
# for a short while (`cargo xtask fuzz`, GATEWAY_FUZZ_TIME seconds each, default 20). It ends with
# a summary in which skipped tests are counted apart from passed ones.
set -euo pipefail
cd "$(dirname "$0")/.."
# A run from a clean checkout grows the checkout by about 6.5 GB (target/ and fuzz/target/); the
# toolchains, packages and servers setup.sh installs take about 2 GB more on a fresh machine.
# Running out of disk fails tests far from the cause, so say it first.
free_gb=$(df -Pk . | awk 'NR == 2 { printf "%d", $4 / 1048576 }')
echo "[test] free disk here: ${free_gb} GB (a clean run needs about 8 GB)"
[ "$free_gb" -ge 8 ] || echo "[test] WARNING: under 8 GB free; the build or the tests may fail with ENOSPC"
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
# A clean checkout gains nothing from incremental artefacts (2.6 GB of disk in a CI run).
export CARGO_INCREMENTAL=0
echo "[test] checking formatting and lints"
cargo fmt --all --check                       # rustfmt.toml: the house width
(cd fuzz && cargo fmt --check)                # the fuzz crate is its own workspace
cargo clippy --all-targets -- -D warnings     # default members (the eBPF crate builds for BPF only)
echo "[test] building"
cargo build --all-targets   # default members: the eBPF crate is built by gateway/build.rs
cargo build --release -p gateway
echo "[test] running"
# The harness would otherwise run `cargo build -p gateway`, whose features differ from the
# workspace build's and so build every dependency a second time; the binary above is current.
export GATEWAY_NO_BUILD=1
# Tests that cannot run here record why in the skip log (tests/src/skip.rs); the summary below
# counts them as skipped, not passed.
export GATEWAY_SKIP_LOG="$PWD/target/test-skips.log"
: > "$GATEWAY_SKIP_LOG"
status=0
cargo test --no-fail-fast -- --test-threads="${GATEWAY_TEST_THREADS:-2}" 2>&1 | tee target/test-output.log \
    || status=$?
bash scripts/test-summary.sh target/test-output.log "$GATEWAY_SKIP_LOG"
[ "$status" -eq 0 ] || { echo "[test] tests failed (cargo test exit $status)"; exit "$status"; }
echo "[test] fuzzing"
cargo xtask fuzz --time "${GATEWAY_FUZZ_TIME:-20}"
echo "[test] all tests passed"
