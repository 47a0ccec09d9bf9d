//! TLS on both legs: the gateway as TLS server to clients (`[tls]`, `[listen] tls`) and as TLS
//! client to database servers (`[backend] tls`), with rustls and its ring provider.
//!
//! The certificate, key and CA files are read when the configuration is loaded, so a reload
//! (SIGHUP) re-reads and validates them and swaps them with the rest of the configuration: new
//! handshakes use the new files, a bad file rejects the reload and the old ones stay.
//! A TLS connection is never kernel-spliced (`dataplane::splice`): its bytes are encrypted.

pub mod config;
mod files;
pub mod server_leg;
pub mod stream;

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use rustls::crypto::CryptoProvider;

pub use config::{BackendTls, ServerTlsMode, TlsConfig, TlsMode};
pub use server_leg::ServerTls;
pub use stream::Stream;

use crate::config::Config;

/// Errors of TLS set-up and handshakes.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A certificate, key or CA file is missing or unusable.
    #[error("{path}: {why}")]
    File {
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// A setting rustls refuses.
    #[error("{0}")]
    Config(String),
    /// The TLS handshake failed (certificate refused, protocol error, connection lost).
    #[error("TLS handshake failed: {0}")]
    Handshake(std::io::Error),
    /// `[backend] tls` requires TLS and the server's greeting does not offer it.
    #[error("the server does not offer TLS and [backend] tls mode is {0}")]
    NotOffered(&'static str),
}

/// The rustls crypto provider of both legs (ring).
pub fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider())).clone()
}

/// The TLS material of one configuration load: files read and checked, ready for handshakes.
#[derive(Clone, Default)]
pub struct Loaded {
    /// The client leg's acceptor (`[tls]`), if a certificate is configured.
    pub acceptor: Option<tokio_rustls::TlsAcceptor>,
    /// The server leg (`[backend] tls`), unless off.
    pub server: Option<Arc<ServerTls>>,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded").field("acceptor", &self.acceptor.is_some()).field("server", &self.server).finish()
    }
}

impl Loaded {
    /// Reads the files `config` names (certificate, key, CA) and builds the TLS configurations.
    pub fn load(config: &Config) -> Result<Loaded, TlsError> {
        let acceptor = match &config.tls {
            Some(t) => Some(tokio_rustls::TlsAcceptor::from(files::server_config(&t.cert, &t.key)?)),
            None => None,
        };
        let server = ServerTls::load(&config.backend.tls)?.map(Arc::new);
        Ok(Loaded { acceptor, server })
    }
}

/// The client-leg TLS mode for a connection that dialled `dialled` (the listener address, or the
/// address the data plane preserved). Today `[listen] tls` for every address; default
/// `optional` when `[tls]` has a certificate, else `off`.
pub fn client_tls_mode(config: &Config, _dialled: Option<SocketAddr>) -> TlsMode {
    config.listen.tls.unwrap_or(if config.tls.is_some() { TlsMode::Optional } else { TlsMode::Off })
}

/// Checks the TLS settings that TOML types alone cannot express.
pub fn validate(config: &Config) -> Result<(), String> {
    if matches!(config.listen.tls, Some(TlsMode::Optional | TlsMode::Required)) && config.tls.is_none() {
        return Err("[listen] tls = \"optional\" or \"required\" needs a certificate: set [tls] cert and key".into());
    }
    let b = &config.backend.tls;
    if b.mode.verifies() && b.ca.is_none() {
        return Err(format!("[backend] tls mode \"{}\" needs ca (the CA certificate file)", b.mode.name()));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
