//! Test harness: starts real MariaDB servers and the gateway on loopback, and drives real clients.
//!
//! * [`MariaDb`] — a private `mariadbd` on a free loopback port with its own data directory
//!   (copied from a cached, initialised template), general log on; stopped by PID on `Drop`.
//! * [`Gateway`] — the `gateway` binary run with a TOML configuration; stopped by PID on `Drop`.
//!   The binary is built once per process with `cargo build -p gateway` (skip with
//!   `GATEWAY_NO_BUILD=1`, or point `GATEWAY_BIN` at a binary).
//! * [`clients`] — the `mariadb` CLI and PyMySQL scripts (`tests/py/`) run with the venv python.
//! * [`mysql`] — `mysql_async` helpers (connect by URL, rows as values, error codes).
//! * [`sysbench`] — prepare / run / cleanup and the parsed report.
//! * [`raw`] — a minimal hand-written MySQL client for malformed-input and low-level protocol tests.
//! * [`Stack`] — one MariaDB plus one gateway in front of it, the usual fixture of a test file.
//! * [`tls`] — test certificates (a CA, server certificates for 127.0.0.1) made with rcgen.
//! * [`cgroup`] — test-owned cgroup2 directories and running processes inside them (eBPF tests).
//! * [`netns`] — test-owned network namespaces and the `ip` runner (eBPF tests).
//! * [`cluster`] — a multi-zone cluster of MariaDB servers behind a routing gateway (static
//!   topology, general logs, route log, kill / restart); [`general_log`] reads the servers' logs;
//!   [`workload`] generates and runs the seeded mixed workload of the routing tests.
//! * [`netfuzz`] — the network fuzzer: seeded mutated handshakes and commands over raw TCP, and a
//!   canary session checking its answers are its own.
//! * [`config_server`] — an HTTP config server answering what the test sets, counting requests.
//! * [`sys_tenant`] — a MariaDB playing an OceanBase sys tenant (the view-shaped tables).
//! * [`peers`] — other projects' client test suites (PyMySQL's, MariaDB's C-API test program), run
//!   against one endpoint with each case's outcome by name.
//! * [`skip`] — `SKIP: reason` for tests that cannot run here, recorded for the run's summary.
//!
//! Everything binds 127.0.0.1 only (docs/architecture.md §3). Servers live under
//! `<workspace>/target/test-servers/` and are stopped by PID when their owner is dropped, at exit
//! for the per-file shared stacks, or by a parent-death signal if the test binary is killed.
//!
//! Running: `scripts/setup.sh` once (mariadb, sysbench, the PyMySQL venv), then
//! `cargo test -p gateway-tests` (about 40 s; one file: `--test login`). Environment:
//! `GATEWAY_BIN` (use this binary, no build), `GATEWAY_NO_BUILD=1` (use `target/debug/gateway` as
//! is), `GATEWAY_VENV` (python venv), `GATEWAY_KEEP_SERVERS=1` (keep data dirs and logs).

pub mod bpffs;
pub mod cgroup;
pub mod clients;
pub mod cluster;
pub mod config_server;
pub mod conformance;
pub mod container;
pub mod gateway;
pub mod general_log;
pub mod mariadb;
pub mod mysql;
pub mod netfuzz;
pub mod netns;
pub mod peers;
pub mod process;
pub mod raw;
pub mod seekdb;
pub mod skip;
pub mod stack;
pub mod sys_tenant;
pub mod sysbench;
pub mod tls;
pub mod workload;

use std::net::TcpListener;
use std::path::PathBuf;

pub use gateway::{Gateway, GatewayConfig, UserEntry};
pub use mariadb::{MariaDb, MariaDbOptions};
pub use stack::Stack;

/// Root of the cargo workspace (the directory holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// The cargo target directory: `CARGO_TARGET_DIR` if set, else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                workspace_root().join(d)
            }
        }
        None => workspace_root().join("target"),
    }
}

/// Where the harness puts server data directories, configs and logs.
pub fn servers_dir() -> PathBuf {
    target_dir().join("test-servers")
}

/// A fresh scratch directory under [`servers_dir`], deleted at process exit (kept with
/// `GATEWAY_KEEP_SERVERS=1`).
pub fn scratch_dir(name: &str) -> anyhow::Result<PathBuf> {
    let dir = servers_dir().join(format!("{name}-{}", unique_suffix()));
    std::fs::create_dir_all(&dir)?;
    process::register_dir(dir.clone());
    Ok(dir)
}

/// Raises this process's soft open-files limit to the hard one (gateways and servers it starts
/// inherit it); returns the new soft limit, 0 if it could not be read or set.
pub fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit with a valid pointer to a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        lim.rlim_cur = lim.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
            return 0;
        }
    }
    lim.rlim_cur
}

/// A currently free TCP port on 127.0.0.1, chosen below the kernel's ephemeral range
/// (`net.ipv4.ip_local_port_range`): a port the OS hands out for `bind(0)` can be taken by
/// another test's outgoing connection before the caller binds it (a MariaDB once failed with
/// `Address already in use` that way), a port below the range never is. Random within
/// [`LOW_PORTS`], checked free by binding it; there is still a small window before the caller
/// binds it, which callers that can retry on `EADDRINUSE` cover.
pub fn free_port() -> anyhow::Result<u16> {
    let (low, high) = low_ports();
    for attempt in 0u64..500 {
        let port = low + (port_seed(attempt) % u64::from(high - low)) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    let l = TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Where [`free_port`] picks from: below the ephemeral range's start, and never below 10,000.
pub const LOW_PORTS: (u16, u16) = (10_000, 32_768);

fn low_ports() -> (u16, u16) {
    let start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(LOW_PORTS.1);
    let high = start.min(LOW_PORTS.1);
    if high > LOW_PORTS.0 + 1_000 {
        (LOW_PORTS.0, high)
    } else {
        (1_024, high.max(2_048))
    }
}

/// A different pseudo-random number per call (process id, a counter, the clock), hashed.
fn port_seed(attempt: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    h.write_u64(attempt);
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

/// Unique suffix for names: `<pid>-<n>` with `n` counting up within this process.
pub fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-1 of `bytes` as lower-case hex.
pub fn sha1_hex(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    hex(&Sha1::digest(bytes))
}

/// The `mysql_native_password` hash of `password` as stored by the server: `*` + upper-case hex of
/// SHA1(SHA1(password)).
pub fn native_password_hash(password: &str) -> String {
    use sha1::{Digest, Sha1};
    let stage2 = Sha1::digest(Sha1::digest(password.as_bytes()));
    format!("*{}", hex(&stage2).to_uppercase())
}

/// The last `max` bytes of a text file, for error messages.
pub fn tail_file(path: &std::path::Path, max: usize) -> String {
    match std::fs::read(path) {
        Ok(b) => {
            let start = b.len().saturating_sub(max);
            String::from_utf8_lossy(&b[start..]).into_owned()
        }
        Err(e) => format!("<cannot read {}: {e}>", path.display()),
    }
}

#[cfg(test)]
mod port_tests {
    use super::*;

    #[test]
    fn free_ports_are_below_the_ephemeral_range_and_bindable() {
        let (low, high) = low_ports();
        let ports: Vec<u16> = (0..20).map(|_| free_port().expect("a free port")).collect();
        for &p in &ports {
            assert!((low..high).contains(&p), "port {p} outside {low}..{high}");
            TcpListener::bind(("127.0.0.1", p)).unwrap_or_else(|e| panic!("port {p} not bindable: {e}"));
        }
        let distinct: std::collections::HashSet<u16> = ports.iter().copied().collect();
        assert!(distinct.len() > 15, "the picks barely vary: {ports:?}");
    }
}
