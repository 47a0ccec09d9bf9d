//! What an answer teaches a routed session (docs/routing.md §8, §11): transaction status, session
//! state (`SET`, `USE`, the OK's session-state block), pins; then whether the connection stays
//! with the session or goes back to the pool; the route log line and the diagnosis and
//! slow-statement log lines (`[log] route_diagnosis`, `slow_statement_ms`).

use tracing::{debug, info, warn};

use super::query::Query;
use super::registry::Sticky;
use super::request::{Request, Served, Tie};
use super::route_log::{sql_head, RouteRecord};
use super::transaction::{PinReason, SESSION_PINS};
use super::RoutedSession;
use crate::config::RouteDiagnosis;
use crate::metrics::RouteOutcome;
use crate::planner::{render_explain, Planned};
use crate::protocol::message::OkPacket;
use crate::protocol::response::ResponseTracker;
use crate::protocol::status;
use crate::route::{Consistency, RankedCandidate};
use crate::session::pool::PooledConn;
use crate::session::state::{parse_set, Assignment};
use crate::sql::{self, Analysis, StmtKind};

impl RoutedSession<'_> {
    /// Learns from a COM_QUERY answer: transaction status, session state, pins.
    pub(super) fn learn_query(&mut self, conn: &mut PooledConn, tracker: &ResponseTracker, q: &mut Query<'_>) {
        let (text, a, set) = (q.text, &q.analysis, q.set.take());
        if let Some(st) = tracker.last_status {
            self.txn.after_status(st, a.kind, &q.txn);
        }
        if !tracker.failed {
            if a.statements > 1 {
                let mode = self.state.mode();
                for stmt in sql::split::statements_in(text, mode) {
                    let read = sql::in_default_mode(stmt, mode);
                    self.learn_statement(conn, stmt, &sql::analyze_statement(&read), None);
                }
            } else {
                self.learn_statement(conn, text, a, set);
            }
        }
        self.observe_ok(conn, tracker);
    }

    /// What one statement that ran on `conn` teaches; `set`: its assignments when the caller
    /// parsed them already (else a SET is parsed here).
    pub(super) fn learn_statement(
        &mut self,
        conn: &mut PooledConn,
        text: &str,
        a: &Analysis<'_>,
        set: Option<Vec<Assignment>>,
    ) {
        match a.kind {
            StmtKind::Set => match set.or_else(|| parse_set(text.as_bytes(), self.state.mode())) {
                Some(items) => {
                    // A SET the server ran may also have set a route variable (OceanBase knows
                    // `ob_read_consistency`): route by it too.
                    self.route_vars = super::local::route_vars_after(&items, &self.route_vars);
                    self.state.observe_set(items, Some(conn.sync_mut()));
                    if self.state.has_expressions() {
                        self.pin(PinReason::SetExpression);
                    }
                }
                None => self.pin(PinReason::UnreplayableSet),
            },
            StmtKind::Use => {
                if let Some(db) = &a.database {
                    self.state.set_database(db, Some(conn.sync_mut()));
                }
            }
            StmtKind::Prepare | StmtKind::Execute | StmtKind::Deallocate => self.pin(PinReason::TextPrepared),
            _ => {}
        }
        if a.pins.0 & SESSION_PINS.0 != 0 {
            self.pin(if a.pins.contains(sql::Pins::TEMP_TABLE) {
                PinReason::TemporaryTable
            } else if a.pins.contains(sql::Pins::LOCK_TABLES) {
                PinReason::LockTables
            } else {
                PinReason::UserLock
            });
        }
    }

    /// The session-state block of the final OK (the server's word on variables and schema).
    pub(super) fn observe_ok(&mut self, conn: &mut PooledConn, tracker: &ResponseTracker) {
        let Some(raw) = &tracker.last_ok else { return };
        let Ok(ok) = OkPacket::parse(raw, conn.capabilities) else { return };
        self.link.dependent.observe_insert_id(ok.last_insert_id);
        if ok.status & status::SESSION_STATE_CHANGED != 0 && !ok.session_state.is_empty() {
            if let Err(e) = self.state.observe_ok(&ok.session_state, Some(conn.sync_mut())) {
                debug!(error = %e, "unreadable session-state block");
            }
        }
    }

    /// Keeps the connection if the session is sticky, else gives it back to the pool.
    pub(super) fn keep_or_release(&mut self, conn: PooledConn) {
        self.note_sticky();
        if self.sticky().is_some() {
            self.link.hold(conn);
        } else {
            // Kept for the session's next statement to the same server; the pool takes it back
            // when another request needs it (`pool::park`).
            // Its idle time starts where the answer ended (`ended`, read once per statement).
            let since = self.ended.unwrap_or_else(std::time::Instant::now);
            self.homes.park(conn, since);
        }
    }

    /// Records in the session list why the session keeps its connection (SHOW PROXYSESSION):
    /// only a change, since the list's entry is behind a lock (the usual statement changes
    /// nothing).
    pub(super) fn note_sticky(&mut self) {
        let now = Sticky { sticky: self.sticky(), pin: self.txn.pin };
        if now != self.noted {
            self.noted = now;
            self.reg.set_sticky(now);
        }
    }

    /// The statement text of a request, for the logs.
    fn log_sql<'r>(req: &'r Request<'_>) -> &'r [u8] {
        req.log_sql.map_or_else(|| req.payload.get(1..).unwrap_or_default(), str::as_bytes)
    }

    /// `[log] route_diagnosis = "trace"`: the EXPLAIN ROUTE trace of a planned request.
    pub(super) fn log_trace(&self, req: &Request<'_>, planned: &Planned) {
        let text = render_explain(&sql_head(Self::log_sql(req)), planned);
        info!(target: "gateway::route", conn = self.front.id, seq = self.requests, "EXPLAIN ROUTE\n{text}");
    }

    /// `[log] slow_statement_ms`: one WARN line when the request took longer (`elapsed`).
    pub(super) fn log_slow(
        &self,
        req: &Request<'_>,
        served: &Served,
        outcome: RouteOutcome,
        slow_ms: u64,
        elapsed: std::time::Duration,
    ) {
        if slow_ms == 0 || elapsed.as_millis() <= u128::from(slow_ms) {
            return;
        }
        warn!(
            target: "gateway::slow",
            conn = self.front.id,
            user = %self.account.user,
            db = %self.state.database().unwrap_or(""),
            server = ?served.target,
            elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            outcome = outcome.name(),
            sql = %sql_head(Self::log_sql(req)),
            "slow statement"
        );
    }

    pub(super) fn log_route(
        &self,
        req: &Request<'_>,
        served: &Served,
        consistency: Option<Consistency>,
        partition: Option<String>,
        tie: Tie,
        diag: RouteDiagnosis,
    ) {
        let log = self.shared.route_log.as_ref();
        if log.is_none() && diag == RouteDiagnosis::Off {
            return;
        }
        let cluster = self.planner.locator().cluster();
        let server_name = served.target.and_then(|t| cluster.server(t).map(|s| s.name.clone()));
        let consistency = match consistency {
            Some(Consistency::Weak) => "weak",
            _ => "strong",
        };
        let record = RouteRecord {
            conn: self.front.id,
            seq: self.requests,
            cmd: req.cmd,
            sql: Self::log_sql(req),
            consistency,
            target: served.target,
            server_name,
            role: log_role(served.candidate.as_ref(), tie),
            partition,
            sticky: tie.name(),
            attempts: served.attempts,
        };
        if let Some(log) = log {
            log.write(&record);
        }
        if diag >= RouteDiagnosis::Route {
            record.trace();
        }
    }
}

/// The metrics outcome of a request served by route candidate `c`: the role it was chosen as.
pub(super) fn outcome(c: &RankedCandidate) -> crate::metrics::RouteOutcome {
    use crate::metrics::RouteOutcome;
    use crate::route::ldc::RoleLetter;
    match c.code.and_then(|code| code.role) {
        Some(RoleLetter::Leader) => RouteOutcome::Leader,
        _ if c.replica_type == crate::route::ReplicaType::ReadOnly => RouteOutcome::Readonly,
        Some(RoleLetter::Follower | RoleLetter::Duplicate) => RouteOutcome::Follower,
        None => RouteOutcome::TenantServer,
    }
}

/// The route log's `role` of a request: `sticky` when a held connection or the previous server
/// served it, else the role its candidate was chosen as (`leader`, `follower`, `readonly`,
/// `tenant` for a tenant server without a partition role).
fn log_role(candidate: Option<&RankedCandidate>, tie: Tie) -> &'static str {
    use crate::metrics::RouteOutcome;
    if tie != Tie::Previous {
        return "sticky";
    }
    match candidate.map(outcome) {
        Some(RouteOutcome::Leader) => "leader",
        Some(RouteOutcome::Follower) => "follower",
        Some(RouteOutcome::Readonly) => "readonly",
        _ => "tenant",
    }
}
