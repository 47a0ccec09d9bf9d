//! Hostile statements: 100,000-deep nesting and 100,000-term chains through every statement
//! parser a client reaches, on a thread with a tokio worker's stack. Each must come back (no
//! stack overflow, which aborts the whole process) with an analysis that declines rather than
//! guesses.

use crate::session::routed::transaction;
use crate::session::state::{parse_set, Mode};
use crate::session::{admin, connection_id, internal, kill, prepared};
use crate::sql::analysis::Path;
use crate::sql::{analyze, analyze_prepared, split, StmtKind, Value};

/// Tokio's default worker stack; the gateway's runtime does not change it.
const WORKER_STACK: usize = 2 << 20;

const N: usize = 100_000;

/// Runs `f` on a thread with a worker's stack; a stack overflow aborts the test binary.
fn on_worker_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(WORKER_STACK).spawn(f).unwrap().join().unwrap()
}

fn repeat(piece: &str, n: usize) -> String {
    piece.repeat(n)
}

fn chain(n: usize, term: impl Fn(usize) -> String, sep: &str) -> String {
    (0..n).map(term).collect::<Vec<_>>().join(sep)
}

/// (name, statement): shapes whose syntax tree or parser recursion is as deep as the input is
/// long.
fn hostile() -> Vec<(&'static str, String)> {
    vec![
        ("parentheses", format!("SELECT * FROM t0 WHERE c1 = {}1{}", repeat("(", N), repeat(")", N))),
        ("unclosed parentheses", format!("SELECT * FROM t0 WHERE c1 = {}1", repeat("(", N))),
        ("unary minus", format!("SELECT * FROM t0 WHERE c1 = {}1", repeat("-", N))),
        ("spaced unary minus", format!("SELECT * FROM t0 WHERE c1 = {}1", repeat("- ", N))),
        ("unary plus", format!("SELECT * FROM t0 WHERE c1 = {}1", repeat("+", N))),
        ("bit inversion", format!("SELECT * FROM t0 WHERE c1 = {}1", repeat("~", N))),
        ("exclamation", format!("SELECT * FROM t0 WHERE c1 = {}1", repeat("!", N))),
        ("NOT chain", format!("SELECT * FROM t0 WHERE {}c1 = 1", repeat("NOT ", N))),
        ("BINARY chain", format!("SELECT * FROM t0 WHERE c1 = {}1", repeat("BINARY ", N))),
        ("OR chain", format!("SELECT * FROM t0 WHERE {}", chain(N, |i| format!("c1 = {i}"), " OR "))),
        ("AND chain", format!("SELECT * FROM t0 WHERE {}", chain(N, |i| format!("c2 = {i}"), " AND "))),
        ("XOR chain", format!("SELECT * FROM t0 WHERE {}", chain(N, |i| format!("c1 = {i}"), " XOR "))),
        ("plus chain", format!("SELECT * FROM t0 WHERE c1 = {}", chain(N, |_| "1".into(), " + "))),
        ("IS NULL chain", format!("SELECT * FROM t0 WHERE c1 {}", repeat("IS NULL ", N))),
        ("COLLATE chain", format!("SELECT * FROM t0 WHERE c1 = 'a' {}", repeat("COLLATE utf8mb4_bin ", N))),
        ("IN list", format!("SELECT * FROM t0 WHERE c1 IN ({})", chain(N, |i| i.to_string(), ","))),
        ("UNION chain", chain(N / 10, |i| format!("SELECT {i}"), " UNION ")),
        (
            "nested subqueries",
            format!(
                "SELECT * FROM t0 WHERE c1 IN {}1{}",
                repeat("(SELECT c1 FROM t0 WHERE c1 IN ", N / 10),
                repeat(")", N / 10)
            ),
        ),
        (
            "nested derived tables",
            format!("SELECT * FROM {}t0{}", repeat("(SELECT * FROM ", N / 10), repeat(") d", N / 10)),
        ),
        ("nested joins", format!("SELECT * FROM {}t0{}", repeat("t0 JOIN (", N / 10), repeat(") ON 1", N / 10))),
        ("nested CASE", format!("SELECT {}1{}", repeat("CASE WHEN 1 THEN ", N / 10), repeat(" END", N / 10))),
        ("nested calls", format!("SELECT * FROM t0 WHERE c1 = {}1{}", repeat("ABS(", N), repeat(")", N))),
        ("nested CONCAT", format!("SELECT * FROM t0 WHERE c1 = {}'a'{}", repeat("CONCAT('a', ", N), repeat(")", N))),
        ("nested CAST", format!("SELECT {}1{}", repeat("CAST(", N / 10), repeat(" AS SIGNED)", N / 10))),
        (
            "nested ROW",
            format!("SELECT * FROM t0 WHERE (c1, c2) = {}1{}", repeat("ROW(1, ", N / 10), repeat(")", N / 10)),
        ),
        ("brackets", format!("SELECT {}1{}", repeat("[", N), repeat("]", N))),
        ("insert values", format!("INSERT INTO t0 (c1, c2) VALUES ({}1{}, 'x')", repeat("(", N), repeat(")", N))),
        ("update", format!("UPDATE t0 SET c2 = {}1{} WHERE c1 = 1", repeat("(", N), repeat(")", N))),
        ("delete", format!("DELETE FROM t0 WHERE c1 = {}1", repeat("-", N))),
        ("set", format!("SET @a = {}1{}", repeat("(", N), repeat(")", N))),
        ("set system variable", format!("SET SESSION sql_mode = {}''{}", repeat("CONCAT(", N), repeat(")", N))),
        ("explain route", format!("EXPLAIN ROUTE SELECT * FROM t0 WHERE c1 = {}1", repeat("-", N))),
        ("statements", repeat("SELECT 1;", N)),
        ("begin then deep", format!("BEGIN; SELECT * FROM t0 WHERE c1 = {}1{}", repeat("(", N), repeat(")", N))),
        ("placeholders", format!("SELECT * FROM t0 WHERE c1 = {}?{}", repeat("(", N), repeat(")", N))),
        ("prepare", format!("PREPARE s FROM 'SELECT * FROM t0 WHERE c1 = {}1{}'", repeat("(", N), repeat(")", N))),
        ("comment hints", format!("SELECT /*+ {} */ 1", repeat("READ_CONSISTENCY(WEAK) ", N))),
        ("kill", format!("KILL {}1{}", repeat("(", N), repeat(")", N))),
        ("xa start", format!("XA START {}'x'{}", repeat("(", N), repeat(")", N))),
        ("connection id", format!("SELECT {}CONNECTION_ID(){}", repeat("(", N), repeat(")", N))),
        ("processlist", format!("SHOW {}PROCESSLIST", repeat("/* */", N))),
    ]
}

/// Every statement parser a client's text reaches, as a session calls them.
fn every_parser(sql: &str) {
    let an = analyze(sql);
    let _ = analyze_prepared(sql, &[Value::Int(1)]);
    let _ = transaction::classify(sql, &an);
    let mut payload = vec![crate::protocol::command::QUERY];
    payload.extend_from_slice(sql.as_bytes());
    let _ = internal::recognise(&payload);
    let _ = kill::parse(&payload, 1);
    let _ = connection_id::rewrite(sql, 1, crate::sql::Mode::default());
    let _ = crate::session::processlist::recognise(sql);
    let _ = crate::session::processlist::recognise_table(sql, 1);
    let _ = admin::recognise(sql);
    let _ = prepared::text::parse(sql);
    let _ = parse_set(sql.as_bytes(), Mode::default());
    assert!(split::statements(sql).count() <= sql.len());
}

#[test]
fn hostile_statements_come_back_on_a_worker_stack() {
    for (name, sql) in hostile() {
        let owned = sql.clone();
        on_worker_stack(move || every_parser(&owned));
        eprintln!("ok: {name} ({} bytes)", sql.len());
    }
}

#[test]
fn past_the_bounds_a_statement_is_unparsed_not_guessed() {
    let deep = on_worker_stack(|| {
        hostile()
            .into_iter()
            .filter(|(name, _)| ["parentheses", "unary minus", "OR chain", "NOT chain", "nested calls"].contains(name))
            .map(|(name, sql)| {
                let an = analyze(&sql);
                (name, an.path, an.kind, an.tables.len(), an.keys.len())
            })
            .collect::<Vec<_>>()
    });
    for (name, path, kind, tables, keys) in deep {
        assert_eq!(path, Path::Unparsed, "{name}");
        assert_eq!((kind, tables, keys), (StmtKind::Other, 0, 0), "{name}");
    }
}

#[test]
fn within_the_bounds_nothing_changes() {
    let shallow = on_worker_stack(|| {
        let parens = format!("SELECT * FROM t0 WHERE c1 = {}7{}", repeat("(", 40), repeat(")", 40));
        let minus = format!("SELECT * FROM t0 WHERE c1 = {}7", repeat("-", 40));
        let or = format!("SELECT * FROM t0 WHERE {}", chain(400, |i| format!("c2 = {i}"), " OR "));
        // The reference path's walker recurses through this chain: as deep as the bound allows.
        let sum = format!("SELECT * FROM t0 WHERE c1 = {} AND NOT c2 = 1", chain(1_000, |_| "1".into(), " + "));
        [parens, minus, or, sum].map(|sql| {
            let an = analyze(&sql);
            (an.path, an.tables.len(), an.keys.iter().map(|k| format!("{:?}", k.value)).collect::<Vec<_>>())
        })
    });
    assert_eq!(shallow[0], (Path::Fast, 1, vec!["Int(7)".to_string()]));
    // 40 minus signs: an even count, so the value is 7 again.
    assert_eq!(shallow[1], (Path::Fast, 1, vec!["Int(7)".to_string()]));
    assert_eq!((shallow[2].0, shallow[2].1), (Path::Reference, 1));
    assert_eq!(shallow[3], (Path::Reference, 1, vec!["Int(1000)".to_string()]));
}
