//! Tables discovered, not typed: the static topology's cluster and tenants, and the partitioning of
//! every table it does not list read from a server of the table's tenant through
//! `information_schema` (`[routing.table_discovery]`, docs/routing.md §12).
//!
//! `information_schema` says *which partition* a row is in, not *where* it lives (docs/routing.md §12). A
//! discovered table is placed over its tenant's servers in topology order: leaf partition `i` is
//! led by server `i mod n` and followed by the others; a non-partitioned table is led by the first
//! server. On a single server (an OceanBase kernel, one MySQL server) that server holds every
//! partition. A multi-node OceanBase cluster gives real leaders through `[[clusters]]` instead.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;

use super::information_schema::{InformationSchemaSource, MysqlClient};
use super::{MetaFuture, MetadataError, MetadataSource, StaticSource};
use crate::login_name;
use crate::partition::TableScheme;
use crate::topology::{
    Cluster, Replica, ReplicaType, Role, TableEntry, TableKey, TableMeta, TableType, TabletLocation, TenantServers,
};

/// Tablet id given to the first leaf partition of a discovered table (the next ones follow).
const FIRST_TABLET: u64 = 1;
/// Bound of the greeting read that tells an OceanBase server from a MySQL one.
const GREETING_TIMEOUT: Duration = Duration::from_secs(3);

/// Where discovered partitioning comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveryKind {
    /// `information_schema.PARTITIONS`, `COLUMNS`, `STATISTICS` (MySQL, MariaDB, an OceanBase
    /// tenant without sys views).
    #[default]
    InformationSchema,
}

/// `[routing.table_discovery]`: discover the partitioning of tables the topology does not list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableDiscoveryConfig {
    /// Where partitioning is read. Only `"information_schema"` (the default).
    #[serde(default)]
    pub source: DiscoveryKind,
    /// Account the metadata queries log in with (the bare user; an OceanBase server gets
    /// `user@tenant` of the table's tenant). It needs to see the tables in `information_schema`.
    pub user: String,
    /// Password of `user`. Default empty.
    #[serde(default)]
    pub password: String,
}

/// The static topology plus tables discovered from the servers.
pub struct DiscoveringSource {
    base: StaticSource,
    config: TableDiscoveryConfig,
    /// One metadata connection pool per tenant.
    clients: Mutex<HashMap<String, InformationSchemaSource<MysqlClient>>>,
    /// Tablet locations of the tables discovered so far.
    placed: Mutex<HashMap<TableKey, Vec<TabletLocation>>>,
}

impl std::fmt::Debug for DiscoveringSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscoveringSource").field("user", &self.config.user).finish_non_exhaustive()
    }
}

impl DiscoveringSource {
    /// Discovery over `base` (its cluster, tenants and listed tables win).
    pub fn new(base: StaticSource, config: TableDiscoveryConfig) -> Self {
        DiscoveringSource { base, config, clients: Mutex::default(), placed: Mutex::default() }
    }

    async fn table(&self, key: &TableKey) -> Result<TableMeta, MetadataError> {
        match self.base.fetch_table(key).await {
            Err(MetadataError::NotFound(_)) => self.discover(key).await,
            other => other,
        }
    }

    async fn discover(&self, key: &TableKey) -> Result<TableMeta, MetadataError> {
        let servers = self.base.fetch_tenant_servers(&key.tenant).await?.servers;
        let source = self.client(&key.tenant, &servers).await?;
        let found = source.discover(&key.database, &key.table).await?;
        let mut scheme = found.scheme.ok().flatten();
        let tablets = match scheme.as_mut() {
            Some(s) => place_partitions(s, &servers),
            None => Vec::new(),
        };
        let replicas = if scheme.is_some() { Vec::new() } else { placement(&servers, 0) };
        let entry = TableEntry {
            key: key.clone(),
            table_id: None,
            table_type: TableType::UserTable,
            schema_version: None,
            part_num: found.part_num,
            duplicate: false,
            scheme,
            replicas,
        };
        tracing::info!(table = %key, part_num = found.part_num, calculable = entry.scheme.is_some() || found.part_num == 1,
            "table discovered through information_schema");
        lock(&self.placed).insert(key.clone(), tablets.clone());
        Ok(TableMeta { entry, tablets })
    }

    /// The metadata connection pool of `tenant`: to the first of its servers that greets, with
    /// the login name that server's kind expects.
    async fn client(
        &self,
        tenant: &str,
        servers: &[SocketAddr],
    ) -> Result<InformationSchemaSource<MysqlClient>, MetadataError> {
        if let Some(c) = lock(&self.clients).get(tenant) {
            return Ok(c.clone());
        }
        let mut last = MetadataError::NotFound(format!("servers of tenant {tenant}"));
        for &addr in servers {
            match crate::session::backend::connect(addr, GREETING_TIMEOUT).await {
                Ok((_, greeting)) => {
                    let kind = crate::session::server_kind::of(addr, &greeting.server_version);
                    let user = login_name::server_user(&self.config.user, Some(tenant), kind);
                    let source =
                        InformationSchemaSource::new(MysqlClient::new(options(addr, &user, &self.config.password)));
                    lock(&self.clients).insert(tenant.to_string(), source.clone());
                    return Ok(source);
                }
                Err(e) => last = MetadataError::Connect(format!("{addr}: {e}")),
            }
        }
        Err(last)
    }

    fn tablets(&self, key: &TableKey, ids: &[u64]) -> Vec<TabletLocation> {
        let placed = lock(&self.placed);
        let all = placed.get(key).map(Vec::as_slice).unwrap_or_default();
        all.iter().filter(|t| ids.contains(&t.tablet_id)).cloned().collect()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `mysql_async` options for a small metadata pool to `addr` (TCP, never a local socket).
fn options(addr: SocketAddr, user: &str, password: &str) -> mysql_async::Opts {
    mysql_async::OptsBuilder::default()
        .ip_or_hostname(addr.ip().to_string())
        .tcp_port(addr.port())
        .user(Some(user))
        .pass(Some(password))
        .prefer_socket(false)
        .pool_opts(
            mysql_async::PoolOpts::default()
                .with_constraints(mysql_async::PoolConstraints::new(0, 2).unwrap_or_default()),
        )
        .into()
}

/// Replicas of placement slot `i`: server `i mod n` leads, the others follow.
fn placement(servers: &[SocketAddr], i: usize) -> Vec<Replica> {
    let Some(n) = (!servers.is_empty()).then_some(servers.len()) else { return Vec::new() };
    let leader = servers[i % n];
    let follower = |addr| Replica { addr, role: Role::Follower, replica_type: ReplicaType::Full };
    std::iter::once(Replica { addr: leader, role: Role::Leader, replica_type: ReplicaType::Full })
        .chain(servers.iter().filter(|&&a| a != leader).map(|&a| follower(a)))
        .collect()
}

/// Gives every leaf partition a tablet id and a placement (module docs).
fn place_partitions(scheme: &mut TableScheme, servers: &[SocketAddr]) -> Vec<TabletLocation> {
    let mut next = FIRST_TABLET;
    let mut tablets = Vec::new();
    let mut assign = |slot: &mut Option<u64>| {
        *slot = Some(next);
        tablets.push(TabletLocation { tablet_id: next, replicas: placement(servers, (next - FIRST_TABLET) as usize) });
        next += 1;
    };
    for p in &mut scheme.partitions {
        if p.subs.is_empty() {
            assign(&mut p.tablet_id);
        }
        for s in &mut p.subs {
            assign(&mut s.tablet_id);
        }
    }
    tablets
}

impl MetadataSource for DiscoveringSource {
    fn name(&self) -> &'static str {
        "static+information_schema"
    }

    fn fetch_cluster(&self) -> MetaFuture<'_, Cluster> {
        self.base.fetch_cluster()
    }

    fn fetch_tenant_servers<'a>(&'a self, tenant: &'a str) -> MetaFuture<'a, TenantServers> {
        self.base.fetch_tenant_servers(tenant)
    }

    fn fetch_table<'a>(&'a self, key: &'a TableKey) -> MetaFuture<'a, TableMeta> {
        Box::pin(self.table(key))
    }

    fn fetch_tablets<'a>(&'a self, key: &'a TableKey, ids: &'a [u64]) -> MetaFuture<'a, Vec<TabletLocation>> {
        Box::pin(async move {
            if self.base.table(key).is_some() {
                return self.base.fetch_tablets(key, ids).await;
            }
            Ok(self.tablets(key, ids))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::parse_create_table;

    fn addrs(n: u16) -> Vec<SocketAddr> {
        (0..n).map(|i| SocketAddr::from(([127, 0, 0, 1], 3300 + i))).collect()
    }

    #[test]
    fn partitions_are_spread_over_the_tenant_servers() {
        let mut s = parse_create_table("CREATE TABLE t (c1 INT) PARTITION BY HASH(c1) PARTITIONS 3").unwrap();
        let servers = addrs(2);
        let tablets = place_partitions(&mut s, &servers);
        let ids: Vec<_> = s.partitions.iter().map(|p| p.tablet_id).collect();
        assert_eq!(ids, [Some(1), Some(2), Some(3)]);
        let leaders: Vec<_> = tablets.iter().map(|t| t.replicas[0].addr).collect();
        assert_eq!(leaders, [servers[0], servers[1], servers[0]]);
        assert_eq!(
            tablets[1].replicas[1],
            Replica { addr: servers[0], role: Role::Follower, replica_type: ReplicaType::Full }
        );
    }

    #[test]
    fn sub_partitions_are_leaves() {
        let ddl = "CREATE TABLE t (c1 INT, c2 INT) PARTITION BY RANGE(c1) SUBPARTITION BY HASH(c2) SUBPARTITIONS 2 \
                   (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)";
        let mut s = parse_create_table(ddl).unwrap();
        assert_eq!(place_partitions(&mut s, &addrs(1)).len(), 4);
        assert_eq!(s.partitions[1].subs[1].tablet_id, Some(4));
        assert!(placement(&[], 0).is_empty());
    }

    #[test]
    fn config_reads_with_default_source() {
        let c: TableDiscoveryConfig = toml::from_str("user = \"root\"").unwrap();
        assert_eq!(c.source, DiscoveryKind::InformationSchema);
        assert!(toml::from_str::<TableDiscoveryConfig>("user = \"r\"\nsource = \"sysview\"").is_err());
    }
}
