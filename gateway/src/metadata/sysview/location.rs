//! Rows of `__all_virtual_proxy_schema` ⋈ `DBA_OB_SERVERS` (docs/routing.md §12): replicas,
//! table-level data, tenant server lists and tablet locations.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use crate::metadata::information_schema::TextRow;
use crate::metadata::MetadataError;
use crate::topology::{Replica, ReplicaType, Role, TableType, TabletLocation};

use super::cells::Cells;

/// One location row, columns as in [`super::sql::LOCATION_COLUMNS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationRow {
    /// `tablet_id`.
    pub tablet_id: u64,
    /// `svr_ip:sql_port`; `None` for the `0.0.0.0:0` placeholder that carries table data only.
    pub addr: Option<SocketAddr>,
    /// `table_id`.
    pub table_id: u64,
    /// `role`: 1 leader, 2 follower, anything else invalid.
    pub role: i64,
    /// `part_num`.
    pub part_num: u64,
    /// `replica_num`.
    pub replica_num: i64,
    /// `schema_version` (NULL on old servers).
    pub schema_version: Option<u64>,
    /// `replica_type` code (NULL reads as 0, FULL).
    pub replica_type: i64,
    /// `dup_replica_type` > 0: a duplicate-table replica.
    pub duplicate: bool,
    /// `table_type` code (NULL reads as a user table).
    pub table_type: i64,
    /// `svr_port` from `DBA_OB_SERVERS`: the RPC port.
    pub rpc_port: Option<i64>,
}

impl LocationRow {
    /// Parses one row.
    pub fn parse(row: &TextRow) -> Result<LocationRow, MetadataError> {
        let c = Cells::new(row, "__all_virtual_proxy_schema", 12)?;
        let addr = c.addr(1, 2, ("svr_ip", "sql_port"))?;
        let placeholder = addr.ip().is_unspecified() && addr.port() == 0;
        Ok(LocationRow {
            tablet_id: c.uint(0, "tablet_id")?,
            addr: (!placeholder).then_some(addr),
            table_id: c.uint(3, "table_id")?,
            role: c.int(4, "role")?,
            part_num: c.uint(5, "part_num")?,
            replica_num: c.int_or(6, "replica_num", 0)?,
            schema_version: c.opt_int(7, "schema_version")?.and_then(|v| u64::try_from(v).ok()),
            replica_type: c.int_or(8, "replica_type", 0)?,
            duplicate: c.int_or(9, "dup_replica_type", 0)? > 0,
            table_type: c.int_or(10, "table_type", -1)?,
            rpc_port: c.opt_int(11, "svr_port")?,
        })
    }

    /// Parses every row.
    pub fn parse_all(rows: &[TextRow]) -> Result<Vec<LocationRow>, MetadataError> {
        rows.iter().map(LocationRow::parse).collect()
    }

    /// The replica this row describes: `None` for a placeholder row or an invalid role (ODP
    /// skips both).
    pub fn replica(&self) -> Option<Replica> {
        let addr = self.addr?;
        if self.role != 1 && self.role != 2 {
            tracing::debug!(%addr, role = self.role, "location row with an invalid role skipped");
            return None;
        }
        Some(Replica {
            addr,
            role: Role::from_code(self.role),
            replica_type: ReplicaType::from_code(self.replica_type),
        })
    }

    /// The table type.
    pub fn table_type(&self) -> TableType {
        TableType::from_code(self.table_type)
    }
}

/// The replicas of `rows`, leader first (stable: the view's order otherwise), one per address.
pub fn replicas<'a>(rows: impl IntoIterator<Item = &'a LocationRow>) -> Vec<Replica> {
    let mut out: Vec<Replica> = Vec::new();
    for r in rows.into_iter().filter_map(LocationRow::replica) {
        if !out.iter().any(|o| o.addr == r.addr) {
            out.push(r);
        }
    }
    out.sort_by_key(|r| r.role != Role::Leader);
    out
}

/// The distinct servers of a tenant's `__all_dummy` rows, in row order.
pub fn tenant_servers(rows: &[LocationRow]) -> Vec<SocketAddr> {
    let mut out: Vec<SocketAddr> = Vec::new();
    for a in rows.iter().filter_map(|r| r.addr) {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// Tablet locations of the `wanted` tablets, grouped by `tablet_id` whatever the row order;
/// tablets without a routable row are left out.
pub fn tablet_locations(rows: &[LocationRow], wanted: &[u64]) -> Vec<TabletLocation> {
    let mut by_tablet: BTreeMap<u64, Vec<&LocationRow>> = BTreeMap::new();
    for r in rows.iter().filter(|r| wanted.contains(&r.tablet_id)) {
        by_tablet.entry(r.tablet_id).or_default().push(r);
    }
    by_tablet
        .into_iter()
        .map(|(tablet_id, rs)| TabletLocation { tablet_id, replicas: replicas(rs) })
        .filter(|t| !t.replicas.is_empty())
        .collect()
}
