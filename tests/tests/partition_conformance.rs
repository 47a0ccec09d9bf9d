//! Partition placement conformance against the real OceanBase kernel (seekdb): every table kind
//! (HASH, KEY per key type, multi-column KEY, `KEY()`, RANGE / RANGE COLUMNS, LIST / LIST COLUMNS,
//! two-level combinations, template and non-template), ≥ 1,000 generated rows each; the partition
//! the kernel stored each row in must be the one `gateway locate --batch` computes. Also: the
//! kernel's value conversions (literals located as inserted), partition expressions at both levels
//! and range predicates on RANGE tables (`gateway locate --sql` against the kernel's `EXPLAIN`
//! pruning and `PARTITION (pN)` counts). Per-class totals are printed as `class …` lines.
//!
//! One kernel instance serves all tests of this file (started by the first, ~3 s). Needs root and
//! the seekdb binary from `scripts/setup.sh`; otherwise each test prints `SKIP: …` and returns.
//! Run: `cargo test -p gateway-tests --test partition_conformance -- --nocapture` (per-table
//! summary lines on stderr). Knobs: see `gateway_tests::conformance`.

use gateway_tests::conformance::{ranges, run_group, tables, tables_conv, tables_expr, tables_rl, tables_sub};

#[test]
fn hash_int() {
    run_group("hash", tables::hash());
}

#[test]
fn key_numeric() {
    run_group("key_numeric", tables::key_numeric());
}

#[test]
fn key_temporal() {
    run_group("key_temporal", tables::key_temporal());
}

#[test]
fn key_text() {
    run_group("key_text", tables::key_text());
}

#[test]
fn key_multi_column_and_primary_key() {
    run_group("key_multi", tables::key_multi());
}

#[test]
fn range_and_range_columns() {
    run_group("range", tables_rl::range());
}

#[test]
fn list_and_list_columns() {
    run_group("list", tables_rl::list());
}

#[test]
fn subpartitioned() {
    run_group("subpartitioned", tables_sub::subpartitioned());
}

#[test]
fn value_conversions() {
    run_group("conversions", tables_conv::conversions());
}

#[test]
fn partition_expressions() {
    run_group("expressions", tables_expr::expressions());
}

#[test]
fn range_predicates() {
    ranges::run_ranges("range_predicates", ranges::tables());
}
