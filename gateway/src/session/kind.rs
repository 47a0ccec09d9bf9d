//! What the one command loop ([`super::command_loop`]) asks of a kind of session (1:1 with its
//! fixed backend connection, routed with its pooled ones), and what it does after a command.

use std::net::SocketAddr;

use super::account::Account;
use super::client_side::{ClientLeg, ClientSide};
use super::glance::Glance;
use super::internal;
use super::next_command::NextCommand;
use super::pool::{PoolError, PooledConn};
use super::processlist::Asker;
use super::{SessionError, Shared};
use crate::protocol::command::Shape;
use crate::protocol::message::ErrPacket;
use crate::sql::Mode;

/// What the command loop does after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// Wait for the next command.
    Continue,
    /// The session ends (it killed itself, or it was handed to the kernel and is over).
    Close,
}

/// What a server did with a session's KILL of itself.
#[derive(Debug)]
pub(super) enum OwnKill {
    /// It answered (MariaDB: `KILL QUERY` 1317, `KILL` 1927 before it closes).
    Answered(Result<(), ErrPacket>),
    /// It closed the connection without a word (the OceanBase kernel's `KILL` of itself).
    Closed,
}

impl OwnKill {
    /// The server's answer to `statement` run on the session's own connection, `Err`: the
    /// exchange failed (the connection is gone).
    pub fn of<E: std::fmt::Display>(answer: Result<Result<(), ErrPacket>, E>, query_only: bool) -> OwnKill {
        match answer {
            Ok(answer) => OwnKill::Answered(answer),
            Err(_) if !query_only => OwnKill::Closed,
            Err(e) => OwnKill::Answered(Err(ErrPacket::new(
                crate::protocol::codes::BACKEND_LOST,
                format!("gateway: KILL QUERY failed: {e}"),
            ))),
        }
    }
}

/// What the command loop asks of a kind of session.
pub(super) trait SessionKind {
    /// The session's client side.
    fn front(&self) -> &ClientSide<'_>;

    /// The client's connection, for an answer of the gateway's own.
    fn leg(&mut self) -> ClientLeg<'_>;

    /// Who the session logs in to its servers as.
    fn account(&self) -> &Account;

    /// Writes an answer the gateway made ([`ClientLeg::write_made`]).
    async fn write_made(&mut self, answer: Vec<u8>) -> Result<(), SessionError> {
        self.leg().write_made(answer).await
    }

    /// Answers `err` at `seq`.
    async fn reply_err(&mut self, seq: u8, err: &ErrPacket) -> Result<(), SessionError> {
        self.leg().reply_err(seq, err).await
    }

    /// Waits for the client's next command. `None`: the session ends (the client closed, it was
    /// killed, or the kind's own end condition fired; logged by the kind).
    async fn next(&mut self) -> Result<Option<NextCommand>, SessionError>;

    /// Gateway connection id of the session.
    fn id(&self) -> u32 {
        self.front().id
    }

    /// The SQL modes a statement is read in (a KILL hidden among statements is looked for in each).
    fn modes(&self) -> &[Mode];

    /// What an internal statement (`SHOW PROXY…`, `EXPLAIN ROUTE`, …) is answered for.
    fn caller(&self) -> internal::Caller<'_>;

    /// The session list shows `next` as running. `text`, here and in [`Self::forward`]: a
    /// COM_QUERY's statement (decoded once, lossy), empty for other commands.
    fn started(&mut self, next: &NextCommand, text: &str);

    /// Process state.
    fn shared(&self) -> &Shared;

    /// Who asks, for the process list and KILL.
    fn asker(&self) -> Asker<'_> {
        let account = self.account();
        Asker { id: self.front().id, user: &account.user, tenant: &account.tenant }
    }

    /// Capability flags of the client leg.
    fn client_caps(&self) -> u32 {
        self.front().caps
    }

    /// Server status flags of the session's gateway-made answers.
    fn status(&self) -> u16;

    /// Answers OK at `seq`, with the session's status flags.
    async fn reply_ok(&mut self, seq: u8) -> Result<(), SessionError> {
        let status = self.status();
        self.leg().reply_ok(seq, status).await
    }

    /// A pooled connection to `server` as the session's account, for a statement of the
    /// gateway's own (a KILL).
    async fn pooled(&self, server: SocketAddr) -> Result<PooledConn, PoolError>;

    /// The session's KILL (or KILL QUERY) of itself, run on a server connection of its own: the
    /// server's answer.
    async fn kill_itself(&mut self, query_only: bool) -> Result<OwnKill, SessionError>;

    /// A command for the servers.
    async fn forward(
        &mut self,
        next: &NextCommand,
        text: &str,
        shape: Shape,
        glance: Glance,
    ) -> Result<Flow, SessionError>;

    /// COM_CHANGE_USER. A refusal (`SessionError::Refused`) leaves the session with its user and
    /// its state cleared, as MariaDB does; the loop answers it and goes on.
    async fn change_user(&mut self, payload: &[u8]) -> Result<(), SessionError>;

    /// COM_QUIT.
    async fn quit(&mut self);

    /// A command ended with `flow`: what the kind does at the end of every command.
    async fn finished(&mut self, flow: Result<Flow, SessionError>) -> Result<Flow, SessionError>;
}
