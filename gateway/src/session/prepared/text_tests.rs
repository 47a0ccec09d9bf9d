use super::*;
use crate::session::state::ClientState;

#[test]
fn parses_the_three_commands() {
    assert_eq!(
        parse("PREPARE s1 FROM 'SELECT * FROM t0 WHERE c1 = ?'"),
        Some(TextPs::Prepare { name: "s1".into(), source: Source::Text("SELECT * FROM t0 WHERE c1 = ?".into()) })
    );
    assert_eq!(
        parse("prepare `my stmt` from @q;"),
        Some(TextPs::Prepare { name: "my stmt".into(), source: Source::UserVar("q".into()) })
    );
    assert_eq!(
        parse("PREPARE s FROM 'SELECT ''a'', \\'b\\''"),
        Some(TextPs::Prepare { name: "s".into(), source: Source::Text("SELECT 'a', 'b'".into()) })
    );
    assert_eq!(parse("EXECUTE s1"), Some(TextPs::Execute { name: "s1".into(), using: vec![] }));
    assert_eq!(
        parse("EXECUTE s1 USING @a, 5, -7, 'x', NULL, @b + 1, X'41'"),
        Some(TextPs::Execute {
            name: "s1".into(),
            using: vec![
                Arg::UserVar("a".into()),
                Arg::Value(Value::Int(5)),
                Arg::Value(Value::Int(-7)),
                Arg::Value(Value::str(&b"x"[..])),
                Arg::Value(Value::Null),
                Arg::Expr,
                Arg::Value(Value::Hex(Cow::Owned(vec![0x41]))),
            ],
        })
    );
    assert_eq!(parse("DEALLOCATE PREPARE s1"), Some(TextPs::Deallocate { name: "s1".into() }));
    assert_eq!(parse("drop prepare S1"), Some(TextPs::Deallocate { name: "S1".into() }));
}

#[test]
fn other_statements_and_odd_forms_are_not_taken() {
    for sql in ["SELECT 1", "PREPARE s FROM CONCAT('SELECT ', 1)", "EXECUTE", "EXECUTE s USING", "PREPARE s 'x'"] {
        assert_eq!(parse(sql), None, "{sql}");
    }
}

#[test]
fn user_variables_become_routing_values() {
    let mut st = ClientState::new(Some("test"), 45);
    assert!(st.observe_statement(b"SET @a = 123, @b = 'abc', @c = -5, @d = NULL, @e = NOW(), @f = 1.50", None));
    let using = match parse("EXECUTE s USING @a, @b, @c, @d, @e, @f, @missing, 9").unwrap() {
        TextPs::Execute { using, .. } => using,
        other => panic!("{other:?}"),
    };
    let vals = bound_values(&using, &st);
    assert_eq!(
        vals,
        vec![
            Value::Int(123),
            Value::str(&b"abc"[..]),
            Value::Int(-5),
            Value::Null,
            Value::Unknown,
            Value::Decimal(Cow::Borrowed("1.50")),
            Value::Unknown,
            Value::Int(9),
        ]
    );
}

#[test]
fn prepare_text_from_a_user_variable() {
    let mut st = ClientState::new(None, 45);
    assert!(st.observe_statement(b"SET @q = 'SELECT ?'", None));
    assert_eq!(Source::UserVar("q".into()).resolve(&st).as_deref(), Some("SELECT ?"));
    assert_eq!(Source::UserVar("nope".into()).resolve(&st), None);
}

#[test]
fn prepare_sql_quotes_for_the_connection() {
    assert_eq!(prepare_sql("s`1", "SELECT 'a\\b'", false), b"PREPARE `s``1` FROM 'SELECT ''a\\\\b'''".to_vec());
    assert_eq!(prepare_sql("s", "SELECT 'a\\b'", true), b"PREPARE `s` FROM 'SELECT ''a\\b'''".to_vec());
}

#[test]
fn names_are_case_insensitive_and_errors_match_mariadb() {
    let mut ts = TextStatements::default();
    let g1 = ts.prepare("S1", "SELECT 1");
    assert_eq!(ts.execute("s1").unwrap().generation, g1);
    let g2 = ts.prepare("s1", "SELECT 2");
    assert!(g2 > g1);
    assert_eq!(&*ts.execute("S1").unwrap().sql, "SELECT 2");
    ts.failed_prepare("s1");
    let e = ts.execute("s1").unwrap_err();
    assert_eq!((e.code(), e.to_string().as_str()), (1243, "Unknown prepared statement handler (s1) given to EXECUTE"));
    let e = ts.deallocate("zz").unwrap_err();
    assert_eq!(e.to_string(), "Unknown prepared statement handler (zz) given to DEALLOCATE PREPARE");
}

#[test]
fn text_statements_are_bounded_by_count_and_bytes() {
    use crate::session::prepared::registry::{MAX_STATEMENTS, MAX_TEXT_BYTES};
    let mut t = TextStatements::default();
    for n in 0..MAX_STATEMENTS {
        t.prepare(&format!("s{n}"), "SELECT 1");
    }
    assert_eq!(t.admits("one_more", "SELECT 1").map_err(|e| e.code()), Err(1461));
    assert!(t.admits("S0", "SELECT 2").is_ok(), "replacing a statement of the same name adds none");
    t.deallocate("s0").expect("deallocate");
    assert!(t.admits("one_more", "SELECT 1").is_ok());

    let mut t = TextStatements::default();
    let big = "x".repeat(MAX_TEXT_BYTES / 2);
    t.prepare("a", &big);
    t.prepare("b", &big);
    assert!(t.admits("c", "SELECT 1").is_err(), "64 MiB held: nothing more");
    assert!(t.admits("b", "SELECT 1").is_ok(), "replacing b gives its bytes back");
    t.failed_prepare("a");
    assert!(t.admits("c", "SELECT 1").is_ok());
}
