//! Gateway metrics: a lock-free registry the sessions record into, rendered as Prometheus text.
//!
//! * Recording ([`Metrics`]): counters and fixed-bucket histograms sharded by thread
//!   ([`sharded`]), indexed by small enums, so the per-statement path takes no lock, allocates
//!   nothing, and writes no cache line another core writes.
//! * Snapshots ([`snapshot`]): pool, congestion and location-cache gauges are read from the live
//!   objects at scrape time.
//! * Page ([`page`]): every family, plus the data-plane families, served by
//!   `dataplane/modes/metrics.rs` on `[metrics] address`.
//!
//! Label sets are bounded: statement kinds and route outcomes are enums, servers are those of the
//! topology and the pool (itself keyed by topology servers).

pub(crate) mod endpoint;
mod histogram;
pub(crate) mod page;
pub(crate) mod sharded;
pub(crate) mod snapshot;
mod text;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::sql::StmtKind;
use histogram::{Histogram, ROUTE_DECISION_BUCKETS, STATEMENT_BUCKETS};
use sharded::Sharded;

/// Where a statement went, as `gateway_routes_total{outcome}` counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteOutcome {
    /// The partition leader (strong reads, writes).
    Leader,
    /// A follower replica (weak reads).
    Follower,
    /// A read-only-zone replica.
    Readonly,
    /// One of the tenant's servers, without a partition (no table, no key, not partitioned).
    TenantServer,
    /// The session's held connection (transaction, pin) or the previous statement's server.
    Sticky,
    /// No route decision could be made: the fallback server.
    Fallback,
    /// Answered by the gateway itself.
    Local,
    /// The statement failed in the gateway (no server reachable, pool exhausted, …).
    Error,
}

impl RouteOutcome {
    /// Every outcome, in label order.
    pub const ALL: [RouteOutcome; 8] = [
        RouteOutcome::Leader,
        RouteOutcome::Follower,
        RouteOutcome::Readonly,
        RouteOutcome::TenantServer,
        RouteOutcome::Sticky,
        RouteOutcome::Fallback,
        RouteOutcome::Local,
        RouteOutcome::Error,
    ];

    /// The `outcome` label value.
    pub const fn name(self) -> &'static str {
        match self {
            RouteOutcome::Leader => "leader",
            RouteOutcome::Follower => "follower",
            RouteOutcome::Readonly => "readonly",
            RouteOutcome::TenantServer => "tenant_server",
            RouteOutcome::Sticky => "sticky",
            RouteOutcome::Fallback => "fallback",
            RouteOutcome::Local => "local",
            RouteOutcome::Error => "error",
        }
    }
}

/// How a location-cache lookup was served (`gateway_location_cache_lookups_total{result}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheLookup {
    /// A usable entry was in the cache (`Lookup::Found { from_remote: false }`).
    Hit,
    /// The lookup waited for a fetch (`from_remote: true`) or got nothing (`NotAvailable`).
    Miss,
    /// A stale entry served (`Lookup::Stale`).
    Stale,
}

impl CacheLookup {
    /// Every result, in label order.
    pub const ALL: [CacheLookup; 3] = [CacheLookup::Hit, CacheLookup::Miss, CacheLookup::Stale];

    /// The `result` label value.
    pub const fn name(self) -> &'static str {
        match self {
            CacheLookup::Hit => "hit",
            CacheLookup::Miss => "miss",
            CacheLookup::Stale => "stale",
        }
    }
}

/// `StmtKind` label values, in [`kind_slot`] order.
pub const STMT_KINDS: [&str; 22] = [
    "select",
    "insert",
    "replace",
    "update",
    "delete",
    "begin",
    "commit",
    "rollback",
    "set",
    "use",
    "show",
    "ddl",
    "call",
    "lock_tables",
    "unlock_tables",
    "xa",
    "explain",
    "explain_route",
    "prepare",
    "execute",
    "deallocate",
    "other",
];

/// Slot of a statement kind in [`STMT_KINDS`] (exhaustive: a new kind must be named there).
const fn kind_slot(k: StmtKind) -> usize {
    match k {
        StmtKind::Select => 0,
        StmtKind::Insert => 1,
        StmtKind::Replace => 2,
        StmtKind::Update => 3,
        StmtKind::Delete => 4,
        StmtKind::Begin => 5,
        StmtKind::Commit => 6,
        StmtKind::Rollback => 7,
        StmtKind::Set => 8,
        StmtKind::Use => 9,
        StmtKind::Show => 10,
        StmtKind::Ddl => 11,
        StmtKind::Call => 12,
        StmtKind::LockTables => 13,
        StmtKind::UnlockTables => 14,
        StmtKind::Xa => 15,
        StmtKind::Explain => 16,
        StmtKind::ExplainRoute => 17,
        StmtKind::Prepare => 18,
        StmtKind::Execute => 19,
        StmtKind::Deallocate => 20,
        StmtKind::Other => 21,
    }
}

/// The gateway's recorded counters and histograms (one per process, in `Shared`).
#[derive(Debug)]
pub struct Metrics {
    statements: Sharded,
    routes: Sharded,
    /// `[ok, failed]`.
    partition_calcs: Sharded,
    lookups: Sharded,
    route_decision: Histogram,
    statement_seconds: Histogram,
    clients_open: AtomicU64,
    clients_total: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            statements: Sharded::new(STMT_KINDS.len()),
            routes: Sharded::new(RouteOutcome::ALL.len()),
            partition_calcs: Sharded::new(2),
            lookups: Sharded::new(CacheLookup::ALL.len()),
            route_decision: Histogram::new(ROUTE_DECISION_BUCKETS),
            statement_seconds: Histogram::new(STATEMENT_BUCKETS),
            clients_open: AtomicU64::new(0),
            clients_total: AtomicU64::new(0),
        }
    }
}

/// Counts one open client connection until dropped (see [`Metrics::client_connected`]).
#[derive(Debug)]
pub struct ClientGuard<'a>(&'a Metrics);

impl Drop for ClientGuard<'_> {
    fn drop(&mut self) {
        self.0.clients_open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// One statement served: its kind, where it went, the route decision's time (`None` when no
    /// decision ran: local answer, held connection) and the end-to-end time (request read → last
    /// byte relayed).
    pub fn statement(&self, kind: StmtKind, outcome: RouteOutcome, route_time: Option<Duration>, total: Duration) {
        bump(&self.statements, kind_slot(kind));
        bump(&self.routes, outcome as usize);
        if let Some(t) = route_time {
            self.route_decision.observe(t);
        }
        self.statement_seconds.observe(total);
    }

    /// One partition calculation: `ok` when the statement's partition was computed.
    pub fn partition_calc(&self, ok: bool) {
        bump(&self.partition_calcs, usize::from(!ok));
    }

    /// One location-cache lookup of the routing path.
    pub fn cache_lookup(&self, result: CacheLookup) {
        bump(&self.lookups, result as usize);
    }

    /// A client connected; the returned guard counts it as open until it is dropped.
    pub fn client_connected(&self) -> ClientGuard<'_> {
        self.clients_open.fetch_add(1, Ordering::Relaxed);
        self.clients_total.fetch_add(1, Ordering::Relaxed);
        ClientGuard(self)
    }

    /// A client counted by a guard that is then forgotten, counted by the returned guard instead
    /// (a session moving to a session thread).
    pub fn client_taken_over(&self) -> ClientGuard<'_> {
        ClientGuard(self)
    }

    /// Writes the recorded families.
    fn write(&self, page: &mut text::Page) {
        let name = "gateway_statements_total";
        page.family(name, "counter", "Statements served, by statement kind.");
        for (i, kind) in STMT_KINDS.iter().enumerate() {
            page.sample(name, &[("kind", kind)], load(&self.statements, i));
        }
        let name = "gateway_routes_total";
        page.family(name, "counter", "Statements by route outcome.");
        for o in RouteOutcome::ALL {
            page.sample(name, &[("outcome", o.name())], load(&self.routes, o as usize));
        }
        let name = "gateway_partition_calculations_total";
        page.family(name, "counter", "Partition calculations, by result (ok / failed).");
        page.sample(name, &[("result", "ok")], load(&self.partition_calcs, 0));
        page.sample(name, &[("result", "failed")], load(&self.partition_calcs, 1));
        let name = "gateway_location_cache_lookups_total";
        page.family(
            name,
            "counter",
            "Location-cache lookups of the routing path: hit, miss (fetched or unavailable), stale.",
        );
        for r in CacheLookup::ALL {
            page.sample(name, &[("result", r.name())], load(&self.lookups, r as usize));
        }
        self.route_decision.write(
            page,
            "gateway_route_decision_seconds",
            "Time to route a statement (analysis, partition, decision).",
        );
        self.statement_seconds.write(
            page,
            "gateway_statement_seconds",
            "End-to-end statement time: request read to last byte relayed.",
        );
        page.family("gateway_client_connections", "gauge", "Client connections open now.");
        page.sample("gateway_client_connections", &[], self.clients_open.load(Ordering::Relaxed));
        page.family("gateway_client_connections_total", "counter", "Client connections accepted since start.");
        page.sample("gateway_client_connections_total", &[], self.clients_total.load(Ordering::Relaxed));
    }
}

fn bump(counters: &Sharded, slot: usize) {
    counters.add(slot, 1);
}

fn load(counters: &Sharded, slot: usize) -> u64 {
    counters.get(slot)
}
