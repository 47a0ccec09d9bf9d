//! One id per session (issue #13 item 5) in 1:1 and routed mode: the greeting's connection id,
//! `CONNECTION_ID()`, SHOW PROCESSLIST and every form of KILL speak of the gateway's ids, and a
//! KILL never reaches a session other than the one whose id the client saw. Also SHOW PROXYROUTE
//! for users who are not admins (item 8). Real MariaDB servers, real clients (mysql_async,
//! PyMySQL, the `mariadb` CLI); where a statement ran is read from the servers' general logs.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gateway_tests::clients::{parse_kv, python};
use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::mysql::{connect, err_code, query_one, query_values, value_string};
use gateway_tests::{Gateway, GatewayConfig, MariaDb, UserEntry};
use mysql_async::prelude::*;
use mysql_async::Conn;

const USERS: [(&str, &str); 3] = [("alice", "alice-pw"), ("bob", "bob-pw"), ("boss", "boss-pw")];

/// A gateway in one mode and the servers behind it.
struct Setup {
    mode: &'static str,
    behind: Behind,
}

/// The gateway with its servers.
enum Behind {
    /// A 1:1 gateway in front of one server (field order: the gateway stops first).
    OneToOne(Gateway, MariaDb),
    /// A routed gateway over the demo layout.
    Routed(Cluster),
}

impl Setup {
    fn start(mode: &'static str) -> anyhow::Result<Setup> {
        let users = |mut config: GatewayConfig| {
            for (u, p) in USERS {
                let entry = UserEntry::native(u, p);
                config = config.user(if u == "boss" { entry.admin() } else { entry });
            }
            config.to_toml()
        };
        let behind = if mode == "routed" {
            let opts = USERS.iter().fold(ClusterOptions::demo("ids-routed"), |o, (u, p)| o.account(u, p));
            let servers = Servers::start(&opts)?;
            let toml = users(servers.gateway_config()?);
            Behind::Routed(servers.route(&toml)?)
        } else {
            let db = MariaDb::start("ids-proxy")?;
            db.sql("CREATE TABLE t0 (c1 INT NOT NULL, c2 VARCHAR(64))")?;
            for (u, p) in USERS {
                db.create_user(u, p)?;
            }
            Behind::OneToOne(Gateway::start(&users(GatewayConfig::new(db.addr())?))?, db)
        };
        Ok(Setup { mode, behind })
    }

    fn gw(&self) -> &Gateway {
        match &self.behind {
            Behind::OneToOne(gw, _) => gw,
            Behind::Routed(c) => &c.gw,
        }
    }

    fn servers(&self) -> Vec<&MariaDb> {
        match &self.behind {
            Behind::OneToOne(_, db) => vec![db],
            Behind::Routed(c) => c.servers().map(|(_, db)| db).collect(),
        }
    }

    async fn conn(&self, user: &str) -> Conn {
        let pw = USERS.iter().find(|(u, _)| *u == user).map_or("", |(_, p)| *p);
        connect(&self.gw().url(user, pw, Some("test")))
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}\n{}", self.mode, self.gw().log_tail(4000)))
    }

    /// Whether a server's general log has a statement containing `marker`.
    fn ran(&self, marker: &str) -> bool {
        self.servers().into_iter().any(|s| s.general_log().contains(marker))
    }

    /// Waits until a server runs the statement with `marker`.
    async fn wait_ran(&self, marker: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !self.ran(marker) {
            assert!(Instant::now() < deadline, "{}: {marker} never reached a server", self.mode);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn setup(mode: &'static str) -> &'static Setup {
    static PROXY: OnceLock<Result<Setup, String>> = OnceLock::new();
    static ROUTED: OnceLock<Result<Setup, String>> = OnceLock::new();
    let cell = if mode == "routed" { &ROUTED } else { &PROXY };
    match cell.get_or_init(|| Setup::start(mode).map_err(|e| format!("{e:#}"))) {
        Ok(s) => s,
        Err(e) => panic!("{mode} set-up failed: {e}"),
    }
}

const MODES: [&str; 2] = ["proxy", "routed"];

/// The ids of SHOW PROCESSLIST's rows.
async fn listed(conn: &mut Conn, sql: &str) -> Vec<String> {
    query_values(conn, sql).await.unwrap().into_iter().filter_map(|row| value_string(row[0].clone())).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_id_is_the_greeting_id_everywhere_in_a_statement() {
    for mode in MODES {
        let s = setup(mode);
        let mut c = s.conn("alice").await;
        let id = c.id().to_string();
        assert_eq!(query_one(&mut c, "SELECT CONNECTION_ID()").await.unwrap(), Some(id.clone()), "{mode}");
        let row: Vec<Option<String>> = query_values(&mut c, "SELECT CONNECTION_ID(), 1").await.unwrap()[0]
            .clone()
            .into_iter()
            .map(value_string)
            .collect();
        assert_eq!(row, vec![Some(id.clone()), Some("1".into())], "{mode}");
        // The column keeps the built-in's name.
        let mut result = c.query_iter("SELECT connection_id()").await.unwrap();
        let name = result.columns().map(|cols| cols[0].name_str().into_owned());
        drop(result.collect::<mysql_async::Row>().await);
        assert_eq!(name.as_deref(), Some("connection_id()"), "{mode}");
        let q = "SELECT CONNECTION_ID() + 0 AS me FROM t0 WHERE 1 = 1 /* ids-expr */ LIMIT 1";
        c.query_drop("INSERT INTO t0 VALUES (0, 'ids')").await.unwrap();
        assert_eq!(query_one(&mut c, q).await.unwrap(), Some(id.clone()), "{mode}");
        // Prepared, binary and text protocol.
        let v: Option<u64> = c.exec_first("SELECT CONNECTION_ID()", ()).await.unwrap();
        assert_eq!(v.map(|v| v.to_string()), Some(id.clone()), "{mode}: COM_STMT_PREPARE");
        c.query_drop("PREPARE ids_p FROM 'SELECT CONNECTION_ID()'").await.unwrap();
        assert_eq!(query_one(&mut c, "EXECUTE ids_p").await.unwrap(), Some(id.clone()), "{mode}: text PREPARE");
        // Strings are data.
        assert_eq!(
            query_one(&mut c, "SELECT 'CONNECTION_ID()'").await.unwrap().as_deref(),
            Some("CONNECTION_ID()"),
            "{mode}"
        );
        // And SHOW PROCESSLIST lists it under that id, its own row true to what it sent.
        let rows = query_values(&mut c, "/* ids-own */ SHOW FULL PROCESSLIST").await.unwrap();
        let own = rows.iter().find(|r| value_string(r[0].clone()) == Some(id.clone())).expect("own row");
        assert_eq!(value_string(own[7].clone()).as_deref(), Some("/* ids-own */ SHOW FULL PROCESSLIST"), "{mode}");
        // So does information_schema.PROCESSLIST, in its simple forms.
        let rows = query_values(
            &mut c,
            "SELECT ID, INFO FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID() /* ids-is */",
        )
        .await
        .unwrap();
        let rows: Vec<Vec<Option<String>>> =
            rows.into_iter().map(|r| r.into_iter().map(value_string).collect()).collect();
        assert_eq!(rows.len(), 1, "{mode}: {rows:?}");
        assert_eq!(rows[0][0], Some(id.clone()), "{mode}");
        // The comment-prefixed SHOW PROCESSLIST was the gateway's: no server saw it.
        assert!(!s.ran("ids-own") && !s.ran("ids-is"), "{mode}: a process list query reached a server");
    }
}

#[test]
fn pymysql_kills_a_connection_by_its_connection_id() {
    for mode in MODES {
        let s = setup(mode);
        let out = python("kill_by_connection_id.py", &["127.0.0.1", &s.gw().port().to_string(), "alice", "alice-pw"])
            .unwrap();
        let kv = parse_kv(&out.stdout);
        assert_eq!(kv.get("error"), None, "{mode}: {}\n{}", out.stdout, out.stderr);
        assert_eq!(kv.get("greeting_id"), kv.get("connection_id"), "{mode}: {}", out.stdout);
        assert_eq!(kv.get("listed_before").map(String::as_str), Some("1"), "{mode}: {}", out.stdout);
        assert_eq!(kv.get("killed").map(String::as_str), Some("1"), "{mode}: {}", out.stdout);
        assert_eq!(kv.get("listed_after").map(String::as_str), Some("0"), "{mode}: {}", out.stdout);
        assert_eq!(kv.get("process_killed").map(String::as_str), Some("1"), "{mode}: COM_PROCESS_KILL: {}", out.stdout);
    }
}

#[test]
fn cli_kill_query_with_the_processlist_id_stops_a_sleep() {
    for mode in MODES {
        let s = setup(mode);
        let cli = s.gw().cli().user("bob").password("bob-pw");
        let marker = format!("ids-cli-{mode}");
        let started = Instant::now();
        // The CLI strips comments: the marker is a string.
        let mut sleeper = cli.spawn(&format!("SELECT SLEEP(30), '{marker}'")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        let id = loop {
            let list = cli.sql("SHOW PROCESSLIST").unwrap();
            let row = list.lines().find(|l| l.contains(&marker) && l.contains("SLEEP"));
            if let (Some(row), true) = (row, s.ran(&marker)) {
                break row.split('\t').next().unwrap().to_string();
            }
            assert!(Instant::now() < deadline, "{mode}: the SLEEP is not listed:\n{list}");
            std::thread::sleep(Duration::from_millis(20));
        };
        cli.sql(&format!("KILL QUERY {id}")).unwrap_or_else(|e| panic!("{mode}: {e:#}"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while sleeper.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = sleeper.kill();
                panic!("{mode}: KILL QUERY {id} did not stop the SLEEP");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(started.elapsed() < Duration::from_secs(25), "{mode}: the SLEEP ran its course");
        assert!(cli.sql("SELECT 1").is_ok(), "{mode}: the gateway serves on");
    }
}

/// Starts `SELECT SLEEP(30)` with `marker` on `conn`, waits until a server runs it.
async fn sleeping(
    s: &'static Setup,
    mut conn: Conn,
    marker: &str,
) -> tokio::task::JoinHandle<(Instant, Result<(), mysql_async::Error>, Conn)> {
    let sql = format!("SELECT SLEEP(30) /* {marker} */");
    let task = tokio::spawn(async move {
        let t0 = Instant::now();
        let r = conn.query_drop(sql).await;
        (t0, r, conn)
    });
    s.wait_ran(marker).await;
    task
}

async fn stopped_early(
    mode: &str,
    how: &str,
    task: tokio::task::JoinHandle<(Instant, Result<(), mysql_async::Error>, Conn)>,
) -> Conn {
    let (t0, r, c) = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .unwrap_or_else(|_| panic!("{mode}: {how} did not stop the SLEEP"))
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(20), "{mode}: {how}");
    if let Err(e) = &r {
        assert_eq!(err_code(e), Some(1317), "{mode}: {how}: {e:?}");
    }
    c
}

#[tokio::test(flavor = "multi_thread")]
async fn prepared_kill_takes_gateway_ids() {
    for mode in MODES {
        let s = setup(mode);
        let mut b = s.conn("bob").await;
        let a = s.conn("bob").await;
        let a_id = a.id();
        // Binary protocol: KILL QUERY ? bound to the gateway id.
        let task = sleeping(s, a, &format!("ids-bin-{mode}")).await;
        b.exec_drop("KILL QUERY ?", (a_id,)).await.unwrap_or_else(|e| panic!("{mode}: {e:?}"));
        let a = stopped_early(mode, "prepared KILL QUERY ?", task).await;
        // Text protocol: PREPARE … FROM 'KILL QUERY ?' / EXECUTE … USING @v.
        let task = sleeping(s, a, &format!("ids-text-{mode}")).await;
        b.query_drop("PREPARE ids_k FROM 'KILL QUERY ?'").await.unwrap();
        b.query_drop(format!("SET @ids_v = {a_id}")).await.unwrap();
        b.query_drop("EXECUTE ids_k USING @ids_v").await.unwrap_or_else(|e| panic!("{mode}: {e:?}"));
        let mut a = stopped_early(mode, "EXECUTE ids_k USING @v", task).await;
        assert_eq!(
            query_one(&mut a, "SELECT 2").await.unwrap().as_deref(),
            Some("2"),
            "{mode}: KILL QUERY left the session"
        );
        // A literal prepared KILL CONNECTION ends the session.
        b.exec_drop(format!("KILL CONNECTION {a_id}"), ()).await.unwrap_or_else(|e| panic!("{mode}: {e:?}"));
        assert!(a.query_drop("SELECT 1").await.is_err(), "{mode}: the killed session still answers");
        assert!(!listed(&mut b, "SHOW PROCESSLIST").await.contains(&a_id.to_string()), "{mode}: still listed");
        // Another user's session, and forms naming something else, are refused.
        let alice = s.conn("alice").await;
        let e = b.exec_drop("KILL ?", (alice.id(),)).await.unwrap_err();
        assert_eq!(err_code(&e), Some(1095), "{mode}: {e:?}");
        for sql in ["KILL USER alice", "SELECT 1; KILL 1", "KILL (1)"] {
            let e = b.query_drop(sql).await.unwrap_err();
            assert_eq!(err_code(&e), Some(1235), "{mode}: {sql}: {e:?}");
        }
    }
}

/// A statement sent after the KILL that ended its session was acknowledged is never run: the
/// session's wait for commands sees the kill first (the race itself is exercised by the unit
/// tests of `ClientSide::next_command`; here real clients, 10 rounds a mode).
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_session_runs_nothing_sent_after_the_kill() {
    for mode in MODES {
        let s = setup(mode);
        let mut killer = s.conn("alice").await;
        for round in 0..10 {
            let mut victim = s.conn("alice").await;
            let id = victim.id();
            killer.query_drop(format!("KILL CONNECTION {id}")).await.unwrap_or_else(|e| panic!("{mode}: {e:?}"));
            let marker = format!("after-kill-{mode}-{round}");
            let answered = victim.query_drop(format!("SELECT '{marker}'")).await;
            assert!(answered.is_err(), "{mode} round {round}: the killed session answered");
            assert!(!s.ran(&marker), "{mode} round {round}: a statement sent after the kill ran");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_never_reaches_a_session_other_than_the_one_whose_id_was_seen() {
    for mode in MODES {
        let s = setup(mode);
        // Sessions of one user, and the server threads serving them (learnt outside the
        // gateway's ids, as an application could).
        let mut sessions = Vec::new();
        let mut threads = Vec::new();
        for _ in 0..20 {
            let mut c = s.conn("alice").await;
            threads.push(query_one(&mut c, "SELECT @@pseudo_thread_id").await.unwrap().unwrap());
            sessions.push(c);
        }
        let mut z = s.conn("alice").await;
        // A server thread id names no gateway session: ERR 1094, nobody is killed.
        for t in &threads {
            let e =
                z.query_drop(format!("KILL CONNECTION {t}")).await.expect_err("a server thread id killed something");
            assert_eq!(err_code(&e), Some(1094), "{mode}: KILL {t}: {e:?}");
        }
        for c in &mut sessions {
            let id = c.id();
            assert_eq!(
                query_one(c, "SELECT 3")
                    .await
                    .unwrap_or_else(|e| panic!("{mode}: session {id} was killed by a server thread id: {e:?}")),
                Some("3".into())
            );
        }
        // The id CONNECTION_ID() gave kills that session and no other.
        let mut x = sessions.remove(7);
        let seen = query_one(&mut x, "SELECT CONNECTION_ID()").await.unwrap().unwrap();
        z.query_drop(format!("KILL CONNECTION {seen}")).await.unwrap_or_else(|e| panic!("{mode}: KILL {seen}: {e:?}"));
        assert!(x.query_drop("SELECT 1").await.is_err(), "{mode}: X survived KILL {seen}");
        for c in &mut sessions {
            let id = c.id();
            assert_eq!(
                query_one(c, "SELECT 3")
                    .await
                    .unwrap_or_else(|e| panic!("{mode}: {id} was killed by KILL {seen}: {e:?}")),
                Some("3".into())
            );
        }
    }
}

/// A COM_PROCESS_KILL too short for its 4-byte id is refused with ERR 1835 and reaches no
/// server. Sent on, MariaDB reads the id past the packet's end: three id bytes and the NUL it
/// puts after every packet name server thread `t` exactly, so each probe below would kill a
/// victim's server connection (the network fuzzer's routed failure: another client's pooled
/// connection of the same account died under it).
#[tokio::test(flavor = "multi_thread")]
async fn a_com_process_kill_too_short_for_its_id_reaches_no_server() {
    use gateway_tests::raw::{cmd, Outcome, RawConn};
    for mode in MODES {
        let s = setup(mode);
        let mut victims = Vec::new();
        let mut threads = Vec::new();
        for _ in 0..8 {
            let mut c = s.conn("alice").await;
            let t: u32 = query_one(&mut c, "SELECT @@pseudo_thread_id").await.unwrap().unwrap().parse().unwrap();
            threads.push(t);
            victims.push(c);
        }
        let addr = s.gw().addr();
        let mut raw = tokio::task::spawn_blocking(move || RawConn::login(addr, "alice", "alice-pw", Some("test")))
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("{mode}: raw login: {e:#}"));
        for &t in &threads {
            let id = t.to_le_bytes();
            for body in [&id[..3], &id[..1], &[][..]] {
                raw.command(cmd::PROCESS_KILL, body).unwrap();
                match raw.outcome(Duration::from_secs(10)) {
                    Outcome::Err(e) => assert_eq!(e.code, 1835, "{mode}: COM_PROCESS_KILL {body:?}: {e:?}"),
                    other => panic!("{mode}: COM_PROCESS_KILL {body:?}: {other:?}\n{}", s.gw().log_tail(4000)),
                }
            }
        }
        let answered = raw.query("SELECT 'raw still here'").map(|r| r.len());
        assert!(answered.is_ok(), "{mode}: the sender's session ended: {answered:?}");
        for (c, t) in victims.iter_mut().zip(&threads) {
            let got = query_one(c, "SELECT 3").await;
            assert_eq!(got.ok().flatten().as_deref(), Some("3"), "{mode}: the session on server thread {t} died");
        }
        // The servers' own view: every victim's thread is still there (in routed mode an idle
        // pooled connection, which the pool would otherwise replace unseen).
        let mut alive = std::collections::BTreeSet::new();
        for db in s.servers() {
            let ids = db.sql("SELECT ID FROM information_schema.PROCESSLIST").unwrap();
            alive.extend(ids.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
        }
        let gone: Vec<_> = threads.iter().filter(|t| !alive.contains(t)).collect();
        assert!(gone.is_empty(), "{mode}: server threads {gone:?} were killed (alive: {alive:?})");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn show_proxyroute_shows_non_admins_their_own_tables() {
    let s = setup("routed");
    let mut bob = s.conn("bob").await;
    let mut boss = s.conn("boss").await;
    let mut alice = s.conn("alice").await;
    alice.query_drop("SELECT * FROM t0 WHERE c1 = 0").await.unwrap();
    let tables = |rows: Vec<Vec<mysql_async::Value>>| {
        rows.into_iter().filter_map(|r| value_string(r[3].clone())).collect::<Vec<_>>()
    };
    let seen = tables(query_values(&mut alice, "SHOW PROXYROUTE").await.unwrap());
    assert!(seen.contains(&"t0".to_string()), "alice sees her table: {seen:?}");
    let seen = tables(query_values(&mut bob, "SHOW PROXYROUTE").await.unwrap());
    assert!(seen.is_empty(), "bob sees other users' tables: {seen:?}");
    let seen = tables(query_values(&mut boss, "SHOW PROXYROUTE").await.unwrap());
    assert!(seen.contains(&"t0".to_string()), "the admin sees every table: {seen:?}");
}

/// A session that kills itself gets what a server answers its own `KILL <own id>` (the same
/// error, then the connection is gone), and its own `KILL QUERY <own id>` what the server answers
/// that (MariaDB interrupts the KILL itself: 1317), after which the session goes on. The
/// gateway's answers are compared with the server's, asked directly.
#[tokio::test(flavor = "multi_thread")]
async fn killing_ones_own_session_answers_as_the_server_does() {
    for mode in MODES {
        let s = setup(mode);
        let server = s.servers()[0];
        let mut direct = connect(&server.url("alice", "alice-pw", Some("test"))).await.expect("direct");
        let mut gw = s.conn("alice").await;
        let mut answers = Vec::new();
        for (what, conn) in [("direct", &mut direct), ("gateway", &mut gw)] {
            let id: u32 = conn.query_first("SELECT CONNECTION_ID()").await.expect("id").expect("a row");
            let answer = conn.query_drop(format!("KILL QUERY {id}")).await.map_err(|e| err_code(&e));
            let n: Option<i64> = conn.query_first("SELECT 1").await.unwrap_or_else(|e| panic!("{mode} {what}: {e:?}"));
            assert_eq!(n, Some(1), "{mode} {what}: the session went on after KILL QUERY of itself");
            answers.push(answer);
        }
        eprintln!("{mode}: KILL QUERY of itself: direct {:?}, gateway {:?}", answers[0], answers[1]);
        assert_eq!(answers[1], answers[0], "{mode}: KILL QUERY of itself");
        let direct_id = direct.id();
        let direct_err = direct.query_drop(format!("KILL {direct_id}")).await.expect_err("direct: KILL of itself");
        let gw_id = gw.id();
        let gw_err = gw.query_drop(format!("KILL {gw_id}")).await.expect_err("gateway: KILL of itself");
        eprintln!("{mode}: KILL of itself: direct {direct_err:?}; gateway {gw_err:?}");
        assert_eq!(err_code(&gw_err), err_code(&direct_err), "{mode}: KILL of itself");
        assert!(gw.query_drop("SELECT 1").await.is_err(), "{mode}: the session survived KILL of itself");
    }
}

/// After COM_CHANGE_USER the session is the new user's in the gateway's list: the new user sees
/// it in SHOW PROCESSLIST and may KILL it, the old one no longer sees it.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_user_owns_the_session() {
    for mode in MODES {
        let s = setup(mode);
        let mut changed = s.conn("alice").await;
        let id = changed.id().to_string();
        let opts = mysql_async::ChangeUserOpts::default()
            .with_user(Some("bob".into()))
            .with_pass(Some("bob-pw".into()))
            .with_db_name(Some("test".into()));
        changed.change_user(opts).await.unwrap_or_else(|e| panic!("{mode}: change_user: {e:?}"));
        let user: Option<String> = changed.query_first("SELECT CURRENT_USER()").await.expect("CURRENT_USER()");
        assert!(user.is_some_and(|u| u.starts_with("bob@")), "{mode}: the server session is not bob's");
        let mut alice = s.conn("alice").await;
        let mut bob = s.conn("bob").await;
        assert!(!listed(&mut alice, "SHOW PROCESSLIST").await.contains(&id), "{mode}: alice still lists {id}");
        assert!(listed(&mut bob, "SHOW PROCESSLIST").await.contains(&id), "{mode}: bob does not list {id}");
        let e = alice.query_drop(format!("KILL {id}")).await.expect_err("alice killed bob's session");
        assert_eq!(err_code(&e), Some(1095), "{mode}: alice's KILL {id}: {e:?}");
        bob.query_drop(format!("KILL {id}")).await.unwrap_or_else(|e| panic!("{mode}: bob's KILL {id}: {e:?}"));
        assert!(changed.query_drop("SELECT 1").await.is_err(), "{mode}: the killed session still answers");
    }
}
