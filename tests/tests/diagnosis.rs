//! Diagnosis of a routed gateway over three real MariaDB servers playing the demo topology:
//! `[log] route_diagnosis = "trace"` writes each statement's EXPLAIN ROUTE trace and route line
//! to the gateway log, `[log] slow_statement_ms` logs slow requests only, and SHOW PROXYSESSION's
//! `sticky` column says why a session keeps its server connection. `test.t0` is HASH(c1)
//! PARTITIONS 8: c1 = 123 → p3, leader s2.

use std::time::Duration;

use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::mysql::connect;
use gateway_tests::UserEntry;
use mysql_async::prelude::*;

struct Stack {
    c: Cluster,
}

impl Stack {
    fn start() -> Stack {
        let opts = ClusterOptions::demo("diag").account("alice", "alice-pw").account("boss", "boss-pw");
        let servers = Servers::start(&opts).unwrap_or_else(|e| panic!("servers: {e}"));
        let toml = servers
            .gateway_config()
            .unwrap_or_else(|e| panic!("{e}"))
            .user(UserEntry::native("alice", "alice-pw"))
            .user(UserEntry::native("boss", "boss-pw").admin())
            .to_toml()
            .replace("[log]\n", "[log]\nroute_diagnosis = \"trace\"\nslow_statement_ms = 1000\n");
        assert!(toml.contains("route_diagnosis"), "{toml}");
        Stack { c: servers.route(&toml).unwrap_or_else(|e| panic!("gateway: {e}")) }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.c.gw.log_path()).unwrap_or_default()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn trace_slow_statements_and_sticky_sessions() {
    let s = Stack::start();
    rt().block_on(async {
        let mut alice = connect(&s.c.gw.url("alice", "alice-pw", Some("test"))).await.unwrap_or_else(|e| panic!("{e}"));

        // The EXPLAIN ROUTE trace of a statement, in ODP's layout, and its route line.
        alice.query_drop("SELECT c2 FROM t0 WHERE c1 = 123 /* traced */").await.unwrap();
        s.c.gw.wait_log("traced", 2, Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
        let log = s.log();
        let trace = &log[log
            .find("Trans Current Query:\"SELECT c2 FROM t0 WHERE c1 = 123 /* traced */\"")
            .unwrap_or_else(|| panic!("{log}"))..];
        for line in [
            "Route Plan",
            "> SQL_PARSE:{cmd:\"COM_QUERY\"",
            "  > PARTITION_ID_CALC_DONE:{partition_id:200065, level:1, partitions:\"(p3)\"}",
            "> ROUTE_POLICY:",
        ] {
            assert!(trace.lines().any(|l| l.starts_with(line)), "no line {line:?} in the trace:\n{log}");
        }
        let route = log
            .lines()
            .find(|l| l.contains(" route ") && l.contains("traced"))
            .unwrap_or_else(|| panic!("no route line:\n{log}"));
        assert!(route.contains("p3") && route.contains("leader"), "{route}");

        // Slow statements only: the fast one's line would come first (one session, in order).
        // The threshold is far above a fast statement's time on a loaded machine (1 s).
        alice.query_drop("SELECT 1 /* fast-one */").await.unwrap();
        alice.query_drop("SELECT SLEEP(1.5) /* slow-one */").await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let log = loop {
            let log = s.log();
            if log.lines().any(|l| l.contains("slow statement") && l.contains("slow-one")) {
                break log;
            }
            assert!(std::time::Instant::now() < deadline, "no slow statement line for slow-one:\n{log}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let slow: Vec<&str> = log.lines().filter(|l| l.contains("slow statement")).collect();
        assert!(!slow.iter().any(|l| l.contains("fast-one")), "{log}");
        let line = slow.iter().find(|l| l.contains("slow-one")).unwrap_or_else(|| panic!("{log}"));
        assert!(line.contains("user=alice") && line.contains("db=test"), "{line}");
        let ms: u64 = line
            .split("elapsed_ms=")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        assert!(ms >= 1500, "{line}");

        // A session inside a transaction is sticky "trans"; after COMMIT it is free again.
        let mut boss = connect(&s.c.gw.url("boss", "boss-pw", None)).await.unwrap_or_else(|e| panic!("{e}"));
        alice.query_drop("BEGIN").await.unwrap();
        alice.query_drop("SELECT c2 FROM t0 WHERE c1 = 0").await.unwrap();
        assert_eq!(sticky_of(&mut boss, alice.id()).await, "trans");
        alice.query_drop("COMMIT").await.unwrap();
        assert_eq!(sticky_of(&mut boss, alice.id()).await, "");
        alice.query_drop("CREATE TEMPORARY TABLE tt (a INT)").await.unwrap();
        assert_eq!(sticky_of(&mut boss, alice.id()).await, "pin:temporary table");
    });
}

/// The `sticky` column of session `id` in SHOW PROXYSESSION.
async fn sticky_of(admin: &mut mysql_async::Conn, id: u32) -> String {
    let rows: Vec<mysql_async::Row> = admin.query("SHOW PROXYSESSION").await.unwrap_or_else(|e| panic!("{e}"));
    let row = rows
        .iter()
        .find(|r| r.get::<String, _>("Id").as_deref() == Some(id.to_string().as_str()))
        .unwrap_or_else(|| panic!("session {id} not listed"));
    row.get::<Option<String>, _>("sticky").flatten().unwrap_or_default()
}
