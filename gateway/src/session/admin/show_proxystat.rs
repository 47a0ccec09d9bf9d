//! `SHOW PROXYSTAT [LIKE 'pattern']`: the gateway's counters and gauges (the metrics registry and
//! the pool, congestion and cache snapshots, as on the Prometheus page), one row per sample:
//! `stat_name` (family name with its labels) and `value`. Histogram buckets are left out (their
//! `_sum` and `_count` are shown).

use super::{AdminCommand, AdminContext, Reply};
use crate::planner::show_route::like;
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::TextResultSet;

/// `SHOW PROXYSTAT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowProxyStat {
    /// `LIKE` pattern on `stat_name`.
    pub like: Option<String>,
}

impl AdminCommand for ShowProxyStat {
    fn execute(&self, cx: &AdminContext<'_>) -> Result<Reply, ErrPacket> {
        let page = crate::metrics::page::render(cx.shared, None);
        let mut rs = TextResultSet::with_text_columns(&["stat_name", "value"]);
        for (name, value) in samples(&page) {
            if name.contains("_bucket") || self.like.as_deref().is_some_and(|p| !like(p, name)) {
                continue;
            }
            rs.rows.push(vec![Some(name.to_string()), Some(value.to_string())]);
        }
        Ok(Reply::Rows(rs))
    }
}

/// `(name{labels}, value)` of every sample line of a Prometheus text page.
fn samples(page: &str) -> impl Iterator<Item = (&str, &str)> {
    page.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).filter_map(|l| l.rsplit_once(' '))
}
