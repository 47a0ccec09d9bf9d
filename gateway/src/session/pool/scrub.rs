//! Cleaning the connections of a client that is gone: each is reset (COM_RESET_CONNECTION) in the
//! background before it is idle again, so that a departed client's transaction, `LOCK TABLES`,
//! `GET_LOCK` locks, temporary tables and variables never stay on a pooled server connection,
//! where other clients would wait on them (docs/routing.md §11).
//!
//! MariaDB's COM_RESET_CONNECTION rolls back the transaction, releases table and user locks,
//! drops temporary tables, clears user variables and prepared statements and sets session
//! variables back to their global values (so `IGNORE_SPACE` that a client's login capability put
//! in `sql_mode` is lost: [`restore_ignore_space`]); it keeps the current database (the pool
//! changes user when the next client has none). A connection whose reset fails is closed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;
use tokio::task::JoinHandle;

use super::{health, Conn, Idle, KeyPool, Pool};
use crate::protocol::command;
use crate::session::backend::Backend;

/// `Idle::last_client` of a connection reset since its last client left (no client's state is on
/// it; it is reset again when handed out, so that the new session sees the global variables as
/// they are then).
pub(super) const SCRUBBED: u64 = 0;

/// The statement that puts `IGNORE_SPACE` back into the session `sql_mode` after a reset, for a
/// client that asked for it with the `CLIENT_IGNORE_SPACE` capability (the server adds it to
/// `sql_mode` at login only).
const IGNORE_SPACE: &[u8] = b"SET @@session.sql_mode = CONCAT_WS(',', NULLIF(@@session.sql_mode, ''), 'IGNORE_SPACE')";

/// Resets `backend`; whether it answered OK in time.
async fn reset(backend: &mut Backend, timeout: Duration) -> bool {
    matches!(health::command(backend, &[command::RESET_CONNECTION], timeout).await, Ok(Ok(_)))
}

/// A reset under way: the task ends once the connection is idle again or closed. A session that
/// reset itself awaits it before it answers (the next statement must not find the old session's
/// locks on the server); a departed client's is left to run.
pub type Scrub = JoinHandle<()>;

/// Resets the connection in a task of its own, then puts it among `home`'s idle ones with its
/// slot; closes it (and frees the slot) when the reset fails.
/// Without a Tokio runtime (never the case in the gateway) the connection is closed.
pub(super) fn spawn(
    home: Arc<KeyPool>,
    mut conn: Box<Conn>,
    slot: OwnedSemaphorePermit,
    timeout: Duration,
) -> Option<Scrub> {
    let rt = tokio::runtime::Handle::try_current().ok()?;
    Some(rt.spawn(async move {
        let thread = conn.backend.greeting.connection_id;
        if reset(&mut conn.backend, timeout).await && conn.backend.wire.buf.is_empty() {
            conn.sync.reset();
            home.put_idle(Idle { conn, last_client: SCRUBBED, since: Instant::now(), slot });
            tracing::debug!(thread, "connection of a departed client reset");
        } else {
            tracing::info!(thread, "reset of a departed client's connection failed; closed");
        }
    }))
}

/// Waits for `scrubs` (a failed task has closed its connection: nothing is left to wait for).
pub async fn scrubs_done(scrubs: Vec<Scrub>) {
    for scrub in scrubs {
        let _ = scrub.await;
    }
}

/// Puts `IGNORE_SPACE` back into `sql_mode` after a reset (module docs); whether it succeeded.
pub(super) async fn restore_ignore_space(backend: &mut Backend, timeout: Duration) -> bool {
    let payload = [&[command::QUERY], IGNORE_SPACE].concat();
    matches!(health::command(backend, &payload, timeout).await, Ok(Ok(_)))
}

impl Pool {
    /// Client `client` (its [`crate::session::state::ClientState::id`]) is gone or reset its
    /// session: every idle connection it used last is reset, each in a task of its own (returned).
    pub fn release_client(&self, client: u64) -> Vec<Scrub> {
        let pools: Vec<Arc<KeyPool>> =
            self.inner.keys.lock().map(|k| k.values().cloned().collect()).unwrap_or_default();
        let timeout = self.inner.cfg.connect_timeout();
        let mut scrubs = Vec::new();
        for home in pools {
            let mine: Vec<Idle> = match home.idle.lock() {
                Ok(mut idle) => {
                    let (mine, rest) = std::mem::take(&mut *idle).into_iter().partition(|i| i.last_client == client);
                    *idle = rest;
                    mine
                }
                Err(_) => Vec::new(),
            };
            for i in mine {
                // While it is reset the connection is neither idle nor handed out, but it still
                // exists: it keeps its slot, so that a get meanwhile opens no connection beyond
                // the key's size.
                scrubs.extend(spawn(home.clone(), i.conn, i.slot, timeout));
            }
        }
        scrubs
    }
}
