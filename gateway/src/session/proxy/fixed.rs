//! The server side of a 1:1 session: one backend connection, fixed for the session's life (the
//! counterpart of the routed session's `ServerLink`). Commands are sent on it as the client
//! framed them and answers are relayed as they arrive.

use tracing::debug;

use crate::protocol::command::{self, Shape};
use crate::protocol::frame::{encode_packet, Wire};
use crate::protocol::message::ErrPacket;
use crate::protocol::response::ResponseTracker;
use crate::protocol::{caps, codes, ProtocolError};
use crate::session::backend::Backend;
use crate::session::gateway_ids;
use crate::session::kind::OwnKill;
use crate::session::relay::{self, KillSignal, RelayError};
use crate::session::SessionError;
use crate::tls::Stream;

/// Largest send buffer a session keeps between commands.
const KEEP_OUT: usize = 64 * 1024;

/// A 1:1 session's backend connection.
pub(super) struct FixedLink {
    /// The connection, logged in as the client.
    pub backend: Backend,
    /// The framed command being sent (reused from command to command).
    out: Vec<u8>,
}

impl FixedLink {
    pub fn new(backend: Backend) -> Self {
        FixedLink { backend, out: Vec::new() }
    }

    /// The backend's thread id.
    pub fn thread(&self) -> u32 {
        self.backend.greeting.connection_id
    }

    /// Whether the backend leg answers with OK packets in place of EOF.
    pub fn deprecate_eof(&self) -> bool {
        self.backend.capabilities & caps::DEPRECATE_EOF != 0
    }

    /// Sends a command; returns the sequence id of its answer.
    pub async fn send(&mut self, payload: &[u8]) -> Result<u8, SessionError> {
        debug!(command = command::name(payload[0]), len = payload.len(), "forward");
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let reply_seq = encode_packet(&mut out, 0, payload);
        let sent = self.backend.wire.write_raw(&out).await;
        // Kept for the next command unless a huge one made it large.
        if out.capacity() <= KEEP_OUT {
            self.out = out;
        }
        sent.map_err(|e| lost(e, reply_seq))?;
        Ok(reply_seq)
    }

    /// Relays the answer to `payload` (sent) to `client`; `true` when it was an error.
    pub async fn relay_answer(
        &mut self,
        client: &mut Wire<Stream>,
        payload: &[u8],
        shape: Shape,
        reply_seq: u8,
        killed: &mut KillSignal,
    ) -> Result<bool, SessionError> {
        let mut tracker = ResponseTracker::for_command(shape, payload, self.deprecate_eof());
        if tracker.is_done() {
            return Ok(false);
        }
        match relay::answer(&mut self.backend.wire, client, &mut tracker, killed).await {
            Ok(()) => Ok(tracker.failed),
            Err(RelayError::BackendBeforeAnswer(e)) => Err(lost(e, reply_seq)),
            Err(RelayError::Backend(e)) => Err(SessionError::Backend(e)),
            Err(RelayError::Client(e)) => Err(SessionError::Client(e)),
            Err(RelayError::Killed { next_seq }) => {
                Err(SessionError::Refused { err: relay::connection_killed(), seq: next_seq.unwrap_or(reply_seq) })
            }
        }
    }

    /// Waits until the idle connection says something: its end (KILL, wait_timeout, a restart),
    /// or a packet no command asked for (the error a server sends as it closes).
    pub async fn gone(&mut self) -> String {
        match self.backend.wire.fill().await {
            Ok(false) => "closed by the server".into(),
            Ok(true) => "the server sent a packet unasked".into(),
            Err(e) => e.to_string(),
        }
    }

    /// COM_RESET_CONNECTION (what a refused COM_CHANGE_USER leaves on MariaDB: no variables,
    /// temporary tables or prepared statements, the same user). A server without it keeps its
    /// state (logged).
    pub async fn clear_state(&mut self, timeout: std::time::Duration) -> Result<(), SessionError> {
        match crate::session::pool::command(&mut self.backend, &[command::RESET_CONNECTION], timeout).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "COM_RESET_CONNECTION refused after a refused COM_CHANGE_USER");
                Ok(())
            }
            Err(e) => Err(SessionError::Backend(e)),
        }
    }

    /// `KILL [QUERY] <own thread>` on the connection itself: the server's answer.
    pub async fn kill_itself(&mut self, query_only: bool) -> OwnKill {
        let payload = gateway_ids::statement(self.thread(), query_only);
        let answer = crate::session::pool::command(&mut self.backend, &payload, gateway_ids::KILL_TIMEOUT).await;
        // A failed KILL QUERY: the next command finds the connection gone.
        OwnKill::of(answer.map(|a| a.map(drop)), query_only)
    }

    /// COM_QUIT, without waiting.
    pub async fn quit(&mut self) {
        let _ = self.backend.wire.write_packet(0, &[command::QUIT]).await;
    }
}

/// The client's error for a backend connection lost during a command.
pub(super) fn lost(e: ProtocolError, seq: u8) -> SessionError {
    SessionError::Refused {
        err: ErrPacket::new(codes::BACKEND_LOST, format!("Lost connection to backend server during query: {e}")),
        seq,
    }
}
