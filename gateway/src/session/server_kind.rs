//! Which kind of server an address is: OceanBase or MySQL/MariaDB.
//!
//! An OceanBase cluster greets as `5.7.25-OceanBase_CE-v4.2.1.0`, but the seekdb build of the
//! 4.3.5 kernel greets as plain `5.7.25`, like a MySQL 5.7 server. So the greeting decides only
//! when it says OceanBase; otherwise the first pooled connection to an address asks the server
//! itself ([`crate::session::pool::health::probe_kind`]: `SET @@session.ob_read_consistency =
//! @@session.ob_read_consistency`, a no-op on OceanBase, ERROR 1193 on MySQL) and the answer is
//! kept for the address. A greeting that names MariaDB is never probed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;

use crate::login_name::ServerKind;

/// What probes found, by server address.
static LEARNT: Mutex<BTreeMap<SocketAddr, ServerKind>> = Mutex::new(BTreeMap::new());

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

/// Remembers what a probe ([`crate::session::pool::health::probe_kind`]) found at `addr`.
pub fn learn(addr: SocketAddr, kind: ServerKind) {
    learnt().insert(addr, kind);
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
