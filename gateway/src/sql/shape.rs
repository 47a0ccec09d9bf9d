//! Statement shapes: analyses kept by a statement's tokens with its literals left out, so that a
//! text statement of a shape seen before is lexed and bound instead of parsed again.
//!
//! Applications send the same statements with other values (`… WHERE id = 17`, then `= 4`). The
//! shape of a statement is its text with every literal (number, string, hex) reduced to its
//! kind: the same words, quotes, spaces and comments, other values. The
//! first statement of a shape is analysed as usual, and once more with its literals read as
//! placeholders: that is the shape's template. The template is kept only when binding this
//! statement's literals to it gives exactly the analysis the parser gave, and only for plain
//! DML (`SELECT`, `INSERT`, `REPLACE`, `UPDATE`, `DELETE`) the fast path took whole, and none of
//! whose key values is unknown. An unknown key value may come from an expression over literals
//! (`id = 10 / 2`), which a template cannot evaluate: such shapes, and any other that fails the
//! check, are remembered as not kept, and their statements are analysed as usual.
//!
//! The cache is bounded: at most [`MAX_SHAPES`] shapes of at most [`MAX_TEXT`] bytes of text;
//! when full it starts again empty.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use smallvec::SmallVec;

use super::analysis::{Analysis, Path, StmtKind};
use super::hint::Hints;
use super::lexer::{self, Kind, Token};
use super::{analysed, command, fast, split, Value};
use crate::metrics::sharded::Sharded;

mod memo;
use memo::Memo;
pub use memo::ShapeMemo;

/// Shapes kept at most (kept and not kept together).
pub const MAX_SHAPES: usize = 1024;
/// Longest statement text whose shape is kept.
pub const MAX_TEXT: usize = 2048;

/// A shape's template: the analysis with literal `i` read as placeholder `i`.
pub type Template = Arc<Analysis<'static>>;

/// The shapes seen, each with its template or `None` when its statements are analysed as usual.
#[derive(Debug)]
pub struct ShapeCache {
    shapes: Mutex<HashMap<Box<[u8]>, Option<Template>, foldhash::fast::RandomState>>,
    /// Statements looked up, by [`Lookup`] (sharded by thread: counted for every statement).
    lookups: Sharded,
}

impl Default for ShapeCache {
    fn default() -> Self {
        ShapeCache { shapes: Mutex::default(), lookups: Sharded::new(Lookup::ALL.len()) }
    }
}

/// How a statement's shape was served (`gateway_statement_shape_lookups_total{result}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// Bound to its shape's template.
    Bound,
    /// A shape not kept, or a statement whose literals the template cannot take: parsed.
    Parsed,
    /// A shape seen for the first time: parsed, and its template checked.
    New,
}

impl Lookup {
    /// Every result, in label order.
    pub const ALL: [Lookup; 3] = [Lookup::Bound, Lookup::Parsed, Lookup::New];

    /// The `result` label value.
    pub const fn name(self) -> &'static str {
        match self {
            Lookup::Bound => "bound",
            Lookup::Parsed => "parsed",
            Lookup::New => "new",
        }
    }
}

/// What a [`ShapeCache`] holds and has done, for the metrics page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShapeStats {
    /// Shapes whose template is kept.
    pub kept: u64,
    /// Shapes known not to be kept.
    pub not_kept: u64,
    /// Lookups by result, in [`Lookup::ALL`] order.
    pub lookups: [u64; 3],
}

/// A shape key: built on the stack for the usual short statement.
type Key = SmallVec<[u8; 256]>;

/// The analysis of the one statement of a COM_QUERY text.
fn one(mut an: Analysis<'_>) -> Analysis<'_> {
    an.statements = 1;
    an
}

impl ShapeCache {
    /// The analysis of a COM_QUERY text, as [`super::analyze`] gives it. When the text is one
    /// statement of a kept shape, the analysis is the shape's template, held in `holder`, with
    /// the statement's literals and hints.
    ///
    /// `memo` is the session's memory of its last shapes: a shape it remembers is served without
    /// the shared map; the template lent to `holder` goes back with [`ShapeMemo::give_back`].
    pub fn analyze<'t>(&self, sql: &'t str, holder: &'t mut Option<Template>, memo: &mut ShapeMemo) -> Analysis<'t> {
        if sql.len() > MAX_TEXT {
            return super::analyze(sql);
        }
        let mut stmts = split::statements(sql);
        let (Some(stmt), None) = (stmts.next(), stmts.next()) else {
            return super::analyze(sql);
        };
        match command::recognize(stmt) {
            Some(an) => one(an),
            None => self.statement(stmt, holder, memo),
        }
    }

    /// One statement that is not a shared command. The bound template (the common case) is
    /// returned as built: every other path is a parse, where a copy does not count.
    fn statement<'t>(&self, stmt: &'t str, holder: &'t mut Option<Template>, memo: &mut ShapeMemo) -> Analysis<'t> {
        let mut hints = Hints::default();
        let Some(toks) = lexer::lex(stmt, &mut hints) else {
            return one(super::analyze_statement(stmt));
        };
        let Some(key) = key(stmt, &toks) else {
            return one(parsed(stmt, &toks, hints));
        };
        let found = match memo.lend(&key) {
            Memo::Kept(template) => Some(Some(template)),
            Memo::NotKept => Some(None),
            Memo::Unknown => {
                let found = self.shapes.lock().ok().and_then(|m| m.get(key.as_slice()).cloned());
                if let Some(kept) = &found {
                    memo.remember(&key, kept.as_ref());
                }
                found
            }
        };
        match found {
            Some(Some(template)) => match literals(stmt, &toks) {
                Some(values) => {
                    self.count(Lookup::Bound);
                    let template: &'t Analysis<'static> = holder.insert(template);
                    analysed::bound_then(template, &values, |an| {
                        an.hints = hints;
                        an.statements = 1;
                    })
                }
                None => {
                    memo.give_back(template);
                    one(self.parsed(stmt, &toks, hints))
                }
            },
            Some(None) => one(self.parsed(stmt, &toks, hints)),
            None => {
                self.count(Lookup::New);
                let an = parsed(stmt, &toks, hints);
                self.remember(key, template(stmt, &toks, &an));
                one(an)
            }
        }
    }

    fn parsed<'t>(&self, stmt: &'t str, toks: &[Token], hints: Hints<'t>) -> Analysis<'t> {
        self.count(Lookup::Parsed);
        parsed(stmt, toks, hints)
    }

    fn count(&self, lookup: Lookup) {
        self.lookups.add(lookup as usize, 1);
    }

    /// The shapes held and the lookups so far.
    pub fn stats(&self) -> ShapeStats {
        let (kept, all) = self.shapes.lock().map_or((0, 0), |m| (m.values().filter(|t| t.is_some()).count(), m.len()));
        ShapeStats {
            kept: kept as u64,
            not_kept: (all - kept) as u64,
            lookups: std::array::from_fn(|i| self.lookups.get(i)),
        }
    }

    fn remember(&self, key: Key, template: Option<Analysis<'static>>) {
        let Ok(mut shapes) = self.shapes.lock() else { return };
        if shapes.len() >= MAX_SHAPES {
            shapes.clear();
        }
        shapes.insert(key.into_vec().into_boxed_slice(), template.map(Arc::new));
    }

    /// Shapes known (kept or not).
    pub fn len(&self) -> usize {
        self.shapes.lock().map_or(0, |m| m.len())
    }

    /// Whether no shape is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The statement analysed as usual: the fast path over its tokens, else the reference parser.
fn parsed<'t>(stmt: &'t str, toks: &[Token], hints: Hints<'t>) -> Analysis<'t> {
    fast::analyze_lexed(stmt, toks, hints).unwrap_or_else(|| super::reference::analyze(stmt))
}

fn is_literal(kind: Kind) -> bool {
    matches!(kind, Kind::Number | Kind::Str | Kind::Hex)
}

/// The shape key: the statement's text with each literal replaced by `0xFF` and its kind, a
/// byte no UTF-8 text holds. Equal keys mean equal tokens but for the literals' texts (and
/// equal comments). `None` for a statement with placeholders of its own (a prepared
/// statement's text), never kept.
fn key(stmt: &str, toks: &[Token]) -> Option<Key> {
    let text = stmt.as_bytes();
    let mut key = Key::new();
    let mut copied = 0;
    for t in toks {
        let kind = match t.kind {
            Kind::Placeholder => return None,
            Kind::Number => 1,
            Kind::Str => 2,
            Kind::Hex => 3,
            _ => continue,
        };
        key.extend_from_slice(text.get(copied..t.start as usize)?);
        key.extend_from_slice(&[0xFF, kind]);
        copied = t.end as usize;
    }
    key.extend_from_slice(text.get(copied..)?);
    Some(key)
}

/// The statement's literals in order, as the parser reads them.
fn literals<'t>(stmt: &'t str, toks: &[Token]) -> Option<SmallVec<[Value<'t>; 4]>> {
    let mut values = SmallVec::new();
    for &t in toks.iter().filter(|t| is_literal(t.kind)) {
        values.push(fast::literal(stmt, t)?);
    }
    Some(values)
}

/// The template of `stmt`'s shape, given its analysis `an`: `None` when the shape is not kept.
fn template(stmt: &str, toks: &[Token], an: &Analysis<'_>) -> Option<Analysis<'static>> {
    let dml = matches!(
        an.kind,
        StmtKind::Select | StmtKind::Insert | StmtKind::Replace | StmtKind::Update | StmtKind::Delete
    );
    if !dml || an.path != Path::Fast {
        return None;
    }
    let shaped: lexer::Tokens =
        toks.iter().map(|&t| if is_literal(t.kind) { Token { kind: Kind::Placeholder, ..t } } else { t }).collect();
    let mut template = fast::analyze_lexed(stmt, &shaped, Hints::default())?;
    template.placeholders = an.placeholders;
    let unknown = template.keys.iter().any(|k| k.value == Value::Unknown)
        || template.ranges.iter().any(|r| r.value == Value::Unknown);
    if template.path != Path::Fast || unknown {
        return None;
    }
    let values = literals(stmt, toks)?;
    let real = analysed::bound(an, &[]);
    let mut check = analysed::bound(&template, &values);
    check.hints = real.hints.clone();
    (check == real).then(|| analysed::owned(&template))
}

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;
