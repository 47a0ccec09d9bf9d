//! End-to-end vectors: DDL → scheme → `locate`, published and kernel-checked (docs/partition.md §10).

use super::*;

fn at(ddl: &str, row: &str) -> String {
    at_tz(ddl, row, 0)
}

/// `at` with the session time zone `tz_offset_secs` east of UTC.
fn at_tz(ddl: &str, row: &str, tz_offset_secs: i32) -> String {
    let scheme = parse_create_table(ddl).unwrap();
    let values = KeyValue::parse_row(row).unwrap();
    match locate(&scheme, &values, &CastContext { tz_offset_secs }) {
        Ok(l) => l.to_string(),
        Err(e) => format!("unknown: {e}"),
    }
}

fn key16(col: &str) -> String {
    format!("CREATE TABLE k (c1 {col}) PARTITION BY KEY(c1) PARTITIONS 16")
}

// docs/partition.md §10, first table, last row: KEY(c1) binary collation, 'part', 16 partitions → p11.
#[test]
fn published_key_part_vector() {
    assert_eq!(at(&key16("varbinary(32)"), "'part'"), "p11 11");
    assert_eq!(at(&key16("varchar(32) character set binary"), "'part'"), "p11 11");
    assert_eq!(at("CREATE TABLE k (c1 bigint) PARTITION BY KEY(c1) PARTITIONS 8", "0"), "p1 1");
}

// docs/partition.md §10, second table: single-value checks against a 4.3.5.3 kernel, 16 partitions.
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
    for (v, want) in [
        ("123", "p3 3"),
        ("1", "p1 1"),
        ("-7", "p7 7"),
        ("NULL", "p0 0"),
        ("-2147483648", "p0 0"),
        ("-9223372036854775808", "p7 7"),
    ] {
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

// The fixes below carry expected partitions read back from an OceanBase 4.3.5.3 kernel (seekdb
// 1.4.0) by the conformance run (tests/src/conformance, seed 0x0b5eed2024050001), rows verbatim.

// KEY() hashes the primary-key columns in table column order; `locate` takes them in primary-key
// order (the order the conformance test feeds). Tables `keypk_composite` / `_colorder`.
#[test]
fn key_implicit_hashes_in_table_column_order() {
    let pk_reversed = "CREATE TABLE t (id int NOT NULL, k2 int NOT NULL, k1 varchar(64) NOT NULL, v int, \
                       PRIMARY KEY (k1, k2)) PARTITION BY KEY() PARTITIONS 7";
    for (row, want) in [("'É', -607000171", "p2 2"), ("'_ß', -1533307520", "p3 3"), ("'中', 625283519", "p5 5")] {
        assert_eq!(at(pk_reversed, row), want, "{row}");
    }
    let scheme = parse_create_table(pk_reversed).unwrap();
    assert_eq!(scheme.key_columns().unwrap(), vec![2, 1], "input in primary-key order");
    assert_eq!(scheme.level_columns(0).unwrap(), &[1, 2], "hashed in table column order");
    // Explicit KEY(k2, k1) with the values reversed is the same hash.
    let explicit = pk_reversed.replace("KEY()", "KEY(k2, k1)");
    assert_eq!(at(&explicit, "-607000171, 'É'"), "p2 2");
    let pk_in_order = "CREATE TABLE t (id int NOT NULL, k1 varchar(64) NOT NULL, k2 int NOT NULL, v int, \
                       PRIMARY KEY (k1, k2)) PARTITION BY KEY() PARTITIONS 7";
    assert_eq!(at(pk_in_order, "'中', -607000171"), "p4 4");
    assert_eq!(at(pk_in_order, "'ñåÑ日本語', 625283519"), "p4 4");
}

// NULL in a DECIMAL key hashes as empty input, not the 4-byte NULL tag (`key_dec*`, `key_mixed3`:
// the seed chain shows it is `murmur64a(&[], seed)`, not a skipped column).
#[test]
fn decimal_null_hashes_empty_input() {
    let mixed = "CREATE TABLE t (c1 datetime(6), c2 bigint unsigned, c3 decimal(10,2)) PARTITION BY KEY(c1, c2, c3) PARTITIONS 13";
    assert_eq!(at(mixed, "'2014-09-17 14:00:22.209607', 6157225984956028836, NULL"), "p7 7");
    assert_eq!(at(mixed, "'1997-03-01 22:09:09.899551', 53187, NULL"), "p4 4");
    assert_eq!(at(mixed, "'9999-12-31 23:59:59.999999', 216, NULL"), "p1 1");
    for (ty, n) in [("decimal(10,2)", 14), ("decimal(18,0)", 17), ("decimal(30,10)", 7), ("decimal(65,30)", 15)] {
        let ddl = format!("CREATE TABLE t (c1 {ty}) PARTITION BY KEY(c1) PARTITIONS {n}");
        assert_eq!(at(&ddl, "NULL"), "p0 0", "{ty}");
    }
    // Other types keep the 4-byte tag (docs/partition.md §10: INT NULL → p7 of 16).
    assert_eq!(at(&key16("int"), "NULL"), "p7 7");
}

// DECIMAL(65,30): 1 to 7 little-endian words after sign-extension trimming (`key_dec65_30`).
#[test]
fn wide_decimal_key() {
    let ddl = "CREATE TABLE t (c1 decimal(65,30)) PARTITION BY KEY(c1) PARTITIONS 15";
    for (v, want) in [
        ("-0.000000000000000000000000000001", "p12 12"),
        ("0.031582875928532945178117968591", "p7 7"),
        ("-7.107600200518385827567587293547", "p13 13"),
        ("-91.901602700741666783790875572854", "p0 0"),
        ("-7293204947301172.117051485340915432787301710813", "p10 10"),
        ("521769223524839629428323319.119292694521358311927264950135", "p11 11"),
        ("102855772191097040964751618757418.077941875832997111845471972969", "p13 13"),
        ("-39849440083311741246426962708468775.052328972169201470157780165664", "p10 10"),
        ("68901072742249704347565170488445573.131362352674721758693519629455", "p2 2"),
    ] {
        assert_eq!(at(ddl, v), want, "{v}");
    }
    assert!(at(ddl, "123456789012345678901234567890123456").starts_with("unknown: cannot cast"));
}

// Zero dates in KEY, RANGE COLUMNS, LIST COLUMNS and a KEY sub-level (`key_date`, `key_datetime*`,
// `key_timestamp*`, `key_ts_time_year_double`, `rangec_*`, `listc_date_nodefault`,
// `sub_list_key_tpl`). TIMESTAMP zero hashes as −9 223 372 022 400 000 000 in any time zone.
#[test]
fn zero_dates() {
    let key = |ty: &str, n: u32| format!("CREATE TABLE t (c1 {ty}) PARTITION BY KEY(c1) PARTITIONS {n}");
    assert_eq!(at(&key("date", 16), "'0000-00-00'"), "p1 1");
    assert_eq!(at(&key("datetime", 13), "'0000-00-00 00:00:00'"), "p6 6");
    assert_eq!(at(&key("datetime(3)", 7), "'0000-00-00 00:00:00.000'"), "p6 6");
    assert_eq!(at(&key("datetime(6)", 11), "'0000-00-00 00:00:00.000000'"), "p1 1");
    assert_eq!(at_tz(&key("timestamp", 16), "'0000-00-00 00:00:00'", 8 * 3600), "p10 10");
    assert_eq!(at_tz(&key("timestamp", 13), "'0000-00-00 00:00:00'", -(3 * 3600 + 1800)), "p6 6");
    let multi =
        "CREATE TABLE t (c1 timestamp NULL, c2 time, c3 year, c4 double) PARTITION BY KEY(c1, c2, c3, c4) PARTITIONS 7";
    assert_eq!(at_tz(multi, "'0000-00-00 00:00:00', '-729:59:30', 1961, 55.125", 8 * 3600), "p2 2");
    assert_eq!(at_tz(multi, "'0000-00-00 00:00:00', '-72:59:02', 2036, NULL", 8 * 3600), "p6 6");
    let list = "CREATE TABLE t (c1 date) PARTITION BY LIST COLUMNS(c1) (PARTITION p2 VALUES IN (NULL, '9999-12-31'), \
                PARTITION p1 VALUES IN ('0000-00-00', '1970-01-01'), PARTITION p0 VALUES IN ('2024-01-01', '2024-01-02'))";
    assert_eq!(at(list, "'0000-00-00'"), "p1 1");
    assert_eq!(at(list, "NULL"), "p2 0");
    let range = "CREATE TABLE t (c1 int, c2 date) PARTITION BY RANGE COLUMNS(c1, c2) (PARTITION p0 VALUES LESS THAN (0, '2000-01-01'), \
                 PARTITION p1 VALUES LESS THAN (100, '1990-01-01'), PARTITION p2 VALUES LESS THAN (1000, '1970-01-01'))";
    assert_eq!(at(range, "0, '0000-00-00'"), "p0 0");
    assert_eq!(at(range, "969, '0000-00-00'"), "p2 2");
    let r6 = "CREATE TABLE t (c1 datetime(6)) PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN ('1970-01-01 00:00:00'), \
              PARTITION p1 VALUES LESS THAN (MAXVALUE))";
    assert_eq!(at(r6, "'0000-00-00 00:00:00.000000'"), "p0 0");
    // Zero date sorts above NULL: a bound of '0000-00-00' keeps NULL below and the zero date above.
    let zb = "CREATE TABLE t (c1 date) PARTITION BY RANGE COLUMNS(c1) (PARTITION a VALUES LESS THAN ('0000-00-00'), \
              PARTITION b VALUES LESS THAN ('0001-01-01'))";
    assert_eq!(at(zb, "NULL"), "a 0");
    assert_eq!(at(zb, "'0000-00-00'"), "b 1");
    let sub = "CREATE TABLE t (a int, b date) PARTITION BY LIST(a) SUBPARTITION BY KEY(b) SUBPARTITION TEMPLATE \
               (SUBPARTITION p0, SUBPARTITION p1, SUBPARTITION p2) (PARTITION p0 VALUES IN (1, 2, 3), \
               PARTITION p1 VALUES IN (NULL, 4), PARTITION pd VALUES IN (DEFAULT))";
    assert_eq!(at(sub, "2, '0000-00-00'"), "p0sp2 0 2");
    assert_eq!(at(sub, "NULL, '0000-00-00'"), "p1sp2 1 2");
    // Partial zeros and a zero date with a time stay refused.
    assert!(at(&key("date", 16), "'2024-00-01'").starts_with("unknown: cannot cast"));
    assert!(at(&key("datetime", 13), "'0000-00-00 00:00:01'").starts_with("unknown: cannot cast"));
}

#[test]
fn refusals() {
    assert_eq!(
        at("CREATE TABLE t (c1 varchar(5)) DEFAULT CHARSET=latin1 PARTITION BY KEY(c1) PARTITIONS 4", "'a'"),
        "unknown: cannot calculate: collation latin1_swedish_ci not supported"
    );
    assert!(
        at("CREATE TABLE t (c1 int) PARTITION BY KEY(c1 + 1) PARTITIONS 4", "1").contains("not a plain column list")
    );
    assert!(at("CREATE TABLE t (c1 int) PARTITION BY HASH(c1 / 2) PARTITIONS 4", "1").contains("operator"));
    assert!(at("CREATE TABLE t (c1 varchar(9)) PARTITION BY HASH(length(c1)) PARTITIONS 4", "'a'")
        .contains("function length"));
    assert!(at(&key16("decimal(10,2)"), "99999999.995").starts_with("unknown: cannot cast"), "rounds out of range");
    assert!(at(&key16("tinyint"), "300").starts_with("unknown: cannot cast"));
    assert!(at(&key16("text"), "'a'").starts_with("unknown: cannot calculate"));
    assert_eq!(at(&key16("int"), "1, 2"), "unknown: expected 1 key values, got 2");
}

// Partition expressions: the value of the expression is placed like a BIGINT key (hand-computed).
#[test]
fn expressions() {
    let h = |expr: &str, cols: &str, row: &str| {
        at(&format!("CREATE TABLE t ({cols}) PARTITION BY HASH({expr}) PARTITIONS 4"), row)
    };
    assert_eq!(h("c1 + 1", "c1 int", "2"), "p3 3");
    assert_eq!(h("c1 - 10", "c1 int", "3"), "p3 3", "|-7| % 4");
    assert_eq!(h("c1 * 3", "c1 int", "3"), "p1 1");
    assert_eq!(h("c1 div 3", "c1 int", "-7"), "p2 2", "DIV truncates toward zero");
    assert_eq!(h("c1 % 3", "c1 int", "-7"), "p1 1", "MOD takes the dividend's sign");
    assert_eq!(h("mod(c1, 16)", "c1 int", "23"), "p3 3");
    assert_eq!(h("c1 div 0", "c1 int", "5"), "p0 0", "division by zero is NULL");
    assert_eq!(h("abs(c1)", "c1 int", "NULL"), "p0 0");
    assert_eq!(h("year(d)", "d date", "'2023-06-01'"), "p3 3");
    assert_eq!(h("month(d)", "d date", "'2023-06-01'"), "p2 2");
    assert_eq!(h("dayofmonth(d)", "d date", "'2023-06-07'"), "p3 3");
    assert_eq!(h("to_days(d)", "d date", "'1970-01-01'"), "p0 0", "719528 % 4");
    assert_eq!(h("to_days(d)", "d date", "'0000-00-00'"), "p0 0", "NULL");
    assert_eq!(h("to_seconds(dt)", "dt datetime", "'1970-01-01 00:00:03'"), "p3 3", "62167219203 % 4");
    assert_eq!(h("unix_timestamp(ts)", "ts timestamp", "'1970-01-01 00:00:07'"), "p3 3");
    assert_eq!(h("c1 + c2", "c1 int, c2 int", "1, 2"), "p3 3");
    assert_eq!(h("year(d) * 100 + month(d)", "d date", "'2024-03-09'"), "p3 3", "202403 % 4");
    assert_eq!(h("u + 1", "u bigint unsigned", "18446744073709551614"), "p1 1", "unsigned, as for HASH(u)");
    assert!(h("c1 * 9223372036854775807", "c1 bigint", "3").starts_with("unknown: cannot cast"), "BIGINT overflow");
    let r = "CREATE TABLE t (d date) PARTITION BY RANGE(to_days(d)) (PARTITION p0 VALUES LESS THAN (739251), \
             PARTITION p1 VALUES LESS THAN (739282), PARTITION p2 VALUES LESS THAN MAXVALUE)";
    assert_eq!(at(r, "'2023-12-31'"), "p0 0");
    assert_eq!(at(r, "'2024-01-01'"), "p1 1", "TO_DAYS('2024-01-01') = 739251 (MySQL: TO_DAYS('2007-10-07') = 733321)");
    assert_eq!(at(r, "'2024-02-01'"), "p2 2");
    assert_eq!(at(r, "NULL"), "p0 0");
    let l = "CREATE TABLE t (d date, k int) PARTITION BY LIST(month(d)) SUBPARTITION BY HASH(k % 10) SUBPARTITIONS 2 \
             (PARTITION q1 VALUES IN (1, 2, 3), PARTITION rest VALUES IN (DEFAULT))";
    assert_eq!(at(l, "'2024-02-10', 13"), "q1sp1 0 1");
    assert_eq!(at(l, "'2024-05-10', 4"), "restsp0 1 0");
}

#[test]
fn extract_units() {
    let h = |expr: &str, row: &str| {
        at(&format!("CREATE TABLE t (d datetime(6)) PARTITION BY HASH({expr}) PARTITIONS 7"), row)
    };
    assert_eq!(h("extract(year_month from d)", "'2024-03-09 10:11:12.5'"), "p5 5", "202403 % 7");
    assert_eq!(h("extract(quarter from d)", "'2024-08-09 10:11:12'"), "p3 3");
    assert_eq!(h("extract(microsecond from d)", "'2024-08-09 10:11:12.000013'"), "p6 6");
    assert!(h("extract(day_hour from d)", "'2024-08-09 10:11:12'").starts_with("unknown: cannot calculate"));
}

/// Hostile partition expressions (metadata and `gateway locate` input): an answer, never a stack
/// overflow, on a small stack.
#[test]
fn expression_depth_is_bounded() {
    let cases = [
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH({}c1{}) PARTITIONS 2", "(".repeat(60), ")".repeat(60)),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH({}c1) PARTITIONS 2", "- ".repeat(120)),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH({}c1{}) PARTITIONS 2", "abs(".repeat(60), ")".repeat(60)),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH(c1{}) PARTITIONS 2", " * 2".repeat(100)),
        format!(
            "CREATE TABLE t (c1 int) PARTITION BY HASH({}c1{}) PARTITIONS 2",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH(c1{}) PARTITIONS 2", " + 1".repeat(100_000)),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH(c1{}) PARTITIONS 2", " * 9223372036854775807".repeat(3)),
    ];
    let answers = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || cases.iter().map(|ddl| at(ddl, "1")).collect::<Vec<_>>())
        .unwrap()
        .join()
        .unwrap();
    let short: Vec<String> = answers.iter().map(|a| a.chars().take(120).collect()).collect();
    assert!(answers[..6].iter().all(|a| a.starts_with("unknown: cannot calculate")), "{short:?}");
    assert!(answers[6].starts_with("unknown: cannot cast"), "overflows BIGINT (and i128): {}", short[6]);
}
