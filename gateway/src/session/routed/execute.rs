//! One request executed by the server side of a routed session, by its route: on the held
//! connection ([`ServerLink::execute_held`]), on one server ([`ServerLink::execute_on`]: the
//! previous one), or on the route decision's candidates in order until one serves it
//! ([`ServerLink::execute_planned`]) (docs/routing.md §7, §8). Each attempt ([`super::attempt`]) syncs the
//! session state, prepares statements there, replays a deferred `BEGIN`, sends and relays;
//! whether a failed attempt may go to the next candidate is its outcome's kind ([`Sent`]). What
//! the server side borrows of the client side is [`ClientParts`].

use std::net::SocketAddr;

use tracing::debug;

use super::failover;
use super::link::ServerLink;
use super::parts::{lose_connection_state, ClientParts};
use super::request::{Request, Sent, Served};
use crate::planner::Planned;
use crate::protocol::codes;
use crate::protocol::message::ErrPacket;
use crate::session::pool::PoolError;
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
        if !crate::session::pool::looks_alive(&mut conn) {
            // The server closed it while the session was idle (restart, kill, timeout).
            conn.mark_broken();
            let err = cx.lost_before(target);
            let mut s = cx.failed(req, err).await?;
            s.target = Some(target);
            return Ok(s);
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
        let mut conn = match cx.checkout(server).await {
            Ok(c) => c,
            Err(e) => return cx.failed(req, e.to_err_packet()).await,
        };
        if dependent {
            self.dependent.restore(&mut conn, cx.shared.config().connect_timeout()).await;
        }
        match self.attempt(cx, &mut conn, req, false).await {
            Sent::Relayed(t) => {
                Ok(Served { conn: Some(conn), tracker: Some(t), target: Some(server), candidate: None, attempts: 1 })
            }
            Sent::Retry(err) | Sent::Failed(err) => cx.failed(req, err).await,
            Sent::Fatal(e) => Err(e),
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
            let mut conn = match cx.checkout(cand.addr).await {
                Ok(c) => c,
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
            match self.attempt(cx, &mut conn, req, true).await {
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

fn sql_state(s: &str) -> [u8; 5] {
    let mut out = *b"HY000";
    if s.len() == 5 {
        out.copy_from_slice(s.as_bytes());
    }
    out
}
