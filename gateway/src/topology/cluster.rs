//! The cluster model: zones, servers, tenants and their primary zones (docs/routing.md §12).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;

use super::TopologyError;

/// Zone type (`DBA_OB_ZONES.type`, docs/routing.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ZoneType {
    /// `ReadWrite`: full replicas (also the reading of unknown values).
    #[default]
    ReadWrite,
    /// `ReadOnly`: read-only replicas only.
    ReadOnly,
    /// `Encryption`: treated like a read-write zone for routing.
    Encryption,
}

impl ZoneType {
    /// Parses `DBA_OB_ZONES.type`; unknown values are read-write (docs/routing.md §4).
    pub fn from_view(text: &str) -> ZoneType {
        match text.trim().to_ascii_lowercase().replace(['_', '-'], "").as_str() {
            "readonly" => ZoneType::ReadOnly,
            "encryption" => ZoneType::Encryption,
            _ => ZoneType::ReadWrite,
        }
    }

    /// Whether the zone holds read-only replicas (letter R of the LDC code).
    pub fn is_read_only(self) -> bool {
        self == ZoneType::ReadOnly
    }
}

/// Zone status (`DBA_OB_ZONES.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ZoneStatus {
    /// `ACTIVE`.
    #[default]
    Active,
    /// `INACTIVE`.
    Inactive,
}

impl FromStr for ZoneStatus {
    type Err = TopologyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_uppercase().as_str() {
            "ACTIVE" => Ok(ZoneStatus::Active),
            "INACTIVE" => Ok(ZoneStatus::Inactive),
            other => Err(TopologyError::Invalid(format!("unknown zone status `{other}`"))),
        }
    }
}

/// A zone: a set of servers in one region and IDC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// Zone name (`zone1`).
    pub name: String,
    /// Region (city) name, compared case-insensitively by the LDC classification.
    pub region: String,
    /// IDC (data centre) name; may be empty.
    pub idc: String,
    /// Read-write or read-only.
    pub zone_type: ZoneType,
    /// Active or inactive.
    pub status: ZoneStatus,
    /// Major compaction in progress (always false on OceanBase 4.x, docs/routing.md §3).
    pub merging: bool,
}

/// Server status (`DBA_OB_SERVERS.status`, docs/routing.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ServerStatus {
    /// `ACTIVE`.
    #[default]
    Active,
    /// `INACTIVE`.
    Inactive,
    /// `DELETING`.
    Deleting,
}

impl FromStr for ServerStatus {
    type Err = TopologyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_uppercase().as_str() {
            "ACTIVE" => Ok(ServerStatus::Active),
            "INACTIVE" => Ok(ServerStatus::Inactive),
            "DELETING" => Ok(ServerStatus::Deleting),
            other => Err(TopologyError::Invalid(format!("unknown server status `{other}`"))),
        }
    }
}

/// An OBServer (or any MySQL-protocol server) as the router sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// Name: the static file's server name, or `ip:port` for discovered servers.
    pub name: String,
    /// SQL address clients connect to.
    pub addr: SocketAddr,
    /// RPC port when known (sys views only).
    pub rpc_port: Option<u16>,
    /// Zone name.
    pub zone: String,
    /// Status.
    pub status: ServerStatus,
    /// `start_service_time` is set: the server serves requests.
    pub in_service: bool,
    /// `stop_time` is set: being stopped or upgraded.
    pub stopping: bool,
}

/// A tenant's primary zone list parsed into weight groups (docs/routing.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PrimaryZone {
    /// No preference (`RANDOM` or empty).
    #[default]
    Random,
    /// Groups in priority order; zones inside a group are equal (`'z1,z2;z3'` → `[[z1,z2],[z3]]`).
    Groups(Vec<Vec<String>>),
}

impl PrimaryZone {
    /// Parses `DBA_OB_TENANTS.primary_zone`: `;` separates priorities, `,` separates equals.
    pub fn parse(text: &str) -> PrimaryZone {
        let t = text.trim();
        if t.is_empty() || t.eq_ignore_ascii_case("random") {
            return PrimaryZone::Random;
        }
        let groups: Vec<Vec<String>> = t
            .split(';')
            .map(|g| g.split(',').map(str::trim).filter(|z| !z.is_empty()).map(str::to_string).collect::<Vec<_>>())
            .filter(|g| !g.is_empty())
            .collect();
        if groups.is_empty() {
            PrimaryZone::Random
        } else {
            PrimaryZone::Groups(groups)
        }
    }

    /// Weight of a zone: 0 for the first group, 1 for the next …; `None` if not listed.
    pub fn weight(&self, zone: &str) -> Option<usize> {
        match self {
            PrimaryZone::Random => None,
            PrimaryZone::Groups(g) => g.iter().position(|grp| grp.iter().any(|z| z == zone)),
        }
    }
}

/// A tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    /// Tenant name (`sys`, `t1`).
    pub name: String,
    /// Tenant id when known.
    pub id: Option<u64>,
    /// Primary zone weight groups.
    pub primary_zone: PrimaryZone,
    /// Locality text (`FULL{1}@z1, …`), for change detection; may be empty.
    pub locality: String,
    /// The single server holding every user log-stream leader, if there is one (docs/routing.md §3).
    pub single_leader: Option<SocketAddr>,
}

/// Servers, zones and tenants of one cluster: what the 20 s server-state refresh produces.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// Cluster name.
    pub name: String,
    zones: Vec<Arc<Zone>>,
    servers: Vec<Arc<Server>>,
    tenants: Vec<Arc<Tenant>>,
    /// Server index by address (foldhash: looked up for every candidate of every routed
    /// statement; the addresses come from the topology, not from clients).
    by_addr: HashMap<SocketAddr, usize, foldhash::fast::RandomState>,
}

impl Cluster {
    /// Builds a cluster; servers must name known zones and have distinct names and addresses.
    pub fn new(
        name: String,
        zones: Vec<Zone>,
        servers: Vec<Server>,
        tenants: Vec<Tenant>,
    ) -> Result<Cluster, TopologyError> {
        let mut by_addr = HashMap::with_hasher(foldhash::fast::RandomState::default());
        for (i, s) in servers.iter().enumerate() {
            if !zones.iter().any(|z| z.name == s.zone) {
                return Err(TopologyError::Invalid(format!("server {} is in unknown zone {}", s.name, s.zone)));
            }
            if by_addr.insert(s.addr, i).is_some() {
                return Err(TopologyError::Invalid(format!("two servers have address {}", s.addr)));
            }
            if servers[..i].iter().any(|o| o.name == s.name) {
                return Err(TopologyError::Invalid(format!("two servers are named {}", s.name)));
            }
        }
        Ok(Cluster {
            name,
            zones: zones.into_iter().map(Arc::new).collect(),
            servers: servers.into_iter().map(Arc::new).collect(),
            tenants: tenants.into_iter().map(Arc::new).collect(),
            by_addr,
        })
    }

    /// All zones.
    pub fn zones(&self) -> &[Arc<Zone>] {
        &self.zones
    }

    /// All servers.
    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    /// All tenants.
    pub fn tenants(&self) -> &[Arc<Tenant>] {
        &self.tenants
    }

    /// The server with this SQL address.
    pub fn server(&self, addr: SocketAddr) -> Option<&Arc<Server>> {
        self.by_addr.get(&addr).and_then(|&i| self.servers.get(i))
    }

    /// The server with this name.
    pub fn server_by_name(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The zone with this name.
    pub fn zone(&self, name: &str) -> Option<&Arc<Zone>> {
        self.zones.iter().find(|z| z.name == name)
    }

    /// The tenant with this name (case-insensitive, like OceanBase tenant names).
    pub fn tenant(&self, name: &str) -> Option<&Arc<Tenant>> {
        self.tenants.iter().find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// Whether any of `addrs` is in a read-only zone ("tenant has read-only zones", docs/routing.md §3).
    pub fn any_read_only(&self, addrs: impl IntoIterator<Item = SocketAddr>) -> bool {
        addrs
            .into_iter()
            .filter_map(|a| self.server(a))
            .filter_map(|s| self.zone(&s.zone))
            .any(|z| z.zone_type.is_read_only())
    }
}
