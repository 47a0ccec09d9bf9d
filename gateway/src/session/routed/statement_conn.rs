//! Prepared statements on the connection a request landed on (docs/routing.md §10): closed
//! statements dropped lazily, a statement prepared there on first use, long data replayed, the
//! client's id replaced by the connection's, and the client's own prepare answer renumbered.

use std::time::Duration;

use super::failover;
use super::link::ServerLink;
use super::parts::ClientParts;
use super::request::{Execution, Prep, Request, Sent};
use crate::protocol::command::{self, Shape};
use crate::protocol::frame::{self, HEADER};
use crate::protocol::message::{ErrPacket, ERR};
use crate::protocol::response::{ResponseTracker, Step};
use crate::protocol::{caps, ProtocolError};
use crate::session::pool::{self, PooledConn};
use crate::session::prepared::answer::{self, PrepareOk};
use crate::session::prepared::text;
use crate::session::prepared::{bulk, execute};

/// Largest packet of a prepare answer read by the gateway itself.
const MAX_ANSWER: usize = 1 << 24;

impl ServerLink {
    /// Gets `conn` ready for `req`: drops closed statements, prepares what is missing, replays
    /// long data. Returns the payload to send instead of the client's, if it differs.
    pub(super) async fn before_send(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        req: &Request<'_>,
    ) -> Result<Option<Vec<u8>>, Sent> {
        self.sweep(cx, conn).await?;
        match req.prep {
            Prep::None | Prep::Prepare { .. } | Prep::TextPrepare => Ok(None),
            Prep::Id { client_id } => {
                let Some(here) = conn.sync().statements.get(client_id) else {
                    return Err(Sent::Failed(no_cursor(client_id)));
                };
                let mut out = req.payload.to_vec();
                execute::set_statement_id(&mut out, here.id).map_err(|e| Sent::Failed(e.to_err()))?;
                Ok(Some(out))
            }
            Prep::Execute(ex) => self.execute_here(cx, conn, req.payload, ex).await.map(Some),
            Prep::Bulk(ex) => self.bulk_here(cx, conn, req.payload, ex).await.map(Some),
            Prep::Text { name, generation, sql } => {
                if !conn.sync().statements.has_text(name, generation) {
                    let q = [&[command::QUERY][..], &text::prepare_sql(name, sql, cx.state.mode().nbe)].concat();
                    self.one_command(cx, conn, &q).await?;
                    conn.sync_mut().statements.insert_text(name, generation);
                }
                Ok(None)
            }
        }
    }

    /// The execution for `conn`: the statement prepared there if missing, long data replayed,
    /// its id replaced, the parameter types added when this connection's statement has none.
    async fn execute_here(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        payload: &[u8],
        ex: &Execution<'_>,
    ) -> Result<Vec<u8>, Sent> {
        let server_id = self.statement_here(cx, conn, ex).await?;
        for p in ex.long.packets(server_id) {
            if conn.wire.write_packet(0, &p).await.is_err() {
                return Err(self.broken(cx, conn));
            }
        }
        let stmts = &mut conn.sync_mut().statements;
        let insert = ex.types.filter(|_| stmts.needs_types(ex.client_id, ex.types_version));
        let out = execute::rewrite(payload, server_id, ex.params, insert).map_err(|e| Sent::Failed(e.to_err()))?;
        if ex.types_version != 0 {
            stmts.types_sent(ex.client_id, ex.types_version);
        }
        Ok(out)
    }

    /// The bulk execution for `conn`: the statement prepared there if missing, its id replaced,
    /// the parameter types added when this connection's statement has none.
    async fn bulk_here(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        payload: &[u8],
        ex: &Execution<'_>,
    ) -> Result<Vec<u8>, Sent> {
        let server_id = self.statement_here(cx, conn, ex).await?;
        let stmts = &mut conn.sync_mut().statements;
        let insert = ex.types.filter(|_| stmts.needs_types(ex.client_id, ex.types_version));
        let out = bulk::rewrite(payload, ex.params, server_id, insert).map_err(|e| Sent::Failed(e.to_err()))?;
        if ex.types_version != 0 {
            stmts.types_sent(ex.client_id, ex.types_version);
        }
        Ok(out)
    }

    /// The server's id of the executed statement on `conn`, prepared there first if missing.
    async fn statement_here(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        ex: &Execution<'_>,
    ) -> Result<u32, Sent> {
        if let Some(s) = conn.sync().statements.get(ex.client_id) {
            return Ok(s.id);
        }
        let id = self.prepare_here(cx, conn, ex.sql).await?;
        conn.sync_mut().statements.insert(ex.client_id, id);
        Ok(id)
    }

    /// COM_STMT_PREPARE of `sql` on `conn`, its whole answer consumed; the server's id.
    async fn prepare_here(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        sql: &str,
    ) -> Result<u32, Sent> {
        let payload = [&[command::STMT_PREPARE], sql.as_bytes()].concat();
        conn.set_in_flight(true);
        let answer = tokio::time::timeout(cx.command_timeout(), read_prepare(conn, &payload)).await;
        match answer {
            Ok(Ok(answer)) => {
                conn.set_in_flight(false);
                answer.map_err(Sent::Failed)
            }
            _ => Err(self.broken(cx, conn)),
        }
    }

    /// A one-packet command with an OK/ERR answer on `conn` (lazy text prepare, deallocate).
    async fn one_command(
        &mut self,
        cx: &mut ClientParts<'_, '_>,
        conn: &mut PooledConn,
        payload: &[u8],
    ) -> Result<(), Sent> {
        conn.set_in_flight(true);
        let answer = pool::command(conn, payload, cx.command_timeout()).await;
        conn.set_in_flight(false);
        match answer {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(err)) => Err(Sent::Failed(err)),
            Err(_) => Err(self.broken(cx, conn)),
        }
    }

    /// The connection failed under a gateway command: closed, and the request failed.
    fn broken(&self, cx: &mut ClientParts<'_, '_>, conn: &mut PooledConn) -> Sent {
        if let Some(sent) = super::attempt::stale(conn) {
            return sent;
        }
        let server = conn.key().server;
        conn.mark_broken();
        failover::report_failure(&cx.shared.congestion, server);
        Sent::Failed(self.lost(cx, server))
    }

    /// Closes, on `conn`, the statements the client closed or deallocated since it was last
    /// used: server-side statements of a long-lived client never pile up.
    async fn sweep(&mut self, cx: &mut ClientParts<'_, '_>, conn: &mut PooledConn) -> Result<(), Sent> {
        if !conn.sync().statements.needs_sweep(cx.ps.epoch) {
            return Ok(());
        }
        let closed: Vec<u32> =
            conn.sync().statements.iter().filter(|(c, _)| cx.ps.registry.get(*c).is_none()).map(|(c, _)| c).collect();
        for client_id in closed {
            let Some(server_id) = conn.sync_mut().statements.remove(client_id) else { continue };
            let mut p = vec![command::STMT_CLOSE];
            p.extend_from_slice(&server_id.to_le_bytes());
            if conn.wire.write_packet(0, &p).await.is_err() {
                return Err(self.broken(cx, conn));
            }
        }
        let gone: Vec<String> = conn
            .sync()
            .statements
            .text_statements()
            .filter(|(name, _)| cx.ps.text.get(name).is_none())
            .map(|(name, _)| name.to_string())
            .collect();
        for name in gone {
            conn.sync_mut().statements.remove_text(&name);
            let q = format!("\u{3}DEALLOCATE PREPARE `{}`", name.replace('`', "``"));
            match self.one_command(cx, conn, q.as_bytes()).await {
                Ok(()) => {}
                // The server's ERR (not prepared there after all): nothing to drop.
                Err(_) if !conn.is_broken() => {}
                Err(sent) => return Err(sent),
            }
        }
        conn.sync_mut().statements.set_swept(cx.ps.epoch);
        Ok(())
    }
}

impl ClientParts<'_, '_> {
    /// How long a command the gateway sends on its own may take.
    fn command_timeout(&self) -> Duration {
        self.shared.pool.config().connect_timeout().max(Duration::from_secs(30))
    }

    /// The first packet of the answer to the client's COM_STMT_PREPARE is in `conn`'s buffer:
    /// registers the statement and gives the packet the client's id. `Some`: the request ends.
    pub(super) fn prepare_answer(&mut self, conn: &mut PooledConn, req: &Request<'_>) -> Option<Sent> {
        let Prep::Prepare { sql } = req.prep else { return None };
        let (len, _) = frame::header(&conn.wire.buf)?;
        let body = conn.wire.buf.get_mut(HEADER..HEADER + len)?;
        if body.first() != Some(&0) {
            return None;
        }
        let ok = PrepareOk::parse(body).ok()?;
        match self.ps.registry.register(sql, &ok) {
            Ok(id) => {
                answer::set_statement_id(body, id).ok()?;
                conn.sync_mut().statements.insert(id, ok.statement_id);
                None
            }
            Err(e) => {
                // The answer is not read to its end: the connection (and the statement) go.
                conn.mark_broken();
                Some(Sent::Failed(e.to_err()))
            }
        }
    }
}

/// Sends a COM_STMT_PREPARE and reads its whole answer: the server's id, or its ERR.
async fn read_prepare(conn: &mut PooledConn, payload: &[u8]) -> Result<Result<u32, ErrPacket>, ProtocolError> {
    conn.wire.write_packet(0, payload).await?;
    let mut tracker = ResponseTracker::new(Shape::Prepare, conn.capabilities & caps::DEPRECATE_EOF != 0);
    let mut err = None;
    let mut first = true;
    loop {
        let p = conn.wire.read_packet(MAX_ANSWER).await?;
        if first && p.payload.first() == Some(&ERR) {
            err = Some(ErrPacket::parse(&p.payload));
        }
        first = false;
        if tracker.on_frame(&p.payload)? == Step::Done {
            break;
        }
    }
    match (tracker.prepared, err) {
        (Some(p), _) => Ok(Ok(p.statement_id)),
        (None, Some(e)) => Ok(Err(e?)),
        (None, None) => Err(ProtocolError::Malformed("prepare answer without OK or ERR")),
    }
}

/// ER_STMT_HAS_NO_OPEN_CURSOR.
pub(super) fn no_cursor(client_id: u32) -> ErrPacket {
    ErrPacket::with_state(1421, b"HY000", format!("The statement ({client_id}) has no open cursor."))
}
