//! End-to-end vectors: DDL → scheme → `locate`, published and kernel-checked (partition.md §5).

use super::*;

fn at(ddl: &str, row: &str) -> String {
    let scheme = parse_create_table(ddl).unwrap();
    let values = KeyValue::parse_row(row).unwrap();
    match locate(&scheme, &values, &CastContext::default()) {
        Ok(l) => l.to_string(),
        Err(e) => format!("unknown: {e}"),
    }
}

fn key16(col: &str) -> String {
    format!("CREATE TABLE k (c1 {col}) PARTITION BY KEY(c1) PARTITIONS 16")
}

// §5, first table, last row: KEY(c1) binary collation, 'part', 16 partitions → p11.
#[test]
fn published_key_part_vector() {
    assert_eq!(at(&key16("varbinary(32)"), "'part'"), "p11 11");
    assert_eq!(at(&key16("varchar(32) character set binary"), "'part'"), "p11 11");
    assert_eq!(at("CREATE TABLE k (c1 bigint) PARTITION BY KEY(c1) PARTITIONS 8", "0"), "p1 1");
}

// §5, second table: single-value checks against a 4.3.5.3 kernel, 16 partitions.
#[test]
fn kernel_checked_vectors() {
    assert_eq!(at(&key16("int"), "NULL"), "p7 7");
    assert_eq!(at(&key16("date"), "'2024-01-02'"), "p5 5");
    assert_eq!(at(&key16("datetime"), "'2024-01-02 03:04:05'"), "p8 8");
    assert_eq!(at(&key16("binary(8)"), "'ab'"), "p6 6");
    assert_eq!(at(&key16("varbinary(8)"), "'ab  '"), "p0 0");
    assert_eq!(at(&key16("decimal(10,2)"), "12.34"), "p9 9");
    assert_eq!(at(&key16("decimal(10,2)"), "-12.34"), "p14 14");
    for v in ["'é'", "'E'", "'e'"] {
        assert_eq!(at(&key16("varchar(8) collate utf8mb4_general_ci"), v), "p13 13", "{v}");
    }
    for v in ["'abc'", "'abc  '"] {
        assert_eq!(at(&key16("varchar(8) collate utf8mb4_bin"), v), "p5 5", "{v}");
    }
}

#[test]
fn hash_examples_through_locate() {
    let h8 = "CREATE TABLE t (c1 bigint) PARTITION BY HASH(c1) PARTITIONS 8";
    for (v, want) in [("123", "p3 3"), ("1", "p1 1"), ("-7", "p7 7"), ("NULL", "p0 0"), ("-2147483648", "p0 0"), ("-9223372036854775808", "p7 7")] {
        assert_eq!(at(h8, v), want, "{v}");
    }
    assert_eq!(at("CREATE TABLE t (c1 int) PARTITION BY HASH(c1) PARTITIONS 5", "5"), "p0 0");
    let u8p = "CREATE TABLE t (c1 bigint unsigned) PARTITION BY HASH(c1) PARTITIONS 8";
    assert_eq!(at(u8p, "18446744073709551615"), "p1 1");
    assert_eq!(at(u8p, "9223372036854775808"), "p7 7");
    assert_eq!(at(u8p, "9223372036854775809"), "p7 7");
    assert!(at(u8p, "-1").starts_with("unknown: cannot cast"));
    assert_eq!(at(h8, "'123'"), "p3 3");
    assert!(at(h8, "'12x'").starts_with("unknown"));
}

#[test]
fn range_list_and_two_levels() {
    let rc = "CREATE TABLE rc (c1 varchar(10), c2 int) PARTITION BY RANGE COLUMNS(c1, c2) \
              (PARTITION a VALUES LESS THAN ('m', 5), PARTITION b VALUES LESS THAN (MAXVALUE, MAXVALUE))";
    assert_eq!(at(rc, "'m', 4"), "a 0");
    assert_eq!(at(rc, "'a', 100"), "a 0");
    assert_eq!(at(rc, "'m', 5"), "b 1");
    assert_eq!(at(rc, "'z', 0"), "b 1");
    assert_eq!(at(rc, "NULL, 9"), "a 0");
    let r = "CREATE TABLE r (c1 int) PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20))";
    assert_eq!(at(r, "9"), "p0 0");
    assert_eq!(at(r, "10"), "p1 1");
    assert_eq!(at(r, "20"), "unknown: no partition for value");
    let l = "CREATE TABLE l (c1 int) PARTITION BY LIST(c1) (PARTITION p0 VALUES IN (1, 2, NULL), PARTITION p1 VALUES IN (3))";
    assert_eq!(at(l, "NULL"), "p0 0");
    assert_eq!(at(l, "3"), "p1 1");
    assert_eq!(at(l, "4"), "unknown: no partition for value");
    let ld = l.replace("IN (3))", "IN (3), PARTITION pd VALUES IN (DEFAULT))");
    assert_eq!(at(&ld, "4"), "pd 2");
    let rs = "CREATE TABLE rs (c1 int, c2 int) PARTITION BY RANGE(c1) SUBPARTITION BY HASH(c2) SUBPARTITIONS 2 \
              (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20))";
    assert_eq!(at(rs, "15, 3"), "p1sp1 1 1");
    let hl = "create table hl (c1 int, c2 int) partition by hash(c1) subpartition by list(c2) subpartition template \
              (subpartition s0 values in (1,2), subpartition s1 values in (default)) partitions 2";
    assert_eq!(at(hl, "3, 2"), "p1ss0 1 0");
    assert_eq!(at(hl, "3, 7"), "p1ss1 1 1");
    let scheme = parse_create_table(rs).unwrap();
    assert_eq!(locate_by_name(&scheme, "P1SP0").unwrap().to_string(), "p1sp0 1 0");
    assert_eq!(locate_by_name(&scheme, "p1").unwrap().to_string(), "p1 1");
    assert!(locate_by_name(&scheme, "p9").is_err());
}

#[test]
fn refusals() {
    assert_eq!(
        at("CREATE TABLE t (c1 varchar(5)) DEFAULT CHARSET=latin1 PARTITION BY KEY(c1) PARTITIONS 4", "'a'"),
        "unknown: cannot calculate: collation latin1_swedish_ci not supported"
    );
    assert!(at("CREATE TABLE t (c1 int) PARTITION BY HASH(c1 + 1) PARTITIONS 4", "1").contains("not a plain column list"));
    assert!(at(&key16("decimal(10,2)"), "1.234").starts_with("unknown: cannot cast"));
    assert!(at(&key16("tinyint"), "300").starts_with("unknown: cannot cast"));
    assert!(at(&key16("text"), "'a'").starts_with("unknown: cannot calculate"));
    assert_eq!(at(&key16("int"), "1, 2"), "unknown: expected 1 key values, got 2");
}
