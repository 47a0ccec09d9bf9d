//! The static topology file format (TOML), field by field.

use std::net::SocketAddr;

use serde::Deserialize;

/// The whole file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// Cluster name.
    #[serde(default)]
    pub cluster: String,
    /// Zones.
    #[serde(default)]
    pub zones: Vec<ZoneDef>,
    /// Servers.
    #[serde(default)]
    pub servers: Vec<ServerDef>,
    /// Tenants.
    #[serde(default)]
    pub tenants: Vec<TenantDef>,
    /// Tables with their partitioning and replica placement.
    #[serde(default)]
    pub tables: Vec<TableDef>,
}

/// A zone.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneDef {
    /// Zone name.
    pub name: String,
    /// Region (city).
    #[serde(default)]
    pub region: String,
    /// IDC (data centre).
    #[serde(default)]
    pub idc: String,
    /// `ReadWrite` (default), `ReadOnly` or `Encryption`.
    #[serde(default, rename = "type")]
    pub zone_type: Option<String>,
    /// `ACTIVE` (default) or `INACTIVE`.
    #[serde(default)]
    pub status: Option<String>,
    /// Major compaction in progress. Default false.
    #[serde(default)]
    pub merging: bool,
}

/// A server.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDef {
    /// Name used by tenants and replica placement (and by address overrides at load time).
    pub name: String,
    /// SQL address `ip:port`; may be replaced at load time by an override for this name.
    pub addr: SocketAddr,
    /// Zone name.
    pub zone: String,
    /// `ACTIVE` (default), `INACTIVE` or `DELETING`.
    #[serde(default)]
    pub status: Option<String>,
}

/// A tenant.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantDef {
    /// Tenant name.
    pub name: String,
    /// Tenant id. Optional.
    #[serde(default)]
    pub id: Option<u64>,
    /// Primary zone list (`zone1;zone2,zone3`, `RANDOM`). Default RANDOM.
    #[serde(default)]
    pub primary_zone: String,
    /// Names of the servers hosting the tenant. Default: every server.
    #[serde(default)]
    pub servers: Option<Vec<String>>,
    /// Server name holding every log-stream leader (single-leader routing, docs/routing.md §1).
    #[serde(default)]
    pub single_leader: Option<String>,
}

/// Where the replicas of one tablet are, by server name.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementDef {
    /// Leader server name.
    #[serde(default)]
    pub leader: Option<String>,
    /// Servers with full follower replicas.
    #[serde(default)]
    pub followers: Vec<String>,
    /// Servers with read-only replicas.
    #[serde(default)]
    pub readonly: Vec<String>,
}

/// The placement of one (leaf) partition.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionDef {
    /// Leaf partition name (`p3`, or `p1sp0` for a sub-partition), case-insensitive.
    pub name: String,
    /// Tablet id. Default: the table's `first_tablet_id` + the leaf's position.
    #[serde(default)]
    pub tablet_id: Option<u64>,
    /// Leader server name.
    #[serde(default)]
    pub leader: Option<String>,
    /// Servers with full follower replicas.
    #[serde(default)]
    pub followers: Vec<String>,
    /// Servers with read-only replicas.
    #[serde(default)]
    pub readonly: Vec<String>,
}

/// A table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableDef {
    /// Tenant name.
    pub tenant: String,
    /// Database name.
    pub database: String,
    /// Table name.
    pub name: String,
    /// Table id. Default: 500001 + the table's position in the file.
    #[serde(default)]
    pub table_id: Option<u64>,
    /// Tablet id of the first leaf partition. Default: 200001 + 1000 × the table's position.
    #[serde(default)]
    pub first_tablet_id: Option<u64>,
    /// Duplicate (broadcast) table. Default false.
    #[serde(default)]
    pub duplicate: bool,
    /// `CREATE TABLE … PARTITION BY …` as `SHOW CREATE TABLE` prints it; absent for a
    /// non-partitioned table.
    #[serde(default)]
    pub ddl: Option<String>,
    /// Replicas of a non-partitioned table.
    #[serde(default)]
    pub replicas: Option<PlacementDef>,
    /// Placement per leaf partition of a partitioned table (unlisted partitions have none).
    #[serde(default)]
    pub partitions: Vec<PartitionDef>,
}
