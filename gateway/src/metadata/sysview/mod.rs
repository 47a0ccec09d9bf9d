//! The OceanBase sys-tenant views as ODP reads them (docs/routing.md §12): the full multi-node topology.
//!
//! [`SysViewSource`] runs ODP's statements ([`sql`]) over a sys-tenant connection (`proxyro@sys`)
//! and turns the rows into the cluster model (zones, servers, tenants, single-leader tenants),
//! tenant server lists, table entries with their `TableScheme` and tablet ids, and tablet
//! locations. It holds no cache and no timers: the [`crate::topology::Locator`] refreshes the
//! cluster every `cluster_refresh_ms` (default 15 s) and fetches table and tablet entries on
//! demand, on a miss or after feedback made them dirty.
//!
//! Partition bounds come from the text column `high_bound_val`, not the binary
//! `high_bound_val_bin` ODP decodes ([`bounds`]); partitions are ordered explicitly
//! ([`partitions`]).

pub(crate) mod bounds;
pub(crate) mod cells;
pub(crate) mod cluster;
pub(crate) mod location;
pub(crate) mod part_info;
pub(crate) mod partitions;
pub(crate) mod sql;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_locator;

use crate::partition::TableScheme;
use crate::topology::{Cluster, TableEntry, TableKey, TableMeta, TabletLocation, TenantServers};

use super::information_schema::{MysqlClient, SqlClient, TextRow};
use super::{MetaFuture, MetadataError, MetadataSource};
use location::LocationRow;
use part_info::PartInfo;
use partitions::PartRow;

/// A metadata source reading the OceanBase sys-tenant views.
#[derive(Debug, Clone)]
pub struct SysViewSource<C = MysqlClient> {
    client: C,
    cluster_name: String,
}

impl<C: SqlClient> SysViewSource<C> {
    /// A source querying through `client` (a sys-tenant connection); `cluster_name` names the
    /// cluster model it builds.
    pub fn new(client: C, cluster_name: &str) -> Self {
        SysViewSource { client, cluster_name: cluster_name.to_string() }
    }

    /// The client.
    pub fn client(&self) -> &C {
        &self.client
    }

    async fn query(&self, sql: &str) -> Result<Vec<TextRow>, MetadataError> {
        tracing::trace!(sql, "sys view query");
        self.client.query(sql).await
    }

    /// Zones, servers and tenants (docs/routing.md §12–docs/routing.md §12), with single-leader servers (docs/routing.md §12; a failure of
    /// that optional query is logged and leaves them unset).
    pub async fn cluster(&self) -> Result<Cluster, MetadataError> {
        let zones = cluster::all(&self.query(&sql::zones()).await?, cluster::zone)?;
        let servers = cluster::all(&self.query(&sql::servers()).await?, cluster::server)?;
        let mut tenants = cluster::all(&self.query(&sql::tenants()).await?, cluster::tenant)?;
        let ids: Vec<u64> = tenants.iter().filter_map(|t| t.id).collect();
        if !ids.is_empty() {
            match self.query(&sql::single_leaders(&ids)).await {
                Ok(rows) => {
                    let leaders: Vec<_> = cluster::all(&rows, cluster::single_leader)?.into_iter().flatten().collect();
                    cluster::apply_single_leaders(&mut tenants, &leaders);
                }
                Err(e) => tracing::warn!(error = %e, "single-leader query failed; tenants keep no single leader"),
            }
        }
        let model = Cluster::new(self.cluster_name.clone(), zones, servers, tenants)?;
        tracing::debug!(cluster = %model.name, zones = model.zones().len(), servers = model.servers().len(),
            tenants = model.tenants().len(), "sys views: cluster read");
        Ok(model)
    }

    /// The servers of `tenant` (docs/routing.md §12); a tenant without rows is `NotFound`.
    pub async fn tenant_servers(&self, tenant: &str) -> Result<TenantServers, MetadataError> {
        let rows = LocationRow::parse_all(&self.query(&sql::tenant_servers(tenant)).await?)?;
        let servers = location::tenant_servers(&rows);
        if servers.is_empty() {
            return Err(MetadataError::NotFound(format!("tenant {tenant}")));
        }
        tracing::debug!(tenant, servers = servers.len(), "sys views: tenant servers read");
        Ok(TenantServers { tenant: tenant.to_string(), servers })
    }

    /// The table entry of `key` (docs/routing.md §12) with, for a partitioned table, its scheme and tablet ids
    /// (docs/routing.md §12–docs/routing.md §12). Tablet locations are left to [`SysViewSource::tablets`] (on demand, as ODP).
    pub async fn table(&self, key: &TableKey) -> Result<TableMeta, MetadataError> {
        let sql = sql::table_entry(&key.tenant, &key.database, &key.table);
        let rows = LocationRow::parse_all(&self.query(&sql).await?)?;
        let Some(first) = rows.first() else {
            return Err(MetadataError::NotFound(format!("table {key}")));
        };
        let partitioned = first.part_num > 1;
        let scheme = if partitioned { self.scheme(key, first.table_id).await? } else { None };
        let part_num = scheme.as_ref().map_or(first.part_num.max(1), leaf_count) as usize;
        let entry = TableEntry {
            key: key.clone(),
            table_id: Some(first.table_id),
            table_type: first.table_type(),
            schema_version: first.schema_version,
            part_num,
            duplicate: rows.iter().any(|r| r.duplicate),
            scheme,
            replicas: if partitioned { Vec::new() } else { location::replicas(&rows) },
        };
        Ok(TableMeta { entry, tablets: Vec::new() })
    }

    /// The scheme of a partitioned table: `None` (logged) when the views describe partitioning
    /// the gateway does not calculate; an error when the rows are malformed or inconsistent.
    async fn scheme(&self, key: &TableKey, table_id: u64) -> Result<Option<TableScheme>, MetadataError> {
        let info_rows = self.query(&sql::partition_info(table_id, &key.tenant)).await?;
        let Some(info) = PartInfo::parse(&info_rows)? else {
            tracing::warn!(table = %key, table_id, "partitioned table without partition info; not calculable");
            return Ok(None);
        };
        let parts = self.query(&sql::partitions(table_id, &key.tenant)).await?;
        let parts = parts.iter().map(PartRow::partition).collect::<Result<Vec<_>, _>>()?;
        let subs = if info.level == 2 {
            let rows = self.query(&sql::sub_partitions(table_id, &key.tenant)).await?;
            rows.iter().map(PartRow::sub_partition).collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        match partitions::scheme(&key.table, &info, &parts, &subs) {
            Ok(s) => Ok(Some(s)),
            Err(MetadataError::Partition(e)) => {
                tracing::warn!(table = %key, error = %e, "partitioning found but not calculable");
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Locations of `tablet_ids` of `key` (docs/routing.md §12: the single form for one id, the batch form
    /// otherwise). Ids without a routable replica are left out.
    pub async fn tablets(&self, key: &TableKey, tablet_ids: &[u64]) -> Result<Vec<TabletLocation>, MetadataError> {
        let sql = match tablet_ids {
            [] => return Ok(Vec::new()),
            [one] => sql::tablet(&key.tenant, &key.database, &key.table, *one),
            many => sql::tablets(&key.tenant, &key.database, &key.table, many),
        };
        let rows = LocationRow::parse_all(&self.query(&sql).await?)?;
        let found = location::tablet_locations(&rows, tablet_ids);
        tracing::debug!(table = %key, asked = tablet_ids.len(), found = found.len(), "sys views: tablet locations read");
        Ok(found)
    }
}

/// Leaf partitions of a scheme.
fn leaf_count(s: &TableScheme) -> u64 {
    s.partitions.iter().map(|p| p.subs.len().max(1) as u64).sum()
}

impl<C: SqlClient> MetadataSource for SysViewSource<C> {
    fn name(&self) -> &'static str {
        "sysview"
    }

    fn fetch_cluster(&self) -> MetaFuture<'_, Cluster> {
        Box::pin(self.cluster())
    }

    fn fetch_tenant_servers<'a>(&'a self, tenant: &'a str) -> MetaFuture<'a, TenantServers> {
        Box::pin(self.tenant_servers(tenant))
    }

    fn fetch_table<'a>(&'a self, key: &'a TableKey) -> MetaFuture<'a, TableMeta> {
        Box::pin(self.table(key))
    }

    fn fetch_tablets<'a>(&'a self, key: &'a TableKey, tablet_ids: &'a [u64]) -> MetaFuture<'a, Vec<TabletLocation>> {
        Box::pin(self.tablets(key, tablet_ids))
    }
}
