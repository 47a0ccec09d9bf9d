//! `SHOW PROXYCONGESTION`: the congestion state of every server (docs/routing.md §6): state,
//! failures inside the failure window, time since the last failure, time until an
//! alive-congested server may be retried, failed probes in a row, and its pooled connections.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use super::{AdminCommand, AdminContext, Reply};
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::{ColumnKind, TextResultSet};
use crate::route::congestion::CongestionReport;
use crate::route::CongestionState;

/// `SHOW PROXYCONGESTION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShowProxyCongestion;

/// Result columns.
pub const COLUMNS: [&str; 8] = [
    "server_addr",
    "state",
    "failures",
    "last_failure_secs_ago",
    "retry_in_secs",
    "detect_failures",
    "pool_idle",
    "pool_in_use",
];

impl AdminCommand for ShowProxyCongestion {
    fn execute(&self, cx: &AdminContext<'_>) -> Result<Reply, ErrPacket> {
        let now = Instant::now();
        let mut reports: BTreeMap<SocketAddr, Option<CongestionReport>> = match cx.shared.congestion.lock() {
            Ok(c) => c.report(now).into_iter().map(|r| (r.addr, Some(r))).collect(),
            Err(_) => BTreeMap::new(),
        };
        let pools = cx.shared.pool.server_stats();
        // Servers of the topology and of the pool that never failed are alive.
        for addr in pools.keys() {
            reports.entry(*addr).or_insert(None);
        }
        for addr in cx.shared.clusters.servers() {
            reports.entry(addr).or_insert(None);
        }
        let mut rs = TextResultSet::with_text_columns(&COLUMNS);
        for c in rs.columns.iter_mut().skip(2) {
            c.1 = ColumnKind::Int;
        }
        for (addr, r) in reports {
            let pool = pools.get(&addr).cloned().unwrap_or_default();
            let secs = |t: Option<Instant>, f: fn(Instant, Instant) -> u64| t.map(|t| f(t, now).to_string());
            rs.rows.push(vec![
                Some(addr.to_string()),
                Some(state_name(r.as_ref().map_or(CongestionState::Alive, |r| r.state)).to_string()),
                Some(r.as_ref().map_or(0, |r| r.failures).to_string()),
                r.as_ref().and_then(|r| secs(r.last_failure, |t, now| now.saturating_duration_since(t).as_secs())),
                r.as_ref().and_then(|r| secs(r.retry_at, |t, now| t.saturating_duration_since(now).as_secs())),
                Some(r.as_ref().map_or(0, |r| r.detect_failures).to_string()),
                Some(pool.idle.to_string()),
                Some(pool.in_use.to_string()),
            ]);
        }
        Ok(Reply::Rows(rs))
    }
}

/// The state's name, as the metrics' `gateway_server_congestion{state}` label spells it.
fn state_name(s: CongestionState) -> &'static str {
    match s {
        CongestionState::Alive => "alive",
        CongestionState::RetryDue => "retry_due",
        CongestionState::Congested(kind) => kind.field(),
    }
}
