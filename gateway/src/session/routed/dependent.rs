//! Values a statement leaves on its server session for the next one — `LAST_INSERT_ID()`,
//! `FOUND_ROWS()`, `ROW_COUNT()` (docs/routing.md §8): which server session holds them, and
//! `LAST_INSERT_ID()` restored when a dependent statement lands on another one.
//!
//! A dependent statement goes to the previous statement's server, and the pool hands the session
//! its own idle connection first, so it normally finds the values where they were left. When that
//! connection went to another client meanwhile (it was reset), `LAST_INSERT_ID()` is restored with
//! `SET last_insert_id = N` from the id the gateway saw in the OK packets; `FOUND_ROWS()` and
//! `ROW_COUNT()` cannot be restored and are logged.

use std::net::SocketAddr;
use std::time::Duration;

use tracing::debug;

use crate::protocol::command;
use crate::session::pool::{self, PooledConn};

/// One server session: server, thread id, resets so far.
type ServerSession = (SocketAddr, u32, u64);

/// What the session knows about the previous statement's server session.
#[derive(Debug, Default)]
pub(super) struct Dependent {
    last: Option<ServerSession>,
    last_insert_id: u64,
}

impl Dependent {
    /// The previous statement ran on `conn`.
    pub(super) fn ran_on(&mut self, conn: &PooledConn) {
        self.last = Some(identity(conn));
    }

    /// An OK packet's last insert id (0: the statement generated none, the value stays).
    pub(super) fn observe_insert_id(&mut self, id: u64) {
        if id != 0 {
            self.last_insert_id = id;
        }
    }

    /// Before a dependent statement runs on `conn`: restores `LAST_INSERT_ID()` there when `conn`
    /// is not the server session the previous statement left it on.
    pub(super) async fn restore(&self, conn: &mut PooledConn, timeout: Duration) {
        if self.last.is_none() || self.last == Some(identity(conn)) {
            return;
        }
        debug!(
            thread = conn.thread_id(),
            "dependent statement on another server session: FOUND_ROWS()/ROW_COUNT() are not carried over"
        );
        if self.last_insert_id == 0 {
            return;
        }
        let sql = format!("SET last_insert_id = {}", self.last_insert_id);
        let payload = [&[command::QUERY][..], sql.as_bytes()].concat();
        match pool::command(conn, &payload, timeout).await {
            Ok(Ok(_)) => debug!(id = self.last_insert_id, "LAST_INSERT_ID() restored"),
            Ok(Err(err)) => debug!(error = %err, "LAST_INSERT_ID() not restored"),
            Err(e) => {
                debug!(error = %e, "LAST_INSERT_ID() not restored: connection failed");
                conn.mark_broken();
            }
        }
    }
}

fn identity(conn: &PooledConn) -> ServerSession {
    (conn.key().server, conn.thread_id(), conn.sync().generation())
}
