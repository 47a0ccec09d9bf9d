//! Partition calculation from structured input: a table (column types, collations, one or two
//! levels of HASH / KEY / RANGE / LIST partitions with bounds) built with `TableScheme::new`, key
//! values cast to every column (`partition::cast`) and rows located (`partition::locate`).
#![no_main]

use arbitrary::Arbitrary;
use gateway::partition::cast::cast;
use gateway::partition::locate::compare;
use gateway::partition::{
    locate, locate_traced, BoundSpec, CastContext, Column, ColumnType, KeyValue, Level, PartExpr, PartFunc, Partition,
    SubPartition, TableScheme,
};
use libfuzzer_sys::fuzz_target;

const COLLATIONS: [&str; 4] = ["utf8mb4_general_ci", "utf8mb4_bin", "binary", "gbk_chinese_ci"];
const FUNCS: [PartFunc; 7] = [
    PartFunc::Hash,
    PartFunc::Key,
    PartFunc::KeyImplicit,
    PartFunc::Range,
    PartFunc::RangeColumns,
    PartFunc::List,
    PartFunc::ListColumns,
];

#[derive(Arbitrary, Debug)]
enum Ty {
    Int { bytes: u8, unsigned: bool },
    Float,
    Double,
    Decimal { precision: u8, scale: u8 },
    Date,
    DateTime { fsp: u8 },
    Timestamp { fsp: u8 },
    Time { fsp: u8 },
    Year,
    Char { len: u8 },
    VarChar { len: u16 },
    Binary { len: u8 },
    VarBinary { len: u16 },
    Other,
}

#[derive(Arbitrary, Debug)]
enum Val {
    Null,
    Int(i64),
    UInt(u64),
    Decimal(String),
    Float(f64),
    Str(Vec<u8>, Option<bool>),
    Hex(Vec<u8>),
    Text(String),
}

#[derive(Arbitrary, Debug)]
struct Lvl {
    func: u8,
    /// Column indexes (mod the column count); empty is `KEY()`.
    cols: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
enum Bnd {
    None,
    LessThan(Vec<Option<Val>>),
    In(Vec<Vec<Val>>),
    Default,
}

#[derive(Arbitrary, Debug)]
struct Input {
    columns: Vec<(Ty, u8)>,
    primary_key: Vec<u8>,
    level1: Lvl,
    level2: Option<Lvl>,
    partitions: Vec<(Bnd, Vec<Bnd>)>,
    rows: Vec<Vec<Val>>,
    tz_offset_secs: i32,
}

fuzz_target!(|input: Input| {
    if input.columns.is_empty() || input.columns.len() > 8 || input.partitions.len() > 64 {
        return;
    }
    let columns: Vec<Column> = input.columns.iter().enumerate().map(|(i, (t, c))| column(i, t, *c)).collect();
    let name = |i: &u8| columns[usize::from(*i) % columns.len()].name.clone();
    let level = |l: &Lvl| Level {
        func: FUNCS[usize::from(l.func) % FUNCS.len()],
        expr: PartExpr::Columns(l.cols.iter().take(4).map(name).collect()),
    };
    let partitions = input
        .partitions
        .iter()
        .enumerate()
        .map(|(i, (b, subs))| Partition {
            name: format!("p{i}").into(),
            bound: bound(b),
            tablet_id: Some(1000 + i as u64),
            subs: subs
                .iter()
                .take(8)
                .enumerate()
                .map(|(j, s)| SubPartition { name: format!("p{i}sp{j}").into(), bound: bound(s), tablet_id: None })
                .collect(),
        })
        .collect();
    let pk = input.primary_key.iter().take(4).map(name).collect();
    let scheme = TableScheme::new(
        "t".into(),
        columns.clone(),
        pk,
        level(&input.level1),
        input.level2.as_ref().map(level),
        partitions,
    );
    let ctx = CastContext { tz_offset_secs: input.tz_offset_secs % 86_400 };
    let _ = scheme.key_columns();
    for row in input.rows.iter().take(8) {
        let values: Vec<KeyValue> = row.iter().take(8).map(value).collect();
        for v in &values {
            for col in &columns {
                if let Ok(d) = cast(v, col, &ctx) {
                    let again = compare(col, &d, &d);
                    assert!(
                        again.map_or(true, |o| o.is_eq()),
                        "a cast value does not equal itself: {d} in {}",
                        col.name
                    );
                }
            }
        }
        let plain = locate(&scheme, &values, &ctx);
        let traced = locate_traced(&scheme, &values, &ctx, &mut Vec::new());
        assert_eq!(plain, traced, "locate and locate_traced disagree");
    }
});

fn column(i: usize, t: &Ty, collation: u8) -> Column {
    let ty = match *t {
        Ty::Int { bytes, unsigned } => ColumnType::Int { bytes: [1, 2, 3, 4, 8][usize::from(bytes) % 5], unsigned },
        Ty::Float => ColumnType::Float,
        Ty::Double => ColumnType::Double,
        Ty::Decimal { precision, scale } => ColumnType::Decimal { precision, scale },
        Ty::Date => ColumnType::Date,
        Ty::DateTime { fsp } => ColumnType::DateTime { fsp },
        Ty::Timestamp { fsp } => ColumnType::Timestamp { fsp },
        Ty::Time { fsp } => ColumnType::Time { fsp },
        Ty::Year => ColumnType::Year,
        Ty::Char { len } => ColumnType::Char { len: u32::from(len) },
        Ty::VarChar { len } => ColumnType::VarChar { len: u32::from(len) },
        Ty::Binary { len } => ColumnType::Binary { len: u32::from(len) },
        Ty::VarBinary { len } => ColumnType::VarBinary { len: u32::from(len) },
        Ty::Other => ColumnType::Other("json".into()),
    };
    let binary = matches!(ty, ColumnType::Binary { .. } | ColumnType::VarBinary { .. });
    let collation = if binary { "binary" } else { COLLATIONS[usize::from(collation) % COLLATIONS.len()] };
    Column { name: format!("c{i}"), ty, collation: collation.into(), generated: false }
}

fn bound(b: &Bnd) -> BoundSpec {
    match b {
        Bnd::None => BoundSpec::None,
        Bnd::LessThan(v) => BoundSpec::LessThan(v.iter().take(4).map(|v| v.as_ref().map(value)).collect()),
        Bnd::In(rows) => BoundSpec::In(rows.iter().take(8).map(|r| r.iter().take(4).map(value).collect()).collect()),
        Bnd::Default => BoundSpec::Default,
    }
}

fn value(v: &Val) -> KeyValue {
    match v {
        Val::Null => KeyValue::Null,
        Val::Int(i) => KeyValue::Int(*i),
        Val::UInt(u) => KeyValue::UInt(*u),
        Val::Decimal(d) => KeyValue::Decimal(d.clone()),
        Val::Float(f) => KeyValue::Float(*f),
        Val::Str(b, cs) => KeyValue::Str {
            bytes: b.clone(),
            charset: cs.map(|bin| if bin { "binary".to_string() } else { "utf8mb4".to_string() }),
        },
        Val::Hex(b) => KeyValue::Hex(b.clone()),
        Val::Text(t) => KeyValue::str(t),
    }
}
