//! The admin commands over the MySQL protocol (mysql_async against a real gateway and MariaDB):
//! SHOW PROXYCONFIG, ALTER PROXYCONFIG, SHOW PROXYSESSION, KILL PROXYSESSION,
//! SHOW PROXYCONGESTION, SHOW PROXYSTAT, each output checked, and a non-admin user refused with
//! ERR 1227. One 1:1 stack and one routed stack (the demo topology; s1 is the MariaDB, s2 and s3
//! ports nobody listens on).

use std::collections::BTreeMap;

use gateway_tests::mysql::{connect, err_code, err_message, query_one};
use gateway_tests::stack::Stack;
use gateway_tests::{Gateway, GatewayConfig, MariaDb, UserEntry};
use mysql_async::prelude::*;
use mysql_async::{Conn, Row};

const ADMIN_STATEMENTS: [&str; 6] = [
    "SHOW PROXYCONFIG",
    "ALTER PROXYCONFIG SET log.level = 'debug'",
    "SHOW PROXYSESSION",
    "KILL PROXYSESSION 1",
    "SHOW PROXYCONGESTION",
    "SHOW PROXYSTAT",
];

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn stack() -> Stack {
    Stack::start(
        "admin",
        |db| db.create_user("boss", "boss-pw"),
        |c| c.user(UserEntry::native("boss", "boss-pw").admin()),
    )
    .unwrap()
}

/// Column names and rows (as text) of a result set.
async fn table(conn: &mut Conn, sql: &str) -> (Vec<String>, Vec<Vec<Option<String>>>) {
    let rows: Vec<Row> = conn.query(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let cols =
        rows.first().map(|r| r.columns_ref().iter().map(|c| c.name_str().into_owned()).collect()).unwrap_or_default();
    let rows =
        rows.into_iter().map(|r| r.unwrap().into_iter().map(gateway_tests::mysql::value_string).collect()).collect();
    (cols, rows)
}

/// `SHOW PROXYCONFIG` rows by name: (value, need_reboot).
async fn config_rows(conn: &mut Conn, sql: &str) -> BTreeMap<String, (String, String)> {
    let (cols, rows) = table(conn, sql).await;
    assert_eq!(cols, ["name", "value", "info", "need_reboot", "visible_level"]);
    rows.into_iter()
        .map(|r| (r[0].clone().unwrap(), (r[1].clone().unwrap_or_default(), r[3].clone().unwrap())))
        .collect()
}

#[test]
fn non_admin_users_are_refused() {
    let s = stack();
    rt().block_on(async {
        let mut root = connect(&s.gw_url("root", "", None)).await.unwrap();
        for sql in ADMIN_STATEMENTS {
            let e = root.query_drop(sql).await.expect_err(sql);
            assert_eq!(err_code(&e), Some(1227), "{sql}: {e}");
            assert!(err_message(&e).contains("SUPER privilege"), "{e}");
        }
        // The connection is still usable, and SHOW PROXYROUTE is not an admin command.
        assert_eq!(query_one(&mut root, "SELECT 1").await.unwrap().as_deref(), Some("1"));
        let e = root.query_drop("SHOW PROXYROUTE").await.expect_err("no routing");
        assert_ne!(err_code(&e), Some(1227));
    });
}

#[test]
fn show_and_alter_proxyconfig() {
    let s = stack();
    rt().block_on(async {
        let mut boss = connect(&s.gw_url("boss", "boss-pw", None)).await.unwrap();
        let all = config_rows(&mut boss, "SHOW PROXYCONFIG").await;
        assert_eq!(all["listen.address"], (s.gw.addr().to_string(), "true".into()));
        assert_eq!(all["listen.max_packet_size"], ("67108864".into(), "false".into()));
        assert_eq!(all["users"].0, "root,boss(admin)");
        let log = config_rows(&mut boss, "SHOW PROXYCONFIG LIKE 'log%'").await;
        assert_eq!(log.keys().collect::<Vec<_>>(), ["log.level", "log.route_diagnosis", "log.slow_statement_ms"]);

        boss.query_drop("ALTER PROXYCONFIG SET log.level = 'debug'").await.unwrap();
        boss.query_drop("ALTER PROXYCONFIG SET listen.max_packet_size = 2048").await.unwrap();
        let now = config_rows(&mut boss, "SHOW PROXYCONFIG LIKE 'l%'").await;
        assert_eq!(now["log.level"].0, "debug");
        assert_eq!(now["listen.max_packet_size"].0, "2048");
        for (sql, code) in [
            ("ALTER PROXYCONFIG SET listen.address = '127.0.0.1:1'", 1238),
            ("ALTER PROXYCONFIG SET users = 'x'", 1238),
            ("ALTER PROXYCONFIG SET no.such = 1", 1193),
            ("ALTER PROXYCONFIG SET listen.max_packet_size = 12", 1231),
            ("ALTER PROXYCONFIG SET listen.max_packet_size = 'big'", 1231),
        ] {
            let e = boss.query_drop(sql).await.expect_err(sql);
            assert_eq!(err_code(&e), Some(code), "{sql}: {e}");
        }
        // max_packet_size applies to new sessions: a 4 KiB statement is now too large.
        let mut fresh = connect(&s.gw_url("root", "", None)).await.unwrap();
        let big = format!("SELECT '{}'", "x".repeat(4096));
        let e = fresh.query_drop(&big).await.expect_err("packet over the new limit");
        assert_eq!(err_code(&e), Some(1153), "{e}");
        assert!(s.gw_log().contains("log level changed"), "{}", s.gw_log());
    });
}

#[test]
fn show_and_kill_proxysession() {
    let s = stack();
    rt().block_on(async {
        let mut boss = connect(&s.gw_url("boss", "boss-pw", None)).await.unwrap();
        let mut victim = connect(&s.gw_url("root", "", Some("mysql"))).await.unwrap();
        victim.query_drop("SELECT 1").await.unwrap();
        let (cols, rows) = table(&mut boss, "SHOW PROXYSESSION").await;
        assert_eq!(
            cols,
            ["Id", "Cluster", "Tenant", "User", "Host", "db", "Command", "Time", "state", "Info", "server", "sticky"]
        );
        let id = victim.id().to_string();
        let row = rows.iter().find(|r| r[0].as_deref() == Some(id.as_str())).unwrap_or_else(|| panic!("{rows:?}"));
        assert_eq!(row[3].as_deref(), Some("root"));
        assert_eq!(row[5].as_deref(), Some("mysql"));
        assert_eq!((row[6].as_deref(), row[8].as_deref()), (Some("Sleep"), Some("idle")));
        assert_eq!(row[10].as_deref(), Some(s.db.addr().to_string().as_str()));
        let me = boss.id().to_string();
        let mine = rows.iter().find(|r| r[0].as_deref() == Some(me.as_str())).unwrap();
        assert_eq!(mine[9].as_deref(), Some("SHOW PROXYSESSION"));

        boss.query_drop(format!("KILL PROXYSESSION {id}")).await.unwrap();
        assert!(victim.query_drop("SELECT 1").await.is_err(), "the killed session is closed");
        let e = boss.query_drop(format!("KILL PROXYSESSION {id}")).await.expect_err("gone");
        assert_eq!(err_code(&e), Some(1094), "{e}");
        let (_, rows) = table(&mut boss, "SHOW PROXYSESSION").await;
        assert!(rows.iter().all(|r| r[0].as_deref() != Some(id.as_str())), "{rows:?}");
    });
}

#[test]
fn show_proxystat() {
    let s = stack();
    rt().block_on(async {
        let mut boss = connect(&s.gw_url("boss", "boss-pw", None)).await.unwrap();
        let _other = connect(&s.gw_url("root", "", None)).await.unwrap();
        // Other tests of this file share the gateway, and the harness's readiness probe was a
        // client too: wait until only these two are left.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let (cols, stat) = loop {
            let (cols, rows) = table(&mut boss, "SHOW PROXYSTAT").await;
            let stat: BTreeMap<String, String> =
                rows.into_iter().map(|r| (r[0].clone().unwrap(), r[1].clone().unwrap())).collect();
            if stat["gateway_client_connections"] == "2" || std::time::Instant::now() > deadline {
                break (cols, stat);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        assert_eq!(cols, ["stat_name", "value"]);
        assert_eq!(stat["gateway_client_connections"], "2");
        assert!(stat.contains_key("gateway_pool_connects_total"), "{stat:?}");
        assert!(!stat.keys().any(|k| k.contains("_bucket")));
        let (_, rows) = table(&mut boss, "SHOW PROXYSTAT LIKE 'gateway_client%'").await;
        let names: Vec<_> = rows.iter().map(|r| r[0].clone().unwrap()).collect();
        assert_eq!(names, ["gateway_client_connections", "gateway_client_connections_total"]);
    });
}

#[test]
fn routed_session_congestion_and_session_list() {
    let db = MariaDb::start("admin-routed").unwrap();
    db.create_user("boss", "boss-pw").unwrap();
    let nobody = format!("127.0.0.1:{}", gateway_tests::free_port().unwrap());
    let nobody2 = format!("127.0.0.1:{}", gateway_tests::free_port().unwrap());
    let mut toml = GatewayConfig::new(db.addr()).unwrap().user(UserEntry::native("boss", "boss-pw").admin()).to_toml();
    toml.push_str(&format!(
        "\n[routing]\ntopology = \"demo\"\nseed = 1\nserver_addresses = {{ s1 = \"{0}\", s2 = \"{nobody2}\", s3 = \"{nobody}\" }}\n",
        db.addr()
    ));
    let gw = Gateway::start(&toml).unwrap();
    rt().block_on(async {
        let mut boss = connect(&gw.url("boss", "boss-pw", None)).await.unwrap();
        assert_eq!(query_one(&mut boss, "SELECT 1").await.unwrap().as_deref(), Some("1"));
        let (cols, rows) = table(&mut boss, "SHOW PROXYCONGESTION").await;
        assert_eq!(cols[..3], ["server_addr", "state", "failures"]);
        let by_addr: BTreeMap<_, _> = rows.iter().map(|r| (r[0].clone().unwrap(), r.clone())).collect();
        let live = &by_addr[&db.addr().to_string()];
        assert_eq!((live[1].as_deref(), live[2].as_deref()), (Some("alive"), Some("0")));
        let pooled: u64 =
            live[6].as_deref().unwrap().parse::<u64>().unwrap() + live[7].as_deref().unwrap().parse::<u64>().unwrap();
        assert!(pooled >= 1, "{live:?}");
        assert!(by_addr.contains_key(&nobody), "topology servers are listed: {rows:?}");
        let (_, rows) = table(&mut boss, "SHOW PROXYSESSION").await;
        let me = boss.id().to_string();
        let mine = rows.iter().find(|r| r[0].as_deref() == Some(me.as_str())).unwrap_or_else(|| panic!("{rows:?}"));
        assert_eq!((mine[1].as_deref(), mine[2].as_deref()), (Some("demo"), Some("sys")));
    });
}
