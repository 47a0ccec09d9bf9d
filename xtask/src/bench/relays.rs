//! The relays that read no MySQL, started beside the proxies for `bench --cpu`.

use anyhow::Context;
use gateway_tests::MariaDb;

use crate::process::{self, Proc};

/// The relays that read no MySQL, for reading each proxy's cost against (`cargo xtask relay`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RelayKind {
    /// A thread per direction, blocking calls.
    Blocking,
    /// One tokio current-thread runtime on epoll, as the gateway's sessions (`--tokio`).
    Tokio,
    /// The same runtime with its receives and sends on an io_uring (`--hybrid`).
    Hybrid,
    /// One thread on an io_uring alone, each receive linked to its send (`--uring`).
    Uring,
}

impl RelayKind {
    pub(super) const ALL: [RelayKind; 4] = [RelayKind::Blocking, RelayKind::Tokio, RelayKind::Hybrid, RelayKind::Uring];

    pub(super) fn target(self) -> &'static str {
        match self {
            RelayKind::Blocking => "relay",
            RelayKind::Tokio => "relay-tokio",
            RelayKind::Hybrid => "relay-hybrid",
            RelayKind::Uring => "relay-uring",
        }
    }

    fn flag(self) -> Option<&'static str> {
        match self {
            RelayKind::Blocking => None,
            RelayKind::Tokio => Some("--tokio"),
            RelayKind::Hybrid => Some("--hybrid"),
            RelayKind::Uring => Some("--uring"),
        }
    }

    pub(super) fn uses_io_uring(self) -> bool {
        matches!(self, RelayKind::Hybrid | RelayKind::Uring)
    }
}

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
