//! TLS on both legs: the gateway as TLS server to clients (`[tls]`, `[listen] tls`) and as TLS
//! client to database servers (`[backend] tls`), with rustls and its ring provider.
//!
//! The certificate, key and CA files are read when the configuration is loaded, so a reload
//! (SIGHUP) re-reads and validates them and swaps them with the rest of the configuration: new
//! handshakes use the new files, a bad file rejects the reload and the old ones stay.
//! A TLS connection is never kernel-spliced (`dataplane::splice`): its bytes are encrypted.

pub(crate) mod config;
mod files;
pub(crate) mod server_leg;
pub(crate) mod stream;

use std::collections::HashMap;
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
    /// The server leg of each `[[clusters]]` entry with its own `tls` (cluster name → its
    /// setting; `None` when that one is off).
    pub clusters: HashMap<String, Option<Arc<ServerTls>>>,
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
        let mut clusters = HashMap::new();
        for c in &config.clusters {
            if let Some(tls) = &c.tls {
                clusters.insert(c.name.clone(), ServerTls::load(tls)?.map(Arc::new));
            }
        }
        Ok(Loaded { acceptor, server, clusters })
    }

    /// Server-leg TLS towards the servers of `cluster`: its `[[clusters]] tls`, else
    /// `[backend] tls` (the default cluster, clusters without their own setting).
    pub fn server_for(&self, cluster: Option<&str>) -> Option<Arc<ServerTls>> {
        match cluster.and_then(|c| self.clusters.get(c)) {
            Some(own) => own.clone(),
            None => self.server.clone(),
        }
    }
}

/// The client-leg TLS mode for a connection that dialled `dialled` (a listen address, or the
/// address the data plane preserved): the `tls` of its `[[listen.dialled]]` entry, else
/// `[listen] tls`, else `optional` when `[tls]` has a certificate and `off` without one.
pub fn client_tls_mode(config: &Config, dialled: Option<SocketAddr>) -> TlsMode {
    let entry = dialled.and_then(|a| config.listen.dialled.iter().find(|d| d.address == a));
    entry.and_then(|d| d.tls).or(config.listen.tls).unwrap_or(if config.tls.is_some() {
        TlsMode::Optional
    } else {
        TlsMode::Off
    })
}

/// Checks the TLS settings that TOML types alone cannot express.
pub fn validate(config: &Config) -> Result<(), String> {
    let modes = std::iter::once(config.listen.tls).chain(config.listen.dialled.iter().map(|d| d.tls));
    if modes.flatten().any(|m| m != TlsMode::Off) && config.tls.is_none() {
        return Err("[listen] tls or a [[listen.dialled]] tls of \"optional\" or \"required\" needs a certificate: set [tls] cert and key".into());
    }
    let own = config.clusters.iter().filter_map(|c| Some((format!("[[clusters]] {:?} tls", c.name), c.tls.as_ref()?)));
    for (who, b) in std::iter::once(("[backend] tls".to_string(), &config.backend.tls)).chain(own) {
        if b.mode.verifies() && b.ca.is_none() {
            return Err(format!("{who} mode \"{}\" needs ca (the CA certificate file)", b.mode.name()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
