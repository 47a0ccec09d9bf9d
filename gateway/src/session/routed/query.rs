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
    /// The client's text: what servers get and what a deferred transaction start replays.
    pub text: &'t str,
    /// The analysis of the text.
    pub analysis: Analysis<'t>,
    /// What it does to the transaction.
    pub txn: TxnStatement,
    /// A lone `SET`'s assignments (`None`: not one, or one the parser does not understand).
    pub set: Option<Vec<Assignment>>,
}

impl<'t> Query<'t> {
    /// Reads the client's `text`, written in its SQL `mode`, whose `analysis` is that of the
    /// text as the default mode reads it ([`crate::sql::in_default_mode`]; with the values
    /// bound to its placeholders for a text prepared statement's `EXECUTE … USING`).
    pub fn read(text: &'t str, analysis: Analysis<'t>, mode: Mode) -> Query<'t> {
        let mut q = Query::executed(text, analysis);
        q.classify(mode);
        q
    }

    /// What the text does to the transaction, and a lone `SET`'s assignments: for a query built
    /// in place (`Query { analysis: …, .. }` spares moving the analysis; see [`Query::read`]).
    pub fn classify(&mut self, mode: Mode) {
        self.txn = classify(self.text, &self.analysis);
        if self.analysis.kind == StmtKind::Set && self.analysis.statements == 1 {
            self.set = parse_set(self.text.as_bytes(), mode);
        }
    }

    /// A statement whose transaction meaning is not its own to decide (a binary prepared
    /// statement: never a deferred start).
    pub fn executed(text: &'t str, analysis: Analysis<'t>) -> Query<'t> {
        Query { text, analysis, txn: TxnStatement::Other, set: None }
    }
}
