//! Strong vs weak consistency of a request (docs/routing.md §2, `get_trans_consistency_level`).

use std::fmt;

/// Consistency level a request is routed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consistency {
    /// Must run on the leader (writes, strong reads).
    Strong,
    /// May run on any readable replica.
    Weak,
}

impl Consistency {
    /// ODP's name, `STRONG` / `WEAK`.
    pub const fn name(self) -> &'static str {
        match self {
            Consistency::Strong => "STRONG",
            Consistency::Weak => "WEAK",
        }
    }
}

impl fmt::Display for Consistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Value of the session variable `ob_read_consistency` (FROZEN = 1, WEAK = 2, STRONG = 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadConsistency {
    /// 1: ignored for routing.
    Frozen,
    /// 2.
    Weak,
    /// 3 (the server default).
    Strong,
}

impl ReadConsistency {
    /// Maps the numeric value; unknown values are `None`.
    pub const fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(ReadConsistency::Frozen),
            2 => Some(ReadConsistency::Weak),
            3 => Some(ReadConsistency::Strong),
            _ => None,
        }
    }
}

/// Everything docs/routing.md §2 needs to decide the consistency of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsistencyInputs {
    /// The statement is a `SELECT` (also text `EXECUTE` / `COM_STMT_EXECUTE` of one).
    pub is_select: bool,
    /// `/*+ READ_CONSISTENCY(STRONG|WEAK) */` (FROZEN is not passed: it is ignored here).
    pub hint: Option<Consistency>,
    /// `ob_read_consistency` if the session set it explicitly; `None` = server default (STRONG).
    pub session: Option<ReadConsistency>,
    /// `enable_read_write_split` (default off).
    pub read_write_split: bool,
    /// `enable_transaction_split` (default off).
    pub transaction_split: bool,
    /// Inside a transaction, or a deferred `BEGIN` / `XA START`.
    pub in_transaction: bool,
    /// Session `autocommit`.
    pub autocommit: bool,
    /// A locking read: `FOR UPDATE [NOWAIT | WAIT n | SKIP LOCKED]`, `FOR SHARE`,
    /// `LOCK IN SHARE MODE` (the gateway detects every form, docs/routing.md §17).
    pub locking_read: bool,
    /// The server supports weak reads.
    pub server_supports_weak_read: bool,
}

impl Default for ConsistencyInputs {
    /// A statement that is not a SELECT, autocommit on, no split, weak reads supported.
    fn default() -> Self {
        ConsistencyInputs {
            is_select: false,
            hint: None,
            session: None,
            read_write_split: false,
            transaction_split: false,
            in_transaction: false,
            autocommit: true,
            locking_read: false,
            server_supports_weak_read: true,
        }
    }
}

/// Which rule of docs/routing.md §2 decided the level (printed in the trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsistencyRule {
    /// Step 1: not a SELECT.
    NotSelect,
    /// Step 2: `READ_CONSISTENCY` hint.
    Hint,
    /// Step 3: `ob_read_consistency = WEAK`.
    SessionVariable,
    /// Step 4: read/write-split configuration.
    ReadWriteSplit,
    /// Step 5: default.
    Default,
    /// Step 6: downgraded (locking read or no weak-read support).
    Downgraded,
}

/// Decides the consistency of a request (docs/routing.md §2). Returns the level and the rule that decided it.
pub fn decide_consistency(i: &ConsistencyInputs) -> (Consistency, ConsistencyRule) {
    let (level, rule) = undowngraded(i);
    if level == Consistency::Weak && (i.locking_read || !i.server_supports_weak_read) {
        return (Consistency::Strong, ConsistencyRule::Downgraded);
    }
    (level, rule)
}

fn undowngraded(i: &ConsistencyInputs) -> (Consistency, ConsistencyRule) {
    if !i.is_select {
        return (Consistency::Strong, ConsistencyRule::NotSelect);
    }
    if let Some(hint) = i.hint {
        return (hint, ConsistencyRule::Hint);
    }
    if i.session == Some(ReadConsistency::Weak) {
        return (Consistency::Weak, ConsistencyRule::SessionVariable);
    }
    if split_allows_weak(i) {
        return (Consistency::Weak, ConsistencyRule::ReadWriteSplit);
    }
    (Consistency::Strong, ConsistencyRule::Default)
}

/// Step 4 (`get_read_write_consistency_level`): the split makes a read weak outside
/// transactions; with `autocommit = 0` only if `enable_transaction_split`.
fn split_allows_weak(i: &ConsistencyInputs) -> bool {
    if i.in_transaction {
        false
    } else if !i.autocommit {
        i.read_write_split && i.transaction_split
    } else {
        i.read_write_split
    }
}
