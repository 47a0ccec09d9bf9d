//! Kernel splice of a routed session pinned for good (docs/dataplane.md §3, `dataplane::splice`).
//!
//! With `[dataplane] splice = true` and `splice_pinned` (default on), every answer's last batch
//! is held back ([`relay::answer_holding_last`]): the client has not got the end of the answer,
//! so it is silent. After the request, if the session is pinned for good ([`RoutedSession::is_pinned`])
//! and nothing keeps it in userspace ([`RoutedSession::splice_blocker`]), the client socket and
//! the pinned server connection's socket are inserted into the splice map, the splice takes
//! effect, and only then is the held batch written (docs/dataplane.md §3, P1). Otherwise the batch is written
//! as usual and the check repeats after the next answer.
//!
//! A session is not spliced while (each checked at the end of every answer):
//! * the client leg is TLS (never, docs/dataplane.md §3), or the splicer is unavailable;
//! * a statement is in flight, or bytes wait in either direction: the client pipelined its next
//!   request (buffered by the gateway or queued on the socket, also re-checked right after the
//!   insertion, P1), or the server sent more than the answer;
//! * the client has prepared statements registered (binary or text), or the connection holds
//!   statements prepared by the gateway: client statement ids are not the server's, and the
//!   kernel path cannot translate them; this covers cursors and held long data too;
//! * a `BEGIN` is deferred by the gateway (the server does not know it yet), a cursor is open;
//! * session state the gateway holds is not yet on the connection (a `SET` answered locally).
//!
//! Once spliced, the server connection leaves the pool for good (closed with the session) and
//! every byte goes straight to that server: the gateway no longer answers anything itself
//! (SHOW PROCESSLIST, KILL by gateway id, `ob_*` routing variables, COM_PING are the server's)
//! and writes no route-log lines. Other sessions still see it in SHOW PROCESSLIST (State
//! `spliced`) and can KILL it: KILL QUERY goes to its server thread, KILL CONNECTION kills that
//! thread and cancels the session, which closes both sockets.

use std::os::fd::AsFd;
use std::time::Instant;

use tracing::{debug, info};

use super::transaction::PinReason;
use super::{Flow, RoutedSession};
use crate::dataplane::splice::{self, sys, Eligibility, Splicer};
use crate::protocol::frame::Wire;
use crate::protocol::response::ResponseTracker;
use crate::protocol::ProtocolError;
use crate::session::relay::{self, RelayError};
use crate::session::{SessionError, Shared};
use crate::tls::Stream;

use super::registry::SPLICED;

/// A routed session's splice state.
#[derive(Debug, Default)]
pub(super) struct PinSplice {
    /// The session may be spliced at all: splice and `splice_pinned` on, not TLS, splicer loaded.
    possible: bool,
    /// The last batch of the latest answer, not yet written to the client.
    last_batch: Option<bytes::BytesMut>,
}

impl PinSplice {
    /// Whether sessions of this gateway may be spliced once pinned (`tls`: the client leg).
    pub(super) fn new(shared: &Shared, tls: bool) -> Self {
        let live = shared.config();
        let config = live.dataplane.as_ref();
        let possible = Eligibility::of_pinned(config, tls) == Eligibility::Splice && Splicer::global().is_ok();
        PinSplice { possible, last_batch: None }
    }

    /// Whether the session may be spliced once pinned.
    pub(super) fn possible(&self) -> bool {
        self.possible
    }

    /// Relays an answer from `backend` to `client`; when the session may be spliced, the last
    /// batch is held back ([`Self::last_batch`]) for [`RoutedSession::after_request`].
    pub(super) async fn relay(
        &mut self,
        backend: &mut Wire<Stream>,
        client: &mut Wire<Stream>,
        tracker: &mut ResponseTracker,
        killed: &mut relay::KillSignal,
    ) -> Result<(), RelayError> {
        // An answer held back earlier in this request goes first (answers stay in order).
        if let Some(earlier) = self.last_batch.take() {
            client.write_raw(&earlier).await.map_err(RelayError::Client)?;
        }
        if !self.possible {
            return relay::answer(backend, client, tracker, killed).await;
        }
        self.last_batch = relay::answer_holding_last(backend, client, tracker, killed).await?;
        Ok(())
    }
}

impl RoutedSession<'_> {
    /// After a request: splices the session if it is pinned and quiet, else writes the held
    /// end of the answer. `Flow::Close` once a spliced session has ended.
    pub(super) async fn after_request(&mut self, flow: Result<Flow, SessionError>) -> Result<Flow, SessionError> {
        let Some(last) = self.splice.last_batch.take() else { return flow };
        if matches!(flow, Ok(Flow::Continue)) && self.is_pinned() {
            match self.splice_blocker() {
                None => return Box::pin(self.splice(&last)).await,
                Some(why) => debug!(why, "pinned session not spliced at this answer"),
            }
        }
        self.front.wire.write_raw(&last).await.map_err(SessionError::Client)?;
        flow
    }

    /// Why the pinned session cannot be spliced now (`None`: it can).
    fn splice_blocker(&self) -> Option<&'static str> {
        let Some(conn) = self.link.held() else { return Some("no held connection") };
        if self.txn.deferred.is_some() {
            return Some("a transaction start deferred by the gateway");
        }
        if self.ps.registry.has_cursor() {
            return Some("an open cursor");
        }
        if !self.ps.registry.is_empty() || !self.ps.text.is_empty() || !conn.sync().statements.is_empty() {
            return Some("prepared statements (client ids are not the server's)");
        }
        if conn.is_broken() || !conn.wire.buf.is_empty() {
            return Some("server bytes beyond the answer");
        }
        if !self.state.plan(conn.sync()).steps.is_empty() {
            return Some("session state not yet on the connection");
        }
        let pending = self.front.wire.io.tcp().is_none_or(|t| sys::readable_bytes(t.as_fd()).map_or(true, |n| n > 0));
        if !self.front.wire.buf.is_empty() || pending {
            return Some("the client pipelined its next request");
        }
        None
    }

    /// Splices the client with the held connection, writes `last`, supervises until both sides
    /// close (or the session is killed: the future is dropped, both sockets close).
    async fn splice(&mut self, last: &[u8]) -> Result<Flow, SessionError> {
        let Some(conn) = self.link.held() else { return self.write_last(last).await };
        let live = self.shared.config();
        let config = live.dataplane.as_ref();
        let tls = self.front.wire.io.is_tls() || conn.wire.io.is_tls();
        if tls {
            debug!("pinned session not spliced: TLS on the client or the server leg");
        }
        let (Some(client_tcp), Some(server_tcp)) = (self.front.wire.io.tcp(), conn.wire.io.tcp()) else {
            return self.write_last(last).await;
        };
        let Some(mut prepared) = splice::prepare_pinned(config, tls, client_tcp, server_tcp) else {
            return self.write_last(last).await;
        };
        // A client that sent before its socket entered the map would have its bytes stuck (P1).
        if self.front.wire.io.tcp().is_none_or(|t| sys::has_pending_bytes(t.as_fd()).unwrap_or(true)) {
            debug!("client bytes arrived during the splice insertion: stays in userspace");
            drop(prepared);
            return self.write_last(last).await;
        }
        let Some(conn) = self.link.take_held() else { return self.write_last(last).await };
        let (server, thread) = (conn.key().server, conn.thread_id());
        let why = self.txn.pin.map_or("pin", PinReason::describe);
        let Some((mut backend, _)) = conn.detach() else {
            return Err(SessionError::Backend(ProtocolError::Malformed("pinned connection already left the pool")));
        };
        // Listed as spliced, with its server thread for KILL, before the client can see the end
        // of the answer.
        self.reg.update(|i| {
            i.command = SPLICED;
            i.info = None;
            i.current = Some((server, thread));
            i.since = Instant::now();
        });
        let io = |e| SessionError::Client(ProtocolError::Io(std::io::Error::other(e)));
        prepared.activate(self.front.wire, &mut backend.wire, last).await.map_err(io)?;
        info!(%server, thread, why, "routed session spliced in the kernel");
        let _ = prepared.run(self.front.wire, &mut backend.wire).await;
        Ok(Flow::Close)
    }

    async fn write_last(&mut self, last: &[u8]) -> Result<Flow, SessionError> {
        self.front.wire.write_raw(last).await.map_err(SessionError::Client)?;
        Ok(Flow::Continue)
    }
}
