//! Scrape-time gauges read from the live objects: pool connections per server, congestion state
//! per server and location-cache entries per state.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::text::Page;
use crate::route::CongestionState;
use crate::session::Shared;
use crate::sql::shape::Lookup;
use crate::topology::{EntryMap, EntryState, LocationCache};

/// `state` label values of `gateway_server_congestion`, one-hot per server.
pub const CONGESTION_STATES: [&str; 6] =
    ["alive", "retry_due", "alive_congested", "force_alive_congested", "dead_congested", "detect_congested"];

/// `state` label values of `gateway_location_cache_entries`.
pub const ENTRY_STATES: [&str; 6] = ["born", "building", "avail", "dirty", "updating", "deleted"];

/// `kind` label values of `gateway_location_cache_entries`.
pub const ENTRY_KINDS: [&str; 3] = ["table", "tablet", "tenant"];

/// Writes the snapshot families of `shared`.
pub fn write(shared: &Shared, page: &mut Page) {
    let servers = servers(shared);
    write_pool(shared, &servers, page);
    write_congestion(shared, &servers, page);
    let planners = shared.clusters.planners();
    write_cache(planners.iter().map(|(_, p)| p.locator().cache()), page);
    write_shapes(shared, page);
}

/// The statement-shape cache of the routed sessions (`sql::shape`).
fn write_shapes(shared: &Shared, page: &mut Page) {
    let st = shared.shapes.stats();
    let name = "gateway_statement_shapes";
    page.family(name, "gauge", "Statement shapes known: kept (a template binds their statements), not kept (parsed).");
    page.sample(name, &[("state", "kept")], st.kept);
    page.sample(name, &[("state", "not_kept")], st.not_kept);
    let name = "gateway_statement_shape_lookups_total";
    page.family(
        name,
        "counter",
        "Routed text statements by how their analysis was made: bound to a kept shape, parsed, or new shape.",
    );
    for (lookup, n) in Lookup::ALL.iter().zip(st.lookups) {
        page.sample(name, &[("result", lookup.name())], n);
    }
}

/// Servers of every cluster set up so far and of the pool, in address order (the bounded
/// `server` label set).
fn servers(shared: &Shared) -> BTreeSet<SocketAddr> {
    let mut out: BTreeSet<SocketAddr> = shared.pool.server_stats().into_keys().collect();
    out.extend(shared.clusters.servers());
    out
}

fn write_pool(shared: &Shared, servers: &BTreeSet<SocketAddr>, page: &mut Page) {
    let per_server = shared.pool.server_stats();
    let name = "gateway_pool_connections";
    page.family(name, "gauge", "Pooled server connections per server: idle, in use, being opened.");
    for addr in servers {
        let s = per_server.get(addr).cloned().unwrap_or_default();
        let server = addr.to_string();
        for (state, n) in [("idle", s.idle), ("in_use", s.in_use), ("connecting", s.connecting)] {
            page.sample(name, &[("server", &server), ("state", state)], n as u64);
        }
    }
    let st = shared.pool.stats();
    let counters = [
        ("gateway_pool_connects_total", "Server connections opened by the pool.", st.connects),
        (
            "gateway_pool_connect_failures_total",
            "Pool connection attempts that failed (login refusals excluded).",
            st.connect_failures,
        ),
        ("gateway_pool_reuses_total", "Idle pooled connections handed out again.", st.reuses),
        ("gateway_pool_resets_total", "Pooled connections reset before reuse by another client.", st.resets),
        (
            "gateway_pool_discarded_total",
            "Idle pooled connections closed: expired, dead, failed ping or reset.",
            st.discarded,
        ),
        (
            "gateway_pool_acquire_timeouts_total",
            "Requests that timed out waiting for a pooled connection.",
            st.acquire_timeouts,
        ),
    ];
    for (name, help, v) in counters {
        page.family(name, "counter", help);
        page.sample(name, &[], v);
    }
}

fn write_congestion(shared: &Shared, servers: &BTreeSet<SocketAddr>, page: &mut Page) {
    let now = Instant::now();
    let states: Vec<(SocketAddr, CongestionState)> = match shared.congestion.lock() {
        Ok(c) => servers.iter().map(|a| (*a, c.state(*a, now))).collect(),
        Err(_) => Vec::new(),
    };
    let name = "gateway_server_congestion";
    page.family(name, "gauge", "Congestion state per server (1 for the current state, else 0).");
    for (addr, state) in states {
        let current = match state {
            CongestionState::Alive => "alive",
            CongestionState::RetryDue => "retry_due",
            CongestionState::Congested(kind) => kind.field(),
        };
        let server = addr.to_string();
        for s in CONGESTION_STATES {
            page.sample(name, &[("server", &server), ("state", s)], u64::from(s == current));
        }
    }
}

/// The location-cache gauges, summed over the caches of every cluster set up so far.
fn write_cache<'a>(caches: impl Iterator<Item = &'a LocationCache>, page: &mut Page) {
    let name = "gateway_location_cache_entries";
    page.family(name, "gauge", "Location-cache entries by kind (table, tablet, tenant) and state, over all clusters.");
    let mut counts = [[0u64; 6]; 3];
    for c in caches {
        for (sum, add) in counts.iter_mut().zip([count(&c.tables), count(&c.tablets), count(&c.tenants)]) {
            sum.iter_mut().zip(add).for_each(|(s, a)| *s += a);
        }
    }
    for (kind, per_state) in ENTRY_KINDS.iter().zip(counts) {
        for (state, n) in ENTRY_STATES.iter().zip(per_state) {
            page.sample(name, &[("kind", kind), ("state", state)], n);
        }
    }
}

/// Entries of `map` per state, in [`ENTRY_STATES`] order (no entry is copied).
fn count<K: Eq + std::hash::Hash + Clone, V>(map: &EntryMap<K, V>) -> [u64; 6] {
    let slots: [AtomicU64; 6] = Default::default();
    map.with_each(
        |_| true,
        |e| {
            slots[state_slot(e.state())].fetch_add(1, Ordering::Relaxed);
            false
        },
    );
    slots.map(|s| s.into_inner())
}

const fn state_slot(s: EntryState) -> usize {
    match s {
        EntryState::Born => 0,
        EntryState::Building => 1,
        EntryState::Avail => 2,
        EntryState::Dirty => 3,
        EntryState::Updating => 4,
        EntryState::Deleted => 5,
    }
}
