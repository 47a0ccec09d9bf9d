//! MariaDB session behaviour through the gateway in both modes (1:1 and routed over the demo
//! servers), each case checked against the same server directly: stored procedures that return
//! rows while a cursor is open, killed statements, the greeting's status flags, a backend that
//! dies under an idle client, SHOW PROCESSLIST and MariaDB's protocol extensions.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gateway_tests::clients;
use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::mysql::{connect, query_values, value_string};
use gateway_tests::raw::{Outcome, RawConn};
use gateway_tests::stack::{shared, Stack};
use gateway_tests::{Gateway, MariaDb, UserEntry};
use mysql_async::prelude::*;
use mysql_async::Conn;

/// A procedure that opens a cursor, then returns an ordinary result set while it is open.
const PROC: &str = "CREATE PROCEDURE rows_with_cursor() BEGIN \
    DECLARE c CURSOR FOR SELECT 1; OPEN c; SELECT 10 AS a UNION ALL SELECT 20; CLOSE c; END";

fn setup(db: &MariaDb) -> anyhow::Result<()> {
    db.create_user("alice", "alice-pw")?;
    db.create_user("idler", "idler-pw")?;
    db.sql(
        "CREATE TABLE IF NOT EXISTS test.big (id INT PRIMARY KEY, v VARCHAR(200)); \
            INSERT IGNORE INTO test.big SELECT seq, REPEAT('x', 200) FROM seq_1_to_20000",
    )?;
    // A procedure body holds `;`: sent whole over the protocol, on a thread of its own (setup
    // runs inside the test's runtime).
    let url = db.url("root", "", Some("test"));
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        rt.block_on(async {
            let mut conn = connect(&url).await?;
            conn.query_drop(PROC).await?;
            conn.disconnect().await?;
            anyhow::Ok(())
        })
    })
    .join()
    .map_err(|_| anyhow::anyhow!("setup thread panicked"))?
}

/// One MariaDB with a 1:1 gateway in front of it.
static ONE: OnceLock<Result<Stack, String>> = OnceLock::new();

fn one() -> &'static Stack {
    shared(&ONE, || {
        Stack::start("mdbsess", setup, |c| {
            c.user(UserEntry::native("alice", "alice-pw")).user(UserEntry::native("idler", "idler-pw"))
        })
    })
}

/// The three demo servers with a routing gateway.
static ROUTED: OnceLock<Result<Cluster, String>> = OnceLock::new();

fn routed() -> &'static Cluster {
    let start = || -> anyhow::Result<Cluster> {
        let servers = Servers::start(&ClusterOptions::demo("mdbsess-r").account("alice", "alice-pw"))?;
        for (_, s) in servers.iter() {
            setup(s)?;
        }
        let toml = servers.gateway_config()?.user(UserEntry::native("alice", "alice-pw")).to_toml();
        servers.route(&toml)
    };
    match ROUTED.get_or_init(|| start().map_err(|e| format!("{e:#}"))) {
        Ok(r) => r,
        Err(e) => panic!("routed stack did not start: {e}"),
    }
}

/// The endpoints of a case: direct, 1:1 gateway, routed gateway.
fn endpoints() -> Vec<(&'static str, String)> {
    let s = one();
    let r = routed();
    vec![
        ("direct", s.direct_url("alice", "alice-pw", Some("test"))),
        ("1:1", s.gw_url("alice", "alice-pw", Some("test"))),
        ("routed", r.gw.url("alice", "alice-pw", Some("test"))),
    ]
}

async fn open(what: &str, url: &str) -> Conn {
    connect(url).await.unwrap_or_else(|e| panic!("{what}: connect: {e:?}"))
}

fn strings(rows: Vec<Vec<mysql_async::Value>>) -> Vec<Vec<Option<String>>> {
    rows.into_iter().map(|r| r.into_iter().map(value_string).collect()).collect()
}

/// Rows (text or binary) of an answer read by the raw client, as their raw payloads.
fn row_payloads(answer: &[Vec<u8>]) -> Vec<Vec<u8>> {
    // Column count 1, one definition, EOF, rows…, EOF (more results), OK.
    answer.iter().skip(3).take_while(|p| !(p.len() < 9 && p.as_slice().first() == Some(&0xFE))).cloned().collect()
}

/// CALL of a procedure that returns rows while one of its cursors is open, without
/// DEPRECATE_EOF (the raw client, like libmariadb): MariaDB flags the result set's column EOF
/// with CURSOR_EXISTS; its rows must still come, in both protocols, and the session go on.
#[test]
fn procedure_result_set_with_an_open_cursor_comes_whole() {
    let s = one();
    let r = routed();
    for (what, addr) in [("direct", s.db.addr()), ("1:1", s.gw.addr()), ("routed", r.gw.addr())] {
        let mut c = RawConn::login(addr, "alice", "alice-pw", Some("test")).expect("login");
        let text = c.query("CALL rows_with_cursor()").unwrap_or_else(|e| panic!("{what}: text CALL: {e:#}"));
        assert_eq!(row_payloads(&text), vec![b"\x0210".to_vec(), b"\x0220".to_vec()], "{what}: text rows");
        let stmt = c.prepare("CALL rows_with_cursor()").unwrap_or_else(|e| panic!("{what}: prepare: {e:#}"));
        let binary = c.execute(stmt.id, 0, &[]).unwrap_or_else(|e| panic!("{what}: binary CALL: {e:#}"));
        assert_eq!(row_payloads(&binary).len(), 2, "{what}: binary rows: {binary:02x?}");
        let after = c.query("SELECT 1").unwrap_or_else(|e| panic!("{what}: after: {e:#}"));
        assert!(after.len() > 1, "{what}: session goes on");
    }
}

/// Three demo servers started with `--autocommit=0`, a 1:1 gateway in front of the first and a
/// routing gateway over all three.
struct NoAutocommit {
    one: Gateway,
    routed: Cluster,
}

static NO_AUTOCOMMIT: OnceLock<Result<NoAutocommit, String>> = OnceLock::new();

fn no_autocommit() -> &'static NoAutocommit {
    let start = || -> anyhow::Result<NoAutocommit> {
        let mut opts = ClusterOptions::demo("mdbsess-ac").account("alice", "alice-pw");
        opts.server_args.push("--autocommit=0".into());
        let servers = Servers::start(&opts)?;
        servers.on_every_server("CREATE TABLE ac (v VARCHAR(64)); COMMIT")?;
        // Two configurations: each gateway listens on its own port.
        let alice = || -> anyhow::Result<String> {
            Ok(servers.gateway_config()?.user(UserEntry::native("alice", "alice-pw")).to_toml())
        };
        let one = Gateway::start(&alice()?)?;
        let toml = alice()?;
        let routed = servers.route(&toml)?;
        Ok(NoAutocommit { one, routed })
    };
    match NO_AUTOCOMMIT.get_or_init(|| start().map_err(|e| format!("{e:#}"))) {
        Ok(r) => r,
        Err(e) => panic!("autocommit=0 servers did not start: {e}"),
    }
}

/// Held by each test that uses [`no_autocommit`]'s servers: one of them changes their global
/// `autocommit`, which the other's sessions would start with.
static AUTOCOMMIT_GLOBAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// With the servers' global autocommit off, PyMySQL's `autocommit=True` must really turn it on:
/// it trusts the greeting's status flag and sends `SET autocommit` only when that says off.
#[test]
fn greeting_reports_the_servers_autocommit() {
    let _global = AUTOCOMMIT_GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = no_autocommit();
    let endpoints = [("direct", s.routed.first().port()), ("1:1", s.one.port()), ("routed", s.routed.gw.port())];
    for (what, port) in endpoints {
        let value = format!("ac-{}", what.replace(':', ""));
        let out = clients::python(
            "autocommit_write.py",
            &["127.0.0.1", &port.to_string(), "alice", "alice-pw", "test", &value],
        )
        .expect("python");
        let kv = clients::parse_kv(&out.stdout);
        assert_eq!(kv.get("inserted"), Some(&value), "{what}: {out:?}");
        assert_eq!(kv.get("session_autocommit").map(String::as_str), Some("1"), "{what}: {out:?}");
        // The write is there once the client has gone: on some server (routed: where it ran).
        let found = s.routed.servers().any(|(_, db)| {
            db.sql(&format!("SELECT COUNT(*) FROM test.ac WHERE v = '{value}'")).is_ok_and(|n| n.trim() == "1")
        });
        assert!(found, "{what}: the autocommit write was lost");
    }
}

/// The login OK tells the autocommit of the new session: the servers' global value when the
/// client connects, also after it changed while the gateway was running (C-API
/// `test_connect_autocommit`). Restores the servers' `--autocommit=0`.
#[test]
fn login_reports_the_global_autocommit_of_the_moment() {
    let _global = AUTOCOMMIT_GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = no_autocommit();
    let set_global = |v: u8| {
        for (_, db) in s.routed.servers() {
            db.sql(&format!("SET GLOBAL autocommit = {v}")).expect("SET GLOBAL autocommit");
        }
    };
    let mut seen = Vec::new();
    for v in [1u8, 0, 1, 0] {
        set_global(v);
        for (what, addr) in [("direct", s.routed.first().addr()), ("1:1", s.one.addr()), ("routed", s.routed.gw.addr())]
        {
            let c = RawConn::login(addr, "alice", "alice-pw", Some("test")).expect("login");
            let on = c.login_status & 0x0002 != 0;
            seen.push((v, what, on));
        }
    }
    set_global(0);
    let wrong: Vec<_> = seen.iter().filter(|(v, _, on)| *on != (*v == 1)).collect();
    assert!(
        wrong.is_empty(),
        "login OK autocommit differs from the global value (global, endpoint, said on): {wrong:?}"
    );
}

/// Polls `f` until it returns `Some`, for at most `limit`.
fn poll<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// 1:1: the backend connection of an idle client is killed on the server: the gateway closes
/// the client's connection (a driver then reconnects), as the server itself would have.
#[test]
fn idle_client_is_closed_when_its_backend_dies() {
    let s = one();
    let mut c = RawConn::login(s.gw.addr(), "idler", "idler-pw", Some("test")).expect("login through the gateway");
    let list = "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'idler'";
    let thread = poll(Duration::from_secs(10), || s.db.sql(list).ok().filter(|t| !t.trim().is_empty()))
        .expect("the backend connection is listed");
    s.db.sql(&format!("KILL CONNECTION {}", thread.trim())).expect("KILL on the server");
    match c.outcome(Duration::from_secs(10)) {
        Outcome::Closed | Outcome::Reset => {}
        other => panic!("client connection not closed after its backend died: {other:?}\n{}", s.gw_log()),
    }
    s.assert_healthy();
}

/// What a client sees when its streaming statement is killed from another connection.
async fn killed_while_streaming(what: &str, url: &str, verb: &str) -> String {
    let mut a = open(what, url).await;
    let mut b = open(what, url).await;
    let id: u32 = a.query_first("SELECT CONNECTION_ID()").await.expect("id").expect("a row");
    let mut result = a.query_iter("SELECT id, v, SLEEP(0.001) FROM big ORDER BY id").await.expect("query starts");
    let first: Option<mysql_async::Row> = result.next().await.expect("first row");
    assert!(first.is_some(), "{what}: no first row");
    b.query_drop(format!("{verb} {id}")).await.unwrap_or_else(|e| panic!("{what}: {verb}: {e:?}"));
    let outcome = loop {
        match tokio::time::timeout(Duration::from_secs(30), result.next()).await {
            Err(_) => break "hangs".to_string(),
            Ok(Ok(Some(_))) => continue,
            Ok(Ok(None)) => break "completed".to_string(),
            Ok(Err(mysql_async::Error::Server(e))) => break format!("server error {}", e.code),
            Ok(Err(e)) => break format!("client error: {e}"),
        }
    };
    drop(result);
    let after = tokio::time::timeout(Duration::from_secs(10), a.query_first::<i64, _>("SELECT 1")).await;
    let after = match after {
        Ok(Ok(Some(1))) => "usable".to_string(),
        Ok(Err(mysql_async::Error::Server(e))) => format!("then server error {}", e.code),
        Ok(other) => format!("then {other:?}"),
        Err(_) => "then hangs".into(),
    };
    format!("{outcome}, {after}")
}

/// KILL QUERY: the statement ends with the server's error 1317 and the session goes on, as
/// directly. KILL (connection): the client's next packet is the well-formed error 1927 — directly,
/// MariaDB may cut a row it was writing, so there the stream is compared to nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_statement_ends_with_the_servers_error() {
    let mut seen = Vec::new();
    for (what, url) in endpoints() {
        seen.push((what, killed_while_streaming(what, &url, "KILL QUERY").await));
    }
    eprintln!("KILL QUERY: {seen:#?}");
    for (what, outcome) in &seen {
        assert_eq!(outcome, "server error 1317, usable", "KILL QUERY through {what}");
    }
    for (what, url) in endpoints().into_iter().filter(|(w, _)| *w != "direct") {
        let outcome = killed_while_streaming(what, &url, "KILL").await;
        assert!(outcome.starts_with("server error 1927, then "), "KILL through {what}: {outcome}");
        assert!(!outcome.ends_with("usable"), "KILL through {what}: {outcome}");
    }
}

/// Routed SHOW PROCESSLIST lists gateway ids; the asking session's own row shows the statement
/// as the client sent it — comment-prefixed forms included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routed_processlist_shows_gateway_ids_and_the_sent_text() {
    let r = routed();
    let mut c = open("routed", &r.gw.url("alice", "alice-pw", Some("test"))).await;
    let id: u32 = c.query_first("SELECT CONNECTION_ID()").await.expect("id").expect("a row");
    let forms = [
        "show processlist",
        "/* app tag */ SHOW PROCESSLIST",
        "-- x\nSHOW FULL PROCESSLIST",
        "SHOW /* a */ FULL PROCESSLIST",
        "SHOW PROCESSLIST /* app tag */",
    ];
    for sql in forms {
        let rows = query_values(&mut c, sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        let rows = strings(rows);
        let own: Vec<_> = rows.iter().filter(|r| r[0].as_deref() == Some(&id.to_string())).collect();
        assert_eq!(own.len(), 1, "{sql}: own row under the gateway id {id}: {rows:?}");
        assert_eq!(own[0][7].as_deref(), Some(sql), "{sql}: own row's Info");
    }
}

/// MARIADB_CLIENT_PROGRESS, MARIADB_CLIENT_STMT_BULK_OPERATIONS.
const EXT_PROGRESS: u32 = 1;
const EXT_BULK: u32 = 1 << 2;

/// A COM_STMT_BULK_EXECUTE body: statement id, flags (types sent), BIGINT types, then each row's
/// parameters as indicator 0 + 8-byte value.
fn bulk_body(stmt: u32, rows: &[[i64; 2]]) -> Vec<u8> {
    let mut b = stmt.to_le_bytes().to_vec();
    b.extend_from_slice(&128u16.to_le_bytes());
    b.extend_from_slice(&[8, 0, 8, 0]);
    for row in rows {
        for v in row {
            b.push(0);
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    b
}

/// Affected rows of an OK packet.
fn affected(ok: &[u8]) -> Option<u64> {
    match *ok.get(1)? {
        n @ 0..=0xFA => Some(u64::from(n)),
        0xFC => Some(u64::from(u16::from_le_bytes([*ok.get(2)?, *ok.get(3)?]))),
        _ => None,
    }
}

/// Bulk INSERT (OK with affected rows) and bulk INSERT … RETURNING (a result set with a row per
/// parameter row) on `table`, made on every server of `dbs`; returns (affected rows, RETURNING
/// rows, each server's rows as text).
fn bulk_round(addr: std::net::SocketAddr, dbs: &[&MariaDb], table: &str) -> (Option<u64>, usize, Vec<String>) {
    for db in dbs {
        db.sql(&format!(
            "DROP TABLE IF EXISTS test.{table}; CREATE TABLE test.{table} (id BIGINT PRIMARY KEY, v BIGINT)"
        ))
        .expect("table");
    }
    let mut c = RawConn::login_ext(addr, "alice", "alice-pw", Some("test"), EXT_BULK).expect("login");
    assert_ne!(c.greeting.ext_capabilities & EXT_BULK, 0, "{table}: bulk operations announced");
    let ins = c.prepare(&format!("INSERT INTO {table} VALUES (?, ?)")).expect("prepare");
    c.command(0xFA, &bulk_body(ins.id, &[[1, 10], [2, 20], [3, 30]])).expect("bulk");
    let answer = c.read_response(false).expect("bulk answer");
    assert_eq!(answer.len(), 1, "{table}: one OK: {answer:02x?}");
    let rows = affected(&answer[0]);
    let ret = c.prepare(&format!("INSERT INTO {table} VALUES (?, ?) RETURNING id, v")).expect("prepare RETURNING");
    c.command(0xFA, &bulk_body(ret.id, &[[4, 40], [5, 50]])).expect("bulk RETURNING");
    let answer = c.read_response(false).expect("RETURNING answer");
    assert!(answer[0][0] != 0xFF, "{table}: RETURNING failed: {answer:02x?}");
    // Column count, 2 definitions, EOF, rows, EOF.
    let returned = answer.len().saturating_sub(5);
    let after: Vec<Vec<u8>> = c.query("SELECT 1").expect("session goes on");
    assert!(after.len() > 1, "{table}: after bulk");
    let contents = dbs
        .iter()
        .map(|db| db.sql(&format!("SELECT id, v FROM test.{table} ORDER BY id")).expect("read back"))
        .collect();
    (rows, returned, contents)
}

/// MariaDB's bulk execution, announced when the servers offer it and answered as directly
/// (affected rows, RETURNING rows, rows written). Routed: all row sets run on one server, in one
/// command (one OK, all or nothing) — the servers' tables show where.
#[test]
fn bulk_execution_is_relayed_in_both_modes() {
    let s = one();
    let direct = bulk_round(s.db.addr(), &[&s.db], "bulk_direct");
    let gw = bulk_round(s.gw.addr(), &[&s.db], "bulk_gw");
    assert_eq!(direct.0, Some(3), "direct affected rows");
    assert_eq!(direct.1, 2, "direct RETURNING rows");
    assert_eq!((gw.0, gw.1), (direct.0, direct.1), "through the 1:1 gateway");
    assert_eq!(gw.2, direct.2, "rows written through the 1:1 gateway");
    let r = routed();
    let servers: Vec<&MariaDb> = r.servers().map(|(_, db)| db).collect();
    let routed = bulk_round(r.gw.addr(), &servers, "bulk_routed");
    assert_eq!((routed.0, routed.1), (direct.0, direct.1), "through the routing gateway");
    let holding: Vec<&String> = routed.2.iter().filter(|c| !c.trim().is_empty()).collect();
    assert_eq!(holding, vec![&direct.2[0]], "all rows on one server: {:?}", routed.2);
}

/// Packets of one answer, progress reports (0xFF 0xFFFF) counted apart, up to its OK or ERR.
fn answer_with_progress(c: &mut RawConn) -> (usize, Vec<u8>) {
    let mut progress = 0;
    loop {
        let p = c.read_packet().expect("answer packet");
        if p.len() > 3 && p[..3] == [0xFF, 0xFF, 0xFF] {
            progress += 1;
            continue;
        }
        return (progress, p);
    }
}

/// Progress reports of a long ALTER TABLE reach a client that asked for them, through the 1:1
/// gateway as directly, and never a client that did not ask.
#[test]
fn progress_reports_reach_only_clients_that_asked() {
    let s = one();
    let r = routed();
    let table = "CREATE TABLE IF NOT EXISTS test.prog (id INT PRIMARY KEY, v VARCHAR(100)); \
                 INSERT IGNORE INTO test.prog SELECT seq, REPEAT('p', 100) FROM seq_1_to_400000";
    for db in std::iter::once(&s.db).chain(r.servers().map(|(_, db)| db)) {
        db.sql(table).expect("table");
    }
    // Routed: the client that asked gets pooled server connections opened with progress
    // reports, the one that did not gets others (asked first, so a shared connection would show).
    for (what, addr) in [("direct", s.db.addr()), ("1:1", s.gw.addr()), ("routed", r.gw.addr())] {
        for ext in [EXT_PROGRESS, 0] {
            let mut c = RawConn::login_ext(addr, "alice", "alice-pw", Some("test"), ext).expect("login");
            assert_eq!(c.greeting.ext_capabilities & EXT_PROGRESS, EXT_PROGRESS, "{what}: progress announced");
            c.query("SET SESSION progress_report_time = 1").expect("set");
            c.command(3, b"ALTER TABLE prog ENGINE=InnoDB, ALGORITHM=COPY").expect("alter");
            let (progress, end) = answer_with_progress(&mut c);
            assert_eq!(end[0], 0, "{what}: ALTER ends with OK: {end:02x?}");
            if ext == 0 {
                assert_eq!(progress, 0, "{what}: progress sent to a client that did not ask");
            } else {
                assert!(progress > 0, "{what}: no progress report (the ALTER may have been too quick)");
            }
        }
    }
}

/// MARIADB_CLIENT_EXTENDED_TYPE_INFO.
const EXT_TYPE_INFO: u32 = 1 << 3;

/// Whether a column definition carries the extended type information field (a lenenc block
/// after the six names, then the 0x0C fixed part of 12 bytes).
fn has_type_info(def: &[u8]) -> bool {
    let mut at = 0;
    let lenenc = |at: &mut usize| -> Option<usize> {
        let n = match *def.get(*at)? {
            n @ 0..=0xFA => (usize::from(n), 1),
            0xFC => (usize::from(u16::from_le_bytes([*def.get(*at + 1)?, *def.get(*at + 2)?])), 3),
            _ => return None,
        };
        *at += n.1 + n.0;
        Some(n.0)
    };
    for _ in 0..6 {
        if lenenc(&mut at).is_none() {
            return false;
        }
    }
    if def.len() - at == 13 && def[at] == 0x0C {
        return false;
    }
    lenenc(&mut at).is_some() && def.get(at) == Some(&0x0C) && def.len() - at == 13
}

/// Column definitions of a one-result-set answer (column count, definitions, …).
fn definitions(answer: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let n = usize::from(answer[0][0]);
    answer[1..=n].to_vec()
}

/// Extended type information: a client that negotiated it gets it in every column definition —
/// the server's (relayed) and the gateway's own (SHOW PROCESSLIST) — and one that did not, never.
#[test]
fn extended_type_info_follows_the_client() {
    let s = one();
    for (what, addr) in [("direct", s.db.addr()), ("1:1", s.gw.addr())] {
        for ext in [EXT_TYPE_INFO, 0] {
            let mut c = RawConn::login_ext(addr, "alice", "alice-pw", Some("test"), ext).expect("login");
            assert_ne!(c.greeting.ext_capabilities & EXT_TYPE_INFO, 0, "{what}: extended type info announced");
            for sql in ["SELECT 1 AS a, 'x' AS b", "SHOW PROCESSLIST"] {
                let answer = c.query(sql).expect(sql);
                let defs = definitions(&answer);
                assert!(!defs.is_empty(), "{what}: {sql}");
                for d in &defs {
                    assert_eq!(has_type_info(d), ext != 0, "{what} ext={ext}: {sql}: {d:02x?}");
                }
            }
        }
    }
}

/// MariaDB's own C-API test program (`mariadb-client-test`, fetched by `scripts/setup.sh` from
/// the Debian package mariadb-test), its bulk-execution cases, directly and through both modes.
#[test]
fn mariadb_client_test_bulk_cases_pass_through_both_modes() {
    let bin = match gateway_tests::peers::PeerTools::find() {
        Ok(tools) => tools.client_test,
        Err(reason) => return gateway_tests::skip::skip("mariadb_session/mariadb_client_test_bulk_cases", &reason),
    };
    let cases = [
        "test_bulk_autoinc",
        "test_bulk_delete",
        "test_bulk_replace",
        "test_bulk_insert_returning",
        "test_bulk_delete_returning",
    ];
    let s = one();
    let r = routed();
    for (what, port) in [("direct", s.db.port()), ("1:1", s.gw.port()), ("routed", r.gw.port())] {
        let out = std::process::Command::new(&bin)
            .args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", "root", "--silent"])
            .args(cases)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("mariadb-client-test runs");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{what}: {}", &text[text.len().saturating_sub(3000)..]);
    }
}
