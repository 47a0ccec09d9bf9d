//! Which kind of server an address is: OceanBase or MySQL/MariaDB.
//!
//! An OceanBase cluster greets as `5.7.25-OceanBase_CE-v4.2.1.0`, but the seekdb build of the
//! 4.3.5 kernel greets as plain `5.7.25`, like a MySQL 5.7 server. So the greeting decides only
//! when it says OceanBase; otherwise the first pooled connection to an address asks the server
//! itself ([`probe`]: `SET @@session.ob_read_consistency = @@session.ob_read_consistency`, a
//! no-op on OceanBase, ERROR 1193 on MySQL) and the answer is kept for the address. A greeting
//! that names MariaDB is never probed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use super::backend::Backend;
use super::pool::command;
use crate::login_name::ServerKind;
use crate::protocol::command as cmd;

/// What probes found, by server address.
static LEARNT: Mutex<BTreeMap<SocketAddr, ServerKind>> = Mutex::new(BTreeMap::new());

/// The probe: accepted by every OceanBase version, unknown to MySQL and MariaDB.
const PROBE: &[u8] = b"SET @@session.ob_read_consistency = @@session.ob_read_consistency";

fn learnt() -> std::sync::MutexGuard<'static, BTreeMap<SocketAddr, ServerKind>> {
    LEARNT.lock().unwrap_or_else(|p| p.into_inner())
}

/// The kind of the server at `addr` that sent a greeting with `version`, if known: a greeting
/// that names OceanBase or MariaDB decides; otherwise what a probe found.
pub fn known(addr: SocketAddr, version: &str) -> Option<ServerKind> {
    if ServerKind::of_version(version) == ServerKind::OceanBase {
        return Some(ServerKind::OceanBase);
    }
    if version.contains("MariaDB") {
        return Some(ServerKind::Mysql);
    }
    learnt().get(&addr).copied()
}

/// [`known`], MySQL when not known (yet).
pub fn of(addr: SocketAddr, version: &str) -> ServerKind {
    known(addr, version).unwrap_or(ServerKind::Mysql)
}

/// The kind of the server of a logged-in connection: known, or probed now and remembered.
/// `None`: the probe could not be answered (the connection is then broken).
pub async fn probe(backend: &mut Backend, addr: SocketAddr, timeout: Duration) -> Option<ServerKind> {
    if let Some(kind) = known(addr, &backend.greeting.server_version) {
        return Some(kind);
    }
    let payload = [&[cmd::QUERY], PROBE].concat();
    let kind = match command(backend, &payload, timeout).await.ok()? {
        Ok(_) => ServerKind::OceanBase,
        Err(_) => ServerKind::Mysql,
    };
    tracing::info!(server = %addr, version = %backend.greeting.server_version, ?kind, "server kind learnt");
    learnt().insert(addr, kind);
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings_that_name_the_server_decide() {
        let addr: SocketAddr = "192.0.2.1:1".parse().unwrap();
        assert_eq!(known(addr, "5.7.25-OceanBase_CE-v4.2.1.0"), Some(ServerKind::OceanBase));
        assert_eq!(known(addr, "5.5.5-10.11.6-MariaDB"), Some(ServerKind::Mysql));
        assert_eq!(known(addr, "5.7.25"), None);
        assert_eq!(of(addr, "5.7.25"), ServerKind::Mysql);
        learnt().insert(addr, ServerKind::OceanBase);
        assert_eq!(of(addr, "5.7.25"), ServerKind::OceanBase);
    }
}
