//! The partition-calculation sub-points of EXPLAIN ROUTE (EXPR_PARSE, RESOLVE_EXPR,
//! RESOLVE_TOKEN, CALC_PARTITION_ID), as ODP prints them under PARTITION_ID_CALC_START.

use crate::partition::statement::key_value;
use crate::partition::{KeyValue, PartExpr, PartFunc, TableScheme};
use crate::route::{FieldValue, PlanStep, Point};
use crate::sql::{Analysis, Column as SqlColumn};

/// The sub-points for the first row of key values of `a` against `scheme` (one value per key
/// column; IN alternatives and further INSERT rows are not listed).
pub fn calc_steps(scheme: &TableScheme, a: &Analysis<'_>) -> Vec<PlanStep> {
    let Ok(columns) = scheme.key_columns() else {
        return Vec::new();
    };
    let mut pairs = Vec::new();
    for &c in columns {
        let name = &scheme.columns[c].name;
        let found = a.keys.iter().find(|k| k.row == first_row(a) && names(&k.column, name, c));
        let Some(value) = found.and_then(|k| key_value(&k.value, name).ok()) else {
            return Vec::new();
        };
        pairs.push((name.as_str(), value));
    }
    let col_val: Vec<String> = pairs.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let point = |v: &[(&str, KeyValue)]| {
        let vals: Vec<String> = v.iter().map(|(_, k)| k.to_string()).collect();
        if vals.len() == 1 {
            vals[0].clone()
        } else {
            format!("({})", vals.join(", "))
        }
    };
    let mut steps = vec![
        step("EXPR_PARSE", vec![("col_val", s(&col_val.join(" and ")))], 2),
        step("RESOLVE_EXPR", vec![("part_range", s(&format!("[{0} ; {0}]", point(&pairs))))], 2),
    ];
    for (_, v) in &pairs {
        steps.push(step("RESOLVE_TOKEN", vec![("token_type", s(token_type(v))), ("token", s(&v.to_string()))], 3));
    }
    steps.push(step("CALC_PARTITION_ID", vec![("part_description", s(&describe(scheme)))], 2));
    steps
}

fn first_row(a: &Analysis<'_>) -> u32 {
    a.keys.iter().map(|k| k.row).min().unwrap_or(0)
}

fn names(c: &SqlColumn<'_>, name: &str, index: usize) -> bool {
    match c {
        SqlColumn::Position(p) => usize::from(*p) == index,
        SqlColumn::Named { name: n, .. } => n.eq_ignore_ascii_case(name),
    }
}

fn token_type(v: &KeyValue) -> &'static str {
    match v {
        KeyValue::Null => "TOKEN_NULL",
        KeyValue::Int(_) | KeyValue::UInt(_) => "TOKEN_INT_VAL",
        KeyValue::Decimal(_) | KeyValue::Float(_) => "TOKEN_NUMBER_VAL",
        KeyValue::Str { .. } => "TOKEN_STR_VAL",
        KeyValue::Hex(_) => "TOKEN_HEX_VAL",
    }
}

/// `partition by hash(c1) partitions 8 [subpartition by key(c2)]`.
fn describe(scheme: &TableScheme) -> String {
    let level = |func: PartFunc, expr: &PartExpr| {
        let f = match func {
            PartFunc::Hash => "hash",
            PartFunc::Key | PartFunc::KeyImplicit => "key",
            PartFunc::Range => "range",
            PartFunc::RangeColumns => "range columns",
            PartFunc::List => "list",
            PartFunc::ListColumns => "list columns",
        };
        let e = match expr {
            PartExpr::Columns(c) => c.join(", "),
            PartExpr::Expression(e) => e.clone(),
        };
        format!("{f}({e})")
    };
    let mut out = format!(
        "partition by {} partitions {}",
        level(scheme.level1.func, &scheme.level1.expr),
        scheme.partitions.len()
    );
    if let Some(l2) = &scheme.level2 {
        out.push_str(&format!(" subpartition by {}", level(l2.func, &l2.expr)));
    }
    out
}

fn s(v: &str) -> FieldValue {
    FieldValue::Str(v.to_string())
}

fn step(name: &'static str, fields: Vec<(&'static str, FieldValue)>, depth: usize) -> PlanStep {
    PlanStep::new(Point::Other { name, fields }).at_depth(depth)
}
