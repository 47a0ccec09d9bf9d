//! A statement text read once into the value every step of a routed request reads: its analysis
//! (in the default SQL mode, [`crate::sql::mode`]), what it does to the transaction, and a lone
//! `SET`'s assignments. Local answers, routing and learning match on it; none reads the text
//! again (docs/routing.md §11).

use super::transaction::{classify, TxnStatement};
use crate::session::state::{parse_set, Assignment};
use crate::sql::{Analysis, Mode, StmtKind};

/// One statement text of a request, read.
#[derive(Debug)]
pub(super) struct Query<'t> {
    /// The client's text: what servers get and what a held transaction start replays.
    pub text: &'t str,
    /// The analysis of the text.
    pub analysis: Analysis<'t>,
    /// What it does to the transaction.
    pub txn: TxnStatement,
    /// A lone `SET`'s assignments (`None`: not one, or one the parser does not understand).
    pub set: Option<Vec<Assignment>>,
}

impl<'t> Query<'t> {
    /// Reads a COM_QUERY text; `analysis` is [`crate::sql::analyze`] of it in the default mode,
    /// `mode` the client's SQL mode.
    pub fn read(text: &'t str, analysis: Analysis<'t>, mode: Mode) -> Query<'t> {
        let txn = classify(text, &analysis);
        let set = (analysis.kind == StmtKind::Set && analysis.statements == 1)
            .then(|| parse_set(text.as_bytes(), mode))
            .flatten();
        Query { text, analysis, txn, set }
    }

    /// A statement whose transaction meaning is not its own to decide (a binary prepared
    /// statement: never a held start).
    pub fn executed(text: &'t str, analysis: Analysis<'t>) -> Query<'t> {
        Query { text, analysis, txn: TxnStatement::Other, set: None }
    }
}
