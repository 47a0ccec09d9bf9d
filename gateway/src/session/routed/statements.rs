//! The client's binary prepared-statement commands in a routed session (docs/routing.md §10): each
//! EXECUTE is planned with its bound values and runs wherever that leads, the statement being
//! prepared there on first use; an open cursor keeps its connection until the cursor ends.

use super::query::Query;
use super::request::{Execution, Prep, Request, Route, Served};
use super::statement_conn::no_cursor;
use super::transaction::{StickyReason, TxnStatement};
use super::{Flow, RoutedSession};
use crate::protocol::command::{self, Shape};
use crate::protocol::status;
use crate::session::prepared::binary;
use crate::session::prepared::bulk::Bulk;
use crate::session::prepared::execute::{self, Execute};
use crate::session::prepared::{Command, PreparedError};
use crate::session::{connection_id, kill, SessionError};
use crate::sql::{self, Value};

/// Whether `cmd` is one of the binary prepared-statement commands.
pub(super) fn is_statement_command(cmd: u8) -> bool {
    matches!(
        cmd,
        command::STMT_PREPARE
            | command::STMT_EXECUTE
            | command::STMT_FETCH
            | command::STMT_SEND_LONG_DATA
            | command::STMT_CLOSE
            | command::STMT_RESET
            | command::STMT_BULK_EXECUTE
    )
}

/// The statement id of a FETCH, RESET, CLOSE or SEND_LONG_DATA.
fn wire_id(payload: &[u8]) -> Option<u32> {
    payload.get(1..5).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl RoutedSession<'_> {
    /// A binary prepared-statement command.
    pub(super) async fn statement_command(
        &mut self,
        cmd: u8,
        payload: &[u8],
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        self.reg.start(command::process_name(cmd), None);
        if !self.link.is_holding() {
            // Cursors live on the held connection only: without one there are none.
            self.ps.registry.clear_cursors();
        }
        match cmd {
            command::STMT_PREPARE => self.stmt_prepare(payload, reply_seq).await,
            command::STMT_EXECUTE => self.stmt_execute(payload, reply_seq).await,
            command::STMT_FETCH => self.stmt_fetch(payload, reply_seq).await,
            command::STMT_RESET => self.stmt_reset(payload, reply_seq).await,
            command::STMT_CLOSE => self.stmt_close(payload).await.map(|()| Flow::Continue),
            command::STMT_BULK_EXECUTE => self.stmt_bulk(payload, reply_seq).await,
            _ => {
                self.ps.registry.long_data(payload);
                Ok(Flow::Continue)
            }
        }
    }

    async fn stmt_prepare(&mut self, payload: &[u8], reply_seq: u8) -> Result<Flow, SessionError> {
        let mut sql = String::from_utf8_lossy(&payload[1..]).into_owned();
        if let Some(e) = self.ps.registry.refuse_prepare(&sql) {
            return self.reply_err(reply_seq, &e.to_err()).await;
        }
        if kill::is_kill(&sql) && kill::template(&sql).is_none() {
            return self.reply_err(reply_seq, &kill::unsupported()).await;
        }
        // CONNECTION_ID() answers the gateway's id (`session::connection_id`).
        let with_id = connection_id::rewrite(&sql, self.front.id, self.state.mode()).map(|text| {
            let p = [&[command::STMT_PREPARE], text.as_bytes()].concat();
            sql = text;
            p
        });
        let payload = with_id.as_deref().unwrap_or(payload);
        let read = self.read(&sql);
        let analysis = sql::analyze(&read);
        let route = self.route_for(&analysis, "COM_STMT_PREPARE").await;
        let req = Request {
            payload,
            shape: Shape::Prepare,
            reply_seq,
            cmd: "prepare",
            prep: Prep::Prepare { sql: &sql },
            log_sql: None,
        };
        let served = self.serve(&req, route, &analysis).await?;
        self.after_statement_command(served);
        Ok(Flow::Continue)
    }

    async fn stmt_execute(&mut self, payload: &[u8], reply_seq: u8) -> Result<Flow, SessionError> {
        let mode = self.state.mode();
        let looked_up = execute::statement_id(payload).and_then(|id| {
            let (client_id, stmt) = self.ps.registry.lookup(id, Command::Execute)?;
            if let Some(e) = stmt.pending_error() {
                return Err(e.clone());
            }
            let ex = Execute::parse(payload, stmt.params())?;
            if let Some(t) = ex.types {
                stmt.bind_types(t);
            }
            let long = stmt.take_long_data();
            stmt.executed();
            let (sql, analysed, kill) = (stmt.shared_sql(), stmt.analysed(mode), stmt.kill());
            Ok((client_id, sql, analysed, kill, stmt.params(), stmt.types().cloned(), stmt.types_version(), long))
        });
        let (client_id, sql, analysed, kill, params, types, types_version, long) = match looked_up {
            Ok(x) => x,
            Err(e) => return self.reply_err(reply_seq, &e.to_err()).await,
        };
        // A new execution replaces the statement's open cursor.
        self.ps.registry.end_cursor(client_id);
        let values = execute_values(payload, params, types.as_ref(), &long);
        if let Some(t) = kill {
            // A prepared KILL names a gateway id too: answered here, never sent.
            return match t.bind(&values, self.front.id) {
                Ok(k) => Box::pin(crate::session::gateway_ids::kill(self, k, reply_seq)).await,
                Err(e) => self.reply_err(reply_seq, &e).await,
            };
        }
        let analysis = analysed.bind(&values);
        let route = self.route_for(&analysis, "COM_STMT_EXECUTE").await;
        let ex = Execution { client_id, sql: &sql, params, types: types.as_ref(), types_version, long: &long };
        let req = Request {
            payload,
            shape: Shape::Results,
            reply_seq,
            cmd: "execute",
            prep: Prep::Execute(&ex),
            log_sql: Some(&sql),
        };
        let served = self.serve(&req, route, &analysis).await?;
        let (Some(mut conn), Some(tracker)) = (served.conn, served.tracker) else {
            self.release_unless_sticky();
            return Ok(Flow::Continue);
        };
        self.learn_query(&mut conn, &tracker, &mut Query::executed(&sql, analysis));
        let opened = !tracker.failed && tracker.last_status.is_some_and(|st| st & status::CURSOR_EXISTS != 0);
        if opened {
            self.ps.registry.open_cursor(client_id, u64::from(conn.thread_id()));
        }
        self.keep_or_release(conn);
        Ok(Flow::Continue)
    }

    /// MariaDB's COM_STMT_BULK_EXECUTE: every row set runs on one server, where the statement
    /// routes without values (the table's route), in one command: one answer (a single OK with
    /// the summed affected rows, or the RETURNING rows) and all-or-nothing as on the server —
    /// splitting the rows over servers would answer with several OKs and break both.
    async fn stmt_bulk(&mut self, payload: &[u8], reply_seq: u8) -> Result<Flow, SessionError> {
        let mode = self.state.mode();
        let looked_up = wire_id(payload).ok_or(PreparedError::Malformed).and_then(|id| {
            let (client_id, stmt) = self.ps.registry.lookup(id, Command::Execute)?;
            if let Some(e) = stmt.pending_error() {
                return Err(e.clone());
            }
            let bulk = Bulk::parse(payload, stmt.params())?;
            if let Some(t) = bulk.types {
                stmt.bind_types(t);
            }
            stmt.executed();
            let (sql, analysed) = (stmt.shared_sql(), stmt.analysed(mode));
            Ok((client_id, sql, analysed, stmt.params(), stmt.types().cloned(), stmt.types_version()))
        });
        let (client_id, sql, analysed, params, types, types_version) = match looked_up {
            Ok(x) => x,
            Err(e) => return self.reply_err(reply_seq, &e.to_err()).await,
        };
        self.ps.registry.end_cursor(client_id);
        let analysis = analysed.bind(&[]);
        let route = self.route_for(&analysis, "COM_STMT_BULK_EXECUTE").await;
        let long = crate::session::prepared::LongData::default();
        let ex = Execution { client_id, sql: &sql, params, types: types.as_ref(), types_version, long: &long };
        let req = Request {
            payload,
            shape: Shape::Results,
            reply_seq,
            cmd: "bulk",
            prep: Prep::Bulk(&ex),
            log_sql: Some(&sql),
        };
        let served = self.serve(&req, route, &analysis).await?;
        let (Some(mut conn), Some(tracker)) = (served.conn, served.tracker) else {
            self.release_unless_sticky();
            return Ok(Flow::Continue);
        };
        self.learn_query(&mut conn, &tracker, &mut Query::executed(&sql, analysis));
        self.keep_or_release(conn);
        Ok(Flow::Continue)
    }

    async fn stmt_fetch(&mut self, payload: &[u8], reply_seq: u8) -> Result<Flow, SessionError> {
        let Some(id) = wire_id(payload).filter(|_| payload.len() >= 9) else {
            return self.reply_err(reply_seq, &PreparedError::Malformed.to_err()).await;
        };
        let (client_id, sql) = match self.ps.registry.lookup(id, Command::Fetch) {
            Ok((client_id, stmt)) => (client_id, stmt.shared_sql()),
            Err(e) => return self.reply_err(reply_seq, &e.to_err()).await,
        };
        if self.ps.registry.cursor(client_id).is_none() {
            return self.reply_err(reply_seq, &no_cursor(client_id)).await;
        }
        let req = Request {
            payload,
            shape: Shape::Fetch,
            reply_seq,
            cmd: "fetch",
            prep: Prep::Id { client_id },
            log_sql: Some(&sql),
        };
        let served = self.serve(&req, Route::Held(StickyReason::Cursor), &sql::analyze("")).await?;
        if let Some(tracker) = &served.tracker {
            if tracker.failed || tracker.last_status.is_some_and(|st| st & status::LAST_ROW_SENT != 0) {
                // The server closed the cursor with its last row.
                self.ps.registry.end_cursor(client_id);
            }
        }
        self.after_statement_command(served);
        Ok(Flow::Continue)
    }

    /// COM_STMT_RESET: to the held connection when it has the statement (its answer is the
    /// client's; a cursor there is closed), else OK (idle connections hold neither long data
    /// nor cursors).
    async fn stmt_reset(&mut self, payload: &[u8], reply_seq: u8) -> Result<Flow, SessionError> {
        let Some(id) = wire_id(payload) else {
            return self.reply_err(reply_seq, &PreparedError::Malformed.to_err()).await;
        };
        let (client_id, sql) = match self.ps.registry.lookup(id, Command::Reset) {
            Ok((client_id, stmt)) => {
                stmt.reset();
                (client_id, stmt.shared_sql())
            }
            Err(e) => return self.reply_err(reply_seq, &e.to_err()).await,
        };
        self.ps.registry.end_cursor(client_id);
        if self.link.held().is_none_or(|h| h.sync().statements.get(client_id).is_none()) {
            self.release_unless_sticky();
            return self.reply_ok(reply_seq).await;
        }
        let why = self.sticky().unwrap_or(StickyReason::Cursor);
        let req = Request {
            payload,
            shape: Shape::Single,
            reply_seq,
            cmd: "reset",
            prep: Prep::Id { client_id },
            log_sql: Some(&sql),
        };
        let served = self.serve(&req, Route::Held(why), &sql::analyze("")).await?;
        self.after_statement_command(served);
        Ok(Flow::Continue)
    }

    /// COM_STMT_CLOSE (no answer): closed on the held connection now, on pooled ones when the
    /// session next uses them.
    async fn stmt_close(&mut self, payload: &[u8]) -> Result<(), SessionError> {
        let Some(id) = wire_id(payload) else { return Ok(()) };
        let Ok((client_id, _)) = self.ps.registry.lookup(id, Command::Close) else { return Ok(()) };
        self.ps.registry.close(client_id);
        self.ps.epoch += 1;
        if let Some(held) = self.link.held_mut() {
            if let Some(server_id) = held.sync_mut().statements.remove(client_id) {
                let mut p = vec![command::STMT_CLOSE];
                p.extend_from_slice(&server_id.to_le_bytes());
                // Sent before the session goes on: no answer comes to wait for, and a
                // connection the close leaves unsticky is parked, which wants its sends done.
                if held.wire.write_packet(0, &p).await.is_err() || held.wire.io.sent().await.is_err() {
                    held.mark_broken();
                }
            }
        }
        self.release_unless_sticky();
        Ok(())
    }

    /// Transaction status, session state and cursors after a statement command; the connection
    /// stays or goes back to the pool.
    fn after_statement_command(&mut self, served: Served) {
        let (Some(mut conn), Some(tracker)) = (served.conn, served.tracker) else {
            self.release_unless_sticky();
            return;
        };
        if let Some(st) = tracker.last_status {
            self.txn.after_status(st, sql::StmtKind::Other, &TxnStatement::Other);
        }
        self.observe_ok(&mut conn, &tracker);
        self.keep_or_release(conn);
    }

    /// The held connection goes back to the pool when nothing keeps it any more (a cursor ended).
    pub(super) fn release_unless_sticky(&mut self) {
        if self.sticky().is_none() {
            if let Some(conn) = self.link.take_held() {
                self.keep_or_release(conn);
            }
        }
    }
}

/// The bound values of an EXECUTE for routing; values the gateway cannot read route as unknown
/// (the server reports what is wrong with them).
fn execute_values<'a>(
    payload: &'a [u8],
    params: u16,
    types: Option<&'a crate::session::prepared::ParamTypes>,
    long: &'a crate::session::prepared::LongData,
) -> Vec<Value<'a>> {
    let unknown = || vec![Value::Unknown; usize::from(params)];
    let Ok(ex) = Execute::parse(payload, params) else { return unknown() };
    binary::values(&ex, types, long).unwrap_or_else(|_| unknown())
}
