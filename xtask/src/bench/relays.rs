//! The relays that read no MySQL, started beside the proxies for `bench --cpu`.

use anyhow::Context;
use gateway_tests::MariaDb;

use crate::process::{self, Proc};
use crate::relay::RelayKind;

/// Starts `cargo xtask relay` (this binary) of `kind` in front of `db`.
pub(super) fn start_relay(dir: &std::path::Path, db: &MariaDb, kind: RelayKind) -> anyhow::Result<(Proc, u16)> {
    let port = process::free_port()?;
    let mut cmd = std::process::Command::new(std::env::current_exe().context("the xtask binary")?);
    cmd.args(["relay", "--listen", &format!("127.0.0.1:{port}"), "--to", &db.addr().to_string()]);
    cmd.args(kind.flag());
    let name = kind.target();
    let mut relay = Proc::spawn(name, cmd, &dir.join(format!("{name}.log")))?;
    relay.wait_for_port(process::loopback(port), std::time::Duration::from_secs(10))?;
    println!("==> {name} on 127.0.0.1:{port} (pid {}), log {}", relay.pid(), relay.log().display());
    Ok((relay, port))
}
