//! A statement analysed once and kept, for every execution of a prepared statement.
//!
//! An analysis borrows its names and values from the text it read ([`Analysis`]'s lifetime).
//! A prepared statement is executed many times with the same text, so its registry entry keeps
//! an owned copy of the analysis here, and each EXECUTE takes a borrowed view of it with its
//! values bound ([`Analysed::bind`]) instead of lexing and parsing the text again. The view
//! allocates nothing. The text is read in the default SQL mode ([`super::in_default_mode`]),
//! so the analysis belongs to the session mode it was read for ([`Analysed::mode`]); a session
//! that changes its mode has the text read again.

use std::borrow::Cow;

use super::{Analysis, Column, Hints, KeyValue, Mode, RangeKey, TableRef, Value};

/// A statement's analysis, owned, and the session SQL mode it was read in.
#[derive(Debug)]
pub struct Analysed {
    mode: Mode,
    analysis: Analysis<'static>,
}

impl Analysed {
    /// Reads `sql`, written in the SQL `mode`, and analyses it.
    pub fn new(sql: &str, mode: Mode) -> Self {
        let read = super::in_default_mode(sql, mode);
        let analysis = owned(&super::analyze(&read));
        Analysed { mode, analysis }
    }

    /// The session SQL mode the text was read in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The analysis, placeholders unbound.
    pub fn analysis(&self) -> &Analysis<'static> {
        &self.analysis
    }

    /// A view of the analysis with every placeholder replaced by its bound value (`params[i]`,
    /// `Unknown` when missing): what [`super::analyze_prepared`] gives for the same text.
    pub fn bind<'s>(&'s self, params: &[Value<'s>]) -> Analysis<'s> {
        bound(&self.analysis, params)
    }
}

/// A copy of `a` that owns all its text.
pub(super) fn owned(a: &Analysis<'_>) -> Analysis<'static> {
    recast(a, &Own)
}

/// A view of `a` borrowing its text, with every placeholder replaced by its bound value
/// (`params[i]`, `Unknown` when missing). Allocates nothing.
pub(super) fn bound<'s>(a: &'s Analysis<'_>, params: &[Value<'s>]) -> Analysis<'s> {
    bound_then(a, params, |_| ())
}

/// [`bound`], then `finish` on the result before it is returned: what a caller adds (a
/// statement's hints) is written in place, not into a moved copy (an analysis is 500 bytes).
pub(super) fn bound_then<'s>(
    a: &'s Analysis<'_>,
    params: &[Value<'s>],
    finish: impl FnOnce(&mut Analysis<'s>),
) -> Analysis<'s> {
    let mut out = recast(a, &View);
    let bind = |v: &mut Value<'s>| {
        if let Value::Placeholder(i) = *v {
            *v = params.get(i as usize).cloned().unwrap_or(Value::Unknown);
        }
    };
    out.keys.iter_mut().for_each(|k| bind(&mut k.value));
    out.ranges.iter_mut().for_each(|r| bind(&mut r.value));
    finish(&mut out);
    out
}

/// How a recast copy holds the text it borrowed: owned ([`Own`]) or borrowed ([`View`]).
trait Recast<'s, 'b> {
    fn str(&self, s: &'s str) -> Cow<'b, str>;
    fn bytes(&self, b: &'s [u8]) -> Cow<'b, [u8]>;
}

/// Copies every borrowed text.
struct Own;

impl<'s> Recast<'s, 'static> for Own {
    fn str(&self, s: &'s str) -> Cow<'static, str> {
        Cow::Owned(s.to_owned())
    }
    fn bytes(&self, b: &'s [u8]) -> Cow<'static, [u8]> {
        Cow::Owned(b.to_vec())
    }
}

/// Borrows every text from the recast analysis.
struct View;

impl<'s> Recast<'s, 's> for View {
    fn str(&self, s: &'s str) -> Cow<'s, str> {
        Cow::Borrowed(s)
    }
    fn bytes(&self, b: &'s [u8]) -> Cow<'s, [u8]> {
        Cow::Borrowed(b)
    }
}

/// `a` with every text recast by `r`. Every struct is taken apart without `..`, so a field added
/// to the analysis is a compile error here until it is carried over.
fn recast<'s, 'b, R: Recast<'s, 'b>>(a: &'s Analysis<'_>, r: &R) -> Analysis<'b> {
    let Analysis {
        kind,
        path,
        tables,
        keys,
        ranges,
        hints,
        lock,
        pins,
        txn,
        set,
        database,
        autocommit,
        placeholders,
        inner_sql,
        statements,
    } = a;
    Analysis {
        kind: *kind,
        path: *path,
        tables: tables.iter().map(|t| table(t, r)).collect(),
        keys: keys
            .iter()
            .map(|k| KeyValue { column: column(&k.column, r), value: value(&k.value, r), row: k.row })
            .collect(),
        ranges: ranges
            .iter()
            .map(|k| RangeKey { column: column(&k.column, r), op: k.op, value: value(&k.value, r) })
            .collect(),
        hints: hints_of(hints, r),
        lock: *lock,
        pins: *pins,
        txn: *txn,
        set: *set,
        database: database.as_deref().map(|d| r.str(d)),
        autocommit: *autocommit,
        placeholders: *placeholders,
        inner_sql: inner_sql.as_deref().map(|s| r.str(s)),
        statements: *statements,
    }
}

fn table<'s, 'b>(t: &'s TableRef<'_>, r: &impl Recast<'s, 'b>) -> TableRef<'b> {
    let TableRef { schema, name, alias, partitions } = t;
    TableRef {
        schema: schema.as_deref().map(|s| r.str(s)),
        name: r.str(name),
        alias: alias.as_deref().map(|s| r.str(s)),
        partitions: partitions.iter().map(|p| r.str(p)).collect::<Vec<_>>(),
    }
}

fn column<'s, 'b>(c: &'s Column<'_>, r: &impl Recast<'s, 'b>) -> Column<'b> {
    match c {
        Column::Named { qualifier, name } => {
            Column::Named { qualifier: qualifier.as_deref().map(|q| r.str(q)), name: r.str(name) }
        }
        Column::Position(p) => Column::Position(*p),
    }
}

fn value<'s, 'b>(v: &'s Value<'_>, r: &impl Recast<'s, 'b>) -> Value<'b> {
    match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Int(*i),
        Value::UInt(u) => Value::UInt(*u),
        Value::Decimal(t) => Value::Decimal(r.str(t)),
        Value::Float(f) => Value::Float(*f),
        Value::Str { bytes, charset } => {
            Value::Str { bytes: r.bytes(bytes), charset: charset.as_deref().map(|c| r.str(c)) }
        }
        Value::Hex(b) => Value::Hex(r.bytes(b)),
        Value::Placeholder(i) => Value::Placeholder(*i),
        Value::Unknown => Value::Unknown,
    }
}

fn hints_of<'s, 'b>(h: &'s Hints<'_>, r: &impl Recast<'s, 'b>) -> Hints<'b> {
    let Hints { consistency, target_db_server, odp } = h;
    Hints {
        consistency: *consistency,
        target_db_server: target_db_server.as_deref().map(|s| r.str(s)),
        odp: odp.iter().map(|(k, v)| (r.str(k), r.str(v))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{analyze, analyze_prepared, StmtKind};

    const TEXTS: [&str; 6] = [
        "SELECT c FROM sbtest1 WHERE id = ? AND k IN (?, 7)",
        "/*+ READ_CONSISTENCY(WEAK) */ SELECT * FROM db1.`t 1` AS x PARTITION (p0) WHERE x.a BETWEEN ? AND 9",
        "INSERT INTO t (id, s) VALUES (?, 'it''s'), (2, _binary X'4142')",
        "UPDATE t SET v = ? WHERE id = 1.50 AND s = 'a\\nb' FOR UPDATE",
        "/* target_db_server=127.0.0.1:3306 */ /*+ODP: k1=v1, k2=v2 */ DELETE FROM `t` WHERE id = ?",
        "SELECT GET_LOCK('x', 1), @v FROM dual",
    ];

    #[test]
    fn a_bound_execution_is_what_analysing_the_text_with_its_values_gives() {
        let params = [
            [Value::Int(5), Value::Int(9)],
            [Value::Str { bytes: Cow::Borrowed(b"x"), charset: Some(Cow::Borrowed("utf8mb4")) }, Value::Null],
            [Value::Decimal(Cow::Borrowed("1.25")), Value::Hex(Cow::Borrowed(b"\x01"))],
        ];
        for sql in TEXTS {
            let kept = Analysed::new(sql, Mode::default());
            assert_eq!(kept.analysis(), &analyze(sql), "{sql}");
            for p in &params {
                assert_eq!(kept.bind(p), analyze_prepared(sql, p), "{sql} with {p:?}");
            }
            // Fewer values than placeholders: the rest are unknown, as for a fresh analysis.
            assert_eq!(kept.bind(&[]), analyze_prepared(sql, &[]), "{sql} unbound");
        }
    }

    #[test]
    fn the_mode_it_was_read_in_decides_what_it_names() {
        let sql = r#"SELECT * FROM t WHERE "id" = 5 AND s = 'x\'y'"#;
        let ansi = Mode { nbe: false, ansi_quotes: true };
        let plain = Analysed::new(sql, Mode::default());
        let quoted = Analysed::new(sql, ansi);
        assert_eq!(quoted.mode(), ansi);
        assert_eq!(plain.mode(), Mode::default());
        // Under ANSI_QUOTES "id" is a column with a key value; in the default mode a string.
        let named =
            |a: &Analysis<'_>| a.keys.iter().any(|k| matches!(&k.column, Column::Named { name, .. } if name == "id"));
        assert!(named(quoted.analysis()), "{:?}", quoted.analysis().keys);
        assert!(!named(plain.analysis()), "{:?}", plain.analysis().keys);
        let read = crate::sql::in_default_mode(sql, ansi);
        assert_eq!(quoted.bind(&[]), analyze(&read));
        assert_eq!(quoted.analysis().kind, StmtKind::Select);
    }
}
