//! One attempt of a request on one server connection: state sync, prepared statements there
//! ([`super::statement_conn`]), deferred `BEGIN` replay, send,
//! a look at the first answer packet (a refusal before execution may go elsewhere, docs/routing.md §7), relay.

use std::net::SocketAddr;

use tracing::debug;

use super::failover::{self, retryable_error};
use super::link::ServerLink;
use super::parts::{lose_connection_state, ClientParts};
use super::request::{Request, Sent};
use crate::protocol::command;
use crate::protocol::frame::{encode_packet, HEADER, MAX_FRAME};
use crate::protocol::message::{ErrPacket, ERR};
use crate::protocol::response::ResponseTracker;
use crate::protocol::{caps, codes};
use crate::session::pool::{PoolError, PooledConn};
use crate::session::relay::RelayError;
use crate::session::SessionError;

impl ServerLink {
    /// One attempt on `conn`: sync, replay a deferred start, send, relay. `retry`: a refusal before
    /// execution may go to another candidate.
    pub(super) async fn attempt(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        req: &Request<'_>,
        retry: bool,
    ) -> Sent {
        let server = conn.key().server;
        let thread = conn.thread_id();
        cx.reg.update(|i| i.current = Some((server, thread)));
        if let Err(e) = conn.wire.io.to_ring() {
            // Detached: the socket is closed and the request was never sent.
            conn.mark_broken();
            debug!(%server, error = %e, "server connection could not move to the ring");
            return self.not_reached(cx, server, retry);
        }
        if let Err(e) = conn.sync_state(cx.state).await {
            if let Some(sent) = stale(conn) {
                return sent;
            }
            return match e {
                PoolError::Sync { err, .. } => Sent::Failed(err),
                other => {
                    failover::report_failure(&cx.shared.congestion, server);
                    if retry {
                        Sent::Retry(other.to_err_packet())
                    } else {
                        Sent::Failed(self.lost(cx, server))
                    }
                }
            };
        }
        // Prepared statements first: a lazy prepare that fails leaves no transaction begun.
        let prepared = match self.before_send(cx, conn, req).await {
            Ok(p) => p,
            Err(sent) => return stale(conn).unwrap_or(sent),
        };
        let replay = req.prep.replays_deferred_start();
        if replay {
            if let Some(sent) = self.replay_deferred(cx, conn, retry).await {
                return sent;
            }
        }
        let payload = prepared.as_deref().unwrap_or(req.payload);
        conn.set_in_flight(true);
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        encode_packet(&mut out, 0, payload);
        let written = conn.wire.write_raw(&out).await;
        if out.capacity() <= super::link::KEEP_OUT {
            self.out = out;
        }
        if let Err(e) = written {
            // write_all failed: the server never got the whole request, so it did not run.
            conn.mark_broken();
            failover::report_failure(&cx.shared.congestion, server);
            debug!(%server, error = %e, "sending failed");
            return self.not_reached(cx, server, retry);
        }
        let mut tracker =
            ResponseTracker::for_command(req.shape, payload, conn.capabilities & caps::DEPRECATE_EOF != 0);
        if let Some(sent) = self.refused_before_execution(cx, conn, retry, tracker.is_done()).await {
            return sent;
        }
        if let Some(sent) = cx.prepare_answer(conn, req) {
            return sent;
        }
        if tracker.is_done() {
            if let Some(start) = cx.txn.deferred.take_if(|_| replay) {
                cx.txn.started(&start);
            }
            conn.set_in_flight(false);
            return Sent::Relayed(tracker);
        }
        if let Some(start) = cx.txn.deferred.take_if(|_| replay) {
            // The statement reached the server right behind the replayed start: it is running.
            cx.txn.started(&start);
        }
        match cx.relay_answer(&mut conn.wire, &mut tracker).await {
            Ok(()) => {
                conn.set_in_flight(false);
                Sent::Relayed(tracker)
            }
            Err(RelayError::BackendBeforeAnswer(e)) => {
                debug!(%server, error = %e, "connection lost after the request was sent");
                if let Some(sent) = stale(conn) {
                    return sent;
                }
                conn.mark_broken();
                failover::report_failure(&cx.shared.congestion, server);
                Sent::Failed(self.lost(cx, server))
            }
            Err(RelayError::Backend(e)) => Sent::Fatal(SessionError::Backend(e)),
            Err(RelayError::Client(e)) => Sent::Fatal(SessionError::Client(e)),
            Err(RelayError::Killed { next_seq }) => {
                // Mid-answer: the connection cannot go back to the pool.
                conn.mark_broken();
                Sent::Fatal(SessionError::Refused {
                    err: crate::session::relay::connection_killed(),
                    seq: next_seq.unwrap_or(req.reply_seq),
                })
            }
        }
    }

    /// Replays the deferred transaction start on `conn` (its OK is consumed). `None`: done, go on.
    async fn replay_deferred(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        retry: bool,
    ) -> Option<Sent> {
        let start = cx.txn.deferred.clone()?;
        let server = conn.key().server;
        let payload = [&[command::QUERY], start.sql.as_slice()].concat();
        let timeout = cx.shared.pool.config().connect_timeout().max(std::time::Duration::from_secs(30));
        conn.set_in_flight(true);
        let answer = crate::session::pool::command(conn, &payload, timeout).await;
        conn.set_in_flight(false);
        match answer {
            // Kept deferred until the statement itself was answered: a retry elsewhere replays it.
            Ok(Ok(_)) => None,
            Ok(Err(err)) if retry && retryable_error(err.code) => {
                conn.mark_broken();
                Some(Sent::Retry(not_started(&start.sql, &err)))
            }
            Ok(Err(err)) => {
                // The client was told its transaction began: the statement that needed it must
                // not run outside it (autocommit) nor be answered with the start's error as if
                // it were its own.
                cx.txn.deferred = None;
                Some(Sent::Failed(not_started(&start.sql, &err)))
            }
            Err(_) => {
                if let Some(sent) = stale(conn) {
                    // Still deferred: the request replays it on the next connection.
                    return Some(sent);
                }
                conn.mark_broken();
                failover::report_failure(&cx.shared.congestion, server);
                Some(self.not_reached(cx, server, retry))
            }
        }
    }

    /// Looks at the first answer packet: an ERR of docs/routing.md §7 (the server refused before executing)
    /// is consumed and means "try the next candidate"; a lost connection means the request
    /// failed. `None`: relay the answer.
    async fn refused_before_execution(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        retry: bool,
        no_answer: bool,
    ) -> Option<Sent> {
        if no_answer {
            return None;
        }
        let server = conn.key().server;
        match conn.wire.need_frame(MAX_FRAME).await {
            Err(e) => {
                debug!(%server, error = %e, "connection lost after the request was sent");
                if let Some(sent) = stale(conn) {
                    return Some(sent);
                }
                conn.mark_broken();
                failover::report_failure(&cx.shared.congestion, server);
                Some(Sent::Failed(self.lost(cx, server)))
            }
            Ok((len, _)) => {
                let first = conn.wire.buf.get(HEADER).copied();
                if !retry || first != Some(ERR) || len < 3 {
                    return None;
                }
                let err = ErrPacket::parse(&conn.wire.buf[HEADER..HEADER + len]).ok()?;
                if !retryable_error(err.code) {
                    return None;
                }
                let _ = conn.wire.buf.split_to(HEADER + len);
                conn.mark_broken();
                if failover::congesting_error(err.code) {
                    failover::report_failure(&cx.shared.congestion, server);
                }
                Some(Sent::Retry(err))
            }
        }
    }

    /// The connection to `server` failed before the request reached it. With `retry` the next
    /// candidate may serve it, and the session's state is untouched: a deferred start stays
    /// deferred, so that the next candidate replays it (cleared, the statement would run there
    /// outside the transaction the client began). Otherwise the client gets [`ServerLink::lost`].
    fn not_reached(&self, cx: &mut ClientParts<'_, '_>, server: SocketAddr, retry: bool) -> Sent {
        if retry {
            return Sent::Retry(never_sent(server));
        }
        Sent::Failed(self.lost(cx, server))
    }

    /// The error for a connection lost once the request was sent: never resent; the
    /// transaction, if any, is gone.
    pub(super) fn lost(&self, cx: &mut ClientParts<'_, '_>, server: SocketAddr) -> ErrPacket {
        let in_txn = cx.sticky().is_some() || self.is_holding() || cx.txn.deferred.is_some();
        lose_connection_state(cx.txn, cx.ps);
        cx.txn.deferred = None;
        let tail =
            if in_txn { "; the transaction (and anything the session kept on that connection) is lost" } else { "" };
        ErrPacket::new(
            codes::BACKEND_LOST,
            format!("Lost connection to server {server} during query (gateway); the statement may or may not have been executed{tail}"),
        )
    }
}

impl ClientParts<'_, '_> {
    /// The error for a held connection found closed before the request was sent.
    pub(super) fn lost_before(&mut self, server: SocketAddr) -> ErrPacket {
        let in_txn = self.sticky().is_some();
        lose_connection_state(self.txn, self.ps);
        let tail =
            if in_txn { "; the transaction (and anything the session kept on that connection) is lost" } else { "" };
        ErrPacket::new(
            codes::BACKEND_LOST,
            format!("Lost connection to server {server} (gateway); the statement was not sent{tail}"),
        )
    }
}

/// The error of a request that never reached `server`: nothing ran, nothing is lost.
pub(super) fn never_sent(server: SocketAddr) -> ErrPacket {
    ErrPacket::new(
        codes::BACKEND_LOST,
        format!("Lost connection to server {server} (gateway); the statement was not sent"),
    )
}

/// [`Sent::Stale`] when `conn` failed because its check found it closed before the request went
/// ([`crate::tls::Stream::stale`]): nothing ran there, and nothing the session has (its
/// transaction, a deferred start, its statements) is lost. The connection is closed.
pub(super) fn stale(conn: &mut PooledConn) -> Option<Sent> {
    if !conn.wire.io.stale() {
        return None;
    }
    conn.mark_broken();
    debug!(server = %conn.key().server, thread = conn.thread_id(), "stale connection: the request goes again");
    Some(Sent::Stale)
}

/// The answer to the statement whose replay of the deferred transaction start `start` the server
/// refused with `err`: the server's code and SQLSTATE, a message saying the transaction did not
/// start and the statement did not run.
pub(super) fn not_started(start: &[u8], err: &ErrPacket) -> ErrPacket {
    const SHOWN: usize = 200;
    let text = String::from_utf8_lossy(start);
    let text = text.trim();
    let cut = (0..=SHOWN.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let more = if cut < text.len() { "…" } else { "" };
    ErrPacket::with_state(
        err.code,
        &err.sql_state,
        format!(
            "gateway: the transaction did not start: the server refused `{}{more}` ({}: {}); this statement was not executed",
            &text[..cut],
            err.code,
            err.message
        ),
    )
}
