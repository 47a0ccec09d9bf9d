//! Replicas of a tablet and their placement: role, replica type, server, zone (docs/routing.md §3).

use std::net::SocketAddr;
use std::sync::Arc;

use super::cluster::{Cluster, Server, Zone, ZoneType};

/// Replica role (`__all_virtual_proxy_schema.role`: 1 leader, 2 follower).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The leader: strong reads and writes.
    Leader,
    /// A follower (full or read-only replica).
    Follower,
}

impl Role {
    /// From the view's role code; anything but 1 is a follower.
    pub fn from_code(code: i64) -> Role {
        if code == 1 {
            Role::Leader
        } else {
            Role::Follower
        }
    }
}

/// Replica type (`replica_type`, docs/routing.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReplicaType {
    /// 0: full replica.
    #[default]
    Full,
    /// 1: backup replica.
    Backup,
    /// 5: log-only replica (never routed to).
    LogOnly,
    /// 16: read-only replica.
    ReadOnly,
    /// 20: memory-only replica.
    MemOnly,
    /// 261: encrypted log-only replica (never routed to).
    EncryptionLogOnly,
    /// Any other code.
    Other(i64),
}

impl ReplicaType {
    /// From the view's `replica_type` code.
    pub fn from_code(code: i64) -> ReplicaType {
        match code {
            0 => ReplicaType::Full,
            1 => ReplicaType::Backup,
            5 => ReplicaType::LogOnly,
            16 => ReplicaType::ReadOnly,
            20 => ReplicaType::MemOnly,
            261 => ReplicaType::EncryptionLogOnly,
            c => ReplicaType::Other(c),
        }
    }

    /// Whether a request may be routed to a replica of this type (log-only ones never are).
    pub fn is_routable(self) -> bool {
        !matches!(self, ReplicaType::LogOnly | ReplicaType::EncryptionLogOnly)
    }

    /// Upper-case name as EXPLAIN ROUTE prints it (`FULL`, `READONLY`).
    pub fn name(self) -> &'static str {
        match self {
            ReplicaType::Full => "FULL",
            ReplicaType::Backup => "BACKUP",
            ReplicaType::LogOnly => "LOGONLY",
            ReplicaType::ReadOnly => "READONLY",
            ReplicaType::MemOnly => "MEMONLY",
            ReplicaType::EncryptionLogOnly => "ENCRYPTION_LOGONLY",
            ReplicaType::Other(_) => "UNKNOWN",
        }
    }
}

/// One replica of a tablet: where it is and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Replica {
    /// SQL address of the server holding it.
    pub addr: SocketAddr,
    /// Leader or follower.
    pub role: Role,
    /// Replica type.
    pub replica_type: ReplicaType,
}

/// Location of one tablet (a partition entry): its replicas, leader first when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabletLocation {
    /// Tablet id (0 for the single tablet of a non-partitioned table).
    pub tablet_id: u64,
    /// Replicas.
    pub replicas: Vec<Replica>,
}

impl TabletLocation {
    /// The leader replica, if known.
    pub fn leader(&self) -> Option<&Replica> {
        self.replicas.iter().find(|r| r.role == Role::Leader)
    }
}

/// Servers hosting a tenant (the `__all_dummy` entry, docs/routing.md §12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantServers {
    /// Tenant name.
    pub tenant: String,
    /// Distinct SQL addresses.
    pub servers: Vec<SocketAddr>,
}

/// A server address with the server and zone information the cluster has for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedServer {
    /// SQL address.
    pub addr: SocketAddr,
    /// The server, if it is in the server list.
    pub server: Option<Arc<Server>>,
    /// The server's zone, if known.
    pub zone: Option<Arc<Zone>>,
}

impl PlacedServer {
    /// Looks `addr` up in `cluster`.
    pub fn place(addr: SocketAddr, cluster: &Cluster) -> PlacedServer {
        let server = cluster.server(addr).cloned();
        let zone = server.as_ref().and_then(|s| cluster.zone(&s.zone)).cloned();
        PlacedServer { addr, server, zone }
    }

    /// Server name (the static file's name or `ip:port`); the address if unknown.
    pub fn name(&self) -> String {
        self.server.as_ref().map_or_else(|| self.addr.to_string(), |s| s.name.clone())
    }

    /// Zone name, empty if unknown.
    pub fn zone_name(&self) -> &str {
        self.zone.as_ref().map_or("", |z| z.name.as_str())
    }

    /// Region name, empty if unknown (docs/routing.md §3: another region when LDC is used).
    pub fn region(&self) -> &str {
        self.zone.as_ref().map_or("", |z| z.region.as_str())
    }

    /// IDC name, empty if unknown.
    pub fn idc(&self) -> &str {
        self.zone.as_ref().map_or("", |z| z.idc.as_str())
    }

    /// Zone type; servers missing from the server list count as read-write (docs/routing.md §3).
    pub fn zone_type(&self) -> ZoneType {
        self.zone.as_ref().map_or(ZoneType::ReadWrite, |z| z.zone_type)
    }

    /// Zone merging; servers missing from the server list count as not merging (docs/routing.md §3).
    pub fn merging(&self) -> bool {
        self.zone.as_ref().is_some_and(|z| z.merging)
    }
}

/// A replica with its server's placement, as the route engine consumes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedReplica {
    /// The replica (address, role, type).
    pub replica: Replica,
    /// Its server, zone, region, IDC, zone type.
    pub server: PlacedServer,
}

impl PlacedReplica {
    /// Attaches server and zone information from `cluster` to a replica.
    pub fn place(replica: Replica, cluster: &Cluster) -> PlacedReplica {
        PlacedReplica { replica, server: PlacedServer::place(replica.addr, cluster) }
    }

    /// Whether this is the leader.
    pub fn is_leader(&self) -> bool {
        self.replica.role == Role::Leader
    }
}
