//! The gateway's connection ids at work, the same in both kinds of session (docs/routing.md §13;
//! the list and the KILL checks are [`super::processlist`]'s):
//!
//! * SHOW [FULL] PROCESSLIST, COM_PROCESS_INFO and simple `information_schema.PROCESSLIST`
//!   queries are answered from the gateway's session list.
//! * `KILL QUERY <id>`: `KILL QUERY <thread>` runs, on a pooled connection of the asking
//!   session's account, on the server whose connection session `<id>` is using right now;
//!   nothing running → OK.
//! * `KILL [CONNECTION] <id>`: the gateway ends session `<id>` (the running statement is killed
//!   on its server first).
//! * A session's KILL of itself runs on a server connection of its own, so that the client gets
//!   the server's own answer (MariaDB: `KILL QUERY` of oneself is 1317, `KILL` 1927, then the
//!   connection is gone; the OceanBase kernel: `KILL QUERY` OK, `KILL` closes the connection
//!   without a word, and so does the gateway).

use std::net::SocketAddr;
use std::time::Duration;

use tracing::info;

use super::kill::Kill;
use super::kind::{Flow, OwnKill, SessionKind};
use super::pool::PooledConn;
use super::processlist::{self, Question, Victim};
use super::SessionError;
use crate::protocol::codes;
use crate::protocol::command;
use crate::protocol::message::ErrPacket;
use crate::protocol::ProtocolError;

/// Bound of a KILL statement sent to a server.
pub(super) const KILL_TIMEOUT: Duration = Duration::from_secs(10);

/// Answers a question of the process list.
pub(super) async fn processlist<S: SessionKind>(s: &mut S, q: &Question, reply_seq: u8) -> Result<Flow, SessionError> {
    let rs = processlist::answer(s.shared(), s.asker(), q);
    let out = rs.encode(reply_seq, s.client_caps(), s.status());
    s.write_made(out).await.map(|()| Flow::Continue)
}

/// KILL of gateway connection id `k.id`.
pub(super) async fn kill<S: SessionKind>(s: &mut S, k: Kill, reply_seq: u8) -> Result<Flow, SessionError> {
    let victim = processlist::victim(s.shared(), s.asker(), k);
    let answer = match victim {
        Err(err) => Err(err),
        Ok(Victim::Itself) => match s.kill_itself(k.query_only).await? {
            OwnKill::Answered(answer) if k.query_only => answer,
            // The connection ends with what the server said, or as silently as it closed it.
            own => {
                info!("session killed itself");
                match own {
                    OwnKill::Answered(Ok(())) => s.reply_ok(reply_seq).await?,
                    OwnKill::Answered(Err(err)) => s.reply_err(reply_seq, &err).await?,
                    OwnKill::Closed => {}
                }
                return Ok(Flow::Close);
            }
        },
        Ok(Victim::Other(target)) => {
            // The victim's session is marked first: when its server connection then breaks
            // under a streaming answer, its client gets the kill's error, not a broken stream.
            if !k.query_only {
                s.shared().sessions.kill(k.id);
                info!(victim = k.id, "session killed by KILL CONNECTION");
            }
            match target.current {
                Some((server, thread)) => match on_server(s, server, thread, k.query_only).await {
                    // The victim's gateway session has ended all the same.
                    Err(_) if !k.query_only => Ok(()),
                    answer => answer,
                },
                None => Ok(()),
            }
        }
    };
    match answer {
        Ok(()) => s.reply_ok(reply_seq).await,
        Err(err) => s.reply_err(reply_seq, &err).await,
    }
    .map(|()| Flow::Continue)
}

/// Sends `KILL QUERY <thread>` (or `KILL CONNECTION <thread>`) to `server` on a pooled connection
/// of the session's account. A thread that is gone is OK: its statement or connection ended.
async fn on_server<S: SessionKind>(
    s: &mut S,
    server: SocketAddr,
    thread: u32,
    query_only: bool,
) -> Result<(), ErrPacket> {
    let mut conn = s.pooled(server).await.map_err(|e| e.to_err_packet())?;
    match run(&mut conn, thread, query_only).await {
        Err(e) if e.code == codes::NO_SUCH_THREAD => Ok(()),
        answer => answer,
    }
}

/// Runs `KILL [QUERY|CONNECTION] <thread>` on `conn`: the server's answer. A connection that
/// failed is marked broken.
pub(super) async fn run(conn: &mut PooledConn, thread: u32, query_only: bool) -> Result<(), ErrPacket> {
    let server = conn.key().server;
    exchange(conn, thread, query_only)
        .await
        .unwrap_or_else(|e| Err(ErrPacket::new(codes::BACKEND_LOST, format!("gateway: KILL on {server} failed: {e}"))))
}

/// Runs `KILL [QUERY|CONNECTION] <thread>` on `conn`: the server's answer, or why there was none
/// (the connection is then marked broken).
pub(super) async fn exchange(
    conn: &mut PooledConn,
    thread: u32,
    query_only: bool,
) -> Result<Result<(), ErrPacket>, ProtocolError> {
    let answer = super::pool::command(conn, &statement(thread, query_only), KILL_TIMEOUT).await;
    if answer.is_err() {
        conn.mark_broken();
    }
    answer.map(|a| a.map(drop))
}

/// The COM_QUERY payload of `KILL [QUERY|CONNECTION] <thread>`.
pub(super) fn statement(thread: u32, query_only: bool) -> Vec<u8> {
    let verb = if query_only { "KILL QUERY" } else { "KILL CONNECTION" };
    [&[command::QUERY], format!("{verb} {thread}").as_bytes()].concat()
}
