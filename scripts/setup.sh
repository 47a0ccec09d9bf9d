#!/usr/bin/env bash
# Installs everything the build, the demo and the tests need. Idempotent: each step checks first,
# so a second run on a prepared machine takes a few seconds.
#
#   Debian packages: mariadb-server, mariadb-client, sysbench, haproxy, iproute2, python3-venv, unzip
#   Rust: a dated nightly with rust-src (the eBPF crate), bpf-linker (links the eBPF object),
#         cargo-fuzz (`cargo xtask fuzz` builds the fuzz targets with the same nightly)
#   Python venv with PyMySQL (a real client driver for the tests)
#   The OceanBase kernel (seekdb server binary from the pylibseekdb wheel)
#   Peer test suites (tests/tests/peer_suites.rs), in $TOOLS/peers: PyMySQL's own test suite
#   (the PyMySQL 0.10.1 sdist, the last one that ships pymysql/tests) with pytest and
#   pytest-timeout in the venv, and MariaDB's C-API test program `mariadb-client-test` taken from
#   the Debian package mariadb-test of the installed server's version (only that binary is kept)
#
# Environment: GATEWAY_TOOLS (default ~/.cache/gateway) holds the venv and the seekdb binary.
set -euo pipefail

EBPF_NIGHTLY="${GATEWAY_EBPF_TOOLCHAIN:-nightly-2026-05-19}"
BPF_LINKER_VERSION="0.10.0"
CARGO_FUZZ_VERSION="0.13.2"
TOOLS="${GATEWAY_TOOLS:-$HOME/.cache/gateway}"
VENV="$TOOLS/venv"
SEEKDB_HOME="$TOOLS/seekdb"
SEEKDB_WHEEL="pylibseekdb==1.4.0.post1"
PEERS="$TOOLS/peers"
PYMYSQL_SUITE="0.10.1"

log() { printf '[setup] %s\n' "$*"; }

apt_packages() {
    local want=(mariadb-server mariadb-client sysbench haproxy iproute2 python3-venv unzip ca-certificates)
    local missing=()
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        log "installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        log "Debian packages present"
    fi
}

rust_toolchains() {
    # rustfmt and clippy on the default toolchain: scripts/test.sh checks formatting and lints.
    local have
    have=$(rustup component list --installed 2>/dev/null)
    if ! grep -q '^rustfmt' <<<"$have" || ! grep -q '^clippy' <<<"$have"; then
        log "adding rustfmt and clippy"
        rustup component add rustfmt clippy
    else
        log "rustfmt and clippy present"
    fi
    if ! rustup run "$EBPF_NIGHTLY" rustc --version >/dev/null 2>&1 \
        || ! rustup component list --toolchain "$EBPF_NIGHTLY" --installed 2>/dev/null | grep -q '^rust-src'; then
        log "installing $EBPF_NIGHTLY with rust-src"
        rustup toolchain install "$EBPF_NIGHTLY" --profile minimal --component rust-src
    else
        log "$EBPF_NIGHTLY with rust-src present"
    fi
    if ! bpf-linker --version 2>/dev/null | grep -q "$BPF_LINKER_VERSION"; then
        log "installing bpf-linker $BPF_LINKER_VERSION"
        cargo install bpf-linker --version "$BPF_LINKER_VERSION" --locked
    else
        log "bpf-linker $BPF_LINKER_VERSION present"
    fi
    if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
        log "installing cargo-fuzz $CARGO_FUZZ_VERSION"
        cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
    else
        log "cargo-fuzz $CARGO_FUZZ_VERSION present"
    fi
}

python_env() {
    if [ ! -x "$VENV/bin/python" ]; then
        log "creating venv $VENV"
        python3 -m venv "$VENV"
    fi
    # PyNaCl: PyMySQL's MariaDB ed25519 authentication (client_ed25519).
    if ! "$VENV/bin/python" -c 'import pymysql, cryptography, nacl' 2>/dev/null; then
        log "installing PyMySQL"
        "$VENV/bin/pip" install -q 'PyMySQL==1.1.1' 'cryptography' 'PyNaCl'
    else
        log "PyMySQL present"
    fi
}

seekdb() {
    if [ -x "$SEEKDB_HOME/pylibseekdb/seekdb" ]; then
        log "seekdb present"
        return
    fi
    log "fetching the OceanBase kernel ($SEEKDB_WHEEL)"
    local wheels="$TOOLS/wheels"
    mkdir -p "$wheels" "$SEEKDB_HOME"
    "$VENV/bin/pip" download -q --no-deps "$SEEKDB_WHEEL" -d "$wheels" \
        --python-version 3.11 --only-binary=:all: --platform manylinux_2_28_x86_64
    unzip -q -o "$wheels"/pylibseekdb-*.whl 'pylibseekdb/seekdb' 'pylibseekdb/libaio.so.1' -d "$SEEKDB_HOME"
    chmod +x "$SEEKDB_HOME/pylibseekdb/seekdb"
}

peer_suites() {
    mkdir -p "$PEERS"
    if [ ! -f "$PEERS/PyMySQL-$PYMYSQL_SUITE/pymysql/tests/base.py" ]; then
        log "fetching PyMySQL $PYMYSQL_SUITE's test suite (sdist)"
        local tmp
        tmp=$(mktemp -d)
        "$VENV/bin/pip" download -q --no-deps --no-binary :all: "PyMySQL==$PYMYSQL_SUITE" -d "$tmp"
        tar -xzf "$tmp/PyMySQL-$PYMYSQL_SUITE.tar.gz" -C "$PEERS"
        rm -rf "$tmp"
    else
        log "PyMySQL $PYMYSQL_SUITE test suite present"
    fi
    if ! "$VENV/bin/python" -c 'import pytest, pytest_timeout' 2>/dev/null; then
        log "installing pytest and pytest-timeout"
        "$VENV/bin/pip" install -q 'pytest==8.3.4' 'pytest-timeout==2.4.0'
    else
        log "pytest present"
    fi
    local version
    version=$(dpkg-query -W -f='${Version}' mariadb-server)
    if [ -x "$PEERS/mariadb-client-test" ] && [ "$(cat "$PEERS/mariadb-client-test.version" 2>/dev/null)" = "$version" ]; then
        log "mariadb-client-test $version present"
        return
    fi
    log "fetching mariadb-client-test from mariadb-test=$version"
    local tmp
    tmp=$(mktemp -d)
    chmod 755 "$tmp"   # apt-get download runs as _apt when it can
    if ! (cd "$tmp" && apt-get download -q "mariadb-test=$version" >/dev/null 2>&1); then
        apt-get update -qq
        (cd "$tmp" && apt-get download -q "mariadb-test=$version" >/dev/null)
    fi
    dpkg-deb --fsys-tarfile "$tmp"/mariadb-test_*.deb | tar -x -C "$tmp" ./usr/bin/mariadb-client-test
    mv "$tmp/usr/bin/mariadb-client-test" "$PEERS/mariadb-client-test"
    echo "$version" > "$PEERS/mariadb-client-test.version"
    rm -rf "$tmp"
}

apt_packages
rust_toolchains
python_env
seekdb
peer_suites
log "done (tools in $TOOLS)"
