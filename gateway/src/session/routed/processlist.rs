//! SHOW PROCESSLIST and KILL on gateway connection ids (routing.md §13).
//!
//! * `SHOW [FULL] PROCESSLIST` (and COM_PROCESS_INFO) list the gateway's routed client sessions
//!   with their gateway ids: `Id, User, Host, db, Command, Time, State, Info` (`Info` cut at 100
//!   characters without `FULL`). A session sees the sessions of its own user only, like a server
//!   user without the PROCESS privilege. `SELECT … FROM information_schema.PROCESSLIST` is not
//!   intercepted: it is forwarded and shows one server's own threads.
//! * `KILL QUERY <id>`: `KILL QUERY <thread>` is sent, on a separate pooled connection, to the
//!   server whose connection session `<id>` is using right now; nothing running → OK.
//! * `KILL [CONNECTION] <id>` and COM_PROCESS_KILL: the gateway ends session `<id>` and closes
//!   its server connections (the running statement is killed on its server first). One's own
//!   id: ERR 1317 "Query execution was interrupted", then the connection closes.
//! * Only the same user may kill a session (else ERR 1095); unknown ids (and sessions of
//!   other tenants) are ERR 1094. Admin users (`[[users]] admin = true`)
//!   end any session with `KILL PROXYSESSION <id>` (`session::admin`).

use std::net::SocketAddr;
use std::time::Duration;

use tracing::info;

use super::{Flow, RoutedSession};
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::{ColumnKind, TextResultSet};
use crate::protocol::codes;
use crate::session::kill::Kill;
use crate::session::SessionError;

/// ER_KILL_DENIED_ERROR.
const KILL_DENIED: u16 = 1095;
/// ER_QUERY_INTERRUPTED.
const QUERY_INTERRUPTED: u16 = 1317;
/// Bound of the KILL statement sent to a server.
const KILL_TIMEOUT: Duration = Duration::from_secs(10);

impl RoutedSession<'_> {
    /// Answers SHOW [FULL] PROCESSLIST.
    pub(super) async fn processlist(&mut self, full: bool, reply_seq: u8) -> Result<Flow, SessionError> {
        let mut rs = TextResultSet::with_text_columns(&["Id", "User", "Host", "db", "Command", "Time", "State", "Info"]);
        rs.columns[0].1 = ColumnKind::Int;
        rs.columns[5].1 = ColumnKind::Int;
        for (id, s) in self.shared.sessions.list() {
            if s.user != self.ident.user || s.tenant != self.ident.tenant {
                continue;
            }
            let (command, state, info) = if id == self.id {
                let sql = if full { "SHOW FULL PROCESSLIST" } else { "SHOW PROCESSLIST" };
                ("Query", "executing", Some(sql.to_string()))
            } else {
                let state = match s.command {
                    "Sleep" => "",
                    super::splice::SPLICED => "spliced",
                    _ => "executing",
                };
                (s.command, state, s.info.clone())
            };
            let info = info.map(|i| if full { i } else { i.chars().take(100).collect() });
            rs.rows.push(vec![
                Some(id.to_string()),
                Some(s.user.clone()),
                Some(s.host.clone()),
                s.db.clone(),
                Some(command.to_string()),
                Some(s.since.elapsed().as_secs().to_string()),
                Some(state.to_string()),
                info,
            ]);
        }
        let out = rs.encode(reply_seq, self.client_caps, self.txn.status());
        self.client.write_raw(&out).await.map_err(SessionError::Client)?;
        Ok(Flow::Continue)
    }

    /// KILL on a gateway connection id.
    pub(super) async fn kill(&mut self, k: Kill, reply_seq: u8) -> Result<Flow, SessionError> {
        if k.id == self.id {
            if k.query_only {
                return self.reply_ok(reply_seq).await;
            }
            let err = ErrPacket::with_state(QUERY_INTERRUPTED, b"70100", "Query execution was interrupted");
            self.client.write_packet(reply_seq, &err.encode()).await.map_err(SessionError::Client)?;
            info!("session killed itself");
            return Ok(Flow::Close);
        }
        let target = match self.shared.sessions.get(k.id) {
            Some(t) if t.tenant == self.ident.tenant => t,
            _ => return self.reply_err(reply_seq, &ErrPacket::new(codes::NO_SUCH_THREAD, format!("Unknown thread id: {}", k.id))).await,
        };
        if target.user != self.ident.user {
            return self.reply_err(reply_seq, &ErrPacket::new(KILL_DENIED, format!("You are not owner of thread {}", k.id))).await;
        }
        if let Some((server, thread)) = target.current {
            if let Err(err) = self.kill_on_server(server, thread, k.query_only).await {
                if k.query_only {
                    return self.reply_err(reply_seq, &err).await;
                }
            }
        }
        if !k.query_only {
            self.shared.sessions.kill(k.id);
            info!(victim = k.id, "session killed by KILL CONNECTION");
        }
        self.reply_ok(reply_seq).await
    }

    /// Sends `KILL QUERY <thread>` (or `KILL <thread>`) to `server` on a separate connection.
    async fn kill_on_server(&mut self, server: SocketAddr, thread: u32, query_only: bool) -> Result<(), ErrPacket> {
        let mut conn = self.checkout(server).await.map_err(|e| e.to_err_packet())?;
        let verb = if query_only { "KILL QUERY" } else { "KILL CONNECTION" };
        let payload = [&[crate::protocol::command::QUERY], format!("{verb} {thread}").as_bytes()].concat();
        match crate::session::pool::command(&mut conn, &payload, KILL_TIMEOUT).await {
            Ok(Ok(_)) => Ok(()),
            // The statement ended (or the connection closed) in the meantime.
            Ok(Err(e)) if e.code == codes::NO_SUCH_THREAD => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(e) => {
                conn.mark_broken();
                Err(ErrPacket::new(codes::BACKEND_LOST, format!("gateway: KILL on {server} failed: {e}")))
            }
        }
    }
}
