//! sysbench oltp_read_write through the gateway, prepared statements (`--db-ps-mode=auto`) and text
//! protocol (`--db-ps-mode=disable`): no errors, no reconnects, and the same final row counts as
//! the same workload run directly against MariaDB (2 tables x 1000 rows, 5 s each).
//!
//! One test (the runs share the two CPUs, running them in parallel would only add noise).

use gateway_tests::stack::Stack;
use gateway_tests::sysbench::Sysbench;

const TABLES: u32 = 2;
const TABLE_SIZE: u32 = 1000;

fn row_counts(s: &Stack, db: &str) -> String {
    let q: Vec<String> =
        (1..=TABLES).map(|i| format!("SELECT 'sbtest{i}', COUNT(*), MIN(id), MAX(id) FROM {db}.sbtest{i}")).collect();
    s.db.sql(&q.join("; ")).unwrap()
}

/// The backend's global COM_STMT_EXECUTE counter.
fn stmt_executes(s: &Stack) -> u64 {
    let out = s.db.sql("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'").unwrap();
    out.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

#[test]
fn oltp_read_write_through_gateway_matches_direct() {
    let s = Stack::start(
        "sysbench",
        |db| {
            db.sql("CREATE DATABASE sb_direct; CREATE DATABASE sb_gw_auto; CREATE DATABASE sb_gw_disable")?;
            Ok(())
        },
        |c| c,
    )
    .unwrap();
    let bench = |port: u16, db: &str, ps: &str| {
        let mut b = Sysbench::new(port, db);
        b.tables = TABLES;
        b.table_size = TABLE_SIZE;
        // One thread: with two, InnoDB deadlocks on 1000-row tables (ignored errors 1213) even direct.
        b.threads = 1;
        b.time = 5;
        b.ps_mode = ps.into();
        b
    };
    // Reference: direct, prepared statements.
    let d = bench(s.db.port(), "sb_direct", "auto");
    d.prepare().unwrap();
    let direct = d.run().unwrap();
    assert_eq!((direct.ignored_errors, direct.reconnects), (0, 0), "direct run:\n{}", direct.output);
    let want = row_counts(&s, "sb_direct");
    assert!(want.contains(&format!("\t{TABLE_SIZE}\t1\t{TABLE_SIZE}")), "direct row counts: {want}");

    for ps in ["auto", "disable"] {
        let db = format!("sb_gw_{ps}");
        let g = bench(s.gw.port(), &db, ps);
        // prepare through the gateway too (bulk INSERTs, CREATE INDEX).
        g.prepare().unwrap_or_else(|e| panic!("prepare through the gateway: {e:#}\n{}", s.gw_log()));
        let before = stmt_executes(&s);
        let r = g.run().unwrap_or_else(|e| panic!("run --db-ps-mode={ps} through the gateway: {e:#}\n{}", s.gw_log()));
        assert!(r.transactions > 0 && r.queries > 0, "ps-mode {ps}: nothing ran:\n{}", r.output);
        assert_eq!(r.ignored_errors, 0, "ps-mode {ps}: ignored errors:\n{}", r.output);
        assert_eq!(r.reconnects, 0, "ps-mode {ps}: reconnects:\n{}", r.output);
        // The backend executed prepared statements exactly when sysbench used them.
        let executes = stmt_executes(&s) - before;
        if ps == "auto" {
            assert!(
                executes >= r.queries / 2,
                "ps-mode auto: only {executes} COM_STMT_EXECUTE on the backend for {} queries",
                r.queries
            );
        } else {
            assert_eq!(executes, 0, "ps-mode disable: the backend saw COM_STMT_EXECUTE");
        }
        assert_eq!(
            row_counts(&s, &db).replace(&db, ""),
            want.replace("sb_direct", ""),
            "ps-mode {ps}: final row counts vs direct"
        );
        eprintln!(
            "sysbench oltp_read_write ps-mode={ps}: gateway {:.0} tps / {:.0} qps (p95 {} ms); direct (auto) {:.0} tps / {:.0} qps (p95 {} ms)",
            r.tps, r.qps, r.latency_p95_ms, direct.tps, direct.qps, direct.latency_p95_ms
        );
        g.cleanup().unwrap();
    }
    d.cleanup().unwrap();
    s.assert_healthy();
}
