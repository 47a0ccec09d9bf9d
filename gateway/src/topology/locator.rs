//! Lookups for the request path: cache first, fetch from the metadata source on a miss or a due
//! refresh, and never wait longer than the configured bound (docs/routing.md §12).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};

use tokio::task::JoinHandle;
use tokio::time::{timeout, timeout_at, Instant};

use crate::metadata::{MetadataError, MetadataSource};
use crate::partition::Location;

use super::cache::{EntryMap, LocationCache};
use super::cluster::{Cluster, Tenant};
use super::config::CacheConfig;
use super::entry::Action;
use super::feedback::{Feedback, FeedbackEffect, FeedbackScope};
use super::replica::{PlacedReplica, PlacedServer, Replica, TabletLocation, TenantServers};
use super::table::{TableEntry, TableKey, TabletKey, TabletKeyParts, TabletRef};
use super::TopologyError;

/// Outcome of a cache lookup.
#[derive(Debug, Clone)]
pub enum Lookup<T> {
    /// A usable (AVAIL) value. `from_remote`: this lookup waited for a fetch that filled it
    /// (EXPLAIN ROUTE's `entry_from_remote`).
    Found {
        /// The value.
        value: Arc<T>,
        /// Filled by a fetch this lookup waited for.
        from_remote: bool,
        /// When the value expires (`None`: never); see [`Locator::generation`].
        fresh_until: Option<Instant>,
    },
    /// A stale value: dirty (refetch not yet due, failed, or still running after the wait bound).
    Stale(Arc<T>),
    /// Nothing usable within the bound; the caller falls back. The text says why.
    NotAvailable(String),
}

impl<T> Lookup<T> {
    /// The value, fresh or stale.
    pub fn value(&self) -> Option<&Arc<T>> {
        match self {
            Lookup::Found { value, .. } | Lookup::Stale(value) => Some(value),
            Lookup::NotAvailable(_) => None,
        }
    }

    /// Whether the value came from a fetch this lookup waited for.
    pub fn from_remote(&self) -> bool {
        matches!(self, Lookup::Found { from_remote: true, .. })
    }

    /// A fresh value's expiry: `Some(None)` never expires, `None` is not fresh.
    pub fn fresh_until(&self) -> Option<Option<Instant>> {
        match self {
            Lookup::Found { fresh_until, .. } => Some(*fresh_until),
            _ => None,
        }
    }

    /// Whether the value is stale.
    pub fn is_stale(&self) -> bool {
        matches!(self, Lookup::Stale(_))
    }
}

/// The replicas of the partition a row lives in, with their placement.
#[derive(Debug, Clone)]
pub struct PartitionReplicas {
    /// The table entry (table id, partition count, duplicate flag, scheme).
    pub table: Arc<TableEntry>,
    /// The tablet (`None` for a non-partitioned table, whose replicas are on the table entry).
    pub tablet_id: Option<u64>,
    /// Replicas, leader first when known.
    pub replicas: Vec<PlacedReplica>,
    /// The table or the tablet entry was fetched during this lookup.
    pub from_remote: bool,
    /// The table or the tablet entry used is stale.
    pub stale: bool,
}

impl PartitionReplicas {
    /// The leader, if known.
    pub fn leader(&self) -> Option<&PlacedReplica> {
        self.replicas.iter().find(|r| r.is_leader())
    }
}

struct Inner {
    source: Arc<dyn MetadataSource>,
    cache: LocationCache,
    cluster: RwLock<Arc<Cluster>>,
    /// Moves whenever the cluster model is replaced.
    cluster_generation: AtomicU64,
}

/// The location service: a cheap-to-clone handle over the cache, the cluster model and a source.
#[derive(Clone)]
pub struct Locator {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locator").field("source", &self.inner.source.name()).finish_non_exhaustive()
    }
}

impl Locator {
    /// A locator with an empty cache and an empty cluster (call [`Locator::refresh_cluster`]).
    pub fn new(source: Arc<dyn MetadataSource>, config: CacheConfig) -> Locator {
        let inner = Inner {
            source,
            cache: LocationCache::new(config),
            cluster: RwLock::new(Arc::new(Cluster::default())),
            cluster_generation: AtomicU64::new(0),
        };
        Locator { inner: Arc::new(inner) }
    }

    /// A number that moves whenever the cluster model is replaced or any cache entry may have
    /// changed ([`LocationCache::generation`]): while it stands still (and no fresh value used
    /// has expired), lookups give the answers they gave before.
    pub fn generation(&self) -> u64 {
        self.inner.cache.generation().wrapping_add(self.inner.cluster_generation.load(Ordering::Acquire))
    }

    /// The cache (states, snapshots, feedback).
    pub fn cache(&self) -> &LocationCache {
        &self.inner.cache
    }

    /// The current cluster model.
    pub fn cluster(&self) -> Arc<Cluster> {
        Arc::clone(&self.inner.cluster.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// A tenant of the current cluster model (primary zone, single leader).
    pub fn tenant(&self, name: &str) -> Option<Arc<Tenant>> {
        self.cluster().tenant(name).cloned()
    }

    /// Reloads servers, zones and tenants from the source; keeps the old model on failure.
    pub async fn refresh_cluster(&self) -> Result<(), MetadataError> {
        let fetched = timeout(self.inner.cache.config().fetch_timeout(), self.inner.source.fetch_cluster()).await;
        let cluster = fetched.map_err(|_| MetadataError::Connect("cluster fetch timed out".into()))??;
        tracing::debug!(
            source = self.inner.source.name(),
            servers = cluster.servers().len(),
            zones = cluster.zones().len(),
            tenants = cluster.tenants().len(),
            "cluster refreshed"
        );
        let previous = {
            let mut current = self.inner.cluster.write().unwrap_or_else(|p| p.into_inner());
            self.inner.cluster_generation.fetch_add(1, Ordering::Release);
            std::mem::replace(&mut *current, Arc::new(cluster))
        };
        self.on_servers_changed(&previous);
        Ok(())
    }

    /// A refresh that found servers added or removed makes every tenant server list dirty, so
    /// that the next access to a tenant refetches it (`min_refetch_ms` still applies): a new
    /// server may host the tenant, a removed one no longer does. **[GW]** ODP waits for the
    /// entry to expire or for `OB_TENANT_NOT_IN_SERVER`.
    fn on_servers_changed(&self, previous: &Cluster) {
        let now = self.cluster();
        let addrs =
            |c: &Cluster| c.servers().iter().map(|s| s.addr).collect::<std::collections::BTreeSet<SocketAddr>>();
        if previous.servers().is_empty() || addrs(previous) == addrs(&now) {
            return;
        }
        let dirty = self.inner.cache.tenants.with_each(|_| true, |e| e.set_dirty());
        tracing::info!(
            source = self.inner.source.name(),
            servers = now.servers().len(),
            tenants_dirty = dirty,
            "cluster servers changed; tenant server lists will be refetched"
        );
    }

    /// Refreshes the cluster model every `cluster_refresh_ms` until the last handle is dropped.
    pub fn spawn_cluster_refresh(&self) -> JoinHandle<()> {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let period = self.inner.cache.config().cluster_refresh();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                if let Err(e) = (Locator { inner }).refresh_cluster().await {
                    tracing::warn!(error = %e, "cluster refresh failed; keeping the previous model");
                }
            }
        })
    }

    /// Applies response feedback now.
    pub fn feedback(&self, scope: &FeedbackScope, fb: Feedback) -> FeedbackEffect {
        self.inner.cache.feedback(scope, fb, Instant::now())
    }

    /// The table entry of `key`.
    pub async fn table(&self, key: &TableKey) -> Lookup<TableEntry> {
        self.table_at(key, Instant::now()).await
    }

    /// [`Locator::table`] probed as of `now`: a statement's lookups share one clock reading.
    pub async fn table_at(&self, key: &TableKey, now: Instant) -> Lookup<TableEntry> {
        self.lookup(&self.inner.cache.tables, key, now, || self.spawn_table_fetch(key.clone())).await
    }

    /// The location of one tablet.
    pub async fn tablet(&self, key: &TabletKey) -> Lookup<TabletLocation> {
        self.tablet_of(&key.table, key.tablet_id).await
    }

    /// [`Locator::tablet`] of tablet `tablet_id` of `table`, without building a [`TabletKey`]
    /// unless a fetch starts.
    pub async fn tablet_of(&self, table: &TableKey, tablet_id: u64) -> Lookup<TabletLocation> {
        self.tablet_of_at(table, tablet_id, Instant::now()).await
    }

    /// [`Locator::tablet_of`] probed as of `now`.
    pub async fn tablet_of_at(&self, table: &TableKey, tablet_id: u64, now: Instant) -> Lookup<TabletLocation> {
        let key = TabletRef { table, tablet_id };
        let parts: &dyn TabletKeyParts = &key;
        self.lookup(&self.inner.cache.tablets, parts, now, || self.spawn_tablet_fetch(parts.to_owned())).await
    }

    /// The server list of a tenant.
    pub async fn tenant_servers(&self, tenant: &str) -> Lookup<TenantServers> {
        self.tenant_servers_at(tenant, Instant::now()).await
    }

    /// [`Locator::tenant_servers`] probed as of `now`.
    pub async fn tenant_servers_at(&self, tenant: &str, now: Instant) -> Lookup<TenantServers> {
        self.lookup(&self.inner.cache.tenants, tenant, now, || self.spawn_tenant_fetch(tenant.to_string())).await
    }

    /// The tenant's servers with their placement (the T candidates of docs/routing.md §3).
    pub async fn tenant_placed(&self, tenant: &str) -> Result<Vec<PlacedServer>, TopologyError> {
        let servers = self.tenant_servers(tenant).await;
        let Some(list) = servers.value() else {
            return Err(not_available(format!("servers of tenant {tenant}"), &servers));
        };
        let cluster = self.cluster();
        Ok(list.servers.iter().map(|&a| PlacedServer::place(a, &cluster)).collect())
    }

    /// The replicas (with zone, region, IDC, zone type) of the partition `location` of table
    /// `key`; `location` is `None` for a non-partitioned table.
    pub async fn replicas(
        &self,
        key: &TableKey,
        location: Option<&Location>,
    ) -> Result<PartitionReplicas, TopologyError> {
        let table_lookup = self.table(key).await;
        let Some(table) = table_lookup.value().cloned() else {
            return Err(not_available(format!("table {key}"), &table_lookup));
        };
        let cluster = self.cluster();
        let place = |reps: &[Replica]| reps.iter().map(|r| PlacedReplica::place(*r, &cluster)).collect();
        if !table.is_partitioned() {
            let replicas = place(&table.replicas);
            return Ok(PartitionReplicas {
                table,
                tablet_id: None,
                replicas,
                from_remote: table_lookup.from_remote(),
                stale: table_lookup.is_stale(),
            });
        }
        let loc = location.ok_or_else(|| TopologyError::NotAvailable {
            what: format!("table {key}"),
            reason: "partitioned table and no partition given".into(),
        })?;
        let tablet_id = table.tablet_of(loc).ok_or_else(|| TopologyError::NotAvailable {
            what: format!("partition {} of {key}", loc.name()),
            reason: "no tablet id".into(),
        })?;
        let tablet_lookup = self.tablet_of(key, tablet_id).await;
        let Some(tablet) = tablet_lookup.value() else {
            return Err(not_available(format!("tablet {tablet_id} of {key}"), &tablet_lookup));
        };
        let replicas = place(&tablet.replicas);
        Ok(PartitionReplicas {
            from_remote: table_lookup.from_remote() || tablet_lookup.from_remote(),
            stale: table_lookup.is_stale() || tablet_lookup.is_stale(),
            table,
            tablet_id: Some(tablet_id),
            replicas,
        })
    }

    /// Probe as of `begun`, start a fetch if due, wait (bounded) for a fetch in progress. A hit
    /// neither allocates nor subscribes to fetch completions: the subscription is taken before
    /// the probe that precedes the first wait, so that no completion can be missed.
    async fn lookup<K, Q, V>(&self, map: &EntryMap<K, V>, key: &Q, begun: Instant, start_fetch: impl Fn()) -> Lookup<V>
    where
        K: Eq + std::hash::Hash + Clone + std::borrow::Borrow<Q>,
        Q: Eq + std::hash::Hash + ToOwned<Owned = K> + ?Sized,
    {
        let mut rx = None;
        // The caller's clock reading for the usual hit; another after each wait.
        let mut now = begun;
        let mut waited = false;
        loop {
            let probe = map.probe(key, now);
            if probe.action == Action::Fetch {
                start_fetch();
            }
            match (probe.value, probe.fresh, probe.action) {
                (Some(value), true, _) => {
                    return Lookup::Found { value, from_remote: waited, fresh_until: probe.fresh_until }
                }
                (Some(value), false, Action::Use) => return Lookup::Stale(value),
                (None, _, Action::Use) => return Lookup::NotAvailable(last_error(map, key)),
                (value, _, _) => {
                    let Some(rx) = rx.as_mut() else {
                        rx = Some(self.inner.cache.subscribe());
                        continue;
                    };
                    let deadline = begun + self.inner.cache.config().wait(value.is_some());
                    if !matches!(timeout_at(deadline, rx.changed()).await, Ok(Ok(()))) {
                        return value.map_or_else(|| Lookup::NotAvailable("fetch in progress".into()), Lookup::Stale);
                    }
                    waited = true;
                    now = Instant::now();
                }
            }
        }
    }

    fn spawn_table_fetch(&self, key: TableKey) {
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            let result = bounded(&inner, inner.source.fetch_table(&key)).await;
            let now = Instant::now();
            match result {
                Ok(meta) => {
                    tracing::info!(table = %key, table_id = ?meta.entry.table_id, part_num = meta.entry.part_num,
                        tablets = meta.tablets.len(), source = inner.source.name(), "table entry fetched");
                    inner.cache.fill_table(&key, meta, now);
                }
                Err(e) => {
                    tracing::warn!(table = %key, error = %e, source = inner.source.name(), "table entry fetch failed");
                    inner.cache.fail_table(&key, e.to_string(), now);
                }
            }
        });
    }

    fn spawn_tablet_fetch(&self, key: TabletKey) {
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            let ids = [key.tablet_id];
            let result = bounded(&inner, inner.source.fetch_tablets(&key.table, &ids)).await;
            let now = Instant::now();
            match result {
                Ok(locs) => {
                    tracing::debug!(table = %key.table, tablet = key.tablet_id, found = locs.len(), "tablet location fetched");
                    inner.cache.fill_tablets(&key.table, &ids, locs, now);
                }
                Err(e) => {
                    tracing::warn!(table = %key.table, tablet = key.tablet_id, error = %e, "tablet location fetch failed");
                    inner.cache.fail_tablet(&key, e.to_string(), now);
                }
            }
        });
    }

    fn spawn_tenant_fetch(&self, tenant: String) {
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            let result = bounded(&inner, inner.source.fetch_tenant_servers(&tenant)).await;
            let now = Instant::now();
            match result {
                Ok(servers) => {
                    tracing::debug!(tenant, servers = servers.servers.len(), "tenant servers fetched");
                    inner.cache.fill_tenant(servers, now);
                }
                Err(e) => {
                    tracing::warn!(tenant, error = %e, "tenant servers fetch failed");
                    inner.cache.fail_tenant(&tenant, e.to_string(), now);
                }
            }
        });
    }
}

/// Runs a source call under the fetch timeout.
async fn bounded<T>(
    inner: &Inner,
    fut: impl std::future::Future<Output = Result<T, MetadataError>>,
) -> Result<T, MetadataError> {
    let limit = inner.cache.config().fetch_timeout();
    timeout(limit, fut)
        .await
        .map_err(|_| MetadataError::Connect(format!("metadata fetch timed out after {limit:?}")))?
}

fn last_error<K, Q, V>(map: &EntryMap<K, V>, key: &Q) -> String
where
    K: Eq + std::hash::Hash + Clone + std::borrow::Borrow<Q>,
    Q: Eq + std::hash::Hash + ?Sized,
{
    map.with(key, |e| e.last_error().map(str::to_string)).flatten().unwrap_or_else(|| "no entry".into())
}

fn not_available<T>(what: String, lookup: &Lookup<T>) -> TopologyError {
    let reason = match lookup {
        Lookup::NotAvailable(r) => r.clone(),
        _ => "no value".into(),
    };
    TopologyError::NotAvailable { what, reason }
}

/// SQL addresses of a placed list (for logs and tests).
pub fn addrs(replicas: &[PlacedReplica]) -> Vec<SocketAddr> {
    replicas.iter().map(|r| r.replica.addr).collect()
}
