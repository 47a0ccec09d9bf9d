//! One request of a routed session, the client side's part: local answers, the target (held
//! connection, previous server, or the route decision with its retry candidates), the server
//! side's execution ([`super::execute`]), what the answer teaches, metrics and route logs
//! (docs/routing.md §1 stages 8–10, §8, §11).

use tracing::debug;

use super::local::{self, SetAction};
use super::query::Query;
use super::request::{Prep, Request, Route, Served, Tie};
use super::statements::is_statement_command;
use super::transaction::{PinReason, StickyReason, TxnStatement, DEPENDENT_PINS};
use super::{Flow, RoutedSession};
use crate::config::RouteDiagnosis;
use crate::metrics::RouteOutcome;
use crate::protocol::command::{self, Shape};
use crate::protocol::resultset::TextResultSet;
use crate::session::glance::{Glance, Word};
use crate::session::SessionError;
use crate::sql::{self, Analysis, StmtKind};

impl RoutedSession<'_> {
    /// COM_QUERY.
    pub(super) async fn query(
        &mut self,
        payload: &[u8],
        text: &str,
        glance: Glance,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        // The template of the statement's shape goes back to the session's memo however the
        // statement ends.
        let mut template = None;
        let flow = self.query_shaped(payload, text, glance, reply_seq, &mut template).await;
        if let Some(t) = template {
            self.shapes.give_back(t);
        }
        flow
    }

    async fn query_shaped(
        &mut self,
        payload: &[u8],
        text: &str,
        glance: Glance,
        reply_seq: u8,
        template: &mut Option<sql::shape::Template>,
    ) -> Result<Flow, SessionError> {
        let text = std::borrow::Cow::Borrowed(text);
        // CONNECTION_ID() answers the gateway's id, whichever server runs the statement.
        let with_id = glance
            .mentions(Word::ConnectionId)
            .then(|| crate::session::connection_id::rewrite(&text, self.front.id, self.state.mode()))
            .flatten()
            .map(|sql| [&[command::QUERY], sql.as_bytes()].concat());
        let (payload, text) = match &with_id {
            Some(p) => (p.as_slice(), String::from_utf8_lossy(&p[1..])),
            None => (payload, text),
        };
        let read = self.read(&text);
        // A statement of a shape seen before is bound to the shape's template (sql::shape).
        // Built in place: the analysis is not moved once more.
        let mut q = Query {
            text: &text,
            analysis: self.shared.shapes.analyze(&read, template, &mut self.shapes),
            txn: TxnStatement::Other,
            set: None,
        };
        q.classify(self.state.mode());
        if let Some(flow) = self.local_query(&mut q, reply_seq).await? {
            self.shared.metrics.statement(q.analysis.kind, RouteOutcome::Local, None, self.started.elapsed());
            return Ok(flow);
        }
        // Boxed: the text prepared statements' future is larger than the whole common path's.
        if super::text_statements::is_text_statement(&q.analysis) {
            if let Some(flow) = Box::pin(self.text_statement(payload, &read, &q.analysis, reply_seq)).await? {
                return Ok(flow);
            }
        }
        let rewritten;
        let mut payload = payload;
        if let Some(sql) = glance.mentions(Word::Socket).then(|| local::rewrite_socket_select(&text)).flatten() {
            rewritten = [&[command::QUERY], sql.as_bytes()].concat();
            payload = &rewritten;
        }
        let route = self.route_for(&q.analysis, "COM_QUERY").await;
        let req = Request { payload, shape: Shape::Results, reply_seq, cmd: "query", prep: Prep::None, log_sql: None };
        let served = self.serve(&req, route, &q.analysis).await?;
        if let (Some(mut conn), Some(tracker)) = (served.conn, served.tracker) {
            self.learn_query(&mut conn, &tracker, &mut q);
            self.keep_or_release(conn);
        } else if q.txn == TxnStatement::XaEnd {
            self.txn.xa = false;
        }
        Ok(Flow::Continue)
    }

    /// Statements answered without a server. `None`: not one of them.
    async fn local_query(&mut self, q: &mut Query<'_>, reply_seq: u8) -> Result<Option<Flow>, SessionError> {
        let text = q.text;
        match &q.txn {
            TxnStatement::Start(start)
                if self.sticky() != Some(StickyReason::Transaction) && self.txn.deferred.is_none() =>
            {
                debug!(xa = start.xa, "transaction start deferred");
                self.txn.deferred = Some(start.clone());
                return self.reply_ok(reply_seq).await.map(Some);
            }
            TxnStatement::End if self.txn.deferred.is_some() && self.sticky() != Some(StickyReason::Transaction) => {
                debug!("COMMIT / ROLLBACK of a deferred transaction start: answered locally");
                self.txn.deferred = None;
                return self.reply_ok(reply_seq).await.map(Some);
            }
            _ => {}
        }
        if self.txn.deferred.is_some() {
            if let Some(column) = local::tx_read_only_select(text) {
                return self.tx_read_only(&column, reply_seq).await.map(Some);
            }
        }
        match local::set_action(q.set.as_deref(), &self.route_vars) {
            SetAction::Route(vars) => {
                self.route_vars = vars;
                // OceanBase connections get `ob_read_consistency` with the next sync.
                self.state.observe_answered_set(q.set.take().unwrap_or_default(), &local::GATEWAY_ONLY);
                return self.reply_ok(reply_seq).await.map(Some);
            }
            SetAction::Hold => {
                self.state.observe_set(q.set.take().unwrap_or_default(), None);
                return self.reply_ok(reply_seq).await.map(Some);
            }
            SetAction::Forward => {}
        }
        Ok(None)
    }

    /// `SELECT @@tx_read_only` inside a deferred transaction start (docs/routing.md §8).
    async fn tx_read_only(&mut self, column: &str, reply_seq: u8) -> Result<Flow, SessionError> {
        let session = ["tx_read_only", "transaction_read_only"]
            .iter()
            .find_map(|v| self.state.system(v).and_then(|v| v.as_bool()))
            .unwrap_or(false);
        let value = self.txn.deferred_read_only().unwrap_or(session);
        let mut rs = TextResultSet::with_text_columns(&[column]);
        rs.columns[0].1 = crate::protocol::resultset::ColumnKind::Int;
        rs.rows.push(vec![Some(u8::from(value).to_string())]);
        let out = rs.encode(reply_seq, self.front.caps, self.txn.status());
        self.front.wire.write_raw(&out).await.map_err(SessionError::Client)?;
        Ok(Flow::Continue)
    }

    /// Commands other than COM_QUERY: COM_INIT_DB, prepared statements, COM_FIELD_LIST, …
    pub(super) async fn other(
        &mut self,
        cmd: u8,
        payload: &[u8],
        shape: Shape,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        if is_statement_command(cmd) {
            return self.statement_command(cmd, payload, reply_seq).await;
        }
        let analysis = sql::analyze("");
        let route = self.command_target().await;
        let req = Request { payload, shape, reply_seq, cmd: command::log_name(cmd), prep: Prep::None, log_sql: None };
        let served = self.serve(&req, route, &analysis).await?;
        let (Some(mut conn), Some(tracker)) = (served.conn, served.tracker) else { return Ok(Flow::Continue) };
        if let Some(st) = tracker.last_status {
            self.txn.after_status(st, StmtKind::Other, &TxnStatement::Other);
        }
        self.observe_ok(&mut conn, &tracker);
        if !tracker.failed {
            match cmd {
                command::INIT_DB => {
                    let db = String::from_utf8_lossy(&payload[1..]).into_owned();
                    self.state.set_database(&db, Some(conn.sync_mut()));
                }
                command::SET_OPTION => self.pin(PinReason::SetOption),
                _ => {}
            }
        }
        self.keep_or_release(conn);
        Ok(Flow::Continue)
    }

    /// Commands without a statement: the held connection, else the previous server, else a
    /// tenant server.
    async fn command_target(&mut self) -> Route {
        if let Some(why) = self.link.held().and(self.sticky()) {
            return Route::Held(why);
        }
        match self.link.last_server() {
            Some(s) => Route::Server(s, Tie::Previous),
            None => Route::Planned(Box::new(Box::pin(self.planner.plan_command(&self.context())).await)),
        }
    }

    /// The target of a statement.
    pub(super) async fn route_for(&mut self, a: &Analysis<'_>, cmd: &str) -> Route {
        if let (true, Some(why)) = (self.link.is_holding(), self.sticky()) {
            return Route::Held(why);
        }
        if a.pins.0 & DEPENDENT_PINS.0 != 0 {
            if let Some(s) = self.link.last_server() {
                return Route::Server(s, Tie::Dependent);
            }
        }
        // Untraced unless `[log] route_diagnosis = "trace"`: building the trace doubles the cost.
        let traced = self.logging.diag == RouteDiagnosis::Trace;
        // The planner's clock reading (cache freshness, then the attempts' congestion check).
        let t0 = tokio::time::Instant::now();
        let planned = if traced {
            self.planner.plan_analysis(a, cmd, &self.context()).await
        } else {
            let ctx = self.context();
            self.planner.route(a, &ctx, &mut self.memo, t0).await
        };
        // The reading that ends the planning's time is the checkout's too (`clock`).
        let t1 = tokio::time::Instant::now();
        self.route_time = Some(t1.saturating_duration_since(t0));
        self.clock = t1.into_std();
        // A remembered table was listed when the session first routed by it.
        if let Some(key) = planned.table.as_ref().filter(|_| !planned.remembered) {
            self.reg.touched(key);
        }
        Route::Planned(Box::new(planned))
    }

    /// Runs a request on its route (the server side's executions, [`super::execute`]); the client
    /// has its answer (or an error) when this returns. Counts, logs and times it.
    pub(super) async fn serve(
        &mut self,
        req: &Request<'_>,
        route: Route,
        a: &Analysis<'_>,
    ) -> Result<Served, SessionError> {
        self.requests += 1;
        let shared = self.shared;
        let metrics = &shared.metrics;
        let (diag, slow_ms) = (self.logging.diag, self.logging.slow_ms);
        let (consistency, partition, sticky) = match &route {
            Route::Held(why) => (None, None, Tie::Sticky(*why)),
            Route::Server(_, tie) => (None, None, *tie),
            Route::Planned(planned) => {
                if let Some(c) = planned.cache {
                    metrics.cache_lookup(c);
                }
                if planned.partitioned {
                    metrics.partition_calc(planned.location.is_some());
                }
                let consistency = planned.decision.as_ref().ok().map(|d| d.consistency);
                // Only the route logs show it: no allocation when they are off.
                let logged = self.shared.route_log.is_some() || diag >= RouteDiagnosis::Route;
                let partition = planned.location.as_ref().filter(|_| logged).map(|l| l.name().to_string());
                if diag == RouteDiagnosis::Trace && !planned.plan.steps.is_empty() {
                    self.log_trace(req, planned);
                }
                (consistency, partition, Tie::Previous)
            }
        };
        let (link, mut cx) = self.parts();
        // The three executions are awaited here, not through one more async layer over them: that
        // layer cost 0.9 % of the instructions of a routed statement (moving its future).
        let served = match route {
            Route::Held(_) => link.execute_held(&mut cx, req).await?,
            Route::Server(addr, tie) => link.execute_on(&mut cx, req, addr, tie == Tie::Dependent).await?,
            Route::Planned(planned) => link.execute_planned(&mut cx, req, &planned).await?,
        };
        link.ran(&served);
        let outcome = match (&served.target, &served.candidate) {
            (None, _) => RouteOutcome::Error,
            (Some(_), _) if sticky != Tie::Previous => RouteOutcome::Sticky,
            (Some(_), Some(c)) => super::learn::outcome(c),
            (Some(_), None) => RouteOutcome::TenantServer,
        };
        let ended = std::time::Instant::now();
        self.ended = Some(ended);
        let elapsed = ended.saturating_duration_since(self.started);
        self.shared.metrics.statement(a.kind, outcome, self.route_time, elapsed);
        self.log_route(req, &served, consistency, partition, sticky, diag);
        self.log_slow(req, &served, outcome, slow_ms, elapsed);
        if served.conn.is_none() {
            self.note_sticky();
        }
        Ok(served)
    }
}
