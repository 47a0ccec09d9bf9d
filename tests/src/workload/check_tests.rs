//! The checks fail when they should: wrong server, route log and general log disagreeing, a
//! transaction that did not start where its first statement ran.

use super::*;
use crate::general_log::parse;

const S1: &str = "127.0.0.1:4001";
const S2: &str = "127.0.0.1:4002";

fn item(marker: u64, body: &str, expect: Expect) -> Item {
    Item { marker, stmt: Stmt::Text(format!("/* q:{marker} */ {body}")), expect, compare: true, hot: None }
}

fn record(conn: u64, seq: u64, sql: &str, target: &str) -> RouteRecord {
    let line = serde_json::json!({"conn": conn, "seq": seq, "cmd": "query", "sql": sql, "target": target});
    RouteRecord::parse(&line.to_string()).unwrap()
}

fn evidence(records: Vec<RouteRecord>, s1_log: &str, s2_log: &str) -> Evidence {
    let names = [(S1.parse().unwrap(), "s1".to_string()), (S2.parse().unwrap(), "s2".to_string())].into();
    Evidence { records, logs: vec![("s1".into(), parse(s1_log)), ("s2".into(), parse(s2_log))], names }
}

fn run(lists: &[Vec<Item>], ev: &Evidence) -> Report {
    let mut r = Report::default();
    let ran = check_marked(lists, ev, &mut r);
    check_hot(lists, ev, &ran, &mut r);
    r
}

#[test]
fn agreeing_sources_pass() {
    let lists = vec![vec![
        item(1, "SELECT c2 FROM t WHERE c1 = 1", Expect::Leader("s2")),
        item(2, "BEGIN", Expect::Begin { first: 3 }),
        item(3, "UPDATE t SET c3 = 1 WHERE c1 = 1", Expect::Leader("s2")),
        item(4, "COMMIT", Expect::SameAs(3)),
    ]];
    let ev = evidence(
        vec![
            record(1, 1, "/* q:1 */ SELECT c2 FROM t WHERE c1 = 1", S2),
            record(1, 3, "/* q:3 */ UPDATE t SET c3 = 1 WHERE c1 = 1", S2),
            record(1, 4, "/* q:4 */ COMMIT", S2),
        ],
        "",
        "\t\t 7 Query\t/* q:1 */ SELECT c2 FROM t WHERE c1 = 1\n\t\t 7 Query\tBEGIN\n\t\t 7 Query\t/* q:3 */ UPDATE t SET c3 = 1 WHERE c1 = 1\n\t\t 7 Query\t/* q:4 */ COMMIT\n",
    );
    let r = run(&lists, &ev);
    assert!(r.failures.is_empty(), "{:#?}", r.failures);
    assert_eq!(r.checked, 4);
}

#[test]
fn wrong_server_mismatched_logs_and_a_misplaced_begin_fail() {
    let lists = vec![vec![
        item(1, "SELECT c2 FROM t WHERE c1 = 1", Expect::Leader("s2")),
        item(5, "SELECT 1", Expect::Any),
        item(2, "BEGIN", Expect::Begin { first: 3 }),
        item(3, "UPDATE t SET c3 = 1 WHERE c1 = 1", Expect::Leader("s1")),
    ]];
    let ev = evidence(
        vec![
            record(1, 1, "/* q:1 */ SELECT c2 FROM t WHERE c1 = 1", S1),
            record(1, 2, "/* q:5 */ SELECT 1", S1),
            record(1, 4, "/* q:3 */ UPDATE t SET c3 = 1 WHERE c1 = 1", S1),
        ],
        "\t\t 7 Query\t/* q:1 */ SELECT c2 FROM t WHERE c1 = 1\n\t\t 7 Query\t/* q:3 */ UPDATE t SET c3 = 1 WHERE c1 = 1\n",
        "\t\t 8 Query\t/* q:5 */ SELECT 1\n\t\t 8 Query\tBEGIN\n",
    );
    let r = run(&lists, &ev);
    let text = r.failures.join("\n");
    assert!(text.contains("q:1: ran on s1, expected Leader(\"s2\")"), "{text}");
    assert!(text.contains("q:5 route log says s1, general logs show [\"s2\"]"), "{text}");
    assert!(text.contains("q:2: no BEGIN on s1"), "{text}");
    assert_eq!(r.failures.len(), 3, "{text}");
}

#[test]
fn reused_prepared_executions_are_checked_from_the_general_logs() {
    let hot = |key: i64, expect: Expect| Item {
        marker: 0,
        stmt: Stmt::Prepared { sql: "/* ps:0:0 */ SELECT c2 FROM t WHERE c1 = ?".into(), params: vec![key] },
        expect,
        compare: true,
        hot: Some("ps:0:0".into()),
    };
    let lists = vec![vec![hot(1, Expect::Leader("s2")), hot(2, Expect::Leader("s1"))]];
    let ok = evidence(
        vec![],
        "\t\t 7 Execute\t/* ps:0:0 */ SELECT c2 FROM t WHERE c1 = 2\n",
        "\t\t 8 Execute\t/* ps:0:0 */ SELECT c2 FROM t WHERE c1 = 1\n",
    );
    assert!(run(&lists, &ok).failures.is_empty());
    let swapped = evidence(
        vec![],
        "\t\t 7 Execute\t/* ps:0:0 */ SELECT c2 FROM t WHERE c1 = 1\n",
        "\t\t 8 Execute\t/* ps:0:0 */ SELECT c2 FROM t WHERE c1 = 2\n",
    );
    assert_eq!(run(&lists, &swapped).failures.len(), 2);
}

#[test]
fn differing_results_fail_only_where_comparable() {
    let mut lists = vec![vec![item(1, "SELECT 1", Expect::Any), item(2, "SELECT 2", Expect::Any)]];
    lists[0][1].compare = false;
    let set =
        |v: &str| Outcome::Ok(vec![super::super::run::ResultSet { rows: vec![vec![Some(v.into())]], affected: 0 }]);
    let mut r = Report::default();
    compare(&lists, &[vec![set("1"), set("x")]], &[vec![set("1"), set("2")]], &mut r);
    assert!(r.failures.is_empty());
    compare(&lists, &[vec![set("0"), set("2")]], &[vec![set("1"), set("2")]], &mut r);
    assert_eq!(r.failures.len(), 1);
}
