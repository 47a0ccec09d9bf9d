//! Why a pool could not hand out a connection, and what the client is told.

use std::net::SocketAddr;

use crate::protocol::message::ErrPacket;
use crate::protocol::{codes, ProtocolError};

/// Why no connection could be handed out.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Every connection of the key stayed in use for the whole acquire timeout.
    #[error("gateway: no connection to {server} available within {waited_ms} ms (pool size {size}, all busy)")]
    Busy {
        /// The server.
        server: SocketAddr,
        /// How long the request waited.
        waited_ms: u64,
        /// `max_per_key`.
        size: usize,
    },
    /// The server's connect limit stayed taken for the rest of the acquire timeout.
    #[error("gateway: no connection to {server} available within {waited_ms} ms ({limit} connection attempts to it already in flight)")]
    ConnectQueue {
        /// The server.
        server: SocketAddr,
        /// How long the request waited.
        waited_ms: u64,
        /// `max_connects_per_server`.
        limit: usize,
    },
    /// Connecting failed: refused, timed out, or the connection broke during login.
    #[error("gateway: cannot connect to {server}: {reason}")]
    Connect {
        /// The server.
        server: SocketAddr,
        /// What went wrong.
        reason: String,
    },
    /// The TLS handshake with the server failed or TLS was required and not offered
    /// (`[backend] tls` / `[[clusters]] tls`): a configuration or certificate problem, not a
    /// dead server, so it does not count for congestion.
    #[error("{reason}")]
    Tls {
        /// The server.
        server: SocketAddr,
        /// `gateway: TLS to backend <addr>: <why>`.
        reason: String,
    },
    /// The server refused the login (to relay to the client).
    #[error("gateway: login to {server} refused: {err}")]
    Denied {
        /// The server.
        server: SocketAddr,
        /// The server's error.
        err: ErrPacket,
    },
    /// A statement of the session-state sync failed; the connection was dropped.
    #[error("gateway: session sync on {server} failed: {err}")]
    Sync {
        /// The server.
        server: SocketAddr,
        /// The server's error.
        err: ErrPacket,
    },
    /// The connection broke while syncing the session state.
    #[error("gateway: connection to {server} lost during session sync: {source}")]
    Lost {
        /// The server.
        server: SocketAddr,
        /// The failure.
        source: ProtocolError,
    },
}

impl PoolError {
    /// The ERR packet for the client: the server's own error when it refused, else
    /// CR_SSL_CONNECTION_ERROR (2026) / CR_CONN_HOST_ERROR (2003) / CR_SERVER_LOST (2013) with
    /// the message above.
    pub fn to_err_packet(&self) -> ErrPacket {
        match self {
            PoolError::Denied { err, .. } | PoolError::Sync { err, .. } => err.clone(),
            PoolError::Tls { .. } => ErrPacket::new(codes::SSL_CONNECTION, self.to_string()),
            PoolError::Lost { .. } => ErrPacket::new(codes::BACKEND_LOST, self.to_string()),
            _ => ErrPacket::new(codes::BACKEND_UNREACHABLE, self.to_string()),
        }
    }

    /// Whether another server may be tried: nothing reached this one (docs/routing.md §7).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            PoolError::Busy { .. } | PoolError::ConnectQueue { .. } | PoolError::Connect { .. } | PoolError::Tls { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_clear_and_classified() {
        let server: SocketAddr = "10.0.0.1:2881".parse().unwrap();
        let busy = PoolError::Busy { server, waited_ms: 2000, size: 8 };
        assert_eq!(
            busy.to_string(),
            "gateway: no connection to 10.0.0.1:2881 available within 2000 ms (pool size 8, all busy)"
        );
        assert_eq!(busy.to_err_packet().code, codes::BACKEND_UNREACHABLE);
        assert!(busy.is_retryable());
        let denied = PoolError::Denied { server, err: ErrPacket::new(1045, "Access denied") };
        assert_eq!(denied.to_err_packet().code, 1045);
        assert!(!denied.is_retryable());
        let tls =
            PoolError::Tls { server, reason: "gateway: TLS to backend 10.0.0.1:2881: invalid peer certificate".into() };
        assert_eq!(tls.to_err_packet().code, 2026, "CR_SSL_CONNECTION_ERROR, not 2003");
        assert_eq!(tls.to_err_packet().message, "gateway: TLS to backend 10.0.0.1:2881: invalid peer certificate");
        assert!(tls.is_retryable(), "nothing ran on the server");
    }
}
