//! haproxy in TCP mode in front of one server: the L4 peer in the side-by-side benchmark.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;

use crate::process::{loopback, Proc};

/// The configuration of docs/architecture.md §3 for one backend, minus two lines: no `check` on
/// the server (with a single server there is nothing to fail over to, and health-check connects
/// would only add aborted connections to MariaDB during the measurement) and no `option tcplog`
/// (there is no log address, so haproxy only warns that it ignores it).
pub fn config(listen_port: u16, backend_port: u16) -> String {
    format!(
        "global\n    maxconn 2000\n    nbthread 1\n\
         defaults\n    mode tcp\n    timeout connect 5s\n    timeout client  1h\n    timeout server  1h\n\
         listen mariadb_bench\n    bind 127.0.0.1:{listen_port}\n    \
         server m1 127.0.0.1:{backend_port}\n"
    )
}

/// Writes `<dir>/haproxy.cfg`, starts `haproxy -db -f` on it (output in `<dir>/haproxy.log`)
/// and waits for the listener.
pub fn start(dir: &Path, listen_port: u16, backend_port: u16) -> anyhow::Result<Proc> {
    let cfg = dir.join("haproxy.cfg");
    std::fs::write(&cfg, config(listen_port, backend_port)).with_context(|| format!("writing {}", cfg.display()))?;
    let mut cmd = Command::new("haproxy");
    cmd.arg("-db").arg("-f").arg(&cfg);
    let mut proc = Proc::spawn("haproxy", cmd, &dir.join("haproxy.log"))?;
    proc.wait_for_port(loopback(listen_port), Duration::from_secs(10))?;
    Ok(proc)
}
