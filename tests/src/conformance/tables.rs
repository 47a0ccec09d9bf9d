//! The catalogue of one-level HASH and KEY tables: HASH on every integer type with several
//! partition counts (non-powers of two included), KEY on each key type of docs/partition.md §4,
//! multi-column KEY in declared and reversed order, and `KEY()` on the primary key.

use super::gen;
use super::model::{Coll, Kind};
use super::spec::{table, TableSpec};

/// Signed integer of `bits`.
pub fn i(bits: u32) -> Kind {
    Kind::Int { bits, unsigned: false }
}
/// Unsigned integer of `bits`.
pub fn u(bits: u32) -> Kind {
    Kind::Int { bits, unsigned: true }
}
/// VARCHAR(n) with a collation.
pub fn vc(n: u32, coll: Coll) -> Kind {
    Kind::VarChar { n, coll }
}
/// CHAR(n) with a collation.
pub fn ch(n: u32, coll: Coll) -> Kind {
    Kind::Char { n, coll }
}
/// DECIMAL(p, s).
pub fn dec(p: u32, s: u32) -> Kind {
    Kind::Decimal { p, s }
}

/// HASH on integer columns.
pub fn hash() -> Vec<TableSpec> {
    let cases = [
        ("hash_int_p5", i(32), 5),
        ("hash_int_p7", i(32), 7),
        ("hash_int_p8", i(32), 8),
        ("hash_int_p13", i(32), 13),
        ("hash_bigint_p13", i(64), 13),
        ("hash_bigint_p16", i(64), 16),
        ("hash_ubigint_p7", u(64), 7),
        ("hash_ubigint_p8", u(64), 8),
        ("hash_tinyint_p3", i(8), 3),
        ("hash_utinyint_p4", u(8), 4),
        ("hash_smallint_p9", i(16), 9),
        ("hash_usmallint_p5", u(16), 5),
        ("hash_mediumint_p11", i(24), 11),
        ("hash_umediumint_p2", u(24), 2),
        ("hash_uint_p6", u(32), 6),
    ];
    let mut v: Vec<TableSpec> = cases
        .iter()
        .map(|&(name, kind, n)| {
            table(name)
                .col("c1", kind)
                .col("note", vc(30, Coll::GeneralCi))
                .key(&["c1"])
                .part(&format!("PARTITION BY HASH(c1) PARTITIONS {n}"))
                .build()
        })
        .collect();
    v.push(table("hash_int_default").col("c1", i(32)).key(&["c1"]).part("PARTITION BY HASH(c1)").build());
    v.push(
        table("hash_bigint_nn_p10")
            .col("other", i(64))
            .col_nn("c1", i(64))
            .key(&["c1"])
            .part("PARTITION BY HASH(`c1`) PARTITIONS 10")
            .build(),
    );
    v
}

fn key_single(name: &str, kind: Kind, parts: u32, tz: Option<&str>) -> TableSpec {
    let mut b = table(name).col("c1", kind).col("note", i(32)).key(&["c1"]);
    if let Some(tz) = tz {
        b = b.tz(tz);
    }
    b.part(&format!("PARTITION BY KEY(c1) PARTITIONS {parts}")).build()
}

/// KEY on one numeric column (integers, FLOAT, DOUBLE, DECIMAL).
pub fn key_numeric() -> Vec<TableSpec> {
    let cases = [
        ("key_tinyint", i(8), 7),
        ("key_utinyint", u(8), 16),
        ("key_smallint", i(16), 13),
        ("key_usmallint", u(16), 5),
        ("key_mediumint", i(24), 8),
        ("key_umediumint", u(24), 3),
        ("key_int", i(32), 11),
        ("key_uint", u(32), 4),
        ("key_bigint", i(64), 9),
        ("key_ubigint", u(64), 6),
        ("key_float", Kind::Float, 10),
        ("key_double", Kind::Double, 12),
        ("key_dec10_2", dec(10, 2), 14),
        ("key_dec30_10", dec(30, 10), 7),
        ("key_dec65_30", dec(65, 30), 15),
        ("key_dec18_0", dec(18, 0), 17),
    ];
    let mut v: Vec<TableSpec> = cases.iter().map(|&(n, k, p)| key_single(n, k, p, None)).collect();
    v.push(table("key_int_default").col("c1", i(32)).key(&["c1"]).part("PARTITION BY KEY(c1)").build());
    v
}

/// KEY on one temporal column.
pub fn key_temporal() -> Vec<TableSpec> {
    vec![
        key_single("key_date", Kind::Date, 16, None),
        key_single("key_datetime", Kind::DateTime { fsp: 0 }, 13, None),
        key_single("key_datetime3", Kind::DateTime { fsp: 3 }, 7, None),
        key_single("key_datetime6", Kind::DateTime { fsp: 6 }, 11, None),
        key_single("key_timestamp", Kind::Timestamp, 16, Some("+08:00")),
        key_single("key_timestamp_m0330", Kind::Timestamp, 13, Some("-03:30")),
        key_single("key_time", Kind::Time, 5, None),
        key_single("key_year", Kind::Year, 9, None),
    ]
}

/// KEY on one character or binary column (general_ci, utf8mb4_bin, binary).
pub fn key_text() -> Vec<TableSpec> {
    vec![
        key_single("key_char_ci", ch(20, Coll::GeneralCi), 16, None),
        key_single("key_varchar_ci", vc(200, Coll::GeneralCi), 13, None),
        key_single("key_varchar_ci_p7", vc(100, Coll::GeneralCi), 7, None),
        key_single("key_char_bin", ch(30, Coll::Bin), 11, None),
        key_single("key_varchar_bin", vc(200, Coll::Bin), 5, None),
        key_single("key_binary", Kind::Binary { n: 16 }, 16, None),
        key_single("key_binary1", Kind::Binary { n: 1 }, 3, None),
        key_single("key_varbinary", Kind::VarBinary { n: 200 }, 13, None),
        key_single("key_varbinary_p16", Kind::VarBinary { n: 32 }, 16, None),
    ]
}

/// Multi-column KEY (mixed types, order-sensitive) and `KEY()` on the primary key.
pub fn key_multi() -> Vec<TableSpec> {
    vec![
        table("key_int_varchar")
            .col("c1", i(32))
            .col("c2", vc(100, Coll::GeneralCi))
            .key(&["c1", "c2"])
            .part("PARTITION BY KEY(c1, c2) PARTITIONS 9")
            .build(),
        table("key_reversed")
            .col("c1", i(32))
            .col("c2", vc(40, Coll::Bin))
            .key(&["c2", "c1"])
            .part("PARTITION BY KEY(c2, c1) PARTITIONS 10")
            .build(),
        table("key_mixed3")
            .col("c1", Kind::DateTime { fsp: 6 })
            .col("c2", u(64))
            .col("c3", dec(10, 2))
            .key(&["c1", "c2", "c3"])
            .part("PARTITION BY KEY(c1, c2, c3) PARTITIONS 13")
            .build(),
        table("key_bin_date_char")
            .col("c1", Kind::VarBinary { n: 50 })
            .col("c2", Kind::Date)
            .col("c3", ch(10, Coll::Bin))
            .key(&["c1", "c2", "c3"])
            .part("PARTITION BY KEY(c1, c2, c3) PARTITIONS 6")
            .build(),
        table("key_ts_time_year_double")
            .tz("+08:00")
            .col("c1", Kind::Timestamp)
            .col("c2", Kind::Time)
            .col("c3", Kind::Year)
            .col("c4", Kind::Double)
            .key(&["c1", "c2", "c3", "c4"])
            .part("PARTITION BY KEY(c1, c2, c3, c4) PARTITIONS 7")
            .build(),
        table("key_float_utinyint")
            .col("c1", Kind::Float)
            .col("c2", u(8))
            .col("c3", ch(5, Coll::GeneralCi))
            .key(&["c2", "c3", "c1"])
            .part("PARTITION BY KEY(c2, c3, c1) PARTITIONS 5")
            .build(),
        table("keypk_bigint")
            .col_with("k", i(64), false, Some(gen::unique_int(i(64))))
            .col("v", vc(20, Coll::GeneralCi))
            .pk("k")
            .key(&["k"])
            .part("PARTITION BY KEY() PARTITIONS 8")
            .build(),
        table("keypk_composite")
            .col_with("k2", i(32), false, Some(gen::unique_int(i(32))))
            .col_nn("k1", vc(64, Coll::GeneralCi))
            .col("v", i(32))
            .pk("k1, k2")
            .key(&["k1", "k2"])
            .part("PARTITION BY KEY() PARTITIONS 7")
            .build(),
        // Same columns with the primary key in table column order.
        table("keypk_composite_colorder")
            .col_nn("k1", vc(64, Coll::GeneralCi))
            .col_with("k2", i(32), false, Some(gen::unique_int(i(32))))
            .col("v", i(32))
            .pk("k1, k2")
            .key(&["k1", "k2"])
            .part("PARTITION BY KEY() PARTITIONS 7")
            .build(),
    ]
}
