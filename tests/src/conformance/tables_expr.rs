//! Partition expressions (issue 14): arithmetic (`+ - * DIV MOD %`, unary minus), `ABS`, `MOD()`,
//! `YEAR`, `MONTH`, `DAY`/`DAYOFMONTH`, `TO_DAYS`, `TO_SECONDS`, `UNIX_TIMESTAMP` and the other
//! date parts the kernel accepts, under HASH, RANGE and LIST, at the first and the second level
//! (template and non-template). Key columns are listed in order of first appearance in the
//! expression(s). Zero dates, NULL, negative operands and division by zero are in the data.

use super::gen::{self, mix, pick};
use super::model::Kind;
use super::spec::{table, TableSpec};
use super::tables::{i, u};

fn hash(expr: &str, n: u32) -> String {
    format!("PARTITION BY HASH({expr}) PARTITIONS {n}")
}

/// HASH over expressions of integer columns.
fn hash_int() -> Vec<TableSpec> {
    let small = || {
        mix(30, pick(&["0", "-1", "1", "NULL", "-2147483648", "2147483647", "15", "-16"]), gen::ints(-5000, 5000, 3))
    };
    let cases: [(&str, &str, u32, &[&str]); 9] = [
        ("expr_hash_plus", "c1 + 1", 7, &["c1"]),
        ("expr_hash_minus_mul", "c1 * 3 - c2", 8, &["c1", "c2"]),
        ("expr_hash_div", "c1 div 3", 5, &["c1"]),
        ("expr_hash_div_zero", "c1 div c2", 6, &["c1", "c2"]),
        ("expr_hash_mod_fn", "mod(c1, 16)", 4, &["c1"]),
        ("expr_hash_percent", "c1 % 7 + c2 mod 3", 9, &["c1", "c2"]),
        ("expr_hash_abs_neg", "abs(c1) + -c2", 11, &["c1", "c2"]),
        ("expr_hash_nested", "((c1 + 2) * (c2 - 3)) div 4", 13, &["c1", "c2"]),
        ("expr_hash_two_cols", "c2 + c1", 3, &["c2", "c1"]),
    ];
    cases
        .into_iter()
        .map(|(name, expr, n, key)| {
            let mut t = table(name).col_gen("c1", i(32), small());
            t = t.col_gen("c2", i(32), mix(20, pick(&["0", "0", "1", "-1", "NULL"]), gen::ints(-300, 300, 3)));
            t.key(key).part(&hash(expr, n)).class("HASH(arithmetic)").build()
        })
        .collect()
}

/// HASH over date parts, and over unsigned arithmetic.
fn hash_dates() -> Vec<TableSpec> {
    let cases: [(&str, &str, Kind, u32); 16] = [
        ("expr_hash_extract_year_month", "extract(year_month from c1)", Kind::Date, 7),
        (
            "expr_hash_extract_parts",
            "extract(year from c1) + extract(quarter from c1) + extract(hour from c1) + extract(microsecond from c1)",
            Kind::DateTime { fsp: 6 },
            11,
        ),
        ("expr_hash_year", "year(c1)", Kind::Date, 7),
        ("expr_hash_month", "month(c1)", Kind::Date, 5),
        ("expr_hash_day", "day(c1)", Kind::Date, 8),
        ("expr_hash_dayofmonth", "dayofmonth(c1) + 100 * month(c1)", Kind::Date, 13),
        ("expr_hash_to_days", "to_days(c1)", Kind::Date, 11),
        ("expr_hash_to_days_dt", "to_days(c1)", Kind::DateTime { fsp: 0 }, 9),
        ("expr_hash_to_seconds", "to_seconds(c1)", Kind::DateTime { fsp: 0 }, 10),
        ("expr_hash_year_dt", "year(c1) * 100 + month(c1)", Kind::DateTime { fsp: 3 }, 12),
        ("expr_hash_parts", "hour(c1) + minute(c1) * 7 + second(c1) * 13", Kind::DateTime { fsp: 0 }, 17),
        ("expr_hash_calendar", "dayofyear(c1) + weekday(c1) + dayofweek(c1) + quarter(c1)", Kind::Date, 19),
        ("expr_hash_microsecond", "microsecond(c1)", Kind::DateTime { fsp: 6 }, 7),
        ("expr_hash_time_to_sec", "time_to_sec(c1)", Kind::Time, 9),
        ("expr_hash_time_parts", "hour(c1) + minute(c1) + second(c1)", Kind::Time, 8),
        ("expr_hash_unix_ts", "unix_timestamp(c1)", Kind::Timestamp, 13),
    ];
    let mut v: Vec<TableSpec> = cases
        .into_iter()
        .map(|(name, expr, kind, n)| {
            let t =
                table(name).col("c1", kind).key(&["c1"]).part(&hash(expr, n)).class("HASH(date and time functions)");
            if kind == Kind::Timestamp {
                t.tz("+08:00").build()
            } else {
                t.build()
            }
        })
        .collect();
    v.push(
        table("expr_hash_ubigint_plus")
            .col_gen("c1", u(64), gen::filter(gen::any(u(64), true, 0), |s| s != "18446744073709551615"))
            .key(&["c1"])
            .part("PARTITION BY HASH(c1 + 1) PARTITIONS 7")
            .class("HASH(arithmetic)")
            .build(),
    );
    v
}

/// RANGE and LIST over expressions.
fn range_list() -> Vec<TableSpec> {
    let months = "PARTITION BY RANGE(to_days(c1)) (PARTITION p0 VALUES LESS THAN (719528), \
                  PARTITION p2023 VALUES LESS THAN (739251), PARTITION p202401 VALUES LESS THAN (739282), \
                  PARTITION p202402 VALUES LESS THAN (739311), PARTITION pmax VALUES LESS THAN MAXVALUE)";
    let dates = || {
        mix(
            40,
            pick(&[
                "'2023-12-31'",
                "'2024-01-01'",
                "'2024-01-31'",
                "'2024-02-01'",
                "'2024-02-29'",
                "'2024-03-01'",
                "'1970-01-01'",
                "'1969-12-31'",
                "'0000-00-00'",
                "NULL",
            ]),
            gen::any(Kind::Date, true, 0),
        )
    };
    vec![
        table("expr_range_to_days")
            .class("RANGE(expression)")
            .col_gen("c1", Kind::Date, dates())
            .key(&["c1"])
            .part(months)
            .build(),
        table("expr_range_to_days_dt")
            .class("RANGE(expression)")
            .col_gen("c1", Kind::DateTime { fsp: 0 }, mix(30, pick(&["'2024-01-31 23:59:59'", "'2024-02-01 00:00:00'", "'0000-00-00 00:00:00'", "NULL"]), gen::any(Kind::DateTime { fsp: 0 }, true, 0)))
            .key(&["c1"])
            .part(months)
            .build(),
        table("expr_range_unix_ts")
            .class("RANGE(expression)")
            .col_gen("c1", Kind::Timestamp, mix(20, pick(&["'1970-01-01 08:00:00'", "'2024-01-01 08:00:00'", "'2024-01-01 07:59:59'", "'0000-00-00 00:00:00'", "NULL"]), gen::any(Kind::Timestamp, true, 8 * 3600)))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(unix_timestamp(c1)) (PARTITION p0 VALUES LESS THAN (1), \
                 PARTITION p1 VALUES LESS THAN (1704067200), PARTITION p2 VALUES LESS THAN (1800000000), \
                 PARTITION p3 VALUES LESS THAN MAXVALUE)",
            )
            .tz("+08:00")
            .build(),
        table("expr_range_year")
            .class("RANGE(expression)")
            .col_gen("c1", Kind::Date, dates())
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(year(c1)) (PARTITION p0 VALUES LESS THAN (1), PARTITION p1 VALUES LESS THAN (1970), \
                 PARTITION p2 VALUES LESS THAN (2024), PARTITION p3 VALUES LESS THAN (2025), PARTITION p4 VALUES LESS THAN (10000))",
            )
            .build(),
        table("expr_range_extract_year_month")
            .class("RANGE(expression)")
            .col_gen("c1", Kind::DateTime { fsp: 0 }, mix(30, pick(&["'2023-12-31 23:59:59'", "'2024-01-01 00:00:00'", "'0000-00-00 00:00:00'", "NULL"]), gen::any(Kind::DateTime { fsp: 0 }, true, 0)))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(extract(year_month from c1)) (PARTITION p0 VALUES LESS THAN (197001), \
                 PARTITION p1 VALUES LESS THAN (202401), PARTITION p2 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("expr_range_div")
            .class("RANGE(expression)")
            .col_gen("c1", i(32), mix(30, pick(&["-10", "-9", "-1", "0", "9", "10", "99", "100", "NULL"]), gen::ints(-2000, 2000, 3)))
            .key(&["c1"])
            .part(
                "PARTITION BY RANGE(c1 div 10) (PARTITION p0 VALUES LESS THAN (-1), PARTITION p1 VALUES LESS THAN (0), \
                 PARTITION p2 VALUES LESS THAN (1), PARTITION p3 VALUES LESS THAN (10), PARTITION p4 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("expr_list_month")
            .class("LIST(expression)")
            .col_gen("c1", Kind::Date, dates())
            .key(&["c1"])
            .part(
                "PARTITION BY LIST(month(c1)) (PARTITION q1 VALUES IN (1, 2, 3), PARTITION q2 VALUES IN (4, 5, 6), \
                 PARTITION zero VALUES IN (0, NULL), PARTITION rest VALUES IN (DEFAULT))",
            )
            .build(),
        table("expr_list_mod")
            .class("LIST(expression)")
            .col_gen("c1", i(64), mix(20, pick(&["0", "-1", "NULL", "-9223372036854775808"]), gen::ints(-100_000, 100_000, 0)))
            .key(&["c1"])
            .part(
                "PARTITION BY LIST(mod(c1, 4)) (PARTITION pneg VALUES IN (-3, -2, -1), PARTITION pzero VALUES IN (0, NULL), \
                 PARTITION ppos VALUES IN (1, 2, 3))",
            )
            .build(),
    ]
}

/// Expressions at the second level (and at both).
fn two_levels() -> Vec<TableSpec> {
    let dates =
        || mix(30, pick(&["'2023-12-31'", "'2024-01-01'", "'0000-00-00'", "NULL"]), gen::any(Kind::Date, true, 0));
    vec![
        table("expr_sub_range_year_hash_to_days")
            .class("expressions at the sub-partition level")
            .col_gen("d", Kind::Date, dates())
            .key(&["d"])
            .part(
                "PARTITION BY RANGE(year(d)) SUBPARTITION BY HASH(to_days(d)) SUBPARTITIONS 3 \
                 (PARTITION p0 VALUES LESS THAN (2000), PARTITION p1 VALUES LESS THAN (2024), PARTITION p2 VALUES LESS THAN MAXVALUE)",
            )
            .build(),
        table("expr_sub_hash_plus_list_month")
            .class("expressions at the sub-partition level")
            .col_gen("c1", i(32), gen::ints(-1000, 1000, 5))
            .col_gen("d", Kind::Date, dates())
            .key(&["c1", "d"])
            .part(
                "PARTITION BY HASH(c1 + 1) SUBPARTITION BY LIST(month(d)) SUBPARTITION TEMPLATE \
                 (SUBPARTITION h1 VALUES IN (1, 2, 3, 4, 5, 6), SUBPARTITION h2 VALUES IN (DEFAULT)) PARTITIONS 3",
            )
            .build(),
        table("expr_sub_rangec_range_to_days_ntpl")
            .class("expressions at the sub-partition level")
            .col_gen("c1", i(32), gen::ints(-50, 150, 3))
            .col_gen("d", Kind::Date, dates())
            .key(&["c1", "d"])
            .part(
                "PARTITION BY RANGE COLUMNS(c1) SUBPARTITION BY RANGE(to_days(d)) (\
                 PARTITION p0 VALUES LESS THAN (0) (SUBPARTITION p0old VALUES LESS THAN (730000), SUBPARTITION p0new VALUES LESS THAN MAXVALUE), \
                 PARTITION p1 VALUES LESS THAN (MAXVALUE) (SUBPARTITION p1a VALUES LESS THAN (700000), \
                 SUBPARTITION p1b VALUES LESS THAN (739251), SUBPARTITION p1c VALUES LESS THAN MAXVALUE))",
            )
            .build(),
        table("expr_sub_key_hash_mod")
            .class("expressions at the sub-partition level")
            .col_gen("c1", i(32), gen::ints(-1000, 1000, 5))
            .col_gen("c2", i(64), gen::ints(-100_000, 100_000, 5))
            .key(&["c1", "c2"])
            .part("PARTITION BY KEY(c1) PARTITIONS 3 SUBPARTITION BY HASH(mod(c2, 16) * 3) SUBPARTITIONS 4")
            .build(),
        table("expr_sub_list_mod_hash_unix")
            .class("expressions at the sub-partition level")
            .col_gen("c1", i(32), gen::ints(-1000, 1000, 0))
            .col("ts", Kind::Timestamp)
            .key(&["c1", "ts"])
            .part(
                "PARTITION BY LIST(c1 % 2) SUBPARTITION BY HASH(unix_timestamp(ts)) SUBPARTITIONS 5 \
                 (PARTITION even VALUES IN (0), PARTITION odd VALUES IN (1, -1))",
            )
            .tz("-03:30")
            .build(),
    ]
}

/// Every expression table.
pub fn expressions() -> Vec<TableSpec> {
    let mut v = hash_int();
    v.extend(hash_dates());
    v.extend(range_list());
    v.extend(two_levels());
    v
}
