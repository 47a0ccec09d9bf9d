//! The catalogue of two-level tables: RANGE+HASH, RANGE+KEY, LIST+KEY, HASH+HASH, KEY+KEY,
//! RANGE COLUMNS+RANGE, RANGE+LIST COLUMNS, HASH+RANGE, KEY+LIST, each in the template form
//! (`SUBPARTITIONS n` or `SUBPARTITION TEMPLATE`) and most in the non-template form (per-partition
//! sub-partition lists of different lengths and names).

use super::gen::{self, mix, pick, pick_text};
use super::model::{Coll, Kind};
use super::spec::{table, TableSpec};
use super::tables::{ch, dec, i, u, vc};

/// Two-level tables.
pub fn subpartitioned() -> Vec<TableSpec> {
    let a_ranges = mix(20, pick(&["-101", "-100", "-1", "0", "999", "1000", "NULL"]), gen::any(i(32), true, 0));
    vec![
        table("sub_range_hash_tpl")
            .col_gen("a", i(32), a_ranges)
            .col("b", i(32))
            .key(&["a", "b"])
            .part(
                "PARTITION BY RANGE(a) SUBPARTITION BY HASH(b) SUBPARTITIONS 5 \
                 (PARTITION p0 VALUES LESS THAN (-100), PARTITION p1 VALUES LESS THAN (0), \
                 PARTITION p2 VALUES LESS THAN (1000), PARTITION p3 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("sub_range_hash_ntpl")
            .col("a", i(32))
            .col("b", i(64))
            .key(&["a", "b"])
            .part(
                "PARTITION BY RANGE(a) SUBPARTITION BY HASH(b) (\
                 PARTITION p0 VALUES LESS THAN (0) (SUBPARTITION p0a, SUBPARTITION p0b, SUBPARTITION p0c), \
                 PARTITION p1 VALUES LESS THAN (100) (SUBPARTITION p1a), \
                 PARTITION p2 VALUES LESS THAN MAXVALUE (SUBPARTITION p2a, SUBPARTITION p2b, SUBPARTITION p2c, \
                 SUBPARTITION p2d, SUBPARTITION p2e, SUBPARTITION p2f, SUBPARTITION p2g))",
            )
            .build(),
        table("sub_range_key_tpl")
            .col("a", i(32))
            .col("b", vc(50, Coll::GeneralCi))
            .key(&["a", "b"])
            .part(
                "PARTITION BY RANGE(a) SUBPARTITION BY KEY(b) SUBPARTITION TEMPLATE \
                 (SUBPARTITION sa, SUBPARTITION sb, SUBPARTITION sc) \
                 (PARTITION p0 VALUES LESS THAN (0), PARTITION p1 VALUES LESS THAN (1000), \
                 PARTITION p2 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("sub_range_key_ntpl")
            .col("a", i(64))
            .col("b", Kind::DateTime { fsp: 6 })
            .key(&["a", "b"])
            .part(
                "PARTITION BY RANGE(a) SUBPARTITION BY KEY(b) (\
                 PARTITION p0 VALUES LESS THAN (-1000) (SUBPARTITION x0, SUBPARTITION x1), \
                 PARTITION p1 VALUES LESS THAN (1000) (SUBPARTITION y0, SUBPARTITION y1, SUBPARTITION y2, \
                 SUBPARTITION y3, SUBPARTITION y4), \
                 PARTITION p2 VALUES LESS THAN MAXVALUE (SUBPARTITION z0, SUBPARTITION z1, SUBPARTITION z2))",
            )
            .build(),
        table("sub_list_key_tpl")
            .col_gen("a", i(32), mix(60, pick(&["1", "2", "3", "4", "NULL"]), gen::any(i(32), true, 0)))
            .col("b", Kind::Date)
            .key(&["a", "b"])
            .part(
                "PARTITION BY LIST(a) SUBPARTITION BY KEY(b) SUBPARTITIONS 3 \
                 (PARTITION p0 VALUES IN (1, 2, 3), PARTITION p1 VALUES IN (NULL, 4), PARTITION pd VALUES IN (DEFAULT))",
            )
            .build(),
        table("sub_listc_key_ntpl")
            .col_gen("a", vc(10, Coll::GeneralCi), mix(50, pick_text(&["x", "X", "y ", "Y"], 5), gen::any(vc(10, Coll::GeneralCi), true, 0)))
            .col("b", i(32))
            .col("c", Kind::VarBinary { n: 20 })
            .key(&["a", "b", "c"])
            .part(
                "PARTITION BY LIST COLUMNS(a) SUBPARTITION BY KEY(b, c) (\
                 PARTITION p0 VALUES IN ('x', 'y') (SUBPARTITION s0, SUBPARTITION s1), \
                 PARTITION p1 VALUES IN (DEFAULT) (SUBPARTITION s2, SUBPARTITION s3, SUBPARTITION s4))",
            )
            .build(),
        table("sub_hash_hash_tpl")
            .col("a", i(64))
            .col("b", i(32))
            .key(&["a", "b"])
            .part("PARTITION BY HASH(a) SUBPARTITION BY HASH(b) SUBPARTITIONS 5 PARTITIONS 3")
            .build(),
        table("sub_hash_hash_ntpl")
            .col("a", u(32))
            .col("b", i(16))
            .key(&["a", "b"])
            .part(
                "PARTITION BY HASH(a) SUBPARTITION BY HASH(b) (\
                 PARTITION p0 (SUBPARTITION s0, SUBPARTITION s1), PARTITION p1 (SUBPARTITION s2), \
                 PARTITION p2 (SUBPARTITION s3, SUBPARTITION s4, SUBPARTITION s5, SUBPARTITION s6))",
            )
            .build(),
        table("sub_key_key_tpl")
            .col("a", vc(40, Coll::GeneralCi))
            .col("b", u(64))
            .key(&["a", "b"])
            .part("PARTITION BY KEY(a) SUBPARTITION BY KEY(b) SUBPARTITIONS 3 PARTITIONS 4")
            .build(),
        table("sub_key_key_overlap")
            .col("a", i(32))
            .col("b", ch(8, Coll::Bin))
            .col("c", dec(30, 10))
            .key(&["a", "b", "c"])
            .part("PARTITION BY KEY(a, b) SUBPARTITION BY KEY(b, c) SUBPARTITIONS 3 PARTITIONS 5")
            .build(),
        table("sub_key_key_ntpl")
            .tz("+08:00")
            .col("a", Kind::Date)
            .col("b", Kind::Timestamp)
            .key(&["a", "b"])
            .part(
                "PARTITION BY KEY(a) SUBPARTITION BY KEY(b) (\
                 PARTITION p0 (SUBPARTITION s0, SUBPARTITION s1, SUBPARTITION s2), \
                 PARTITION p1 (SUBPARTITION s3), PARTITION p2 (SUBPARTITION s4, SUBPARTITION s5))",
            )
            .build(),
        table("sub_rangec_range_tpl")
            .col("d", Kind::Date)
            .col_gen("x", i(32), mix(30, pick(&["-1", "0", "99", "100", "NULL"]), gen::any(i(32), true, 0)))
            .key(&["d", "x"])
            .part(
                "PARTITION BY RANGE COLUMNS(d) SUBPARTITION BY RANGE(x) SUBPARTITION TEMPLATE \
                 (SUBPARTITION s0 VALUES LESS THAN (0), SUBPARTITION s1 VALUES LESS THAN (100), \
                 SUBPARTITION s2 VALUES LESS THAN (MAXVALUE)) \
                 (PARTITION p0 VALUES LESS THAN ('2000-01-01'), PARTITION p1 VALUES LESS THAN ('2024-01-01'), \
                 PARTITION p2 VALUES LESS THAN (MAXVALUE))",
            )
            .build(),
        table("sub_rangec_range_ntpl")
            .col("d", Kind::Date)
            .col_gen("x", i(32), mix(30, pick(&["-11", "-10", "4", "5", "9", "10", "NULL"]), gen::any(i(32), true, 0)))
            .key(&["d", "x"])
            .part(
                "PARTITION BY RANGE COLUMNS(d) SUBPARTITION BY RANGE(x) (\
                 PARTITION p0 VALUES LESS THAN ('2000-01-01') (SUBPARTITION a0 VALUES LESS THAN (5), \
                 SUBPARTITION a1 VALUES LESS THAN (MAXVALUE)), \
                 PARTITION p1 VALUES LESS THAN (MAXVALUE) (SUBPARTITION b0 VALUES LESS THAN (-10), \
                 SUBPARTITION b1 VALUES LESS THAN (10), SUBPARTITION b2 VALUES LESS THAN (MAXVALUE)))",
            )
            .build(),
        table("sub_range_listc_tpl")
            .col("a", i(32))
            .col_gen("b", vc(10, Coll::GeneralCi), mix(60, pick_text(&["x", "X", "y ", "", " "], 10), gen::any(vc(10, Coll::GeneralCi), true, 0)))
            .key(&["a", "b"])
            .part(
                "PARTITION BY RANGE(a) SUBPARTITION BY LIST COLUMNS(b) SUBPARTITION TEMPLATE \
                 (SUBPARTITION sx VALUES IN ('x', 'y'), SUBPARTITION sn VALUES IN (NULL, ''), \
                 SUBPARTITION sd VALUES IN (DEFAULT)) \
                 (PARTITION p0 VALUES LESS THAN (0), PARTITION p1 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("sub_hash_range_tpl")
            .col("a", i(32))
            .col("b", i(32))
            .key(&["a", "b"])
            .part(
                "PARTITION BY HASH(a) SUBPARTITION BY RANGE(b) SUBPARTITION TEMPLATE \
                 (SUBPARTITION s0 VALUES LESS THAN (0), SUBPARTITION s1 VALUES LESS THAN MAXVALUE) PARTITIONS 3",
            )
            .build(),
        table("sub_key_list_tpl")
            .col("a", vc(20, Coll::GeneralCi))
            .col_gen("b", i(32), mix(70, pick(&["1", "2", "3", "NULL"]), gen::any(i(32), true, 0)))
            .key(&["a", "b"])
            .part(
                "PARTITION BY KEY(a) SUBPARTITION BY LIST(b) SUBPARTITION TEMPLATE \
                 (SUBPARTITION s0 VALUES IN (1, 2), SUBPARTITION s1 VALUES IN (NULL, 3), \
                 SUBPARTITION s2 VALUES IN (DEFAULT)) PARTITIONS 4",
            )
            .build(),
    ]
}
