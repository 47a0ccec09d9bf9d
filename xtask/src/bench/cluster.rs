//! `cargo xtask bench --cluster`: the gateway in routing mode over three servers holding the same
//! sbtest data, with a static topology written at bench time, and the share of statements each
//! server executed during a run (from its `Questions` counter, read directly).

use std::path::Path;

use anyhow::Context;
use gateway_tests::MariaDb;

use crate::sysbench;

/// Servers of the cluster: s1 (zone1, idc1) and s2 (zone2, idc2) read-write in region sh, s3 in
/// the read-only zone3 (idc3, region hz) — the shape of the embedded demo topology.
pub const SERVERS: usize = 3;

/// sbtest tables are declared `HASH(id) PARTITIONS` this many in the topology; the MariaDB tables
/// themselves stay unpartitioned (every server plays a full replica of every tablet).
const PARTITIONS: usize = 4;

/// Writes `<dir>/topology.toml` for `dbs` and returns the gateway's `[routing]` section using it
/// (the gateway runs in idc1, next to s1).
pub fn routing_section(dir: &Path, dbs: &[MariaDb]) -> anyhow::Result<String> {
    let path = dir.join("topology.toml");
    std::fs::write(&path, topology(dbs)).with_context(|| format!("writing {}", path.display()))?;
    Ok(format!("\n[routing]\ntopology = \"{}\"\nidc = \"idc1\"\n", path.display()))
}

/// Writes `<dir>/topology-one.toml` and returns a `[routing]` section using it: one zone, the one
/// server, and the sysbench tables declared `HASH(id)` with every partition led by that server. The
/// gateway then analyses and routes every statement, and the server layout is the same as for the
/// 1:1 targets, so the difference is the cost of routing.
pub fn single_server_routing(dir: &Path, db: &MariaDb) -> anyhow::Result<String> {
    let mut t = String::from("# Written by `cargo xtask bench` (target routed).\ncluster = \"bench\"\n");
    t.push_str("\n[[zones]]\nname = \"zone1\"\nregion = \"sh\"\nidc = \"idc1\"\ntype = \"ReadWrite\"\n");
    t.push_str(&format!("\n[[servers]]\nname = \"s1\"\naddr = \"{}\"\nzone = \"zone1\"\n", db.addr()));
    t.push_str("\n[[tenants]]\nname = \"sys\"\nid = 1\nprimary_zone = \"zone1\"\n");
    for table in 1..=sysbench::TABLES {
        t.push_str(&table_head(table));
        for p in 0..PARTITIONS {
            t.push_str(&format!("  {{ name = \"p{p}\", leader = \"s1\" }},\n"));
        }
        t.push_str("]\n");
    }
    let path = dir.join("topology-one.toml");
    std::fs::write(&path, t).with_context(|| format!("writing {}", path.display()))?;
    Ok(format!("\n[routing]\ntopology = \"{}\"\nidc = \"idc1\"\n", path.display()))
}

/// A `[[tables]]` entry for `sbtest<table>` up to its `partitions = [` line.
fn table_head(table: u32) -> String {
    format!(
        "\n[[tables]]\ntenant = \"sys\"\ndatabase = \"sbtest\"\nname = \"sbtest{table}\"\n\
         ddl = \"CREATE TABLE sbtest{table} (id INT NOT NULL, k INT NOT NULL, c CHAR(120) NOT NULL, \
         pad CHAR(60) NOT NULL, PRIMARY KEY (id)) PARTITION BY HASH(id) PARTITIONS {PARTITIONS}\"\npartitions = [\n"
    )
}

/// The topology: three zones and servers, tenant `sys`, and the sysbench tables with partition
/// leaders alternating between s1 and s2, followers on the other and read-only replicas on s3.
fn topology(dbs: &[MariaDb]) -> String {
    let mut t = String::from("# Written by `cargo xtask bench --cluster`.\ncluster = \"bench\"\n");
    let zones = [
        ("zone1", "sh", "idc1", "ReadWrite"),
        ("zone2", "sh", "idc2", "ReadWrite"),
        ("zone3", "hz", "idc3", "ReadOnly"),
    ];
    for (name, region, idc, kind) in zones {
        t.push_str(&format!(
            "\n[[zones]]\nname = \"{name}\"\nregion = \"{region}\"\nidc = \"{idc}\"\ntype = \"{kind}\"\n"
        ));
    }
    for (i, db) in dbs.iter().enumerate() {
        t.push_str(&format!(
            "\n[[servers]]\nname = \"s{n}\"\naddr = \"{}\"\nzone = \"zone{n}\"\n",
            db.addr(),
            n = i + 1
        ));
    }
    t.push_str("\n[[tenants]]\nname = \"sys\"\nid = 1\nprimary_zone = \"zone1;zone2,zone3\"\n");
    for table in 1..=sysbench::TABLES {
        t.push_str(&table_head(table));
        for p in 0..PARTITIONS {
            let (leader, follower) = if (p + table as usize).is_multiple_of(2) { ("s1", "s2") } else { ("s2", "s1") };
            t.push_str(&format!(
                "  {{ name = \"p{p}\", leader = \"{leader}\", followers = [\"{follower}\"], readonly = [\"s3\"] }},\n"
            ));
        }
        t.push_str("]\n");
    }
    t
}

/// Each server's `Questions` counter (statements executed), read directly; `None` if unreadable.
pub fn questions(dbs: &[MariaDb]) -> Vec<Option<u64>> {
    dbs.iter()
        .map(|db| {
            let out = db.cli().sql("SHOW GLOBAL STATUS LIKE 'Questions'").ok()?;
            out.split_whitespace().nth(1)?.parse().ok()
        })
        .collect()
}

/// Statements the servers counted between two [`questions`] readings per statement sysbench
/// sent (`queries`); `None` if a counter was unreadable or nothing was sent.
pub fn per_statement(before: &[Option<u64>], after: &[Option<u64>], queries: u64) -> Option<f64> {
    let counted =
        before.iter().zip(after).map(|(b, a)| Some(a.as_ref()?.saturating_sub((*b)?))).sum::<Option<u64>>()?;
    (queries > 0).then(|| counted as f64 / queries as f64)
}

/// The share of statements each server executed between two [`questions`] readings:
/// `s1 51% s2 49% s3 0%`; `None` if a counter was unreadable or nothing ran.
pub fn spread(before: &[Option<u64>], after: &[Option<u64>]) -> Option<String> {
    let deltas: Vec<u64> =
        before.iter().zip(after).map(|(b, a)| Some(a.as_ref()?.saturating_sub((*b)?))).collect::<Option<_>>()?;
    let total: u64 = deltas.iter().sum();
    if total == 0 {
        return None;
    }
    let parts: Vec<String> = deltas
        .iter()
        .enumerate()
        .map(|(i, d)| format!("s{} {:.0}%", i + 1, *d as f64 * 100.0 / total as f64))
        .collect();
    Some(parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_a_share_of_the_deltas() {
        let before = [Some(10), Some(5), Some(0)];
        assert_eq!(spread(&before, &[Some(70), Some(45), Some(0)]).as_deref(), Some("s1 60% s2 40% s3 0%"));
        assert_eq!(spread(&before, &[Some(10), Some(5), Some(0)]), None);
        assert_eq!(spread(&before, &[None, Some(5), Some(0)]), None);
    }
}
