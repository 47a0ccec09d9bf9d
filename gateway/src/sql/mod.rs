//! SQL analysis for routing: statement kind, tables, hints, locks, key values, session pins.
//!
//! [`analyze`] takes one COM_QUERY text. A hand-written fast path ([`fast`]) handles the common
//! shapes without building a syntax tree; anything it does not fully understand goes to the
//! reference parser ([`reference`], `sqlparser` with the MySQL dialect). Neither guesses: a
//! statement neither can parse is `StmtKind::Other` without tables or key values.

pub(crate) mod analysed;
pub(crate) mod analysis;
mod command;
pub(crate) mod depth;
pub(crate) mod eval;
pub mod fast;
pub(crate) mod hint;
pub mod lexer;
pub(crate) mod mode;
pub mod reference;
pub mod shape;
pub mod split;
pub(crate) mod value;

#[cfg(test)]
mod tests;

pub use analysed::Analysed;
pub use analysis::{
    Analysis, Column, KeyValue, LockRead, LockStrength, LockWait, Name, Path, Pins, RangeKey, RangeOp, SetFlags,
    StmtKind, TableRef, TxnFlags,
};
pub use hint::{Consistency, Hints};
pub use lexer::Mode;
pub use mode::in_default_mode;
pub use value::Value;

/// Analyses a COM_QUERY text. For a multi-statement the routing statement is the first one, or
/// the second when the first opens a transaction (docs/routing.md §9); `statements` tells how many
/// there were.
pub fn analyze(sql: &str) -> Analysis<'_> {
    let mut stmts = split::statements(sql);
    let Some(first) = stmts.next() else {
        return Analysis { statements: 0, ..Analysis::default() };
    };
    let second = stmts.next();
    let count = 1 + u32::from(second.is_some()) + stmts.count() as u32;
    let mut an = analyze_statement(first);
    if an.kind == StmtKind::Begin {
        if let Some(second) = second {
            an = analyze_statement(second);
        }
    }
    an.statements = count;
    an
}

/// Analyses one statement (no `;` splitting): shared commands, then the fast path, then the
/// reference parser.
pub fn analyze_statement(stmt: &str) -> Analysis<'_> {
    command::recognize(stmt).or_else(|| fast::analyze(stmt)).unwrap_or_else(|| reference::analyze(stmt))
}

/// Analyses a prepared statement's text and substitutes the bound parameter values.
pub fn analyze_prepared<'a>(sql: &'a str, params: &[Value<'a>]) -> Analysis<'a> {
    analyze(sql).bind(params)
}

/// The pin a call of function `name` implies (empty for ordinary functions).
pub fn function_pin(name: &str) -> Pins {
    const PINS: [(&str, Pins); 8] = [
        ("LAST_INSERT_ID", Pins::LAST_INSERT_ID),
        ("FOUND_ROWS", Pins::FOUND_ROWS),
        ("ROW_COUNT", Pins::ROW_COUNT),
        ("GET_LOCK", Pins::USER_LOCK),
        ("RELEASE_LOCK", Pins::USER_LOCK),
        ("RELEASE_ALL_LOCKS", Pins::USER_LOCK),
        ("IS_USED_LOCK", Pins::USER_LOCK),
        ("IS_FREE_LOCK", Pins::USER_LOCK),
    ];
    PINS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map_or(Pins::default(), |(_, p)| *p)
}
