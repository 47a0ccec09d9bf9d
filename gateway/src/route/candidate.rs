//! A server that could serve a request, as the route engine sees it (docs/routing.md §3).

use std::net::SocketAddr;
use std::sync::Arc;

use super::congestion::CongestionState;

/// Type of the zone a server belongs to (`DBA_OB_ZONES.type`, docs/routing.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZoneType {
    /// `ReadWrite` (also `Encryption`): holds full replicas. Letter **W**.
    ReadWrite,
    /// `ReadOnly`: holds read-only replicas. Letter **R**.
    ReadOnly,
}

impl ZoneType {
    /// The letter of the LDC code (docs/routing.md §3).
    pub const fn letter(self) -> char {
        match self {
            ZoneType::ReadWrite => 'W',
            ZoneType::ReadOnly => 'R',
        }
    }
}

/// Role of the server's replica of the target tablet (docs/routing.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The tablet's leader (`role` 1).
    Leader,
    /// A follower (`role` 2).
    Follower,
    /// No replica of the tablet: a tenant server only.
    None,
}

/// Replica type (`replica_type` in `__all_virtual_proxy_schema`, docs/routing.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicaType {
    /// Full replica (0).
    Full,
    /// Log-only replica (5); never a candidate.
    LogOnly,
    /// Read-only replica (16).
    ReadOnly,
    /// Encrypted log-only replica (261); never a candidate.
    EncryptedLogOnly,
    /// Any other replica type, by its number.
    Other(i64),
}

impl ReplicaType {
    /// Maps the numeric `replica_type` of the location tables.
    pub const fn from_code(code: i64) -> Self {
        match code {
            0 => ReplicaType::Full,
            5 => ReplicaType::LogOnly,
            16 => ReplicaType::ReadOnly,
            261 => ReplicaType::EncryptedLogOnly,
            other => ReplicaType::Other(other),
        }
    }

    /// Log-only replicas cannot serve reads or writes and are never candidates.
    pub const fn is_log_only(self) -> bool {
        matches!(self, ReplicaType::LogOnly | ReplicaType::EncryptedLogOnly)
    }

    /// Name as ODP prints it in `ROUTE_POLICY:{type:"…"}`.
    pub fn name(self) -> String {
        match self {
            ReplicaType::Full => "FULL".to_owned(),
            ReplicaType::LogOnly => "LOGONLY".to_owned(),
            ReplicaType::ReadOnly => "READONLY".to_owned(),
            ReplicaType::EncryptedLogOnly => "ENCRYPTION_LOGONLY".to_owned(),
            ReplicaType::Other(n) => format!("TYPE_{n}"),
        }
    }
}

/// One server that could serve the request: a replica of the computed partition (a *partition
/// server*, letter P) or any other server of the tenant (a *tenant server*, letter T).
///
/// The candidate list of a request holds each server once: the tablet's replicas plus the
/// remaining tenant servers (the tenant's server list is also where "the tenant has read-only
/// zones" is learnt from, docs/routing.md §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Address of the OBServer's SQL port.
    pub addr: SocketAddr,
    /// Zone name (shared: candidates are cloned per statement).
    pub zone: Arc<str>,
    /// Region of the zone. Servers missing from the server list should carry an empty region
    /// (they then count as another region when LDC is used, docs/routing.md §3).
    pub region: Arc<str>,
    /// IDC (data centre) of the zone; empty if unknown.
    pub idc: Arc<str>,
    /// Read-write or read-only zone.
    pub zone_type: ZoneType,
    /// The zone is in major compaction (always false on OceanBase 4.x, docs/routing.md §3).
    pub merging: bool,
    /// Holds a replica of the target tablet (P) rather than being a tenant server only (T).
    /// When the partition could not be computed (docs/routing.md §12): holds a replica of any partition of the
    /// table.
    pub partition_server: bool,
    /// Role of the replica; [`Role::None`] for tenant servers. When the partition could not be
    /// computed: [`Role::Leader`] if the server leads some partition of the table.
    pub role: Role,
    /// Replica type of the server's replica ([`ReplicaType::Full`] for tenant servers).
    pub replica_type: ReplicaType,
    /// The replica is a duplicate-table (broadcast) replica.
    pub duplicate: bool,
    /// Congestion state of the server right now (from [`super::congestion::CongestionManager`]).
    pub congestion: CongestionState,
}

impl Candidate {
    /// A read-write, not merging, uncongested tenant server (no replica of the tablet); adjust
    /// the fields with the builder methods.
    pub fn tenant_server(addr: SocketAddr, zone: &str, region: &str, idc: &str) -> Self {
        Candidate {
            addr,
            zone: zone.into(),
            region: region.into(),
            idc: idc.into(),
            zone_type: ZoneType::ReadWrite,
            merging: false,
            partition_server: false,
            role: Role::None,
            replica_type: ReplicaType::Full,
            duplicate: false,
            congestion: CongestionState::Alive,
        }
    }

    /// Marks the server as holding the tablet with `role`.
    pub fn with_replica(mut self, role: Role) -> Self {
        self.partition_server = role != Role::None;
        self.role = role;
        self
    }

    /// Sets the zone type.
    pub fn with_zone_type(mut self, zone_type: ZoneType) -> Self {
        self.zone_type = zone_type;
        self
    }

    /// Sets the merge state.
    pub fn with_merging(mut self, merging: bool) -> Self {
        self.merging = merging;
        self
    }

    /// Sets the replica type.
    pub fn with_replica_type(mut self, replica_type: ReplicaType) -> Self {
        self.replica_type = replica_type;
        self
    }

    /// Marks the replica as a duplicate-table replica.
    pub fn with_duplicate(mut self, duplicate: bool) -> Self {
        self.duplicate = duplicate;
        self
    }

    /// The server leads the target tablet.
    pub fn is_leader(&self) -> bool {
        self.partition_server && self.role == Role::Leader
    }
}
