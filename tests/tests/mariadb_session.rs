//! MariaDB session behaviour through the gateway in both modes (1:1 and routed over the demo
//! servers), each case checked against the same server directly: stored procedures that return
//! rows while a cursor is open, killed statements, the greeting's status flags, a backend that
//! dies under an idle client, SHOW PROCESSLIST and MariaDB's protocol extensions.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gateway_tests::mysql::{connect, query_values, value_string};
use gateway_tests::stack::{demo_routing, demo_servers, shared, Stack};
use gateway_tests::{Gateway, GatewayConfig, MariaDb, UserEntry};
use mysql_async::prelude::*;
use mysql_async::Conn;

/// A procedure that opens a cursor, then returns an ordinary result set while it is open.
const PROC: &str = "CREATE PROCEDURE rows_with_cursor() BEGIN \
    DECLARE c CURSOR FOR SELECT 1; OPEN c; SELECT 10 AS a UNION ALL SELECT 20; CLOSE c; END";

fn setup(db: &MariaDb) -> anyhow::Result<()> {
    db.create_user("alice", "alice-pw")?;
    db.sql("CREATE TABLE IF NOT EXISTS test.big (id INT PRIMARY KEY, v VARCHAR(200)); \
            INSERT IGNORE INTO test.big SELECT seq, REPEAT('x', 200) FROM seq_1_to_20000")?;
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
    shared(&ONE, || Stack::start("mdbsess", setup, |c| c.user(UserEntry::native("alice", "alice-pw"))))
}

/// The three demo servers with a routing gateway.
struct Routed {
    servers: Vec<MariaDb>,
    gw: Gateway,
}

static ROUTED: OnceLock<Result<Routed, String>> = OnceLock::new();

fn routed() -> &'static Routed {
    let start = || -> anyhow::Result<Routed> {
        let servers = demo_servers("mdbsess-r", &[("alice", "alice-pw")])?;
        for s in &servers {
            setup(s)?;
        }
        let mut toml = GatewayConfig::new(servers[0].addr())?.user(UserEntry::native("alice", "alice-pw")).to_toml();
        toml.push_str(&demo_routing(&servers));
        let gw = Gateway::start(&toml)?;
        Ok(Routed { servers, gw })
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn procedure_result_set_with_an_open_cursor_comes_whole() {
    for (what, url) in endpoints() {
        let mut c = open(what, &url).await;
        // Text protocol.
        let rows = tokio::time::timeout(Duration::from_secs(10), query_values(&mut c, "CALL rows_with_cursor()"))
            .await
            .unwrap_or_else(|_| panic!("{what}: text CALL hangs"))
            .unwrap_or_else(|e| panic!("{what}: text CALL: {e:?}"));
        assert_eq!(strings(rows), vec![vec![Some("10".into())], vec![Some("20".into())]], "{what}: text");
        // Binary protocol (COM_STMT_EXECUTE without a cursor).
        let rows: Vec<mysql_async::Row> = tokio::time::timeout(Duration::from_secs(10), c.exec("CALL rows_with_cursor()", ()))
            .await
            .unwrap_or_else(|_| panic!("{what}: binary CALL hangs"))
            .unwrap_or_else(|e| panic!("{what}: binary CALL: {e:?}"));
        let rows: Vec<i64> = rows.into_iter().map(|r| r.get::<i64, _>(0).unwrap_or(-1)).collect();
        assert_eq!(rows, vec![10, 20], "{what}: binary");
        // The session goes on.
        let one: Option<i64> = c.query_first("SELECT 1").await.unwrap_or_else(|e| panic!("{what}: after: {e:?}"));
        assert_eq!(one, Some(1), "{what}");
        let _ = c.disconnect().await;
    }
}
