//! Transaction state of a routed session (docs/routing.md §8): the deferred `BEGIN` / `START TRANSACTION`
//! / `XA START`, stickiness while the server reports a transaction (or `autocommit = 0` after a
//! first statement, or an open XA transaction), session pins, and open cursors.

use super::xa_start::XaStartSyntax;
use crate::protocol::status;
use crate::sql::lexer::{Kind, Lexer, Mode, Token};
use crate::sql::{Analysis, Pins, StmtKind, TxnFlags};

/// Pins that keep a session on its connection for good.
pub const SESSION_PINS: Pins = Pins(Pins::TEMP_TABLE.0 | Pins::LOCK_TABLES.0 | Pins::USER_LOCK.0);

/// Pins that send a statement to the connection of the previous statement.
pub const DEPENDENT_PINS: Pins = Pins(Pins::LAST_INSERT_ID.0 | Pins::FOUND_ROWS.0 | Pins::ROW_COUNT.0);

/// A transaction start the gateway answered itself and replays before the next statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeferredStart {
    /// The client's statement, verbatim.
    pub sql: Vec<u8>,
    /// `READ ONLY` (`Some(true)`) / `READ WRITE` (`Some(false)`).
    pub read_only: Option<bool>,
    /// `XA START` / `XA BEGIN`.
    pub xa: bool,
}

/// What a statement means for the transaction state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnStatement {
    /// Starts a transaction: deferred.
    Start(DeferredStart),
    /// `COMMIT` / `ROLLBACK` without savepoint or chain clauses.
    End,
    /// `XA COMMIT` / `XA ROLLBACK`: ends an XA transaction once it ran.
    XaEnd,
    /// Anything else.
    Other,
}

/// Classifies a single statement (multi-statements are never deferred).
pub fn classify(sql: &str, a: &Analysis<'_>) -> TxnStatement {
    if a.statements > 1 {
        return TxnStatement::Other;
    }
    // The statements that can start or end a transaction are known by their kind (an XA one
    // behind an executable comment comes as `Other`): the words of the rest are not looked at.
    if !matches!(a.kind, StmtKind::Begin | StmtKind::Commit | StmtKind::Rollback | StmtKind::Xa | StmtKind::Other) {
        return TxnStatement::Other;
    }
    let words: Vec<String> = words(sql, 3);
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match a.kind {
        StmtKind::Begin => {
            let read_only = if a.txn.contains(TxnFlags::READ_ONLY) {
                Some(true)
            } else if a.txn.contains(TxnFlags::READ_WRITE) {
                Some(false)
            } else {
                None
            };
            TxnStatement::Start(DeferredStart { sql: sql.as_bytes().to_vec(), read_only, xa: false })
        }
        StmtKind::Commit | StmtKind::Rollback if words.len() == 1 || (words.len() == 2 && w(1) == "work") => {
            TxnStatement::End
        }
        // A start the server would refuse for its syntax is not deferred: it runs at once and its
        // error answers it.
        _ if w(0) == "xa" && (w(1) == "start" || w(1) == "begin") => match super::xa_start::check(sql) {
            XaStartSyntax::Invalid => TxnStatement::Other,
            XaStartSyntax::Valid | XaStartSyntax::Unsure => {
                TxnStatement::Start(DeferredStart { sql: sql.as_bytes().to_vec(), read_only: None, xa: true })
            }
        },
        _ if w(0) == "xa" && (w(1) == "commit" || w(1) == "rollback") => TxnStatement::XaEnd,
        _ => TxnStatement::Other,
    }
}

/// The first `n` tokens of a statement ([`crate::sql::lexer`]), lower case, without comments; a
/// `;` that ends the statement is not one.
fn words(sql: &str, n: usize) -> Vec<String> {
    let mut toks = Lexer::new(sql.as_bytes(), Mode::default()).filter(|t| t.kind != Kind::Comment);
    let mut out: Vec<Token> = toks.by_ref().take(n + 1).collect();
    if out.last().is_some_and(|t| t.kind == Kind::Punct(b';')) && toks.next().is_none() {
        out.pop();
    }
    out.iter().map(|t| sql.get(t.range()).unwrap_or("").to_ascii_lowercase()).collect()
}

/// Transaction and pin state of one session.
#[derive(Debug, Clone)]
pub struct Transaction {
    /// The deferred transaction start, if any.
    pub deferred: Option<DeferredStart>,
    /// The server reported `SERVER_STATUS_IN_TRANS` on the session's connection.
    pub in_trans: bool,
    /// An XA transaction is open (from its start until XA COMMIT / ROLLBACK ran).
    pub xa: bool,
    /// The server reported `SERVER_STATUS_AUTOCOMMIT`.
    pub autocommit: bool,
    /// `autocommit = 0` and a statement ran since the last COMMIT / ROLLBACK.
    pub implicit: bool,
    /// Why the session is pinned to its connection for good.
    pub pin: Option<PinReason>,
}

/// Why a session is pinned to its server connection for good: something lives on that server
/// session that the gateway cannot carry to another connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinReason {
    /// A `SET` whose effect the gateway cannot replay on another connection.
    UnreplayableSet,
    /// A `SET` with an expression value (its value is the server's to compute).
    SetExpression,
    /// A text prepared statement (`PREPARE` / `EXECUTE` / `DEALLOCATE`).
    TextPrepared,
    /// A temporary table.
    TemporaryTable,
    /// `LOCK TABLES`.
    LockTables,
    /// A user lock (`GET_LOCK` and its kin).
    UserLock,
    /// COM_SET_OPTION (multi-statement mode of the server session).
    SetOption,
}

impl PinReason {
    /// The text in SHOW PROXYSESSION (`pin:<text>`), the logs and the route log.
    pub fn describe(self) -> &'static str {
        match self {
            PinReason::UnreplayableSet => "SET the gateway cannot replay",
            PinReason::SetExpression => "SET with an expression value",
            PinReason::TextPrepared => "prepared statement",
            PinReason::TemporaryTable => "temporary table",
            PinReason::LockTables => "LOCK TABLES",
            PinReason::UserLock => "user lock",
            PinReason::SetOption => "COM_SET_OPTION",
        }
    }
}

/// Why a session keeps its server connection between statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StickyReason {
    /// Pinned for good (temporary table, user lock, …: [`Transaction::pin`] says which).
    Pin,
    /// Inside a transaction (explicit, XA, or implicit with autocommit off).
    Transaction,
    /// A prepared statement's cursor is open on the connection.
    Cursor,
}

impl StickyReason {
    /// The name in SHOW PROXYSESSION and the route log: `pin`, `trans`, `cursor`.
    pub fn name(self) -> &'static str {
        match self {
            StickyReason::Pin => "pin",
            StickyReason::Transaction => "trans",
            StickyReason::Cursor => "cursor",
        }
    }
}

impl Default for Transaction {
    fn default() -> Self {
        Transaction { deferred: None, in_trans: false, xa: false, autocommit: true, implicit: false, pin: None }
    }
}

impl Transaction {
    /// The state of a new session whose server sessions start with status `st` (autocommit).
    pub fn starting(st: u16) -> Self {
        Transaction { autocommit: st & status::AUTOCOMMIT != 0, ..Self::default() }
    }

    /// Why the next statement must use the session's current connection as far as the
    /// transaction and pins tell (open cursors are the prepared-statement registry's:
    /// `RoutedSession::sticky` adds them).
    pub fn sticky(&self) -> Option<StickyReason> {
        if self.pin.is_some() {
            Some(StickyReason::Pin)
        } else if self.in_trans || self.xa || (!self.autocommit && self.implicit) {
            Some(StickyReason::Transaction)
        } else {
            None
        }
    }

    /// Inside a transaction as the client sees it (deferred start included).
    pub fn in_transaction(&self) -> bool {
        self.deferred.is_some() || self.sticky() == Some(StickyReason::Transaction)
    }

    /// Status flags for answers the gateway makes itself.
    pub fn status(&self) -> u16 {
        let mut st = 0;
        if self.autocommit {
            st |= status::AUTOCOMMIT;
        }
        if self.in_transaction() {
            st |= status::IN_TRANS;
        }
        st
    }

    /// Learns from the final status of an answer to a statement of kind `kind`
    /// (`txn` its classification) that ran on the session's connection.
    pub fn after_status(&mut self, st: u16, kind: StmtKind, txn: &TxnStatement) {
        self.in_trans = st & status::IN_TRANS != 0;
        self.autocommit = st & status::AUTOCOMMIT != 0;
        match (kind, txn) {
            (_, TxnStatement::XaEnd) => {
                self.xa = false;
                self.implicit = false;
            }
            (StmtKind::Commit | StmtKind::Rollback, _) => self.implicit = false,
            (StmtKind::Set | StmtKind::Use | StmtKind::Show, _) => {}
            _ => self.implicit |= !self.autocommit,
        }
    }

    /// The deferred start ran on a connection.
    pub fn started(&mut self, start: &DeferredStart) {
        self.in_trans = true;
        self.xa |= start.xa;
    }

    /// The connection holding the transaction is gone: the transaction with it.
    pub fn lost(&mut self) {
        self.in_trans = false;
        self.xa = false;
        self.implicit = false;
        self.pin = None;
    }

    /// The value `SELECT @@tx_read_only` has inside the deferred transaction, if the deferred start
    /// decides it.
    pub fn deferred_read_only(&self) -> Option<bool> {
        self.deferred.as_ref().and_then(|h| h.read_only)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(sql: &str) -> TxnStatement {
        classify(sql, &crate::sql::analyze(sql))
    }

    #[test]
    fn classifies_transaction_statements() {
        assert!(matches!(c("BEGIN"), TxnStatement::Start(DeferredStart { xa: false, read_only: None, .. })));
        assert!(matches!(
            c("START TRANSACTION READ ONLY"),
            TxnStatement::Start(DeferredStart { read_only: Some(true), .. })
        ));
        assert!(matches!(c("start transaction with consistent snapshot"), TxnStatement::Start(_)));
        assert!(matches!(c("XA START 'x1'"), TxnStatement::Start(DeferredStart { xa: true, .. })));
        assert_eq!(c("XA START 'z' ONE PHASE"), TxnStatement::Other, "sent at once, its error answers it");
        assert_eq!(c("XA BEGIN 'y' garbage"), TxnStatement::Other);
        assert_eq!(c("commit"), TxnStatement::End);
        assert_eq!(c("ROLLBACK WORK;"), TxnStatement::End);
        assert_eq!(c("ROLLBACK TO SAVEPOINT a"), TxnStatement::Other);
        assert_eq!(c("XA COMMIT 'x1'"), TxnStatement::XaEnd);
        // Comments are not words, wherever they are.
        assert_eq!(c("COMMIT /* app */"), TxnStatement::End);
        assert_eq!(c("/* app */ XA ROLLBACK 'x1'"), TxnStatement::XaEnd);
        assert_eq!(c("ROLLBACK /* a */ WORK -- b"), TxnStatement::End);
        assert_eq!(c("BEGIN; SELECT 1"), TxnStatement::Other);
        assert_eq!(c("SELECT 1"), TxnStatement::Other);
    }

    #[test]
    fn stickiness_follows_status_and_autocommit() {
        let mut t = Transaction::default();
        assert_eq!(t.sticky(), None);
        t.after_status(status::AUTOCOMMIT | status::IN_TRANS, StmtKind::Update, &TxnStatement::Other);
        assert_eq!(t.sticky(), Some(StickyReason::Transaction));
        t.after_status(status::AUTOCOMMIT, StmtKind::Commit, &TxnStatement::Other);
        assert_eq!(t.sticky(), None);
        // autocommit = 0: sticky after the first statement until COMMIT.
        t.after_status(0, StmtKind::Set, &TxnStatement::Other);
        assert_eq!(t.sticky(), None);
        t.after_status(0, StmtKind::Select, &TxnStatement::Other);
        assert_eq!(t.sticky(), Some(StickyReason::Transaction));
        t.after_status(0, StmtKind::Commit, &TxnStatement::Other);
        assert_eq!(t.sticky(), None);
        t.pin = Some(PinReason::TemporaryTable);
        assert_eq!(t.sticky(), Some(StickyReason::Pin));
    }
}
