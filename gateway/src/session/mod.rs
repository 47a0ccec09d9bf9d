//! Client sessions: authentication of the client, the backend login, and the command loop.

pub(crate) mod accept;
pub(crate) mod account;
pub(crate) mod admin;
pub mod backend;
pub(crate) mod client_auth;
pub(crate) mod client_command;
pub(crate) mod client_side;
mod command_loop;
pub(crate) mod connection_id;
mod gateway_ids;
pub(crate) mod glance;
pub(crate) mod greeting;
pub(crate) mod identity;
pub(crate) mod internal;
pub(crate) mod kill;
pub mod kill_switch;
mod kind;
pub(crate) mod next_command;
pub mod pool;
pub mod prepared;
pub(crate) mod processlist;
pub(crate) mod proxy;
pub mod relay;
pub(crate) mod routed;
pub(crate) mod server_kind;
pub(crate) mod shared;
pub mod state;

use crate::protocol::message::ErrPacket;
use crate::protocol::ProtocolError;

pub use shared::Shared;

/// Why a session ended early.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The client gets this ERR packet at sequence `seq`, then the connection closes.
    #[error("{err}")]
    Refused {
        /// The error to send.
        err: ErrPacket,
        /// Sequence id for the ERR packet.
        seq: u8,
    },
    /// The client connection failed or broke the protocol in a way that only allows closing.
    #[error("client: {0}")]
    Client(ProtocolError),
    /// The backend connection failed in a way that only allows closing.
    #[error("backend: {0}")]
    Backend(ProtocolError),
}

impl SessionError {
    /// A refusal with a gateway-made error.
    pub fn refuse(code: u16, seq: u8, message: impl Into<String>) -> Self {
        SessionError::Refused { err: ErrPacket::new(code, message), seq }
    }
}

/// The secret the gateway holds after authenticating a client, to log in to backends for it.
#[derive(Clone)]
pub enum Credential {
    /// The plain password (from the config, or learnt in full authentication).
    Plain(Vec<u8>),
    /// SHA1(password), recovered from a native scramble when only the stored hash is configured.
    NativeStage1([u8; 20]),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Credential::Plain(_) => "Credential::Plain(..)",
            Credential::NativeStage1(_) => "Credential::NativeStage1(..)",
        })
    }
}
