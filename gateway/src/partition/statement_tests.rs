//! Statement → partition: SQL text through the analyser, then the partition functions.
//! Expected partitions come from docs/partition.md §3 (HASH examples from the ODP documentation).

use super::*;
use crate::partition::parse_create_table;
use crate::sql::{analyze, analyze_prepared};

fn t0() -> TableScheme {
    parse_create_table(
        "CREATE TABLE t0 (c1 BIGINT NOT NULL, c2 VARCHAR(20), PRIMARY KEY (c1)) PARTITION BY HASH(c1) PARTITIONS 8",
    )
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

fn place_in(ddl: &str, sql: &str) -> Result<String, PartitionError> {
    let scheme = parse_create_table(ddl).unwrap();
    let a = analyze(sql);
    let table = a.table().expect("a table").clone();
    locate_statement(&scheme, &a, &table, &CastContext::default()).map(|l| l.name().to_string())
}

const MONTHS: &str = "CREATE TABLE t (id int, created datetime) PARTITION BY RANGE COLUMNS(created) \
    (PARTITION p0 VALUES LESS THAN ('2024-01-01'), PARTITION p1 VALUES LESS THAN ('2024-02-01'), \
    PARTITION p2 VALUES LESS THAN ('2024-03-01'), PARTITION pmax VALUES LESS THAN (MAXVALUE))";

#[test]
fn ranges_inside_one_partition() {
    let q = |w: &str| place_in(MONTHS, &format!("SELECT * FROM t WHERE {w}"));
    assert_eq!(q("created >= '2024-01-01' AND created < '2024-02-01'").unwrap(), "p1");
    assert_eq!(q("created BETWEEN '2024-01-01' AND '2024-01-31 23:59:59'").unwrap(), "p1");
    assert_eq!(q("'2024-02-01' > created AND created > '2023-12-31 23:59:59'").unwrap(), "p1", "flipped, open");
    assert_eq!(q("created < '2024-01-01'").unwrap(), "p0", "open below the first bound");
    assert_eq!(q("created >= '2024-03-01'").unwrap(), "pmax");
    assert_eq!(q("id = 5 AND created >= '2024-02-01' AND created <= '2024-02-29 23:59:59'").unwrap(), "p2");
    assert!(q("created >= '2024-01-01' AND created <= '2024-02-01'").is_err(), "closed end on the next bound");
    assert!(q("created > '2023-12-31 23:59:58' AND created < '2024-02-01'").is_err(), "open start before the bound");
    assert!(q("created < '2024-01-01 00:00:00.5'").is_err(), "00:00:00 is included");
    assert_eq!(
        q("created >= '2024-01-01' AND created <= '2024-01-31 23:59:59.5'").unwrap(),
        "p1",
        "compared unrounded"
    );
    assert_eq!(q("created > '2023-12-31 23:59:59.5' AND created < '2024-02-01'").unwrap(), "p1");
    assert_eq!(q("created >= 20240101 AND created < 20240201").unwrap(), "p1", "numeric datetimes");
    assert!(q("created <= '2024-01-01'").is_err());
    assert!(q("created >= '2024-01-01'").is_err());
    assert!(q("created NOT BETWEEN '2024-01-01' AND '2024-01-02'").is_err());
    assert!(q("created >= '2024-01-01' OR created < '2024-02-01'").is_err());
    assert!(q("created < NULL").is_err());
}

#[test]
fn ranges_through_expressions() {
    let to_days = "CREATE TABLE t (d date) PARTITION BY RANGE(TO_DAYS(d)) (PARTITION p0 VALUES LESS THAN (739251), \
                   PARTITION p1 VALUES LESS THAN (739282), PARTITION p2 VALUES LESS THAN MAXVALUE)";
    let q = |ddl: &str, w: &str| place_in(ddl, &format!("SELECT * FROM t WHERE {w}"));
    assert_eq!(q(to_days, "d >= '2024-01-01' AND d < '2024-02-01'").unwrap(), "p1");
    assert_eq!(q(to_days, "d BETWEEN '2024-01-01' AND '2024-01-31'").unwrap(), "p1");
    assert!(q(to_days, "d BETWEEN '2024-01-01' AND '2024-02-01'").is_err());
    assert!(q(to_days, "d >= '2024-01-01' AND d < '2024-02-01 12:00:00'").is_err(), "admits 2024-02-01");
    assert_eq!(q(to_days, "d >= '2023-12-31 00:00:01' AND d <= '2024-01-31 23:59:59'").unwrap(), "p1");
    let month = "CREATE TABLE t (d date) PARTITION BY RANGE(MONTH(d)) (PARTITION p0 VALUES LESS THAN (7), \
                 PARTITION p1 VALUES LESS THAN MAXVALUE)";
    assert!(q(month, "d >= '2024-01-01' AND d < '2025-02-01'").is_err(), "MONTH is not monotonic");
    assert!(q(month, "d >= '2024-01-01' AND d < '2024-02-01'").is_err(), "not monotonic: no pruning at all");
    let ints = "CREATE TABLE t (c int) PARTITION BY RANGE(c) (PARTITION p0 VALUES LESS THAN (10), \
                PARTITION p1 VALUES LESS THAN (20))";
    assert_eq!(q(ints, "c > 9 AND c < 20").unwrap(), "p1");
    assert_eq!(q(ints, "c >= 15").unwrap(), "p1", "no stored row above the last bound");
    assert_eq!(q(ints, "c >= 15 AND c <= 99").unwrap(), "p1", "nor above it");
    assert!(q(ints, "c >= 25").is_err(), "no row at all");
    assert!(q(ints, "c > 8 AND c < 20").is_err());
    let sub = "CREATE TABLE t (c int, k int) PARTITION BY RANGE(c) SUBPARTITION BY HASH(k) SUBPARTITIONS 2 \
               (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20))";
    assert!(q(sub, "c > 9 AND c < 20").is_err(), "two levels need the sub-partition key");
}
