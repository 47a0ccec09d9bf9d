//! Statement → partition: SQL text through the analyser, then the partition functions.
//! Expected partitions come from partition.md §3 (HASH examples from the ODP documentation).

use super::*;
use crate::partition::parse_create_table;
use crate::sql::{analyze, analyze_prepared};

fn t0() -> TableScheme {
    parse_create_table("CREATE TABLE t0 (c1 BIGINT NOT NULL, c2 VARCHAR(20), PRIMARY KEY (c1)) PARTITION BY HASH(c1) PARTITIONS 8")
        .unwrap()
}

fn place(sql: &str) -> Result<String, PartitionError> {
    let scheme = t0();
    let a = analyze(sql);
    let table = a.table().expect("a table").clone();
    locate_statement(&scheme, &a, &table, &CastContext::default()).map(|l| l.name().to_string())
}

#[test]
fn point_select_and_documented_examples() {
    assert_eq!(place("SELECT * FROM t0 WHERE c1 = 123").unwrap(), "p3");
    assert_eq!(place("SELECT * FROM t0 WHERE c1 = ABS(-123)").unwrap(), "p3");
    assert_eq!(place("select c2 from test.t0 x where x.c1=-7").unwrap(), "p7");
    assert_eq!(place("UPDATE t0 SET c2 = 'a' WHERE c1 = -9223372036854775808").unwrap(), "p7");
}

#[test]
fn insert_rows_must_agree() {
    assert_eq!(place("INSERT INTO t0 (c1, c2) VALUES (1, 'ob'), (9, 'odp')").unwrap(), "p1");
    let e = place("INSERT INTO t0 (c1, c2) VALUES (1, 'ob'), (2, 'odp')").unwrap_err();
    assert!(e.to_string().contains("several partitions"), "{e}");
    assert_eq!(place("INSERT INTO t0 VALUES (17, 'x')").unwrap(), "p1", "positional");
}

#[test]
fn in_lists_and_missing_values() {
    assert_eq!(place("SELECT * FROM t0 WHERE c1 IN (3, 11, 19)").unwrap(), "p3");
    assert!(place("SELECT * FROM t0 WHERE c1 IN (3, 4)").is_err());
    assert!(place("SELECT * FROM t0 WHERE c2 = 'x'").is_err(), "no key value");
    assert!(place("SELECT * FROM t0 WHERE c1 = 3 OR c1 = 4").is_err(), "OR is not an equality");
    assert!(place("SELECT * FROM t0 WHERE c1 = NOW()").is_err(), "not evaluated");
}

#[test]
fn explicit_partition_wins() {
    assert_eq!(place("SELECT * FROM t0 PARTITION (P5) WHERE c1 = 1").unwrap(), "p5");
    assert!(place("SELECT * FROM t0 PARTITION (p9)").is_err());
}

#[test]
fn placeholders_need_bound_values() {
    let scheme = t0();
    let a = analyze("SELECT c2 FROM t0 WHERE c1 = ?");
    let table = a.table().unwrap().clone();
    assert!(locate_statement(&scheme, &a, &table, &CastContext::default()).is_err());
    let bound = analyze_prepared("SELECT c2 FROM t0 WHERE c1 = ?", &[crate::sql::Value::Int(123)]);
    let table = bound.table().unwrap().clone();
    assert_eq!(locate_statement(&scheme, &bound, &table, &CastContext::default()).unwrap().name(), "p3");
}
