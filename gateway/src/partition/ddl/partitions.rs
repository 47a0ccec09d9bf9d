//! The `PARTITION BY …` clause: functions, counts, templates, partition and sub-partition lists.

use super::lexer::Tok;
use super::parser::Parser;
use crate::partition::scheme::{BoundSpec, Level, PartExpr, PartFunc, Partition, SubPartition};
use crate::partition::value::literal;
use crate::partition::PartitionError;

/// The parsed clause.
pub(super) struct Partitioning {
    pub level1: Level,
    pub level2: Option<Level>,
    pub partitions: Vec<Partition>,
}

/// The most (sub-)partitions one table may declare in all. Servers allow far fewer (MySQL and
/// OceanBase: 8,192 partitions); the bound keeps a hostile or corrupt definition (`PARTITIONS
/// 89551737`, a large template times a large list) from exhausting memory.
pub const MAX_PARTITIONS: u64 = 65_536;

/// A declared (sub-)partition before naming rules are applied.
struct Def {
    name: String,
    bound: BoundSpec,
    subs: Option<Vec<Def>>,
}

pub(super) fn parse_partitioning(p: &mut Parser) -> Result<Partitioning, PartitionError> {
    p.expect_word("partition")?;
    p.expect_word("by")?;
    let level1 = level(p)?;
    let (mut count, mut level2, mut sub_count, mut template, mut defs) = (None, None, None, None, None);
    while !p.at_end() {
        if p.eat_word("partitions") {
            count = Some(p.number()?);
        } else if p.eat_word("subpartitions") {
            sub_count = Some(p.number()?);
        } else if p.is_word("subpartition")
            && matches!(p.peek_at(1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("by"))
        {
            p.i += 2;
            level2 = Some(level(p)?);
        } else if p.eat_word("subpartition") {
            p.expect_word("template")?;
            template = Some(def_list(p, "subpartition")?);
        } else if p.is_punct('(') {
            defs = Some(def_list(p, "partition")?);
        } else {
            return Err(p.err("expected PARTITIONS, SUBPARTITION or a partition list"));
        }
    }
    let parts = defs.as_ref().map_or(u64::from(count.unwrap_or(1)), |d| d.len() as u64);
    let subs_each = template.as_ref().map_or(u64::from(sub_count.unwrap_or(1)), |t| t.len() as u64);
    let own_subs: u64 = defs.iter().flatten().filter_map(|d| d.subs.as_ref()).map(|s| s.len() as u64).sum();
    if parts.max(1).saturating_mul(subs_each.max(1)).max(own_subs) > MAX_PARTITIONS {
        return Err(p.err(format!("more than {MAX_PARTITIONS} partitions")));
    }
    let defs = match (defs, count) {
        (Some(d), _) => d,
        (None, n) => {
            (0..n.unwrap_or(1)).map(|i| Def { name: format!("p{i}"), bound: BoundSpec::None, subs: None }).collect()
        }
    };
    let partitions = defs
        .into_iter()
        .map(|d| {
            let subs = match (&level2, d.subs, &template) {
                (None, _, _) => Vec::new(),
                (Some(_), Some(own), _) => own.into_iter().map(|s| sub(s.name, s.bound)).collect(),
                (Some(_), None, Some(t)) => {
                    t.iter().map(|s| sub(format!("{}s{}", d.name, s.name), s.bound.clone())).collect()
                }
                (Some(_), None, None) => {
                    (0..sub_count.unwrap_or(1)).map(|k| sub(format!("{}sp{k}", d.name), BoundSpec::None)).collect()
                }
            };
            Partition { name: d.name.into(), bound: d.bound, tablet_id: None, subs }
        })
        .collect();
    Ok(Partitioning { level1, level2, partitions })
}

fn sub(name: String, bound: BoundSpec) -> SubPartition {
    SubPartition { name: name.into(), bound, tablet_id: None }
}

/// `[LINEAR] HASH (expr)`, `KEY [ALGORITHM = n] (cols)`, `RANGE [COLUMNS] (…)`, `LIST [COLUMNS] (…)`.
fn level(p: &mut Parser) -> Result<Level, PartitionError> {
    if p.is_word("linear") {
        return Err(PartitionError::Unsupported("LINEAR HASH/KEY partitioning".into()));
    }
    let func = if p.eat_word("hash") {
        PartFunc::Hash
    } else if p.eat_word("key") {
        if p.eat_word("algorithm") {
            p.expect_punct('=')?;
            p.number()?;
        }
        PartFunc::Key
    } else if p.eat_word("range") {
        if p.eat_word("columns") {
            PartFunc::RangeColumns
        } else {
            PartFunc::Range
        }
    } else if p.eat_word("list") {
        if p.eat_word("columns") {
            PartFunc::ListColumns
        } else {
            PartFunc::List
        }
    } else {
        return Err(p.err("expected HASH, KEY, RANGE or LIST"));
    };
    if !p.is_punct('(') {
        return Err(p.err("expected '(' after the partition function"));
    }
    let toks = p.group()?;
    let expr = expression(&toks);
    let func = match (&expr, func) {
        (PartExpr::Columns(c), PartFunc::Key) if c.is_empty() => PartFunc::KeyImplicit,
        (_, f) => f,
    };
    Ok(Level { func, expr })
}

/// A plain `a, b` column list, or the expression's text.
fn expression(toks: &[Tok]) -> PartExpr {
    let mut cols = Vec::new();
    let mut plain = true;
    for (k, t) in toks.iter().enumerate() {
        match (k % 2, t) {
            (0, Tok::Word(w) | Tok::Quoted(w)) => cols.push(w.clone()),
            (1, Tok::Punct(',')) => {}
            _ => plain = false,
        }
    }
    if plain && toks.len() % 2 == 1 || toks.is_empty() {
        return PartExpr::Columns(cols);
    }
    let text: Vec<String> = toks
        .iter()
        .map(|t| match t {
            Tok::Word(w) | Tok::Number(w) => w.clone(),
            Tok::Quoted(w) => format!("`{w}`"),
            Tok::Str { bytes, .. } => format!("'{}'", String::from_utf8_lossy(bytes)),
            Tok::Hex(b) => format!("X'{}'", hex::encode(b)),
            Tok::Punct(c) => c.to_string(),
        })
        .collect();
    PartExpr::Expression(text.join(" "))
}

/// `( PARTITION p … , … )` or `( SUBPARTITION s …, … )`.
fn def_list(p: &mut Parser, kw: &str) -> Result<Vec<Def>, PartitionError> {
    p.expect_punct('(')?;
    let mut out = Vec::new();
    loop {
        p.expect_word(kw)?;
        let name = p.ident()?;
        let bound = bound(p)?;
        let mut subs = None;
        while !p.is_punct(',') && !p.is_punct(')') {
            if p.at_end() {
                return Err(p.err("unterminated partition list"));
            }
            let sub_list =
                p.is_punct('(') && matches!(p.peek_at(1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("subpartition"));
            if kw == "partition" && sub_list {
                subs = Some(def_list(p, "subpartition")?);
            } else {
                p.skip_item()?;
            }
        }
        out.push(Def { name, bound, subs });
        if p.eat_punct(')') {
            return Ok(out);
        }
        p.expect_punct(',')?;
    }
}

/// `VALUES LESS THAN (…) | MAXVALUE`, `VALUES IN (…)`, `DEFAULT`, or nothing.
fn bound(p: &mut Parser) -> Result<BoundSpec, PartitionError> {
    if p.eat_word("default") {
        return Ok(BoundSpec::Default);
    }
    if !p.eat_word("values") {
        return Ok(BoundSpec::None);
    }
    if p.eat_word("less") {
        p.expect_word("than")?;
        if p.eat_word("maxvalue") {
            return Ok(BoundSpec::LessThan(vec![None]));
        }
        p.expect_punct('(')?;
        let row = value_row(p, true)?;
        return Ok(BoundSpec::LessThan(row));
    }
    p.expect_word("in")?;
    p.expect_punct('(')?;
    let mut rows = Vec::new();
    loop {
        if p.eat_word("default") {
            if !rows.is_empty() || !p.is_punct(')') {
                return Err(p.err("DEFAULT must be the only value"));
            }
            p.i += 1;
            return Ok(BoundSpec::Default);
        }
        if p.eat_punct('(') {
            let row = value_row(p, false)?;
            rows.push(row.into_iter().flatten().collect());
        } else {
            rows.push(vec![one_literal(p)?]);
        }
        if p.eat_punct(')') {
            return Ok(BoundSpec::In(rows));
        }
        p.expect_punct(',')?;
    }
}

/// Values up to and including `)`; `MAXVALUE` (when allowed) is `None`.
fn value_row(p: &mut Parser, maxvalue: bool) -> Result<Vec<Option<crate::partition::KeyValue>>, PartitionError> {
    let mut row = Vec::new();
    loop {
        if maxvalue && p.eat_word("maxvalue") {
            row.push(None);
        } else {
            row.push(Some(one_literal(p)?));
        }
        if p.eat_punct(')') {
            return Ok(row);
        }
        p.expect_punct(',')?;
    }
}

fn one_literal(p: &mut Parser) -> Result<crate::partition::KeyValue, PartitionError> {
    let (v, used) = literal(p.tokens_from(p.i)).map_err(|_| p.err("partition bound is not a literal"))?;
    p.i += used;
    Ok(v)
}
