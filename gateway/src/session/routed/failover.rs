//! Retries and feedback (docs/routing.md §12, §7): the order in which a request tries its
//! candidates (congested servers last), which server errors allow another candidate, and the
//! location-cache feedback of failures.
//!
//! The invariant: a statement is sent again elsewhere only if nothing of it ran — the
//! connection failed before it was sent, or the server refused it before executing it with one
//! of the errors of docs/routing.md §7, and only for the first statement of a transaction or outside one. A
//! connection lost after the statement was sent is never retried.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Instant;

use crate::planner::{Planned, Planner};
use crate::route::{Calm, CongestionManager, CongestionState, Ranked, RankedCandidate, RouteDecision};
use crate::topology::{Feedback, FeedbackScope};

/// `OB_TENANT_NOT_IN_SERVER`.
const TENANT_NOT_IN_SERVER: u16 = 5150;
/// `OB_SERVER_IS_STOPPING`.
const SERVER_IS_STOPPING: u16 = 8002;
/// `OB_SERVER_IS_INIT`.
const SERVER_IS_INIT: u16 = 8001;
/// `OB_CONNECT_ERROR`.
const CONNECT_ERROR: u16 = 4124;
/// `OB_ERR_READ_ONLY` (a write reached a read-only zone).
const ERR_READ_ONLY: u16 = 5081;
/// MariaDB / MySQL: the server is shutting down (ER_SERVER_SHUTDOWN).
const SERVER_SHUTDOWN: u16 = 1053;

/// Server errors after which another candidate may run the request (docs/routing.md §7): the server refused
/// it before executing it.
pub fn retryable_error(code: u16) -> bool {
    matches!(
        code,
        TENANT_NOT_IN_SERVER | SERVER_IS_STOPPING | SERVER_IS_INIT | CONNECT_ERROR | ERR_READ_ONLY | SERVER_SHUTDOWN
    )
}

/// Server errors that also count as a server failure for congestion control (docs/routing.md §6).
pub fn congesting_error(code: u16) -> bool {
    matches!(code, SERVER_IS_STOPPING | SERVER_IS_INIT | SERVER_SHUTDOWN)
}

/// The servers to try, in order: the decision's order with congested servers moved behind the
/// usable ones (dead last), each server once, at most `max_attempts`. An alive-congested server
/// whose retry interval has passed is tried by one request only (`claim_retry`), and only by a
/// request that would try it first: a request that merely lists it behind a usable server must
/// not use up the retry without trying it.
/// `now`: the statement's clock reading.
pub fn attempt_order(
    decision: &RouteDecision,
    (congestion, calm): (&Mutex<CongestionManager>, &Calm),
    max_attempts: usize,
    now: Instant,
) -> Ranked {
    if calm.is_calm() {
        // Every server is alive: the order is the decision's, without the lock every session
        // shares.
        return alive_order(decision, max_attempts);
    }
    // Inline for the usual few replicas, as the returned order.
    let mut ranked: smallvec::SmallVec<[(u8, RankedCandidate); 4]> = smallvec::SmallVec::new();
    let Ok(mut m) = congestion.lock() else {
        return decision.order().take(max_attempts).cloned().collect();
    };
    for c in decision.order() {
        if ranked.iter().any(|(_, r)| r.addr == c.addr) {
            continue;
        }
        let first = !ranked.iter().any(|(s, _)| *s == 0);
        let state = m.state(c.addr, now);
        let (severity, state) = match state {
            CongestionState::Alive => (0, state),
            // The claim moves the retry on: the state is read again after it.
            CongestionState::RetryDue if first && m.claim_retry(c.addr, now) => (0, m.state(c.addr, now)),
            CongestionState::RetryDue => (1, state),
            CongestionState::Congested(k) => (2 + k as u8, state),
        };
        let mut c = c.clone();
        c.congestion = state;
        ranked.push((severity, c));
    }
    ranked.sort_by_key(|(s, _)| *s);
    ranked.truncate(max_attempts.max(1));
    ranked.into_iter().map(|(_, c)| c).collect()
}

/// [`attempt_order`] when every server is alive.
fn alive_order(decision: &RouteDecision, max_attempts: usize) -> Ranked {
    let max = max_attempts.max(1);
    let mut out = Ranked::new();
    for c in decision.order() {
        if out.len() == max {
            break;
        }
        if out.iter().all(|r| r.addr != c.addr) {
            let mut c = c.clone();
            c.congestion = CongestionState::Alive;
            out.push(c);
        }
    }
    out
}

/// Records a failure of `server` (connect error, lost connection, stopping server).
pub fn report_failure(congestion: &Mutex<CongestionManager>, server: SocketAddr) {
    if let Ok(mut m) = congestion.lock() {
        m.on_failure(server, Instant::now());
    }
}

/// The location-cache entries a routed statement used (built only when feedback is applied).
pub fn scope(tenant: &str, planned: &Planned) -> FeedbackScope {
    FeedbackScope { tenant: tenant.to_string(), table: planned.table.as_deref().cloned(), tablet_id: planned.tablet_id }
}

/// Applies the feedback a server error carries (NOT_MASTER, TENANT_NOT_IN_SERVER, connect
/// errors) to the entries the statement `planned` for `tenant` used.
pub fn server_error_feedback(planner: &Planner, tenant: &str, planned: &Planned, code: u16) {
    if let Some(fb) = Feedback::from_server_error(code) {
        planner.locator().feedback(&scope(tenant, planned), fb);
    }
}

/// Connecting to the target failed: its entry is dirty.
pub fn connect_feedback(planner: &Planner, tenant: &str, planned: &Planned) {
    planner.locator().feedback(&scope(tenant, planned), Feedback::ConnectFailed);
}

/// Every attempt failed: everything the route used is dirty.
pub fn all_failed_feedback(planner: &Planner, tenant: &str, planned: &Planned) {
    planner.locator().feedback(&scope(tenant, planned), Feedback::AllFailed);
}

/// How many candidates a request may try: `connect_observer_max_retries` (2–5, 3 without
/// `[routing]`), bounded by the decision.
pub(super) fn max_attempts(config: &crate::config::Config, d: &RouteDecision) -> usize {
    let retries = config.routing.as_ref().map_or(3, |r| r.connect_observer_max_retries.clamp(2, 5));
    d.max_attempts(retries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pre_execution_refusals_are_retried() {
        for code in [5150, 8001, 8002, 4124, 5081, 1053] {
            assert!(retryable_error(code), "{code}");
        }
        for code in [4038, 1062, 1146, 1213, 2013] {
            assert!(!retryable_error(code), "{code}");
        }
    }
}
