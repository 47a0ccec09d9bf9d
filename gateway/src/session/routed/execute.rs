//! One request executed by the server side of a routed session, by its route: on the held
//! connection ([`ServerLink::execute_held`]), on one server ([`ServerLink::execute_on`]: the
//! previous one), or on the route decision's candidates in order until one serves it
//! ([`ServerLink::execute_planned`]) (docs/routing.md §7, §8). Each attempt ([`super::attempt`]) syncs the
//! session state, prepares statements there, replays a deferred `BEGIN`, sends and relays;
//! whether a failed attempt may go to the next candidate is its outcome's kind ([`Sent`]). What
//! the server side borrows of the client side is [`ClientParts`].

use std::net::SocketAddr;

use tracing::debug;

use super::attempt::never_sent;
use super::failover;
use super::link::ServerLink;
use super::parts::{lose_connection_state, ClientParts};
use super::request::{Request, Sent, Served};
use crate::planner::Planned;
use crate::protocol::codes;
use crate::protocol::message::ErrPacket;
use crate::session::pool::{PoolError, PooledConn};
use crate::session::SessionError;

impl ServerLink {
    /// After an execution: the server and the server session the request ran on.
    pub(super) fn ran(&mut self, served: &Served) {
        if let Some(t) = served.target {
            self.ran_on(t);
        }
        if let Some(conn) = &served.conn {
            self.dependent.ran_on(conn);
        }
    }

    /// On the held connection (`Route::Held`): no retry; a connection that failed without
    /// breaking stays held.
    pub(super) async fn execute_held(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        req: &Request<'_>,
    ) -> Result<Served, SessionError> {
        let Some(mut conn) = self.take_held() else {
            return cx
                .failed(req, ErrPacket::new(codes::BACKEND_LOST, "gateway: the session's connection is gone"))
                .await;
        };
        let target = conn.key().server;
        if !crate::session::pool::alive_or_checked_on_send(&mut conn) {
            // The server closed it while the session was idle (restart, kill, timeout).
            conn.mark_broken();
            return closed_before(cx, req, target).await;
        }
        match self.attempt(cx, &mut conn, req, false).await {
            Sent::Relayed(t) => {
                Ok(Served { conn: Some(conn), tracker: Some(t), target: Some(target), candidate: None, attempts: 1 })
            }
            Sent::Retry(err) | Sent::Failed(err) => {
                if conn.is_broken() {
                    lose_connection_state(cx.txn, cx.ps);
                } else {
                    self.hold(conn);
                }
                let mut s = cx.failed(req, err).await?;
                s.target = Some(target);
                Ok(s)
            }
            // Found closed as the request went: as above.
            Sent::Stale => closed_before(cx, req, target).await,
            Sent::Fatal(e) => Err(e),
        }
    }

    /// On `server` (`Route::Server`: the previous statement's; `dependent`: its `LAST_INSERT_ID()`
    /// restored there first when the session lands on another server session). No retry.
    pub(super) async fn execute_on(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        req: &Request<'_>,
        server: SocketAddr,
        dependent: bool,
    ) -> Result<Served, SessionError> {
        let (sent, conn) = match self.attempt_fresh(cx, req, server, false, dependent).await {
            Ok(done) => done,
            Err(e) => return cx.failed(req, e.to_err_packet()).await,
        };
        match sent {
            Sent::Relayed(t) => {
                Ok(Served { conn: Some(conn), tracker: Some(t), target: Some(server), candidate: None, attempts: 1 })
            }
            Sent::Retry(err) | Sent::Failed(err) => cx.failed(req, err).await,
            Sent::Stale => cx.failed(req, never_sent(server)).await,
            Sent::Fatal(e) => Err(e),
        }
    }

    /// An attempt on a connection to `server` checked out for it, with `LAST_INSERT_ID()`
    /// restored there first when `dependent`; again on another while the one it got was found
    /// closed as the request went ([`Sent::Stale`]: only a connection the session kept is
    /// checked so, and the next checkout finds another), at most [`STALE_TRIES`] times.
    async fn attempt_fresh(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        req: &Request<'_>,
        server: SocketAddr,
        retry: bool,
        dependent: bool,
    ) -> Result<(Sent, PooledConn), PoolError> {
        let mut tries = 0;
        loop {
            let mut conn = cx.checkout(server).await?;
            if dependent {
                self.dependent.restore(&mut conn, cx.shared.config().connect_timeout()).await;
            }
            tries += 1;
            match self.attempt(cx, &mut conn, req, retry).await {
                Sent::Stale if tries < STALE_TRIES => debug!(%server, "the kept connection was closed: another one"),
                sent => return Ok((sent, conn)),
            }
        }
    }

    /// The route decision's candidates in order (`Route::Planned`), until one serves the request
    /// (docs/routing.md §7).
    pub(super) async fn execute_planned(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        req: &Request<'_>,
        planned: &Planned,
    ) -> Result<Served, SessionError> {
        let decision = match &planned.decision {
            Ok(d) => d,
            Err(e) => {
                let err = ErrPacket::with_state(e.mysql_errno(), &sql_state(e.sql_state()), e.to_string());
                return cx.failed(req, err).await;
            }
        };
        let max = failover::max_attempts(cx.front.config.current(&cx.shared.live), decision);
        let order = failover::attempt_order(decision, cx.shared.congestion(), max, planned.at.into_std());
        let (planner, account) = (cx.planner, cx.account);
        let tenant = &account.tenant;
        let mut last = None;
        for (i, cand) in order.iter().enumerate() {
            let (sent, conn) = match self.attempt_fresh(cx, req, cand.addr, true, false).await {
                Ok(done) => done,
                Err(e) if e.is_retryable() => {
                    if matches!(e, PoolError::Connect { .. }) {
                        failover::connect_feedback(planner, tenant, planned);
                        cx.shared.pool.clear_server(cand.addr);
                    }
                    last = Some(e.to_err_packet());
                    continue;
                }
                Err(e) => return cx.failed(req, e.to_err_packet()).await,
            };
            match sent {
                Sent::Relayed(t) => {
                    if let Some(code) = t.error_code {
                        failover::server_error_feedback(planner, tenant, planned, code);
                    }
                    let served = Served {
                        conn: Some(conn),
                        tracker: Some(t),
                        target: Some(cand.addr),
                        candidate: Some(cand.clone()),
                        attempts: i + 1,
                    };
                    return Ok(served);
                }
                Sent::Stale => last = Some(never_sent(cand.addr)),
                Sent::Retry(err) => {
                    failover::server_error_feedback(planner, tenant, planned, err.code);
                    debug!(server = %cand.addr, error = %err, "retrying on the next candidate");
                    last = Some(err);
                }
                Sent::Failed(err) => {
                    let mut s = cx.failed(req, err).await?;
                    s.target = Some(cand.addr);
                    s.attempts = i + 1;
                    return Ok(s);
                }
                Sent::Fatal(e) => return Err(e),
            }
        }
        failover::all_failed_feedback(planner, tenant, planned);
        let why = last.map_or_else(|| "no candidate".to_string(), |e| e.message);
        let err =
            ErrPacket::new(codes::BACKEND_UNREACHABLE, format!("gateway: no server could serve the request: {why}"));
        let mut s = cx.failed(req, err).await?;
        s.attempts = order.len();
        Ok(s)
    }
}

/// Checkouts of a request whose connection was found closed as the request went
/// ([`ServerLink::attempt_fresh`]).
const STALE_TRIES: usize = 3;

/// The answer to a request on the held connection, found closed before the request ran: the
/// session's state there (its transaction) is lost.
async fn closed_before(
    cx: &mut ClientParts<'_, '_>,
    req: &Request<'_>,
    target: SocketAddr,
) -> Result<Served, SessionError> {
    let err = cx.lost_before(target);
    let mut s = cx.failed(req, err).await?;
    s.target = Some(target);
    Ok(s)
}

fn sql_state(s: &str) -> [u8; 5] {
    let mut out = *b"HY000";
    if s.len() == 5 {
        out.copy_from_slice(s.as_bytes());
    }
    out
}
