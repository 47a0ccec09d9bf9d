//! The location cache: table, tablet (partition) and tenant-server entries with their states.
//!
//! Synchronous and clock-free (every call takes `now`); [`super::Locator`] adds fetching and the
//! bounded wait. Completed fetches bump a counter that waiting lookups watch.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;
use tokio::time::Instant;

use super::config::CacheConfig;
use super::entry::{Action, Entry, EntryPolicy, EntryState, Probe};
use super::replica::{TabletLocation, TenantServers};
use super::table::{TableEntry, TableKey, TabletKey};

/// The maps' hasher: foldhash's quality variant, randomly seeded per map (keys hold table names
/// that clients choose), several times cheaper than SipHash on these short keys, probed for
/// every routed statement.
type Hasher = foldhash::quality::RandomState;

/// Entries of one kind, keyed.
#[derive(Debug)]
pub struct EntryMap<K, V> {
    map: Mutex<HashMap<K, Entry<V>, Hasher>>,
    policy: EntryPolicy,
    /// Moves whenever an entry may have changed (see [`EntryMap::generation`]).
    generation: AtomicU64,
}

impl<K: Eq + Hash + Clone, V> EntryMap<K, V> {
    /// An empty map with the given timing rules.
    pub fn new(policy: EntryPolicy) -> Self {
        EntryMap { map: Mutex::new(HashMap::with_hasher(Hasher::default())), policy, generation: AtomicU64::new(0) }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, Entry<V>, Hasher>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lock, for a change to the map: the generation moves (under the lock, so a reader
    /// that sees the old generation read the map before the change).
    fn lock_to_change(&self) -> MutexGuard<'_, HashMap<K, Entry<V>, Hasher>> {
        let map = self.lock();
        self.generation.fetch_add(1, Ordering::Release);
        map
    }

    /// A number that moves whenever any entry may have changed: filled, failed, made dirty,
    /// deleted, created, expired or set fetching by a probe. While it stands still and no fresh
    /// value a probe returned has reached its [`Probe::fresh_until`], probing again gives the
    /// same answers: what a session remembers of earlier probes is still true
    /// ([`crate::planner::RouteMemo`]).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Probes `key` (creating a BORN entry if absent); see [`Entry::probe`].
    pub fn probe<Q>(&self, key: &Q, now: Instant) -> Probe<V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ToOwned<Owned = K> + ?Sized,
    {
        let mut map = self.lock();
        // The key is cloned only to create the entry: a hit costs no allocation.
        if let Some(entry) = map.get_mut(key) {
            let was_avail = entry.state() == EntryState::Avail;
            let probe = entry.probe(now, &self.policy);
            // Expired (AVAIL to DIRTY) or set fetching: the entry changed.
            if probe.action == Action::Fetch || (was_avail && !probe.fresh) {
                self.generation.fetch_add(1, Ordering::Release);
            }
            return probe;
        }
        self.generation.fetch_add(1, Ordering::Release);
        map.entry(key.to_owned()).or_insert_with(|| Entry::new(now)).probe(now, &self.policy)
    }

    /// Stores a fetched value.
    pub fn fill(&self, key: &K, value: Arc<V>, now: Instant) {
        self.lock_to_change().entry(key.clone()).or_insert_with(|| Entry::new(now)).fill(value, now);
    }

    /// Records a failed fetch.
    pub fn fail(&self, key: &K, error: String, now: Instant) {
        self.lock_to_change().entry(key.clone()).or_insert_with(|| Entry::new(now)).fail(error, now);
    }

    /// Runs `f` on the entry of `key`, if there is one (a change: the generation moves).
    pub fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&mut Entry<V>) -> R) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.lock_to_change().get_mut(key).map(f)
    }

    /// Runs `f` on every entry whose key matches `pick`; returns how many returned true.
    pub fn with_each(&self, pick: impl Fn(&K) -> bool, f: impl Fn(&mut Entry<V>) -> bool) -> usize {
        self.lock_to_change().iter_mut().filter(|(k, _)| pick(k)).map(|(_, e)| f(e)).filter(|&b| b).count()
    }

    /// Removes every entry whose key matches `pick`.
    pub fn remove_where(&self, pick: impl Fn(&K) -> bool) {
        self.lock_to_change().retain(|k, _| !pick(k));
    }

    /// State of the entry of `key`.
    pub fn state(&self, key: &K) -> Option<EntryState> {
        self.lock().get(key).map(Entry::state)
    }

    /// A copy of every entry (for `SHOW PROXYROUTE`-like listings).
    pub fn snapshot(&self) -> Vec<(K, Entry<V>)> {
        self.lock().iter().map(|(k, e)| (k.clone(), e.clone())).collect()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a table fetch returns: the entry and any tablet locations the source had at hand.
#[derive(Debug, Clone)]
pub struct TableMeta {
    /// The table entry (scheme with tablet ids, replicas of a non-partitioned table).
    pub entry: TableEntry,
    /// Tablet locations fetched together with the entry (may be empty).
    pub tablets: Vec<TabletLocation>,
}

/// The location cache.
#[derive(Debug)]
pub struct LocationCache {
    config: CacheConfig,
    /// Table entries.
    pub tables: EntryMap<TableKey, TableEntry>,
    /// Partition (tablet) entries.
    pub tablets: EntryMap<TabletKey, TabletLocation>,
    /// Tenant server lists (`__all_dummy` entries), keyed by tenant name.
    pub tenants: EntryMap<String, TenantServers>,
    completions: watch::Sender<u64>,
}

impl LocationCache {
    /// An empty cache.
    pub fn new(config: CacheConfig) -> LocationCache {
        LocationCache {
            tables: EntryMap::new(config.location_policy()),
            tablets: EntryMap::new(config.location_policy()),
            tenants: EntryMap::new(config.tenant_policy()),
            completions: watch::Sender::new(0),
            config,
        }
    }

    /// The settings.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Moves whenever any entry may have changed ([`EntryMap::generation`] of the three maps).
    pub fn generation(&self) -> u64 {
        // Each part only grows, so the sum moves whenever one does.
        self.tables.generation().wrapping_add(self.tablets.generation()).wrapping_add(self.tenants.generation())
    }

    /// A receiver that changes whenever a fetch completes (subscribe before probing).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.completions.subscribe()
    }

    fn notify(&self) {
        self.completions.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Stores a fetched table entry and its tablets. Tablet entries of the table are dropped first
    /// when the table id or schema version changed (the table was re-created or altered).
    pub fn fill_table(&self, key: &TableKey, meta: TableMeta, now: Instant) {
        let old = self.tables.with(key, |e| e.value().map(|v| (v.table_id, v.schema_version))).flatten();
        if old.is_some_and(|o| o != (meta.entry.table_id, meta.entry.schema_version)) {
            self.tablets.remove_where(|k| &k.table == key);
        }
        for loc in meta.tablets {
            let tk = TabletKey { table: key.clone(), tablet_id: loc.tablet_id };
            self.tablets.fill(&tk, Arc::new(loc), now);
        }
        self.tables.fill(key, Arc::new(meta.entry), now);
        self.notify();
    }

    /// Records a failed table fetch.
    pub fn fail_table(&self, key: &TableKey, error: String, now: Instant) {
        self.tables.fail(key, error, now);
        self.notify();
    }

    /// Stores fetched tablet locations; `requested` ids absent from `locs` are recorded as failed.
    pub fn fill_tablets(&self, table: &TableKey, requested: &[u64], locs: Vec<TabletLocation>, now: Instant) {
        for id in requested.iter().filter(|id| !locs.iter().any(|l| l.tablet_id == **id)) {
            let tk = TabletKey { table: table.clone(), tablet_id: *id };
            self.tablets.fail(&tk, "no location for this tablet".into(), now);
        }
        for loc in locs {
            let tk = TabletKey { table: table.clone(), tablet_id: loc.tablet_id };
            self.tablets.fill(&tk, Arc::new(loc), now);
        }
        self.notify();
    }

    /// Records a failed tablet fetch.
    pub fn fail_tablet(&self, key: &TabletKey, error: String, now: Instant) {
        self.tablets.fail(key, error, now);
        self.notify();
    }

    /// Stores a fetched tenant server list.
    pub fn fill_tenant(&self, servers: TenantServers, now: Instant) {
        self.tenants.fill(&servers.tenant.clone(), Arc::new(servers), now);
        self.notify();
    }

    /// Records a failed tenant server-list fetch.
    pub fn fail_tenant(&self, tenant: &str, error: String, now: Instant) {
        self.tenants.fail(&tenant.to_string(), error, now);
        self.notify();
    }

    /// Every cached tablet location of a table, in any state (for "a random partition of the
    /// table" when the partition cannot be calculated, docs/routing.md §12).
    pub fn tablets_of(&self, key: &TableKey) -> Vec<Arc<TabletLocation>> {
        let mut out: Vec<Arc<TabletLocation>> = self
            .tablets
            .snapshot()
            .into_iter()
            .filter(|(k, _)| &k.table == key)
            .filter_map(|(_, e)| e.value().cloned())
            .collect();
        out.sort_by_key(|t| t.tablet_id);
        out
    }
}
