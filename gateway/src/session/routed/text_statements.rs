//! SQL-level prepared statements in a routed session (docs/routing.md §10): `PREPARE` runs where its
//! statement routes, `EXECUTE … USING @v` is planned with the user variables' values and the
//! statement is prepared again on a connection that lacks it, `DEALLOCATE` is answered here and
//! reaches the connections when the session next uses them. A `PREPARE … FROM @v` whose value the
//! gateway does not know is left to the caller, which pins the session.

use super::query::Query;
use super::request::Prep;
use super::request::Request;
use super::transaction::TxnStatement;
use super::{Flow, RoutedSession};
use crate::protocol::command::Shape;
use crate::session::prepared::text::{self, TextPs};
use crate::session::{kill, SessionError};
use crate::sql::{self, Analysis, StmtKind};

/// Whether `a` is a text `PREPARE` / `EXECUTE` / `DEALLOCATE PREPARE` that
/// [`RoutedSession::text_statement`] may follow.
pub(super) fn is_text_statement(a: &Analysis<'_>) -> bool {
    a.statements == 1 && matches!(a.kind, StmtKind::Prepare | StmtKind::Execute | StmtKind::Deallocate)
}

impl RoutedSession<'_> {
    /// A text `PREPARE` / `EXECUTE` / `DEALLOCATE PREPARE`. `None`: not one the gateway follows
    /// (the caller runs it as an ordinary statement).
    pub(super) async fn text_statement(
        &mut self,
        payload: &[u8],
        read: &str,
        a: &Analysis<'_>,
        reply_seq: u8,
    ) -> Result<Option<Flow>, SessionError> {
        if !is_text_statement(a) {
            return Ok(None);
        }
        let Some(ps) = text::parse(read) else { return Ok(None) };
        match ps {
            TextPs::Prepare { name, source } => match source.resolve(&self.state) {
                Some(sql) if kill::is_kill(&sql) && kill::template(&sql).is_none() => {
                    self.reply_err(reply_seq, &kill::unsupported()).await.map(Some)
                }
                Some(sql) => self.text_prepare(payload, &name, &sql, reply_seq).await.map(Some),
                None => {
                    // Unknown text: the session is pinned (by the caller) and this name is
                    // no longer one the gateway can move.
                    self.ps.text.failed_prepare(&name);
                    Ok(None)
                }
            },
            TextPs::Execute { name, using } => {
                let stmt = match self.ps.text.execute(&name) {
                    Ok(s) => s.clone(),
                    Err(_) if self.is_pinned() => return Ok(None),
                    Err(e) => return self.reply_err(reply_seq, &e.to_err()).await.map(Some),
                };
                let values = text::bound_values(&using, &self.state);
                if let Some(t) = kill::template(&stmt.sql) {
                    // A prepared KILL names a gateway id too: answered here, never sent.
                    return match t.bind(&values, self.front.id) {
                        Ok(k) => crate::session::gateway_ids::kill(self, k, reply_seq).await.map(Some),
                        Err(e) => self.reply_err(reply_seq, &e).await.map(Some),
                    };
                }
                let read = self.read(&stmt.sql);
                let mut q = Query::read(&stmt.sql, crate::sql::analyze_prepared(&read, &values), self.state.mode());
                let route = self.route_for(&q.analysis, "COM_QUERY").await;
                let prep = Prep::Text { name: &name, generation: stmt.generation, sql: &stmt.sql };
                let req = Request {
                    payload,
                    shape: Shape::Results,
                    reply_seq,
                    cmd: "execute",
                    prep,
                    log_sql: Some(&stmt.sql),
                };
                let served = self.serve(&req, route, &q.analysis).await?;
                if let (Some(mut conn), Some(tracker)) = (served.conn, served.tracker) {
                    self.learn_query(&mut conn, &tracker, &mut q);
                    self.keep_or_release(conn);
                }
                Ok(Some(Flow::Continue))
            }
            TextPs::Deallocate { name } => match self.ps.text.deallocate(&name) {
                Ok(_) => {
                    self.ps.epoch += 1;
                    self.reply_ok(reply_seq).await.map(Some)
                }
                Err(_) if self.is_pinned() => Ok(None),
                Err(e) => self.reply_err(reply_seq, &e.to_err()).await.map(Some),
            },
        }
    }

    /// `PREPARE name FROM '<sql>'`, run where `sql` routes; the connection records it.
    async fn text_prepare(
        &mut self,
        payload: &[u8],
        name: &str,
        sql: &str,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        if let Err(e) = self.ps.text.admits(name, sql) {
            // As when a server refuses a PREPARE: an older statement of that name is gone too.
            self.ps.text.failed_prepare(name);
            self.ps.epoch += 1;
            return self.reply_err(reply_seq, &e.to_err()).await;
        }
        let read = self.read(sql);
        let inner = sql::analyze(&read);
        let route = self.route_for(&inner, "COM_QUERY").await;
        let req =
            Request { payload, shape: Shape::Results, reply_seq, cmd: "query", prep: Prep::TextPrepare, log_sql: None };
        let served = self.serve(&req, route, &inner).await?;
        let (Some(mut conn), Some(tracker)) = (served.conn, served.tracker) else { return Ok(Flow::Continue) };
        if tracker.failed {
            // The server dropped any older statement of that name too.
            self.ps.text.failed_prepare(name);
            conn.sync_mut().statements.remove_text(name);
            self.ps.epoch += 1;
        } else {
            let generation = self.ps.text.prepare(name, sql);
            conn.sync_mut().statements.insert_text(name, generation);
        }
        if let Some(st) = tracker.last_status {
            self.txn.after_status(st, StmtKind::Prepare, &TxnStatement::Other);
        }
        self.observe_ok(&mut conn, &tracker);
        self.keep_or_release(conn);
        Ok(Flow::Continue)
    }
}
