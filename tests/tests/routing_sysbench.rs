//! sysbench `oltp_read_write` through the routing gateway over the four-server cluster (issue #5
//! "Tests"), prepared statements on (`--db-ps-mode=auto`) and off (`disable`): 0 errors, 0
//! reconnects, and the statements really spread over several servers.
//!
//! The sbtest tables are prepared directly on every server with the same seed (identical rows:
//! each server can play any replica) and declared `HASH(id) PARTITIONS 4` in the topology, leaders
//! spread over s1, s2, s4. A transaction sticks to the leader of its first statement's partition.

use std::collections::BTreeMap;

use gateway_tests::cluster::{Cluster, ClusterOptions, Layout, APP_PASSWORD, APP_USER};
use gateway_tests::sysbench::Sysbench;

const TABLES: u32 = 2;
const TABLE_SIZE: u32 = 1000;

fn bench(port: u16, ps: &str) -> Sysbench {
    let mut b = Sysbench::new(port, "sbtest");
    b.user = APP_USER.into();
    b.password = APP_PASSWORD.into();
    b.tables = TABLES;
    b.table_size = TABLE_SIZE;
    // One thread: with two, InnoDB deadlocks on 1000-row tables (ignored errors 1213) even direct.
    b.threads = 1;
    b.time = 4;
    b.ps_mode = ps.into();
    b
}

/// The standard cluster with the gateway's `extra_toml`, and the sbtest tables prepared on every
/// server with the same seed (identical rows: each server can play any replica).
fn cluster(name: &str, extra_toml: &str) -> Cluster {
    let mut opts = ClusterOptions::new(name);
    opts.layout = Layout::Standard { sbtest_tables: TABLES };
    opts.general_log = false;
    opts.extra_toml = extra_toml.into();
    let c = Cluster::start(opts).unwrap();
    c.on_every_server("CREATE DATABASE sbtest").unwrap();
    for (name, db) in c.servers() {
        let mut b = bench(db.port(), "auto");
        b.extra.push("--rand-seed=1".into());
        b.prepare().unwrap_or_else(|e| panic!("sysbench prepare on {name}: {e:#}"));
    }
    c
}

#[test]
fn oltp_read_write_over_the_cluster_has_no_errors() {
    let c = cluster("sb", "");

    // Both modes run before anything is asserted, so that one report shows both.
    let mut problems = Vec::new();
    for ps in ["auto", "disable"] {
        let before = c.route_log().len();
        let r = match bench(c.gw.port(), ps).run() {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("sysbench --db-ps-mode={ps} through the gateway: {e:#}"));
                continue;
            }
        };
        if r.transactions == 0 || r.ignored_errors != 0 || r.reconnects != 0 {
            problems.push(format!(
                "ps-mode {ps}: {} transactions, {} ignored errors, {} reconnects:\n{}",
                r.transactions, r.ignored_errors, r.reconnects, r.output
            ));
        }
        // Everything routed during the run is sysbench's.
        let mut per_server: BTreeMap<String, usize> = BTreeMap::new();
        for rec in c.route_log().iter().skip(before) {
            let name = rec.target.and_then(|a| c.name_of(a)).unwrap_or("?");
            *per_server.entry(name.to_string()).or_default() += 1;
        }
        if per_server.keys().filter(|k| k.as_str() != "?").count() < 2 {
            problems.push(format!("ps-mode {ps}: sysbench requests did not spread over the cluster: {per_server:?}"));
        }
        eprintln!(
            "sysbench oltp_read_write ps-mode={ps} over the cluster: {:.0} tps / {:.0} qps (p95 {} ms); requests per server {per_server:?}",
            r.tps, r.qps, r.latency_p95_ms
        );
    }
    assert!(problems.is_empty(), "{}\n{}", problems.join("\n"), c.gw_log());
}

/// More sessions than pooled connections: eight sysbench threads of point selects through keys of
/// at most two connections each. Sessions keep their connection between statements and the pool
/// takes kept ones back for others (`pool::park`): no statement fails or waits out the acquire
/// timeout, and no server ever sees more than the pool's two connections of the gateway (plus the
/// `mariadb` client asking).
#[test]
fn more_sessions_than_pooled_connections_share_them() {
    let c = cluster("sbpark", "[pool]\nmax_per_key = 2\nacquire_timeout_ms = 20000\n");
    for (_, db) in c.servers() {
        db.sql("FLUSH STATUS").expect("reset Max_used_connections");
    }
    let mut b = bench(c.gw.port(), "disable");
    b.test = "oltp_point_select".into();
    b.threads = 8;
    b.time = 3;
    let r = b.run().unwrap_or_else(|e| panic!("sysbench through the gateway: {e:#}\n{}", c.gw_log()));
    assert!(
        r.queries > 0 && r.ignored_errors == 0 && r.reconnects == 0,
        "{} queries, {} ignored errors, {} reconnects:\n{}\n{}",
        r.queries,
        r.ignored_errors,
        r.reconnects,
        r.output,
        c.gw_log()
    );
    for (name, db) in c.servers() {
        let out = db.sql("SHOW GLOBAL STATUS LIKE 'Max_used_connections'").expect("status");
        let used: u64 = out.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("Max_used_connections");
        assert!(used <= 3, "{name}: {used} connections at once, the pool allows 2 (and the client asking 1)");
    }
    eprintln!("sysbench oltp_point_select, 8 threads over 2 connections per key: {:.0} qps", r.qps);
}
