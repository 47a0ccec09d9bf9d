//! State tracking, SET parsing and sync-statement generation.

use super::*;

fn st() -> ClientState {
    ClientState::new(Some("test"), 45)
}

fn set(s: &mut ClientState, sql: &str) {
    assert!(s.observe_statement(sql.as_bytes(), None), "not understood: {sql}");
}

fn queries(plan: &SyncPlan) -> Vec<String> {
    plan.steps
        .iter()
        .map(|s| match s {
            SyncStep::InitDb(db) => format!("USE {db}"),
            SyncStep::Query(q) => String::from_utf8_lossy(q).into_owned(),
        })
        .collect()
}

fn fresh_conn() -> ConnSync {
    ConnSync::new(Some("test"), 45)
}

#[test]
fn parses_every_set_form() {
    let m = Mode::default();
    let p = |s: &str| parse_set(s.as_bytes(), m).unwrap();
    let a = p("SET autocommit = 0, @@session.sql_mode='ANSI', @@SQL_SAFE_UPDATES := 1, SESSION time_zone = '+08:00', LOCAL wait_timeout=-5");
    let names: Vec<_> = a.iter().map(|a| a.target.clone()).collect();
    assert_eq!(
        names,
        ["autocommit", "sql_mode", "sql_safe_updates", "time_zone", "wait_timeout"].map(|n| Target::System(n.into()))
    );
    assert_eq!(a[0].value, SetValue::Word("0".into()));
    assert_eq!(a[1].value, SetValue::str("ANSI"));
    assert_eq!(a[4].value, SetValue::Word("-5".into()));
    let g = p("SET GLOBAL max_connections = 10, @@global.x = 1, PERSIST y = 2");
    assert!(g.iter().all(|a| a.target == Target::Global));
    let u = p("SET @A = 1, @`b c` := 'x', @'d' = NULL, @e = CONCAT(@a, ',', 'y')");
    assert_eq!(u[0].target, Target::User("a".into()));
    assert_eq!(u[1].target, Target::User("b c".into()));
    assert_eq!(u[2].value, SetValue::Null);
    assert_eq!(u[3].value, SetValue::Expr(b"CONCAT(@a, ',', 'y')".to_vec()));
    let n = p("SET NAMES utf8mb4 COLLATE 'utf8mb4_bin'");
    assert_eq!(n[0].target, Target::Names { collation: Some("utf8mb4_bin".into()) });
    assert_eq!(n[0].value, SetValue::Word("utf8mb4".into()));
    assert_eq!(p("SET CHARACTER SET latin1")[0].target, Target::Charset);
    assert_eq!(p("set charset default")[0].value, SetValue::Word("DEFAULT".into()));
    let t = p("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY");
    assert_eq!(t[0].target, Target::SessionTransaction);
    assert_eq!(t[0].value, SetValue::Expr(b"ISOLATION LEVEL READ COMMITTED, READ ONLY".to_vec()));
    assert_eq!(p("SET TRANSACTION READ ONLY;")[0].target, Target::NextTransaction);
    assert_eq!(p("SET GLOBAL TRANSACTION READ ONLY")[0].target, Target::Global);
    assert_eq!(
        p("SET @x = _utf8mb4'h\\'i' /* c */")[0].value,
        SetValue::Str { introducer: Some("_utf8mb4".into()), bytes: b"h'i".to_vec() }
    );
    assert!(p("SET PASSWORD = 'x'").is_empty());
    for bad in [
        "SET ROLE r",
        "SET STATEMENT max_statement_time=1 FOR SELECT 1",
        "SELECT 1",
        "SET /*!80000 x=1 */",
        "SET @a = 'open",
        "SET key_cache.x = 1",
        "SET @a",
    ] {
        assert_eq!(parse_set(bad.as_bytes(), m), None, "{bad}");
    }
}

#[test]
fn string_literals_decode_under_the_client_mode() {
    let v = |sql: &str, m: Mode| parse_set(sql.as_bytes(), m).unwrap().remove(0).value;
    let def = Mode::default();
    assert_eq!(v(r"SET @a = 'it''s \\ \n \% \x'", def), SetValue::str(b"it's \\ \n \\% x".to_vec()));
    assert_eq!(v(r#"SET @a = "q\"d""#, def), SetValue::str(b"q\"d".to_vec()));
    let nbe = Mode { nbe: true, ansi_quotes: false };
    assert_eq!(v(r"SET @a = 'c:\dir\'", nbe), SetValue::str(br"c:\dir\".to_vec()));
    let ansi = Mode { nbe: false, ansi_quotes: true };
    assert_eq!(v(r#"SET @a = "col""#, ansi), SetValue::Expr(br#""col""#.to_vec()));
    assert_eq!(Mode::from_sql_mode("STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES"), nbe);
    assert_eq!(Mode::from_sql_mode("ansi"), ansi);
}

#[test]
fn fresh_connection_gets_everything_in_section_12_order() {
    let mut s = st();
    set(&mut s, "SET @u1 = 'x'");
    set(&mut s, "SET time_zone = '+08:00'");
    set(&mut s, "SET NAMES utf8mb4");
    set(&mut s, "SET sql_mode = 'NO_BACKSLASH_ESCAPES'");
    set(&mut s, "SET @@session.ob_read_consistency = 'WEAK', @gone = NULL");
    s.set_database("db2", None);
    let plan = s.plan(&fresh_conn().on_oceanbase(true));
    assert_eq!(
        queries(&plan),
        [
            "USE db2",
            "SET @@session.sql_mode = 'NO_BACKSLASH_ESCAPES'",
            "SET @@session.time_zone = '+08:00', NAMES utf8mb4, @@session.ob_read_consistency = 'WEAK', @`u1` = 'x'",
        ]
    );
}

#[test]
fn synced_connection_gets_only_what_changed() {
    let mut s = st();
    set(&mut s, "SET @a = 1, sql_mode = 'ANSI'");
    let mut c = fresh_conn();
    let plan = s.plan(&c);
    s.synced(&mut c, &plan);
    assert!(s.plan(&c).is_empty());
    assert!(s.in_sync(&c));
    set(&mut s, "SET @b = 2");
    set(&mut s, "SET @a = NULL");
    assert_eq!(queries(&s.plan(&c)), ["SET @`b` = 2, @`a` = NULL"]);
    // Another connection that never saw the state gets no NULL user variable.
    assert_eq!(queries(&s.plan(&fresh_conn())), ["SET @@session.sql_mode = 'ANSI'", "SET @`b` = 2"]);
    // A statement executed on an in-sync connection keeps it in sync.
    let plan = s.plan(&c);
    s.synced(&mut c, &plan);
    assert!(s.observe_statement(b"SET @c = 3", Some(&mut c)));
    assert!(s.plan(&c).is_empty());
    assert_eq!(s.user("C"), Some(&SetValue::Word("3".into())));
}

#[test]
fn escaping_of_quotes_backslashes_and_nul() {
    let mut s = st();
    set(&mut s, r"SET @q = 'a''b\\c\0d', @e = ''");
    assert_eq!(queries(&s.plan(&fresh_conn())), [r"SET @`q` = 'a''b\\c\0d', @`e` = ''"]);
    // Under NO_BACKSLASH_ESCAPES a backslash is written as is.
    set(&mut s, "SET sql_mode = 'NO_BACKSLASH_ESCAPES'");
    set(&mut s, r"SET @p = 'x\y'");
    let q = queries(&s.plan(&fresh_conn()));
    assert_eq!(q[1], "SET @`q` = 'a''b\\c\0d', @`e` = '', @`p` = 'x\\y'");
    // A name with a back-quote.
    set(&mut s, "SET @`we``ird` = 1");
    assert!(queries(&s.plan(&fresh_conn()))[1].ends_with("@`we``ird` = 1"));
}

#[test]
fn names_supersedes_character_set_variables() {
    let mut s = st();
    set(&mut s, "SET character_set_results = NULL");
    set(&mut s, "SET NAMES latin1");
    set(&mut s, "SET character_set_results = NULL");
    assert_eq!(queries(&s.plan(&fresh_conn())), ["SET NAMES latin1, @@session.character_set_results = NULL"]);
    set(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_bin");
    assert_eq!(queries(&s.plan(&fresh_conn())), ["SET NAMES utf8mb4 COLLATE utf8mb4_bin"]);
}

#[test]
fn handshake_collation_is_replayed_on_a_connection_of_another_charset() {
    let s = ClientState::new(None, 8);
    assert_eq!(queries(&s.plan(&ConnSync::new(None, 45))), ["SET NAMES latin1 COLLATE latin1_swedish_ci"]);
    assert!(s.plan(&ConnSync::new(None, 8)).is_empty());
}

#[test]
fn transactions_and_one_shots() {
    let mut s = st();
    set(&mut s, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    set(&mut s, "SET @a = 1");
    set(&mut s, "SET TRANSACTION READ ONLY");
    set(&mut s, "SET insert_id = 5");
    let mut c = fresh_conn();
    let plan = s.plan(&c);
    assert_eq!(
        queries(&plan),
        [
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SET @`a` = 1",
            "SET TRANSACTION READ ONLY",
            "SET @@session.insert_id = 5"
        ]
    );
    s.synced(&mut c, &plan);
    assert_eq!(
        queries(&s.plan(&fresh_conn())),
        ["SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "SET @`a` = 1"]
    );
    // Executed on a connection, a one-shot is consumed there.
    assert!(s.observe_statement(b"SET TRANSACTION READ WRITE", Some(&mut c)));
    assert!(s.plan(&c).is_empty());
}

#[test]
fn reset_connection_loses_ownership_but_keeps_the_database() {
    let mut s = st();
    set(&mut s, "SET @a = 1");
    s.set_database("other", None);
    let mut c = fresh_conn();
    let plan = s.plan(&c);
    s.synced(&mut c, &plan);
    c.reset();
    assert_eq!(queries(&s.plan(&c)), ["SET @`a` = 1"]);
    assert_eq!(c.database(), Some("other"));
    let other = ClientState::new(None, 45);
    assert!(other.plan(&c).is_empty(), "a state without a database does not change it");
}

/// A session-track block: (type, lenenc data)… with system-variable and schema entries.
fn block(entries: &[(u8, &[&[u8]])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (kind, fields) in entries {
        let mut data = Vec::new();
        for f in *fields {
            crate::protocol::buf::put_lenenc_bytes(&mut data, f);
        }
        out.push(*kind);
        crate::protocol::buf::put_lenenc_bytes(&mut out, &data);
    }
    out
}

#[test]
fn server_reports_are_ground_truth() {
    let mut s = st();
    set(&mut s, "SET time_zone = @tz, autocommit = 1");
    assert!(s.has_expressions());
    let mut c = fresh_conn();
    let plan = s.plan(&c);
    s.synced(&mut c, &plan);
    let b = block(&[
        (0, &[b"time_zone", b"+02:00"]),
        (0, &[b"autocommit", b"ON"]),
        (0, &[b"wait_timeout", b"100"]),
        (1, &[b"newdb"]),
        (2, &[b"1"]),
    ]);
    assert_eq!(s.observe_ok(&b, Some(&mut c)).unwrap(), 3);
    assert_eq!(s.system("time_zone"), Some(&SetValue::str("+02:00")));
    assert_eq!(s.autocommit(), Some(true));
    assert_eq!(s.database(), Some("newdb"));
    assert!(s.in_sync(&c), "the reporting connection has what it reported");
    assert!(!s.has_expressions());
    assert_eq!(
        queries(&s.plan(&fresh_conn())),
        ["USE newdb", "SET @@session.autocommit = 1, @@session.time_zone = '+02:00', @@session.wait_timeout = 100"]
    );
    // Side effects of SET NAMES reported by the server are not recorded separately.
    set(&mut s, "SET NAMES latin1");
    s.observe_ok(&block(&[(0, &[b"character_set_client", b"latin1"]), (0, &[b"character_set_results", b""])]), None)
        .unwrap();
    assert!(s.system("character_set_client").is_none());
    assert!(changes(&[0, 5, 1]).is_err(), "truncated block");
}

#[test]
fn oceanbase_variables_reach_oceanbase_connections_only() {
    let mut s = st();
    let items = parse_set(b"SET ob_read_consistency = 'WEAK', ob_route_policy = 1", s.mode()).unwrap();
    s.observe_answered_set(items, &["ob_route_policy"]);
    set(&mut s, "SET time_zone = '+01:00'");
    let ob = ConnSync::new(Some("test"), 45).on_oceanbase(true);
    assert_eq!(queries(&s.plan(&ob)), ["SET @@session.ob_read_consistency = 'WEAK', @@session.time_zone = '+01:00'"]);
    assert_eq!(queries(&s.plan(&fresh_conn())), ["SET @@session.time_zone = '+01:00'"]);
    assert_eq!(s.system("ob_route_policy"), None, "a gateway-only variable is never synced");
    // A synced MySQL connection stays in sync when only an OceanBase variable changes.
    let mut my = fresh_conn();
    let plan = s.plan(&my);
    s.synced(&mut my, &plan);
    s.observe_answered_set(parse_set(b"SET ob_read_consistency = STRONG", s.mode()).unwrap(), &[]);
    assert!(s.plan(&my).is_empty());
    let mut relogged = ob.clone();
    relogged.relogin(None, 45);
    assert!(relogged.is_oceanbase(), "COM_CHANGE_USER keeps the server kind");
}
