//! The request a routed session sends and what came of it: where it goes ([`Route`], [`Tie`]),
//! the request itself with what its connection must have of the client's prepared statements
//! ([`Prep`], [`Execution`]), and how an attempt ([`Sent`]) and the whole request ([`Served`])
//! ended. The session's steps (dispatch, attempts, statement commands, learning) share them.

use std::net::SocketAddr;

use super::transaction::StickyReason;
use crate::planner::Planned;
use crate::protocol::command::Shape;
use crate::protocol::message::ErrPacket;
use crate::protocol::response::ResponseTracker;
use crate::route::RankedCandidate;
use crate::session::pool::PooledConn;
use crate::session::prepared::{LongData, ParamTypes};
use crate::session::SessionError;

/// Where a request goes.
pub(super) enum Route {
    /// The session's held connection (transaction, pin, cursor).
    Held(StickyReason),
    /// The server of the previous statement (dependent functions, commands without a route).
    Server(SocketAddr, Tie),
    /// The route decision, with its retry candidates.
    Planned(Box<Planned>),
}

/// Why a statement goes to a server connection other than the one its route decision picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tie {
    /// Nothing ties it: a route decision, or a command without a route going to the previous server.
    Previous,
    /// It depends on the previous statement's server (`LAST_INSERT_ID()`, `FOUND_ROWS()`, …).
    Dependent,
    /// The session keeps its connection.
    Sticky(StickyReason),
}

impl Tie {
    /// The route log's `sticky` field: `none`, `dependent`, `trans`, `pin`, `cursor`.
    pub(super) fn name(self) -> &'static str {
        match self {
            Tie::Previous => "none",
            Tie::Dependent => "dependent",
            Tie::Sticky(why) => why.name(),
        }
    }
}

/// One request as sent.
pub(super) struct Request<'p> {
    pub(super) payload: &'p [u8],
    pub(super) shape: Shape,
    pub(super) reply_seq: u8,
    pub(super) cmd: &'static str,
    /// What the connection must have of the client's prepared statements.
    pub(super) prep: Prep<'p>,
    /// The statement text for the route log when the payload does not carry it (EXECUTE).
    pub(super) log_sql: Option<&'p str>,
}

/// How an attempt on one connection ended.
pub(super) enum Sent {
    /// The answer was relayed.
    Relayed(ResponseTracker),
    /// Nothing ran: another candidate may serve the request.
    Retry(ErrPacket),
    /// The client gets this error (the request is over).
    Failed(ErrPacket),
    /// The connection was closed before the request reached it (its check on the send found
    /// it so: [`crate::tls::Stream::stale`]): nothing ran, nothing of the session is lost, and
    /// the request may go again on another connection to the same server.
    Stale,
    /// The session cannot go on.
    Fatal(SessionError),
}

/// What was learnt about the request, for the caller and the route log.
pub(super) struct Served {
    pub(super) conn: Option<PooledConn>,
    pub(super) tracker: Option<ResponseTracker>,
    pub(super) target: Option<SocketAddr>,
    pub(super) candidate: Option<RankedCandidate>,
    pub(super) attempts: usize,
}

/// What the connection must have before a request runs on it.
#[derive(Clone, Copy)]
pub(super) enum Prep<'p> {
    /// Nothing (not a prepared-statement command).
    None,
    /// The client's COM_STMT_PREPARE: its answer is registered and renumbered.
    Prepare {
        /// The statement text.
        sql: &'p str,
    },
    /// A text `PREPARE`: nothing needed, but like the binary one it starts no transaction.
    TextPrepare,
    /// COM_STMT_EXECUTE.
    Execute(&'p Execution<'p>),
    /// MariaDB's COM_STMT_BULK_EXECUTE: like an EXECUTE, every row set on this connection.
    Bulk(&'p Execution<'p>),
    /// COM_STMT_FETCH / COM_STMT_RESET: the statement must be here; its id is replaced.
    Id {
        /// The client's id of the statement.
        client_id: u32,
    },
    /// Text `EXECUTE name …`: `PREPARE name` first when the connection lacks this generation.
    Text {
        /// Statement name.
        name: &'p str,
        /// [`crate::session::prepared::text::TextStatement::generation`].
        generation: u64,
        /// The statement text.
        sql: &'p str,
    },
}

impl Prep<'_> {
    /// Whether a deferred transaction start is replayed before the request: not before a prepare
    /// (it starts no transaction, and runs where its text routes, not where the transaction
    /// will live).
    pub(super) fn replays_deferred_start(&self) -> bool {
        !matches!(self, Prep::Prepare { .. } | Prep::TextPrepare)
    }
}

/// One COM_STMT_EXECUTE as any connection can run it.
pub(super) struct Execution<'p> {
    pub(super) client_id: u32,
    pub(super) sql: &'p str,
    pub(super) params: u16,
    pub(super) types: Option<&'p ParamTypes>,
    pub(super) types_version: u32,
    pub(super) long: &'p LongData,
}
