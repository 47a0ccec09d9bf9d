//! The catalogue of RANGE / RANGE COLUMNS and LIST / LIST COLUMNS tables: integer, character
//! (general_ci and bin ordering), date and multi-column bounds, with and without MAXVALUE (then
//! only values below the last bound are inserted), LIST with and without `VALUES IN (DEFAULT)`
//! (then only listed values), NULL in a list.

use super::gen::{self, mix, pick, pick_text};
use super::model::{Coll, Kind};
use super::spec::{table, TableSpec};
use super::tables::{i, u, vc};

/// RANGE and RANGE COLUMNS.
pub fn range() -> Vec<TableSpec> {
    vec![
        table("range_int_max")
            .col("c1", i(32))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN (-1000000), \
                 PARTITION p1 VALUES LESS THAN (-100), PARTITION p2 VALUES LESS THAN (0), \
                 PARTITION p3 VALUES LESS THAN (1), PARTITION p4 VALUES LESS THAN (100), \
                 PARTITION p5 VALUES LESS THAN (5000), PARTITION p6 VALUES LESS THAN (1000000), \
                 PARTITION p7 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("range_bigint_nomax")
            .col_gen("c1", i(64), mix(30, pick(&["-100", "-101", "0", "99", "100", "999", "9999"]), gen::ints(-20000, 9999, 3)))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN (-100), PARTITION p1 VALUES LESS THAN (0), \
                 PARTITION p2 VALUES LESS THAN (100), PARTITION p3 VALUES LESS THAN (1000), \
                 PARTITION p4 VALUES LESS THAN (10000))",
            )
            .build(),
        table("range_ubigint_max")
            .col("c1", u(64))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (1000), \
                 PARTITION p2 VALUES LESS THAN (9223372036854775808), \
                 PARTITION p3 VALUES LESS THAN (18446744073709551615), PARTITION p4 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("range_smallint_names")
            .col_with("c1", i(16), false, Some(mix(30, pick(&["-32768", "-30001", "-30000", "-2", "-1", "0", "32766"]), gen::ints(-32768, 32766, 0))))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(c1) (PARTITION pNeg VALUES LESS THAN (-30000), \
                 PARTITION p_minus VALUES LESS THAN (-1), PARTITION P_Zero VALUES LESS THAN (0), \
                 PARTITION pREST VALUES LESS THAN (32767))",
            )
            .build(),
        table("rangec_int")
            .col("c1", i(32))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN (0), \
                 PARTITION p1 VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN (100), \
                 PARTITION p3 VALUES LESS THAN (MAXVALUE))",
            )
            .build(),
        table("rangec_varchar_ci")
            .col_gen(
                "c1",
                vc(100, Coll::GeneralCi),
                mix(30, pick_text(&["", " ", "ab", "AB", "Ab ", "b", "B", "éz", "EZ", "m", "M", "z", "Z", "中"], 0), gen::any(vc(100, Coll::GeneralCi), true, 0)),
            )
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN (''), \
                 PARTITION p1 VALUES LESS THAN ('Ab'), PARTITION p2 VALUES LESS THAN ('b'), \
                 PARTITION p3 VALUES LESS THAN ('éz'), PARTITION p4 VALUES LESS THAN ('M'), \
                 PARTITION p5 VALUES LESS THAN ('z'), PARTITION p6 VALUES LESS THAN ('中'), \
                 PARTITION p7 VALUES LESS THAN (MAXVALUE))",
            )
            .build(),
        table("rangec_varchar_bin")
            .col_gen(
                "c1",
                vc(50, Coll::Bin),
                mix(30, pick_text(&["A", "A ", "a", "a  ", "é", "中", "@", ""], 0), gen::any(vc(50, Coll::Bin), true, 0)),
            )
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN ('A'), \
                 PARTITION p1 VALUES LESS THAN ('a'), PARTITION p2 VALUES LESS THAN ('é'), \
                 PARTITION p3 VALUES LESS THAN ('中'), PARTITION p4 VALUES LESS THAN (MAXVALUE))",
            )
            .build(),
        table("rangec_date_nomax")
            .col_gen("c1", Kind::Date, gen::filter(gen::any(Kind::Date, true, 0), |v| v != "'9999-12-31'"))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN ('1000-01-01'), \
                 PARTITION p1 VALUES LESS THAN ('1970-01-01'), PARTITION p2 VALUES LESS THAN ('2000-01-01'), \
                 PARTITION p3 VALUES LESS THAN ('2024-02-29'), PARTITION p4 VALUES LESS THAN ('9999-12-31'))",
            )
            .build(),
        table("rangec_datetime6_max")
            .col("c1", Kind::DateTime { fsp: 6 })
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN ('1970-01-01 00:00:00'), \
                 PARTITION p1 VALUES LESS THAN ('2000-01-01 12:00:00.5'), PARTITION p2 VALUES LESS THAN (MAXVALUE))",
            )
            .build(),
        table("rangec_multi_max")
            .col_gen("c1", vc(20, Coll::GeneralCi), mix(60, pick_text(&["m", "M", "m ", "x", "X", "a", "z", "é"], 5), gen::any(vc(20, Coll::GeneralCi), true, 0)))
            .col_gen("c2", i(32), mix(50, pick(&["4", "5", "6", "99", "100", "101", "NULL"]), gen::any(i(32), true, 0)))
            .key(&["c1", "c2"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1, c2) (PARTITION p0 VALUES LESS THAN ('m', 5), \
                 PARTITION p1 VALUES LESS THAN ('m', 100), PARTITION p2 VALUES LESS THAN ('x', MAXVALUE), \
                 PARTITION p3 VALUES LESS THAN (MAXVALUE, MAXVALUE))",
            )
            .build(),
        table("rangec_multi_nomax")
            .col_gen("c1", i(32), mix(30, pick(&["0", "99", "100", "-1", "NULL"]), gen::ints(-500, 999, 3)))
            .col_gen("c2", Kind::Date, mix(30, pick(&["'2000-01-01'", "'1990-01-01'", "'1999-12-31'", "NULL"]), gen::any(Kind::Date, true, 0)))
            .key(&["c1", "c2"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1, c2) (PARTITION p0 VALUES LESS THAN (0, '2000-01-01'), \
                 PARTITION p1 VALUES LESS THAN (100, '1990-01-01'), PARTITION p2 VALUES LESS THAN (1000, '1970-01-01'))",
            )
            .build(),
    ]
}

/// LIST and LIST COLUMNS.
pub fn list() -> Vec<TableSpec> {
    let ci = vc(30, Coll::GeneralCi);
    vec![
        table("list_int_default")
            .col_gen("c1", i(32), mix(60, pick(&["1", "2", "3", "-1", "-2147483648", "100", "2147483647", "0", "NULL"]), gen::any(i(32), true, 0)))
            .key(&["c1"])
            .part(
                "PARTITION BY LIST(c1) (PARTITION p0 VALUES IN (1, 2, 3), PARTITION p1 VALUES IN (-1, -2147483648), \
                 PARTITION p2 VALUES IN (100, 2147483647), PARTITION p3 VALUES IN (0), PARTITION pd VALUES IN (DEFAULT))",
            )
            .build(),
        table("list_tinyint_null")
            .col_gen("c1", i(8), pick(&["NULL", "0", "1", "3", "5", "7", "-128", "127", "2", "4", "6"]))
            .key(&["c1"])
            .part(
                "PARTITION BY LIST(c1) (PARTITION p0 VALUES IN (NULL, 0), PARTITION p1 VALUES IN (1, 3, 5, 7), \
                 PARTITION p2 VALUES IN (-128, 127), PARTITION p3 VALUES IN (2, 4, 6))",
            )
            .build(),
        table("list_ubigint_default")
            .col_gen("c1", u(64), mix(50, pick(&["18446744073709551615", "0", "9223372036854775808", "NULL"]), gen::any(u(64), true, 0)))
            .key(&["c1"])
            .part(
                "PARTITION BY LIST(c1) (PARTITION p0 VALUES IN (18446744073709551615, 0), \
                 PARTITION p1 VALUES IN (9223372036854775808), PARTITION pd VALUES IN (DEFAULT))",
            )
            .build(),
        table("listc_varchar_ci_default")
            .col_gen(
                "c1",
                ci,
                mix(
                    60,
                    pick_text(&["a", "A", "b ", "B", "e", "é", "É", "E ", "x y", "X Y  ", "中文", "😀", "🚀", "", " "], 5),
                    gen::any(ci, true, 0),
                ),
            )
            .key(&["c1"])
            .part(
                "PARTITION BY LIST COLUMNS(c1) (PARTITION p0 VALUES IN ('a', 'b'), PARTITION p1 VALUES IN ('É', 'x y'), \
                 PARTITION p2 VALUES IN ('中文', '😀'), PARTITION p3 VALUES IN ('', NULL), PARTITION pd VALUES IN (DEFAULT))",
            )
            .build(),
        table("listc_varchar_bin_nodefault")
            .col_gen("c1", vc(30, Coll::Bin), pick_text(&["a", "A", "a ", "A  ", "é", "e", "é ", "", "  ", "zz", "zz "], 5))
            .key(&["c1"])
            .part(
                "PARTITION BY LIST COLUMNS(c1) (PARTITION p0 VALUES IN ('a', 'A'), PARTITION p1 VALUES IN ('é', 'e'), \
                 PARTITION p2 VALUES IN ('', 'zz'), PARTITION p3 VALUES IN (NULL))",
            )
            .build(),
        table("listc_multi_default")
            .col_gen("c1", i(32), pick(&["1", "2", "3", "NULL"]))
            .col_gen("c2", vc(10, Coll::GeneralCi), pick_text(&["a", "A", "b", "c", "a "], 15))
            .key(&["c1", "c2"])
            .part(
                "PARTITION BY LIST COLUMNS(c1, c2) (PARTITION p0 VALUES IN ((1, 'a'), (1, 'b')), \
                 PARTITION p1 VALUES IN ((2, 'a'), (NULL, 'a')), PARTITION p2 VALUES IN ((1, NULL)), \
                 PARTITION pd VALUES IN (DEFAULT))",
            )
            .build(),
        table("listc_date_nodefault")
            .col_gen("c1", Kind::Date, pick(&["'2024-01-01'", "'2024-1-2'", "20240102", "'0000-00-00'", "'1970-01-01'", "'9999-12-31'", "NULL"]))
            .key(&["c1"])
            .part(
                "PARTITION BY LIST COLUMNS(c1) (PARTITION p0 VALUES IN ('2024-01-01', '2024-01-02'), \
                 PARTITION p1 VALUES IN ('0000-00-00', '1970-01-01'), PARTITION p2 VALUES IN ('9999-12-31', NULL))",
            )
            .build(),
    ]
}
