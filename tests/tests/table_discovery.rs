//! `[routing.table_discovery]` on MariaDB: two servers hold the same partitioned table, the
//! topology names the servers and the tenant but no table; after discovery each statement runs on
//! the server that leads its partition (partition `i` on the tenant's server `i mod 2`), as the
//! servers' general logs show. `SET ob_read_consistency` stays in the gateway (MariaDB does not
//! know it), and a dropped and re-created table is discovered again after the server says so.

use std::time::{Duration, Instant};

use gateway_tests::cluster::route_log;
use gateway_tests::gateway::{Gateway, GatewayConfig};
use gateway_tests::general_log;
use gateway_tests::mariadb::MariaDb;

const TABLE: &str = "CREATE TABLE dt (id INT PRIMARY KEY, c VARCHAR(20)) PARTITION BY HASH(id) PARTITIONS 4";

/// Servers (by index) whose general log has an executed statement containing `needle`.
fn ran_on(servers: &[MariaDb], needle: &str) -> Vec<usize> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found: Vec<usize> = servers
            .iter()
            .enumerate()
            .filter(|(_, db)| {
                general_log::read(&db.general_log_path())
                    .iter()
                    .any(|e| e.command == "Query" && e.text.contains(needle))
            })
            .map(|(i, _)| i)
            .collect();
        if !found.is_empty() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn mariadb_tables_are_discovered_and_routed_by_partition() {
    let servers: Vec<MariaDb> = (1..=2).map(|i| MariaDb::start(&format!("discovery-s{i}")).unwrap()).collect();
    for db in &servers {
        db.sql(&format!("{TABLE}; INSERT INTO dt VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')")).unwrap();
    }
    let dir = gateway_tests::scratch_dir("table-discovery").unwrap();
    let topology = dir.join("topology.toml");
    let mut topo = String::from("cluster = \"md\"\n\n[[zones]]\nname = \"z1\"\n");
    for (i, db) in servers.iter().enumerate() {
        topo += &format!("\n[[servers]]\nname = \"s{}\"\naddr = \"{}\"\nzone = \"z1\"\n", i + 1, db.addr());
    }
    topo += "\n[[tenants]]\nname = \"sys\"\nprimary_zone = \"z1\"\n";
    std::fs::write(&topology, topo).unwrap();
    let log = dir.join("route.log");
    let mut cfg = GatewayConfig::new(servers[0].addr()).unwrap();
    cfg.extra_tables.push(format!(
        "[routing]\ntopology = \"{}\"\nroute_log = \"{}\"\nseed = 3\n\n[routing.cache]\nmin_refetch_ms = 100\n\n\
         [routing.table_discovery]\nuser = \"root\"\n",
        topology.display(),
        log.display()
    ));
    let gw = Gateway::start(&cfg.to_toml()).unwrap();
    let cli = gw.cli().database("test").arg("--comments");
    let mut script = String::new();
    for k in 1..=8 {
        script += &format!("SELECT c FROM dt WHERE id = {k} /* dt:{k}: */;\n");
    }
    cli.sql(&script).unwrap_or_else(|e| panic!("{e:#}\n{}", gw.log_tail(3000)));
    // The route log is written in the background, in order: wait for the last statement's line.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !route_log::read(&log).iter().any(|r| r.sql.contains("dt:8:")) {
        assert!(std::time::Instant::now() < deadline, "no route log line for dt:8:\n{}", gw.log_tail(3000));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for k in 1..=8usize {
        // HASH(id) over 4 partitions: p(k mod 4), led by server (k mod 4) mod 2.
        let expected = (k % 4) % 2;
        assert_eq!(ran_on(&servers, &format!("dt:{k}:")), [expected], "id = {k}; gateway log:\n{}", gw.log_tail(3000));
        let rec: Vec<_> = route_log::read(&log).into_iter().filter(|r| r.sql.contains(&format!("dt:{k}:"))).collect();
        assert_eq!(rec[0].raw.get("partition").and_then(|p| p.as_str()), Some(format!("p{}", k % 4).as_str()));
    }
    // A gateway-only route variable on MariaDB: answered by the gateway, never sent, so the
    // following statement (synced to a pooled connection) still runs.
    let out = cli.sql("SET ob_read_consistency = 'WEAK'; SELECT c FROM dt WHERE id = 2 /* dt:weak: */").unwrap();
    assert_eq!(out.trim(), "two");
    for db in &servers {
        let sent = general_log::read(&db.general_log_path()).iter().any(|e| e.text.contains("ob_read_consistency"));
        assert!(!sent, "ob_read_consistency reached MariaDB {}", db.name());
    }
    // The table is re-created with other partitioning: the server's "unknown partition" error
    // makes the entry dirty and the next lookup past min_refetch discovers it again.
    for db in &servers {
        db.sql("DROP TABLE dt; CREATE TABLE dt (id INT PRIMARY KEY, c VARCHAR(20)) PARTITION BY HASH(id) PARTITIONS 2")
            .unwrap();
    }
    let refused = cli.run("SELECT c FROM dt PARTITION (p3) WHERE id = 3").unwrap();
    assert!(!refused.success(), "p3 no longer exists");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut n = 0;
    loop {
        n += 1;
        cli.sql(&format!("SELECT c FROM dt WHERE id = 3 /* dt:re{n}: */")).unwrap();
        let rec: Vec<_> = route_log::read(&log).into_iter().filter(|r| r.sql.contains(&format!("dt:re{n}:"))).collect();
        let partition = rec.first().and_then(|r| r.raw.get("partition")).and_then(|p| p.as_str()).map(str::to_string);
        if partition.as_deref() == Some("p1") {
            break;
        }
        assert!(Instant::now() < deadline, "not rediscovered: routed by {partition:?}\n{}", gw.log_tail(3000));
        std::thread::sleep(Duration::from_millis(100));
    }
}
