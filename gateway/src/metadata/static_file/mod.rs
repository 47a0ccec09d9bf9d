//! A static TOML topology: zones, servers, tenants, tables with their DDL and replica placement.
//!
//! The embedded default is [`DEMO_TOPOLOGY`] (`demo_topology.toml`). Server SQL addresses can be
//! replaced per server name at load time (the demo starts its servers on free ports).

mod convert;
pub(crate) mod file;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;

use crate::topology::{Cluster, TableKey, TableMeta, TabletLocation, TenantServers};

use super::{MetaFuture, MetadataError, MetadataSource};
use convert::{convert, Loaded};
use file::TopologyFile;

/// The demo topology: three zones (zone1/zone2 read-write in region sh, zone3 read-only in hz),
/// tenant `demo` with primary zone `zone1;zone2,zone3`, table `test.t0` HASH(c1) PARTITIONS 8.
pub const DEMO_TOPOLOGY: &str = include_str!("../demo_topology.toml");

/// A metadata source answering from a static topology.
#[derive(Debug, Clone)]
pub struct StaticSource {
    loaded: Loaded,
}

impl StaticSource {
    /// Parses a topology from TOML text; `overrides` replace server addresses by server name.
    pub fn from_toml(text: &str, overrides: &HashMap<String, SocketAddr>) -> Result<StaticSource, MetadataError> {
        let file: TopologyFile =
            toml::from_str(text).map_err(|e| MetadataError::Invalid(format!("topology file: {e}")))?;
        Ok(StaticSource { loaded: convert(file, overrides)? })
    }

    /// Reads a topology file; `overrides` replace server addresses by server name.
    pub fn load(path: &Path, overrides: &HashMap<String, SocketAddr>) -> Result<StaticSource, MetadataError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| MetadataError::Invalid(format!("cannot read {}: {e}", path.display())))?;
        Self::from_toml(&text, overrides)
    }

    /// The embedded demo topology with the given address overrides.
    pub fn demo(overrides: &HashMap<String, SocketAddr>) -> Result<StaticSource, MetadataError> {
        Self::from_toml(DEMO_TOPOLOGY, overrides)
    }

    /// The cluster model.
    pub fn cluster(&self) -> &Cluster {
        &self.loaded.cluster
    }

    /// The table of `key` (tenant compared case-insensitively).
    pub fn table(&self, key: &TableKey) -> Option<&TableMeta> {
        self.loaded
            .tables
            .iter()
            .find(|(k, _)| {
                k.tenant.eq_ignore_ascii_case(&key.tenant) && k.database == key.database && k.table == key.table
            })
            .map(|(_, m)| m)
    }

    fn table_for(&self, key: &TableKey) -> Result<TableMeta, MetadataError> {
        let mut meta = self.table(key).cloned().ok_or_else(|| MetadataError::NotFound(format!("table {key}")))?;
        meta.entry.key = key.clone();
        Ok(meta)
    }

    fn tenant_servers_for(&self, tenant: &str) -> Result<TenantServers, MetadataError> {
        let (_, servers) = self
            .loaded
            .tenant_servers
            .iter()
            .find(|(t, _)| t.eq_ignore_ascii_case(tenant))
            .ok_or_else(|| MetadataError::NotFound(format!("tenant {tenant}")))?;
        Ok(TenantServers { tenant: tenant.to_string(), servers: servers.clone() })
    }

    fn tablets_for(&self, key: &TableKey, ids: &[u64]) -> Result<Vec<TabletLocation>, MetadataError> {
        let meta = self.table(key).ok_or_else(|| MetadataError::NotFound(format!("table {key}")))?;
        Ok(meta.tablets.iter().filter(|t| ids.contains(&t.tablet_id)).cloned().collect())
    }
}

impl MetadataSource for StaticSource {
    fn name(&self) -> &'static str {
        "static"
    }

    fn fetch_cluster(&self) -> MetaFuture<'_, Cluster> {
        let cluster = self.loaded.cluster.clone();
        Box::pin(async move { Ok(cluster) })
    }

    fn fetch_tenant_servers<'a>(&'a self, tenant: &'a str) -> MetaFuture<'a, TenantServers> {
        Box::pin(async move { self.tenant_servers_for(tenant) })
    }

    fn fetch_table<'a>(&'a self, key: &'a TableKey) -> MetaFuture<'a, TableMeta> {
        Box::pin(async move { self.table_for(key) })
    }

    fn fetch_tablets<'a>(&'a self, key: &'a TableKey, tablet_ids: &'a [u64]) -> MetaFuture<'a, Vec<TabletLocation>> {
        Box::pin(async move { self.tablets_for(key, tablet_ids) })
    }
}
