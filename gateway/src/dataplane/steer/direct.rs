//! Direct route (`[dataplane] direct_route = true`, mode `cgroup`): for a session whose route is
//! fixed before it starts, connect4 sends the application's connect straight to the chosen server
//! instead of the gateway listener, so the daemon is not in that connection's path at all.
//!
//! # When it is correct
//!
//! Only when the gateway would add nothing to the session, i.e. all of:
//!
//! * **the route is fixed before the session starts**: connect4 sees only the dialled address,
//!   never the login or a statement, so the server must follow from that address alone;
//! * **the server accepts the application's login as-is**: a plain MySQL login. The gateway must
//!   not be needed to terminate TLS (it does not today) or to rewrite the login: no configured
//!   account may have a `default_database` (the gateway adds it to logins that name none), and the
//!   server must know the application's accounts itself (the gateway's `[[users]]` check is
//!   skipped). While any account has `default_database`, no direct route is installed.
//!
//! The daemon installs an entry `dialled → server` in the `STEER_DIRECT` map for:
//!
//! * (a) **configured** entries, `[dataplane] direct_route_targets` (e.g. a passthrough
//!   deployment): the operator asserts both conditions. The key must be an intercepted address,
//!   the server must not be the gateway's own listener.
//! * (b) **single-leader tenants**: when every login the gateway accepts belongs to one tenant T
//!   (each `[[users]]` account's `tenant`, else `[routing] default_tenant`, is T), T's log-stream
//!   leaders are all on one server S (`Tenant.single_leader`, an active, in-service server that is
//!   not stopping), and the intercepted address X is an SQL address of a server hosting T: every
//!   statement of a session on X would be routed to S, so X → S. Configured entries win.
//!
//! Entries are recomputed when the topology is refreshed and removed as soon as their condition
//! stops holding (the leader moves, the tenant gains a second leader server, the server stops).
//! Connections that were already direct-routed stay where they are; only new connects change.
//!
//! # Why it is off by default
//!
//! A direct-routed session gets none of the gateway's services: its authentication, per-statement
//! routing and read/write splitting, failover and retry, EXPLAIN ROUTE, metrics and logs. A
//! leader change moves new connections only once the daemon has refreshed the topology; until then
//! new connects still go to the old leader (the gateway path would follow the cache feedback at
//! once). Fail-open semantics are unchanged: connect4 checks the daemon's liveness first and
//! ignores the map while the daemon is gone.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, SocketAddrV4};

use aya::maps::{HashMap, MapData};
use gateway_common::steer::{Ipv4Endpoint, STEER_DIRECT_MAP, STEER_DIRECT_MAX};

use super::{endpoint, map_error, missing, SteerError, Steering};
use crate::config::{Config, DataplaneConfig};
use crate::planner::Planner;
use crate::topology::{Cluster, ServerStatus};

/// Why a direct route is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// `[dataplane] direct_route_targets`.
    Configured,
    /// Every session is of this tenant, whose leaders are all on the target server.
    SingleLeader(String),
}

/// Direct routes: dialled address → (server, reason).
pub type DirectRoutes = BTreeMap<SocketAddrV4, (SocketAddrV4, Reason)>;

/// Why no direct route may be installed at all, if so. `None`: direct route is on and usable.
pub fn blocked(config: &Config) -> Option<String> {
    let dp = config.dataplane.as_ref()?;
    if !dp.direct_route {
        return Some("direct_route is off".into());
    }
    if let Some(u) = config.users.iter().find(|u| u.default_database.is_some()) {
        return Some(format!(
            "account {:?} has default_database: the gateway rewrites its logins, so a direct \
             login to the server would differ",
            u.name
        ));
    }
    None
}

/// (a) Configured entries whose key is intercepted and whose server is a usable IPv4 address.
pub fn configured(dp: &DataplaneConfig, intercepted: &BTreeSet<SocketAddr>, listener: SocketAddr) -> DirectRoutes {
    let mut out = DirectRoutes::new();
    for (&dialled, &server) in &dp.direct_route_targets {
        let (SocketAddr::V4(d), SocketAddr::V4(s)) = (dialled, server) else {
            tracing::warn!(%dialled, %server, "direct route ignored: IPv4 only");
            continue;
        };
        if !intercepted.contains(&dialled) {
            tracing::warn!(%dialled, %server, "direct route ignored: the dialled address is not intercepted");
            continue;
        }
        if is_listener(server, listener) {
            tracing::warn!(%dialled, %server, "direct route ignored: the server is the gateway itself");
            continue;
        }
        if d != s {
            out.insert(d, (s, Reason::Configured));
        }
    }
    out
}

/// The tenant of every session the gateway accepts, when it does not depend on the login: every
/// account names its tenant (a login name may name another tenant only for an account without
/// one, `login_name`), and all name the same one. Needs `[routing]`.
pub fn sessions_tenant(config: &Config) -> Option<String> {
    config.routing.as_ref()?;
    let mut tenants = config.users.iter().map(|u| u.tenant.clone());
    let first = tenants.next()??;
    tenants.all(|t| t.is_some_and(|t| t.eq_ignore_ascii_case(&first))).then_some(first)
}

/// (b) `X → leader` for each intercepted `X` that is a server hosting `tenant` (`hosts`), when
/// the tenant has a single, usable leader server.
pub fn single_leader(
    cluster: &Cluster,
    tenant: &str,
    hosts: &[SocketAddr],
    intercepted: &BTreeSet<SocketAddr>,
    listener: SocketAddr,
) -> DirectRoutes {
    let mut out = DirectRoutes::new();
    let Some(t) = cluster.tenant(tenant) else { return out };
    let Some(leader) = t.single_leader else { return out };
    let usable =
        cluster.server(leader).is_some_and(|s| s.status == ServerStatus::Active && s.in_service && !s.stopping);
    let SocketAddr::V4(to) = leader else { return out };
    if !usable || is_listener(leader, listener) {
        return out;
    }
    for x in intercepted {
        if let SocketAddr::V4(x4) = x {
            if hosts.contains(x) && cluster.server(*x).is_some() && *x4 != to {
                out.insert(*x4, (to, Reason::SingleLeader(t.name.clone())));
            }
        }
    }
    out
}

/// Every direct route that holds now (empty when [`blocked`]).
pub async fn plan(
    config: &Config,
    planner: Option<&Planner>,
    intercepted: &BTreeSet<SocketAddr>,
    listener: SocketAddr,
) -> DirectRoutes {
    let Some(dp) = config.dataplane.as_ref() else { return DirectRoutes::new() };
    if blocked(config).is_some() {
        return DirectRoutes::new();
    }
    let mut routes = DirectRoutes::new();
    if let (Some(p), Some(tenant)) = (planner, sessions_tenant(config)) {
        match p.locator().tenant_placed(&tenant).await {
            Ok(placed) => {
                let hosts: Vec<SocketAddr> = placed.iter().map(|s| s.addr).collect();
                routes = single_leader(&p.locator().cluster(), &tenant, &hosts, intercepted, listener);
            }
            Err(e) => {
                tracing::debug!(%tenant, error = %e, "servers of the tenant unknown; no single-leader direct routes")
            }
        }
    }
    routes.extend(configured(dp, intercepted, listener));
    routes
}

fn is_listener(addr: SocketAddr, listener: SocketAddr) -> bool {
    addr == listener || (listener.ip().is_unspecified() && addr.port() == listener.port() && addr.ip().is_loopback())
}

impl Steering {
    /// Replaces the direct routes in the kernel map: stale entries first removed, new or changed
    /// ones written.
    pub fn set_direct(&mut self, routes: &DirectRoutes) -> Result<(), SteerError> {
        let wanted: BTreeMap<SocketAddrV4, SocketAddrV4> = routes.iter().map(|(d, (s, _))| (*d, *s)).collect();
        if wanted == self.direct {
            return Ok(());
        }
        if wanted.len() > STEER_DIRECT_MAX as usize {
            return Err(SteerError::TooManyTargets { count: wanted.len(), max: STEER_DIRECT_MAX });
        }
        let mut map: HashMap<&mut MapData, Ipv4Endpoint, Ipv4Endpoint> =
            HashMap::try_from(self.ebpf.map_mut(STEER_DIRECT_MAP).ok_or(missing(STEER_DIRECT_MAP))?)
                .map_err(|e| map_error(STEER_DIRECT_MAP, e))?;
        for stale in self.direct.keys().filter(|k| !wanted.contains_key(k)) {
            map.remove(&endpoint(*stale)).map_err(|e| map_error(STEER_DIRECT_MAP, e))?;
        }
        for (dialled, server) in &wanted {
            if self.direct.get(dialled) != Some(server) {
                map.insert(endpoint(*dialled), endpoint(*server), 0).map_err(|e| map_error(STEER_DIRECT_MAP, e))?;
            }
        }
        let shown: Vec<String> = routes.iter().map(|(d, (s, why))| format!("{d} -> {s} ({why:?})")).collect();
        tracing::info!(routes = ?shown, "direct routes");
        self.direct = wanted;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testing;

    fn config(extra: &str) -> Config {
        testing::config(&(testing::user("root") + extra))
    }

    fn addrs(list: &[&str]) -> BTreeSet<SocketAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    const LISTENER: &str = "127.0.0.1:2883";

    #[test]
    fn configured_entries_need_an_intercepted_key_and_a_foreign_server() {
        let c = config(
            "[dataplane]\nmode = \"cgroup\"\ndirect_route = true\ndirect_route_targets = { \
             \"10.0.0.1:3306\" = \"10.0.0.2:3306\", \"10.0.0.3:3306\" = \"10.0.0.2:3306\", \
             \"10.0.0.4:3306\" = \"127.0.0.1:2883\" }\n",
        );
        let dp = c.dataplane.as_ref().unwrap();
        let r = configured(dp, &addrs(&["10.0.0.1:3306", "10.0.0.4:3306"]), LISTENER.parse().unwrap());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[&"10.0.0.1:3306".parse().unwrap()].0, "10.0.0.2:3306".parse::<SocketAddrV4>().unwrap());
        assert!(blocked(&c).is_none());
    }

    #[test]
    fn off_by_default_and_blocked_by_login_rewriting() {
        assert!(blocked(&config("[dataplane]\nmode = \"cgroup\"\n")).is_some());
        let text = "[dataplane]\nmode = \"cgroup\"\ndirect_route = true\n[[users]]\nname = \"d\"\n\
                    password = \"\"\ndefault_database = \"x\"\n";
        let c = config(text);
        assert!(blocked(&c).unwrap().contains("default_database"));
    }

    fn cluster(leader: Option<&str>, s2_status: ServerStatus) -> Cluster {
        use crate::topology::{PrimaryZone, Server, Tenant, Zone, ZoneStatus, ZoneType};
        let zone = Zone {
            name: "z1".into(),
            region: "r".into(),
            idc: String::new(),
            zone_type: ZoneType::ReadWrite,
            status: ZoneStatus::Active,
            merging: false,
        };
        let server = |name: &str, addr: &str, status| Server {
            name: name.into(),
            addr: addr.parse().unwrap(),
            rpc_port: None,
            zone: "z1".into(),
            status,
            in_service: true,
            stopping: false,
        };
        let tenant = Tenant {
            name: "t1".into(),
            id: None,
            primary_zone: PrimaryZone::Random,
            locality: String::new(),
            single_leader: leader.map(|l| l.parse().unwrap()),
        };
        let servers = vec![
            server("s1", "10.0.0.1:2881", ServerStatus::Active),
            server("s2", "10.0.0.2:2881", s2_status),
            server("s3", "10.0.0.3:2881", ServerStatus::Active),
        ];
        Cluster::new("c".into(), vec![zone], servers, vec![tenant]).unwrap()
    }

    #[test]
    fn single_leader_routes_the_tenants_servers_to_the_leader() {
        let listener = LISTENER.parse().unwrap();
        let hosts: Vec<SocketAddr> = ["10.0.0.1:2881", "10.0.0.2:2881"].iter().map(|a| a.parse().unwrap()).collect();
        let intercepted = addrs(&["10.0.0.1:2881", "10.0.0.2:2881", "10.0.0.3:2881", "10.9.9.9:3306"]);
        let c = cluster(Some("10.0.0.2:2881"), ServerStatus::Active);
        let r = single_leader(&c, "T1", &hosts, &intercepted, listener);
        // s1 (hosts t1) → s2; s2 is the leader itself; s3 does not host t1; 10.9.9.9 is no server.
        assert_eq!(r.len(), 1, "{r:?}");
        let (to, why) = &r[&"10.0.0.1:2881".parse().unwrap()];
        assert_eq!(*to, "10.0.0.2:2881".parse::<SocketAddrV4>().unwrap());
        assert_eq!(*why, Reason::SingleLeader("t1".into()));
        // The condition stops holding: no single leader, or the leader is not active.
        assert!(single_leader(&cluster(None, ServerStatus::Active), "t1", &hosts, &intercepted, listener).is_empty());
        let inactive = cluster(Some("10.0.0.2:2881"), ServerStatus::Inactive);
        assert!(single_leader(&inactive, "t1", &hosts, &intercepted, listener).is_empty());
        assert!(single_leader(&c, "t2", &hosts, &intercepted, listener).is_empty());
    }

    #[test]
    fn the_sessions_tenant_must_not_depend_on_the_login() {
        let routing = "[routing]\ntopology = \"demo\"\ndefault_tenant = \"t1\"\n";
        // An account without a tenant may log in as `user@any_tenant`.
        assert_eq!(sessions_tenant(&config(routing)), None);
        let two = format!("{routing}[[users]]\nname = \"u\"\npassword = \"\"\ntenant = \"t2\"\n");
        assert_eq!(sessions_tenant(&config(&two)), None);
        let same = format!("tenant = \"t1\"\n{routing}[[users]]\nname = \"u\"\npassword = \"\"\ntenant = \"T1\"\n");
        assert_eq!(sessions_tenant(&config(&same)).as_deref(), Some("t1"));
        assert_eq!(sessions_tenant(&config("")), None, "no routing, no tenant");
    }
}
