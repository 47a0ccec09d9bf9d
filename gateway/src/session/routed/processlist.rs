//! SHOW PROCESSLIST and KILL on gateway connection ids in a routed session (docs/routing.md §13; the
//! list and the KILL checks are [`crate::session::processlist`]'s).
//!
//! * `SHOW [FULL] PROCESSLIST` (and COM_PROCESS_INFO) list the gateway's client sessions with
//!   their gateway ids: `Id, User, Host, db, Command, Time, State, Info` (`Info` cut at 100
//!   characters without `FULL`); so do simple `SELECT <* | columns> FROM
//!   information_schema.PROCESSLIST [WHERE ID = …]` (others run on a server: its own threads).
//! * `KILL QUERY <id>`: `KILL QUERY <thread>` is sent, on a separate pooled connection, to the
//!   server whose connection session `<id>` is using right now; nothing running → OK.
//! * `KILL [CONNECTION] <id>` and COM_PROCESS_KILL: the gateway ends session `<id>` and closes
//!   its server connections (the running statement is killed on its server first). One's own
//!   id: ERR 1317 "Query execution was interrupted", then the connection closes.
//! * The same as prepared statements (`KILL ?` bound at EXECUTE, binary or text protocol).
//! * Admin users (`[[users]] admin = true`) end any session with `KILL PROXYSESSION <id>`
//!   (`session::admin`).

use std::net::SocketAddr;
use std::time::Duration;

use tracing::info;

use super::{Flow, RoutedSession};
use crate::protocol::codes;
use crate::protocol::message::ErrPacket;
use crate::session::kill::Kill;
use crate::session::processlist::{self, Asker, Victim};
use crate::session::SessionError;

/// ER_QUERY_INTERRUPTED.
const QUERY_INTERRUPTED: u16 = 1317;
/// Bound of the KILL statement sent to a server.
const KILL_TIMEOUT: Duration = Duration::from_secs(10);

impl RoutedSession<'_> {
    fn asker(&self) -> Asker<'_> {
        Asker { id: self.front.id, user: &self.ident.user, tenant: &self.ident.tenant }
    }

    /// Answers SHOW [FULL] PROCESSLIST.
    pub(super) async fn processlist(&mut self, full: bool, reply_seq: u8) -> Result<Flow, SessionError> {
        let rs = processlist::list(self.shared, self.asker(), full);
        let out = rs.encode(reply_seq, self.front.caps, self.txn.status());
        self.front.wire.write_raw(&out).await.map_err(SessionError::Client)?;
        Ok(Flow::Continue)
    }

    /// Answers a simple `SELECT … FROM information_schema.PROCESSLIST`.
    pub(super) async fn processlist_table(
        &mut self,
        q: &processlist::TableQuery,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        let out =
            processlist::table(self.shared, self.asker(), q).encode(reply_seq, self.front.caps, self.txn.status());
        self.front.wire.write_raw(&out).await.map_err(SessionError::Client)?;
        Ok(Flow::Continue)
    }

    /// KILL on a gateway connection id.
    pub(super) async fn kill_session(&mut self, k: Kill, reply_seq: u8) -> Result<Flow, SessionError> {
        let target = match processlist::victim(self.shared, self.asker(), k) {
            Ok(Victim::Itself) if k.query_only => return self.reply_ok(reply_seq).await,
            Ok(Victim::Itself) => {
                let err = ErrPacket::with_state(QUERY_INTERRUPTED, b"70100", "Query execution was interrupted");
                self.front.wire.write_packet(reply_seq, &err.encode()).await.map_err(SessionError::Client)?;
                info!("session killed itself");
                return Ok(Flow::Close);
            }
            Ok(Victim::Other(target)) => target,
            Err(err) => return self.reply_err(reply_seq, &err).await,
        };
        // The victim's session is marked first: when its server connection then breaks under a
        // streaming answer, its client gets the kill's error, not a broken stream.
        if !k.query_only {
            self.shared.sessions.kill(k.id);
            info!(victim = k.id, "session killed by KILL CONNECTION");
        }
        if let Some((server, thread)) = target.current {
            if let Err(err) = self.kill_on_server(server, thread, k.query_only).await {
                if k.query_only {
                    return self.reply_err(reply_seq, &err).await;
                }
            }
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
