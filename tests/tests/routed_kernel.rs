//! Routed mode against the real OceanBase kernel (seekdb): one kernel per test binary, a gateway
//! per test in the kernel's network namespace, with a topology that names the server and tenant
//! but no table (`[routing.table_discovery]` finds them).
//!
//! * weak reads: `SET ob_read_consistency` reaches the kernel's session; its plan cache
//!   (`V$OB_PLAN_CACHE_PLAN_STAT.SYS_VARS`, 10th value: 2 = WEAK, 3 = STRONG) shows the statement
//!   compiled weak;
//! * discovery: the partition the gateway routes by is the one the kernel keeps the row in
//!   (`SELECT … PARTITION (p)`);
//! * sysbench `oltp_read_write` in both PS modes with 0 errors;
//! * a scripted session (weak reads by hint and by SET, prepared statements, a transaction,
//!   KILL, SHOW PROCESSLIST) whose result sets equal the same statements sent directly;
//! * logins that carry the application's identity (`[backend] client_identity`) are accepted.
//!
//! Needs root and the seekdb binary from `scripts/setup.sh`; otherwise each test prints `SKIP:`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gateway_tests::clients::MariadbCli;
use gateway_tests::cluster::route_log::{self, RouteRecord};
use gateway_tests::gateway::{Gateway, GatewayConfig};
use gateway_tests::seekdb::{Seekdb, SQL_PORT};
use gateway_tests::sysbench::Sysbench;
use mysql_async::prelude::Queryable;

/// The kernel shared by every test of this binary (stopped at exit by the harness's registry).
fn kernel(test: &str) -> Option<&'static Seekdb> {
    static KERNEL: OnceLock<Result<Seekdb, String>> = OnceLock::new();
    if let Some(reason) = Seekdb::skip_reason() {
        gateway_tests::skip::skip(&format!("routed_kernel/{test}"), &reason);
        return None;
    }
    match KERNEL.get_or_init(|| Seekdb::start("routed-kernel").map_err(|e| format!("{e:#}"))) {
        Ok(db) => Some(db),
        Err(e) => panic!("seekdb did not start: {e}"),
    }
}

/// A routed gateway in the kernel's namespace: topology with server s1 = the kernel, tenant
/// `sys`, no tables; table discovery as root; a route log; `extra` more `[listen]` lines.
fn gateway(db: &Seekdb, extra_listen: &[String], backend_extra: &str) -> (Gateway, std::path::PathBuf) {
    let dir = gateway_tests::scratch_dir("routed-kernel").unwrap();
    let topology = dir.join("topology.toml");
    std::fs::write(
        &topology,
        format!(
            "cluster = \"seekdb\"\n\n[[zones]]\nname = \"z1\"\n\n[[servers]]\nname = \"s1\"\naddr = \"127.0.0.1:{SQL_PORT}\"\nzone = \"z1\"\n\n\
             [[tenants]]\nname = \"sys\"\nprimary_zone = \"z1\"\n"
        ),
    )
    .unwrap();
    let log = dir.join("route.log");
    let mut cfg = GatewayConfig::new(([127, 0, 0, 1], SQL_PORT).into()).unwrap();
    cfg.listen_extra = extra_listen.to_vec();
    cfg.extra_tables.push(format!(
        "[routing]\ntopology = \"{}\"\nroute_log = \"{}\"\n\n[routing.table_discovery]\nuser = \"root\"\n",
        topology.display(),
        log.display()
    ));
    let mut toml = cfg.to_toml();
    if !backend_extra.is_empty() {
        toml = toml.replacen("\n[backend]\n", &format!("\n[backend]\n{backend_extra}\n"), 1);
    }
    let gw = Gateway::start_in_netns(db.netns(), &toml).unwrap();
    (gw, log)
}

/// The `mariadb` CLI against the gateway, inside the kernel's namespace, database `test`,
/// keeping comments (hints) in the statements it sends.
fn cli(db: &Seekdb, gw: &Gateway) -> MariadbCli {
    MariadbCli::new(gw.port()).in_netns(db.netns()).database("test").arg("--comments")
}

/// Route-log records whose statement contains `needle` (polled: the log is written in the
/// background).
fn routed(log: &std::path::Path, needle: &str, count: usize) -> Vec<RouteRecord> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found: Vec<RouteRecord> = route_log::read(log).into_iter().filter(|r| r.sql.contains(needle)).collect();
        if found.len() >= count || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The 10th `SYS_VARS` value (`ob_read_consistency`: 2 WEAK, 3 STRONG) of every cached plan
/// whose SQL contains `needle`.
fn plan_consistency(db: &Seekdb, needle: &str) -> Vec<String> {
    let out = db
        .sql(&format!(
            "SELECT SYS_VARS FROM oceanbase.V$OB_PLAN_CACHE_PLAN_STAT WHERE QUERY_SQL LIKE '%{needle}%' \
             AND QUERY_SQL NOT LIKE '%PLAN_CACHE_PLAN_STAT%'"
        ))
        .unwrap();
    out.lines().map(|l| l.split(',').nth(9).unwrap_or("?").to_string()).collect()
}

#[test]
fn weak_reads_run_weak_on_the_kernel() {
    let Some(db) = kernel("weak_reads") else { return };
    db.sql(
        "DROP TABLE IF EXISTS wr; CREATE TABLE wr (id INT PRIMARY KEY, c INT) PARTITION BY HASH(id) PARTITIONS 4; \
            INSERT INTO wr VALUES (1, 10), (2, 20)",
    )
    .unwrap();
    let (gw, log) = gateway(db, &[], "");
    let out = cli(db, &gw)
        .sql(
            "SET ob_read_consistency = 'WEAK'; SELECT @@ob_read_consistency; SELECT c AS weak_by_set FROM wr WHERE id = 1; \
             SET ob_read_consistency = 'STRONG'; SELECT @@ob_read_consistency; SELECT c AS strong_read FROM wr WHERE id = 1; \
             SELECT /*+ READ_CONSISTENCY(WEAK) */ c AS weak_by_hint FROM wr WHERE id = 2; \
             SET ob_read_consistency = 'WEAK', @mixed = 1; SELECT c AS weak_by_mixed FROM wr WHERE id = 2",
        )
        .unwrap();
    // The kernel compiled the statement with the session's consistency: weak after SET WEAK.
    let weak = plan_consistency(db, "weak_by_set");
    let strong = plan_consistency(db, "strong_read");
    let hinted = plan_consistency(db, "weak_by_hint");
    eprintln!("plan-cache ob_read_consistency: weak_by_set {weak:?}, strong_read {strong:?}, weak_by_hint {hinted:?}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["WEAK", "10", "STRONG", "10", "20", "20"],
        "gateway log:\n{}",
        gw.log_tail(3000)
    );
    assert_eq!(weak, ["2"], "the SET WEAK statement ran strong on the kernel");
    assert_eq!(strong, ["3"]);
    assert_eq!(plan_consistency(db, "weak_by_mixed"), ["2"], "a SET the server ran with other variables");
    // The hint travels in the statement; the kernel's views keep the session value (3) for it.
    assert_eq!(hinted.len(), 1, "the hinted statement reached the kernel");
    let all: Vec<String> = route_log::read(&log).iter().map(|r| r.raw.to_string()).collect();
    let consistency = |needle: &str| routed(&log, needle, 1).first().and_then(|r| r.consistency.clone());
    eprintln!("route log:\n{}", all.join("\n"));
    assert_eq!(consistency("weak_by_set").as_deref().map(str::to_ascii_lowercase).as_deref(), Some("weak"));
    assert_eq!(consistency("weak_by_hint").as_deref().map(str::to_ascii_lowercase).as_deref(), Some("weak"));
    assert_eq!(consistency("weak_by_mixed").as_deref().map(str::to_ascii_lowercase).as_deref(), Some("weak"));
    assert_eq!(consistency("strong_read").as_deref().map(str::to_ascii_lowercase).as_deref(), Some("strong"));
}

/// How many rows with `id = k` the kernel keeps in partition `partition` of `table`.
fn rows_in_partition(db: &Seekdb, table: &str, partition: &str, k: i64) -> String {
    db.sql(&format!("SELECT COUNT(*) FROM {table} PARTITION ({partition}) WHERE id = {k}")).unwrap().trim().to_string()
}

#[test]
fn tables_are_discovered_and_routed_by_partition_on_the_kernel() {
    let Some(db) = kernel("discovery") else { return };
    db.sql(
        "DROP TABLE IF EXISTS disc_key; CREATE TABLE disc_key (id BIGINT PRIMARY KEY, c VARCHAR(10)) PARTITION BY KEY(id) PARTITIONS 5; \
         DROP TABLE IF EXISTS disc_range; CREATE TABLE disc_range (id INT PRIMARY KEY, c INT) PARTITION BY RANGE(id) \
         (PARTITION r_low VALUES LESS THAN (10), PARTITION r_mid VALUES LESS THAN (100), PARTITION r_max VALUES LESS THAN MAXVALUE)",
    )
    .unwrap();
    let (gw, log) = gateway(db, &[], "");
    let keys: Vec<i64> = vec![1, 2, 3, 7, 42, 99, 1000, 123456789];
    let values: Vec<String> = keys.iter().map(|k| format!("({k}, '{k}')")).collect();
    db.sql(&format!("INSERT INTO disc_key VALUES {0}; INSERT INTO disc_range VALUES {0}", values.join(", "))).unwrap();
    let mut script = String::new();
    for (table, k) in keys.iter().flat_map(|&k| [("disc_key", k), ("disc_range", k)]) {
        script.push_str(&format!("SELECT c FROM {table} WHERE id = {k} /* disc:{table}:{k}: */;\n"));
    }
    cli(db, &gw).sql(&script).unwrap();
    let mut compared = 0;
    for (table, k) in keys.iter().flat_map(|&k| [("disc_key", k), ("disc_range", k)]) {
        let rec = routed(&log, &format!("disc:{table}:{k}:"), 1);
        let ours = rec.first().and_then(|r| r.raw.get("partition")).and_then(|p| p.as_str()).map(str::to_string);
        let all: Vec<String> = route_log::read(&log).iter().map(|r| r.raw.to_string()).collect();
        let ours = ours.unwrap_or_else(|| {
            panic!("{table} id = {k} not placed; route log:\n{}\n{}", all.join("\n"), gw.log_tail(3000))
        });
        // The kernel keeps the row in the partition the gateway routed the statement by.
        assert_eq!(rows_in_partition(db, table, &ours, k), "1", "{table} id = {k} is not in {ours}");
        assert_eq!(rec[0].target, Some(([127, 0, 0, 1], SQL_PORT).into()));
        compared += 1;
    }
    let text = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    assert!(text.contains("table discovered through information_schema"), "{}", gw.log_tail(3000));
    eprintln!("{compared} statements routed by the partition that holds their row on the kernel");
}

#[test]
fn sysbench_oltp_read_write_through_the_routed_gateway() {
    let Some(db) = kernel("sysbench") else { return };
    db.sql("DROP DATABASE IF EXISTS sbk; CREATE DATABASE sbk").unwrap();
    let (gw, _log) = gateway(db, &[], "");
    let mut direct = Sysbench::new(SQL_PORT, "sbk");
    direct.netns = Some(db.netns().to_string());
    direct.prepare().unwrap();
    for ps in ["auto", "disable"] {
        let mut b = direct.clone();
        b.port = gw.port();
        b.ps_mode = ps.into();
        // One thread: two conflict on the small tables (lock waits that sysbench ignores) even
        // when sent straight to the kernel.
        b.threads = 1;
        b.time = 5;
        let r = b.run().unwrap_or_else(|e| panic!("sysbench ps={ps}: {e:#}\ngateway log:\n{}", gw.log_tail(3000)));
        eprintln!(
            "sysbench oltp_read_write through routed gateway on seekdb, ps={ps}: {} transactions, {:.1} TPS, {:.1} QPS, \
             {} errors, {} reconnects, p95 {} ms",
            r.transactions, r.tps, r.qps, r.ignored_errors, r.reconnects, r.latency_p95_ms
        );
        assert!(r.transactions > 0, "{}", r.output);
        assert_eq!((r.ignored_errors, r.reconnects), (0, 0), "ps={ps}:\n{}", r.output);
    }
}

type Rows = Vec<Vec<Option<String>>>;

async fn text_rows(conn: &mut mysql_async::Conn, sql: &str) -> Result<Rows, mysql_async::Error> {
    let rows: Vec<mysql_async::Row> = conn.query(sql).await?;
    Ok(rows.into_iter().map(|r| r.unwrap().into_iter().map(value_text).collect()).collect())
}

async fn exec_rows(conn: &mut mysql_async::Conn, sql: &str, k: i64) -> Result<Rows, mysql_async::Error> {
    let rows: Vec<mysql_async::Row> = conn.exec(sql, (k,)).await?;
    Ok(rows.into_iter().map(|r| r.unwrap().into_iter().map(value_text).collect()).collect())
}

fn value_text(v: mysql_async::Value) -> Option<String> {
    match v {
        mysql_async::Value::NULL => None,
        mysql_async::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        other => Some(other.as_sql(true)),
    }
}

/// The scripted session's statements and their results, on one connection to `url`.
async fn script(url: String) -> Result<Vec<(String, Rows)>, mysql_async::Error> {
    let mut c = mysql_async::Conn::from_url(url).await?;
    let mut out = Vec::new();
    let text = [
        "SELECT /*+ READ_CONSISTENCY(WEAK) */ id, c FROM ss ORDER BY id",
        "SET ob_read_consistency = 'WEAK'",
        "SELECT @@ob_read_consistency",
        "SELECT id, c FROM ss WHERE id = 2",
        "SET ob_read_consistency = 'STRONG'",
        "SELECT @@ob_read_consistency, @@autocommit",
        "BEGIN",
        "INSERT INTO ss VALUES (50, 'in tx')",
        "SELECT COUNT(*), MAX(id) FROM ss",
        "ROLLBACK",
        "SELECT COUNT(*), MAX(id) FROM ss",
        "SELECT id, c FROM ss WHERE id IN (1, 3) ORDER BY id",
    ];
    for sql in text {
        out.push((sql.to_string(), text_rows(&mut c, sql).await?));
    }
    for k in [1, 3, 4] {
        let sql = "SELECT c, id * 2 FROM ss WHERE id = ?";
        out.push((format!("{sql} [{k}]"), exec_rows(&mut c, sql, k).await?));
    }
    c.disconnect().await?;
    Ok(out)
}

/// KILL and SHOW PROCESSLIST through the gateway: the killed session's next statement fails,
/// the process list shows the session by the gateway's id.
async fn kill_and_processlist(url: String) -> Result<(), String> {
    let e = |e: mysql_async::Error| e.to_string();
    let mut a = mysql_async::Conn::from_url(url.clone()).await.map_err(e)?;
    let mut b = mysql_async::Conn::from_url(url).await.map_err(e)?;
    let b_id: u64 = b.query_first("SELECT CONNECTION_ID()").await.map_err(e)?.ok_or("no id")?;
    let list = text_rows(&mut a, "SHOW PROCESSLIST").await.map_err(e)?;
    if !list.iter().any(|r| r.first().cloned().flatten() == Some(b_id.to_string())) {
        return Err(format!("SHOW PROCESSLIST lacks session {b_id}: {list:?}"));
    }
    a.query_drop(format!("KILL {b_id}")).await.map_err(e)?;
    if b.query_drop("SELECT 1").await.is_ok() {
        return Err(format!("session {b_id} still answers after KILL"));
    }
    Ok(())
}

/// A session's KILL QUERY and KILL of itself, on one connection to `url`: each answer (OK or
/// the error code), and whether the session still answers after each.
async fn own_kills(url: String) -> Result<Vec<(String, String)>, mysql_async::Error> {
    let mut c = mysql_async::Conn::from_url(url).await?;
    let id: u64 = c.query_first("SELECT CONNECTION_ID()").await?.unwrap_or(0);
    let mut out = Vec::new();
    for verb in ["KILL QUERY", "KILL"] {
        let answer = match c.query_drop(format!("{verb} {id}")).await {
            Ok(()) => "OK".to_string(),
            Err(mysql_async::Error::Server(e)) => format!("ERROR {}", e.code),
            // The connection closed without an answer.
            Err(_) => "closed".to_string(),
        };
        let alive = c.query_drop("SELECT 1").await.is_ok();
        out.push((verb.to_string(), format!("{answer}, alive: {alive}")));
    }
    Ok(out)
}

fn in_kernel_ns<T: Send + 'static>(db: &Seekdb, fut: impl std::future::Future<Output = T> + Send + 'static) -> T {
    gateway_tests::netns::run_in(db.netns(), move || {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(fut)
    })
    .unwrap()
}

#[test]
fn scripted_session_matches_the_kernel() {
    let Some(db) = kernel("scripted_session") else { return };
    db.sql("DROP TABLE IF EXISTS ss; CREATE TABLE ss (id INT PRIMARY KEY, c VARCHAR(20)) PARTITION BY HASH(id) PARTITIONS 3; \
            INSERT INTO ss VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, NULL)")
        .unwrap();
    let (gw, _log) = gateway(db, &[], "");
    let via = in_kernel_ns(db, script(gw.url("root", "", Some("test"))));
    let direct = in_kernel_ns(db, script(format!("mysql://root@127.0.0.1:{SQL_PORT}/test")));
    let via = via.unwrap_or_else(|e| panic!("through the gateway: {e}\n{}", gw.log_tail(3000)));
    let direct = direct.expect("direct");
    assert_eq!(via.len(), direct.len());
    for ((sql, ours), (_, theirs)) in via.iter().zip(&direct) {
        assert_eq!(ours, theirs, "{sql}");
    }
    assert_eq!(via[2].1, [[Some("WEAK".to_string())]], "SELECT @@ob_read_consistency after SET WEAK");
    in_kernel_ns(db, kill_and_processlist(gw.url("root", "", Some("test"))))
        .unwrap_or_else(|e| panic!("{e}\n{}", gw.log_tail(3000)));
    // One's own KILL QUERY and KILL get the kernel's own answers (the gateway runs them on a
    // server connection of the session itself).
    let via = in_kernel_ns(db, own_kills(gw.url("root", "", Some("test")))).expect("own kills through the gateway");
    let direct = in_kernel_ns(db, own_kills(format!("mysql://root@127.0.0.1:{SQL_PORT}/test"))).expect("direct");
    eprintln!("own KILLs: direct {direct:?}, through the gateway {via:?}");
    assert_eq!(via, direct, "one's own KILL QUERY / KILL");
}

/// `[backend] client_identity`: the gateway logs in to the kernel with ODP's proxy-login
/// attributes (`__client_ip` …). The seekdb kernel has no proxy login mode (its binary lacks the
/// `__ob_proxy` name), so it keeps the TCP peer as the client address; what must hold here is that
/// such logins are accepted and serve statements, and that the application (127.0.0.2) is never
/// reported as anything but itself or the gateway.
#[test]
fn logins_with_the_application_identity_are_accepted() {
    let Some(db) = kernel("client_identity") else { return };
    let port2 = gateway_tests::free_port().unwrap();
    let probe = "SELECT HOST, USER_CLIENT_IP FROM oceanbase.V$OB_PROCESSLIST WHERE INFO LIKE '%ident-probe%'";
    // The application connects from 127.0.0.2 (the namespace's second address); the gateway
    // reaches the kernel from 127.0.0.1.
    let listen = [format!("extra_addresses = [\"127.0.0.2:{port2}\"]")];
    let (gw, _) = gateway(db, &listen, "client_identity = true");
    // Two sessions one after the other: the second reuses the pooled connection (COM_CHANGE_USER
    // with its own identity).
    for _ in 0..2 {
        let out = MariadbCli::new(port2).in_netns(db.netns()).host("127.0.0.2").sql(probe);
        let out = out.unwrap_or_else(|e| panic!("{e:#}\n{}", gw.log_tail(3000)));
        let fields: Vec<&str> = out.trim().split('\t').collect();
        eprintln!("V$OB_PROCESSLIST HOST, USER_CLIENT_IP with client_identity: {fields:?}");
        assert!(fields[0].starts_with("127.0.0.1:"), "{out}");
        assert!(["127.0.0.1", "127.0.0.2"].contains(&fields[1]), "{out}");
    }
}

/// ODP's policy inputs reach the kernel as ODP users write them (docs/routing.md §5): both hint
/// forms and the two user variables are accepted by the kernel, a hint naming the kernel routes
/// there (route log), and one naming another address is refused by the gateway with 4179.
#[test]
fn policy_inputs_are_accepted_by_the_kernel() {
    let Some(db) = kernel("policy_inputs") else { return };
    let (gw, log) = gateway(db, &[], "");
    let kernel_addr = format!("127.0.0.1:{SQL_PORT}");
    let out = cli(db, &gw)
        .sql(&format!(
            "SELECT /*+ODP: target_db_server={kernel_addr} */ 1 AS odp_hint; \
             /* target_db_server={kernel_addr} */ SELECT 2 AS comment_hint; \
             SET @proxy_route_policy = 'follower_first'; SELECT @proxy_route_policy AS policy_var; \
             SET @proxy_idc_name = 'idc9'; SELECT @proxy_idc_name AS idc_var"
        ))
        .unwrap();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["1", "2", "follower_first", "idc9"],
        "gateway log:\n{}",
        gw.log_tail(3000)
    );
    for needle in ["odp_hint", "comment_hint"] {
        let records = routed(&log, needle, 1);
        assert_eq!(
            records.first().and_then(|r| r.target).map(|a| a.to_string()),
            Some(kernel_addr.clone()),
            "{needle}"
        );
    }
    let refused = cli(db, &gw).run("/* target_db_server=127.0.0.1:1 */ SELECT 3 AS foreign_hint").unwrap();
    assert!(!refused.success(), "{refused:?}");
    assert!(
        refused.stderr.contains("ERROR 4179") && refused.stderr.contains("not a server of this tenant"),
        "{}",
        refused.stderr
    );
    // The route log records the refusal: no server.
    let records = routed(&log, "foreign_hint", 1);
    let raw: Vec<String> = records.iter().map(|r| r.raw.to_string()).collect();
    assert!(records.len() == 1 && records.iter().all(|r| r.target.is_none()), "{raw:?}");
}
