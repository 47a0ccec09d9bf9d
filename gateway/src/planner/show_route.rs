//! `SHOW PROXYROUTE [LIKE 'pattern']`: the table entries of the location cache, with ODP's
//! columns (docs/routing.md §15).

use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use crate::protocol::resultset::TextResultSet;
use crate::topology::{Entry, TableEntry, TableKey};

/// ODP's column order.
const COLUMNS: [&str; 18] = [
    "cluster_name",
    "tenant_name",
    "database_name",
    "table_name",
    "state",
    "partition_num",
    "replica_num",
    "table_id",
    "cluster_version",
    "schema_version",
    "from_rslist",
    "create_time",
    "last_valid_time",
    "last_access_time",
    "last_update_time",
    "expire_time",
    "relative_expire_time",
    "server addr",
];

/// The listing for a cluster's cached tables whose name matches the LIKE `pattern`.
pub fn show_proxyroute(
    cluster: &str,
    entries: &[(TableKey, Entry<TableEntry>)],
    pattern: Option<&str>,
) -> TextResultSet {
    let mut rs = TextResultSet::with_text_columns(&COLUMNS);
    let mut sorted: Vec<&(TableKey, Entry<TableEntry>)> =
        entries.iter().filter(|(k, _)| pattern.is_none_or(|p| like(p, &k.table))).collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, entry) in sorted {
        rs.rows.push(row(cluster, key, entry));
    }
    rs
}

fn row(cluster: &str, key: &TableKey, e: &Entry<TableEntry>) -> Vec<Option<String>> {
    let v = e.value();
    let servers: Vec<String> = v.map(|t| t.replicas.iter().map(|r| r.addr.to_string()).collect()).unwrap_or_default();
    vec![
        Some(cluster.to_string()),
        Some(key.tenant.to_string()),
        Some(key.database.clone()),
        Some(key.table.clone()),
        Some(e.state().name().to_string()),
        Some(v.map_or(0, |t| t.part_num).to_string()),
        Some(servers.len().to_string()),
        Some(v.and_then(|t| t.table_id).map_or_else(|| "-1".into(), |id| id.to_string())),
        Some("4".into()),
        Some(v.and_then(|t| t.schema_version).unwrap_or(0).to_string()),
        Some("false".into()),
        Some(wall(e.created())),
        Some(e.last_valid().map_or_else(|| "-".into(), wall)),
        Some(wall(e.last_update())),
        Some(wall(e.last_update())),
        Some("-".into()),
        Some("-".into()),
        Some(servers.join(";")),
    ]
}

/// An `Instant` as wall-clock seconds since the epoch with microseconds.
fn wall(t: Instant) -> String {
    let age = Instant::now().saturating_duration_since(t);
    let at = SystemTime::now().checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH);
    let d = at.duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO);
    format!("{}.{:06}", d.as_secs(), d.subsec_micros())
}

/// SQL LIKE with `%` and `_`, case-insensitive (table names are stored lower case).
pub fn like(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((b'%', rest)) => (0..=t.len()).any(|i| go(rest, &t[i..])),
            Some((b'_', rest)) => !t.is_empty() && go(rest, &t[1..]),
            Some((c, rest)) => t.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && go(rest, &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_patterns() {
        assert!(like("t%", "t0"));
        assert!(like("T_", "t1"));
        assert!(like("%", ""));
        assert!(!like("t_", "t10"));
        assert!(!like("x%", "t0"));
    }
}
