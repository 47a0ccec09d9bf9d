//! What the server side of a routed session ([`super::link::ServerLink`]) borrows of its client
//! side for one request ([`ClientParts`]): the client's connection (answers are relayed to it,
//! errors written to it), its session state, its transaction, its prepared statements; and the
//! client-side facts every request asks (stickiness, a pooled connection as the client).

use std::net::SocketAddr;
use std::time::Instant;

use super::registry::Registration;
use super::request::{Request, Served};
use super::splice::PinSplice;
use super::transaction::{StickyReason, Transaction};
use crate::planner::Planner;
use crate::protocol::command::Shape;
use crate::protocol::frame::Wire;
use crate::protocol::message::ErrPacket;
use crate::protocol::response::ResponseTracker;
use crate::session::account::Account;
use crate::session::client_side::ClientSide;
use crate::session::pool::{Homes, KeyRef, PoolError, PooledConn};
use crate::session::prepared::text::TextStatements;
use crate::session::prepared::Registry;
use crate::session::relay::{KillSignal, RelayError};
use crate::session::state::ClientState;
use crate::session::{SessionError, Shared};
use crate::tls::Stream;

/// What the server side of a routed session uses of its client side during one request.
pub(super) struct ClientParts<'s, 'a> {
    /// The client's connection: answers are relayed to it, errors written to it.
    pub front: &'s mut ClientSide<'a>,
    /// Process state: the pool, congestion, configuration.
    pub shared: &'a Shared,
    /// Told what the servers answered (congestion and failover feedback).
    pub planner: &'s Planner,
    /// Who the server connections log in as.
    pub account: &'s Account,
    /// The pools the session's checkouts came from last.
    pub homes: &'s mut Homes,
    /// The session state every connection is brought up to before it runs a request.
    pub state: &'s mut ClientState,
    /// Transaction state: its deferred start is replayed before the statement that needs it; a
    /// connection lost mid-transaction ends it.
    pub txn: &'s mut Transaction,
    /// The client's prepared statements (prepared on a connection when first run there).
    pub ps: &'s mut Statements,
    /// The splice state: the last batch of an answer is held back while a splice is possible.
    pub splice: &'s mut PinSplice,
    /// The session list (the server thread running the request; the kill signal).
    pub reg: &'s Registration<'a>,
    /// The session's own hold of its kill switch (it remembers the waits it left).
    pub killed: &'s mut KillSignal,
    /// The session's latest clock reading (the request's start or the end of its planning): a
    /// parked connection's idle time is measured to it.
    pub clock: Instant,
}

/// The client's prepared statements, binary and text.
#[derive(Default)]
pub(super) struct Statements {
    pub(super) registry: Registry,
    pub(super) text: TextStatements,
    /// Moves on every close / deallocate: connections compare it to know when to sweep.
    pub(super) epoch: u64,
}

impl ClientParts<'_, '_> {
    /// The client gets `err` as the answer.
    pub(super) async fn failed(&mut self, req: &Request<'_>, err: ErrPacket) -> Result<Served, SessionError> {
        if req.shape != Shape::None {
            self.front.wire.write_packet(req.reply_seq, &err.encode()).await.map_err(SessionError::Client)?;
        }
        Ok(Served { conn: None, tracker: None, target: None, candidate: None, attempts: 1 })
    }

    /// A pooled connection to `server` for this session.
    pub(super) async fn checkout(&mut self, server: SocketAddr) -> Result<PooledConn, PoolError> {
        checkout(self.shared, self.account, self.homes, self.front, self.state, server, self.clock).await
    }

    /// Why the next statement must use the session's current connection, if it must.
    pub(super) fn sticky(&self) -> Option<StickyReason> {
        sticky(self.txn, self.ps)
    }

    /// Relays an answer from `backend` to the client; when the session may be spliced, its last
    /// batch is held back for [`super::RoutedSession::after_request`].
    pub(super) async fn relay_answer(
        &mut self,
        backend: &mut Wire<Stream>,
        tracker: &mut ResponseTracker,
    ) -> Result<(), RelayError> {
        self.splice.relay(backend, self.front.wire, tracker, self.killed).await
    }
}

/// A pooled connection to `server` for the session of `front`, logged in as `account`, in the
/// database of `state`; from one of the pools in `homes` when it is one of them. `now`: a recent
/// clock reading, to which a parked connection's idle time is measured.
pub(super) async fn checkout(
    shared: &Shared,
    account: &Account,
    homes: &mut Homes,
    front: &ClientSide<'_>,
    state: &ClientState,
    server: SocketAddr,
    now: Instant,
) -> Result<PooledConn, PoolError> {
    let key = KeyRef { server, tenant: &account.tenant, user: &account.user };
    // Bulk execution changes nothing else on the wire; progress reports only for clients that
    // asked: the pool never hands such a connection to another kind of client.
    let ext = crate::protocol::ext_caps::STMT_BULK_OPERATIONS | front.ext;
    let wire = crate::session::pool::wire_identity(front.caps, ext);
    // The connection the session kept since its last statement to this key: no pool traffic.
    if let Some(conn) = shared.pool.parked(homes, key, wire, state.id(), now) {
        return Ok(conn);
    }
    let login = || account.login_request(shared, front, state.database(), ext);
    shared.pool.get_remembered(homes, key, wire, login, state.id()).await
}

/// Why the next statement must use the session's current connection, if it must: a pin, a
/// transaction, or an open cursor of a prepared statement (the registry's, the one record).
pub(super) fn sticky(txn: &Transaction, ps: &Statements) -> Option<StickyReason> {
    txn.sticky().or_else(|| ps.registry.has_cursor().then_some(StickyReason::Cursor))
}

/// The connection holding the session's transaction, pins and cursors is gone: all of them
/// with it.
pub(super) fn lose_connection_state(txn: &mut Transaction, ps: &mut Statements) {
    txn.lost();
    ps.registry.clear_cursors();
}
