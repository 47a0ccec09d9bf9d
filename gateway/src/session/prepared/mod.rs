//! Prepared statements across server connections: client ids, per-connection server ids, EXECUTE
//! decoding and rewriting, long data, text `PREPARE`/`EXECUTE` (docs/routing.md §10).
//!
//! # The flow the session follows
//!
//! * **COM_STMT_PREPARE** — [`Registry::refuse_prepare`] first (`BEGIN` → ERR 1295). The prepare
//!   runs on the connection the statement text routes to. Its first answer packet is read with
//!   [`answer::PrepareOk::parse`], the statement registered ([`Registry::register`], which
//!   assigns the client id) and the packet rewritten with [`answer::set_statement_id`] so the
//!   client only ever sees client ids; the parameter and column definitions are relayed as they
//!   are. That connection's [`ConnStatements`] records client id → server id. A failed prepare
//!   registers nothing.
//! * **COM_STMT_SEND_LONG_DATA** — no answer, nothing sent: [`Registry::long_data`] buffers the
//!   chunk (bounded; an overflow or a bad parameter number is reported by the next EXECUTE).
//! * **COM_STMT_EXECUTE** —
//!   1. [`execute::statement_id`], [`Registry::lookup`] (unknown → ERR 1243), then
//!      [`Statement::pending_error`] (a long-data error → that ERR, as the server would);
//!   2. [`execute::Execute::parse`], [`Statement::bind_types`] (remember the types when the
//!      client sent them), [`binary::values`] → bound values;
//!   3. `Planner::plan_bound(stmt.sql(), &values, ctx)` picks the server; the session takes a
//!      pooled connection there and syncs its session state (docs/routing.md §11);
//!   4. when that connection's [`ConnStatements`] lacks the statement, send COM_STMT_PREPARE with
//!      [`Statement::sql`] (send-action `SERVER_SEND_PREPARE`), consume its whole answer (the
//!      client never sees it), record the server id ([`ConnStatements::insert`]); a failure there
//!      is returned to the client as the EXECUTE's answer;
//!   5. replay the buffered long data with [`LongData::packets`] (no answers);
//!   6. send [`execute::rewrite`] of the client's packet: server id in place of the client id,
//!      and the remembered types inserted when [`ConnStatements::needs_types`] says the
//!      connection has not seen them; then [`ConnStatements::types_sent`] and
//!      [`Statement::executed`] (long data is consumed by an execute);
//!   7. relay the answer without rewriting anything (result rows carry no statement id).
//!      If the answer's column-definition EOF has `CURSOR_EXISTS`, the connection owns the
//!      cursor ([`Registry::open_cursor`]): the session must keep that connection until the
//!      statement is closed, reset or executed again.
//! * **COM_STMT_FETCH** — goes to the cursor owner with the id replaced
//!   ([`execute::set_statement_id`] works on any command that starts with the id); no cursor →
//!   ER_STMT_HAS_NO_OPEN_CURSOR (1421) from the gateway, as the server would answer.
//! * **COM_STMT_CLOSE** — no answer; [`Registry::close`]. Sent at once to the session's held
//!   connection; a pooled connection gets it when the session next uses it
//!   ([`ConnStatements::needs_sweep`]: the session's close epoch moved), so a client that
//!   prepares and closes in a loop leaves nothing behind. Unknown ids are ignored.
//! * **COM_STMT_RESET** — [`Statement::reset`] drops long data and errors, [`Registry::end_cursor`] the cursor; sent to
//!   the held connection when it has the statement (its answer is returned), else OK from the
//!   gateway (idle connections never hold long data or cursors: both live only around an
//!   EXECUTE on a held connection).
//! * Text `PREPARE` / `EXECUTE … USING` / `DEALLOCATE PREPARE` ([`text`]): the same with names;
//!   the bound values come from the session's user variables ([`text::bound_values`]); a
//!   connection lacking the statement gets [`text::prepare_sql`] first
//!   (`SERVER_SEND_TEXT_PS_PREPARE`). `DEALLOCATE` is answered by the gateway and reaches the
//!   connections with the next sweep. `PREPARE … FROM @v` of an unknown value pins the session.
//! * COM_RESET_CONNECTION or a connection handed to another client: [`ConnStatements::clear`]
//!   (the pool's reset clears `ConnSync::statements`).
//!
//! The routed session's side of all this is in `session::routed::{statements, statement_conn,
//! text_statements}`.

pub mod answer;
pub mod binary;
pub mod bulk;
pub(crate) mod conn;
pub mod execute;
pub(crate) mod long_data;
pub mod registry;
pub mod text;

pub use conn::{ConnStatements, ServerStmt};
pub use long_data::LongData;
pub use registry::{Command, ParamTypes, Registry, Statement};

use crate::protocol::message::ErrPacket;

/// ER_UNKNOWN_STMT_HANDLER.
pub const UNKNOWN_STMT_HANDLER: u16 = 1243;
/// ER_WRONG_ARGUMENTS.
pub const WRONG_ARGUMENTS: u16 = 1210;
/// ER_UNSUPPORTED_PS (OceanBase's OB_UNSUPPORTED_PS).
pub const UNSUPPORTED_PS: u16 = 1295;
/// ER_MALFORMED_PACKET.
pub const MALFORMED_PACKET: u16 = 1835;
/// ER_UNKNOWN_ERROR (what the server reports for too much long data).
pub const UNKNOWN_ERROR: u16 = 1105;
/// ER_MAX_PREPARED_STMT_COUNT_REACHED.
pub const MAX_PREPARED_STMT_COUNT: u16 = 1461;

/// What a prepared-statement command did wrong, as the server would report it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreparedError {
    /// An id (or name) the session never prepared, or closed.
    #[error("Unknown prepared statement handler ({handle}) given to {command}")]
    UnknownStatement {
        /// The id or name as the client gave it.
        handle: String,
        /// The server-side function name MariaDB puts in the message.
        command: &'static str,
    },
    /// Values that do not fit the parameters (ER_WRONG_ARGUMENTS).
    #[error("Incorrect arguments to {0}")]
    WrongArguments(&'static str),
    /// A command packet too short for its fixed part or with an impossible flag.
    #[error("Malformed communication packet")]
    Malformed,
    /// A statement the prepared-statement protocol does not take (`BEGIN`).
    #[error("This command is not supported in the prepared statement protocol yet")]
    Unsupported,
    /// The long data of one statement exceeded the gateway's buffer limit.
    #[error("Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes")]
    LongDataTooLarge,
    /// The session ran out of statement ids, or holds the most statements it may.
    #[error("Can't create more than max_prepared_stmt_count statements (current value: {0})")]
    TooMany(u32),
    /// The session's prepared statements hold the most text they may (MiB).
    #[error("gateway: the prepared statements of this session would hold more than {0} MiB of text")]
    TooMuchText(usize),
}

impl PreparedError {
    /// The MySQL error code.
    pub fn code(&self) -> u16 {
        match self {
            PreparedError::UnknownStatement { .. } => UNKNOWN_STMT_HANDLER,
            PreparedError::WrongArguments(_) => WRONG_ARGUMENTS,
            PreparedError::Malformed => MALFORMED_PACKET,
            PreparedError::Unsupported => UNSUPPORTED_PS,
            PreparedError::LongDataTooLarge => UNKNOWN_ERROR,
            PreparedError::TooMany(_) | PreparedError::TooMuchText(_) => MAX_PREPARED_STMT_COUNT,
        }
    }

    /// The ERR packet the client gets.
    pub fn to_err(&self) -> ErrPacket {
        let state = match self {
            PreparedError::TooMany(_) | PreparedError::TooMuchText(_) => b"42000",
            _ => b"HY000",
        };
        ErrPacket::with_state(self.code(), state, self.to_string())
    }
}

#[cfg(test)]
mod planning_tests;
