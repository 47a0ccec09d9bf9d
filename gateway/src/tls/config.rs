//! The TLS settings of the configuration file: `[tls]`, `[listen] tls` and `[backend] tls`.

use std::path::PathBuf;

use serde::Deserialize;

/// `[tls]`: the certificate the gateway presents to clients (client leg).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM file with the gateway's certificate, optionally followed by its chain (leaf first).
    /// Re-read on every reload (SIGHUP): a renewed certificate is served to new handshakes.
    pub cert: PathBuf,
    /// PEM file with the certificate's private key (PKCS#8, PKCS#1 or SEC1). Re-read on reload.
    pub key: PathBuf,
}

/// Client-leg TLS of a listener (`[listen] tls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsMode {
    /// No TLS: the greeting does not offer it; an SSLRequest is refused.
    Off,
    /// The greeting offers TLS; clients choose.
    Optional,
    /// Every client must switch to TLS; a plain login gets ERROR 3159.
    Required,
}

impl TlsMode {
    /// The config-file spelling.
    pub const fn name(self) -> &'static str {
        match self {
            TlsMode::Off => "off",
            TlsMode::Optional => "optional",
            TlsMode::Required => "required",
        }
    }
}

/// Server-leg TLS (`[backend] tls`), named after MySQL's `--ssl-mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerTlsMode {
    /// Plain TCP to servers (default).
    #[default]
    Off,
    /// TLS when the server's greeting offers it, plain otherwise; certificates are not checked.
    Preferred,
    /// TLS or no connection; certificates are not checked.
    Required,
    /// TLS, the server's chain checked against `ca`; the name is not checked.
    VerifyCa,
    /// TLS, chain checked against `ca` and the certificate's name against `server_name` (else
    /// the server's IP address).
    VerifyIdentity,
}

impl ServerTlsMode {
    /// The config-file spelling.
    pub const fn name(self) -> &'static str {
        match self {
            ServerTlsMode::Off => "off",
            ServerTlsMode::Preferred => "preferred",
            ServerTlsMode::Required => "required",
            ServerTlsMode::VerifyCa => "verify_ca",
            ServerTlsMode::VerifyIdentity => "verify_identity",
        }
    }

    /// Whether the server's certificate chain is checked.
    pub const fn verifies(self) -> bool {
        matches!(self, ServerTlsMode::VerifyCa | ServerTlsMode::VerifyIdentity)
    }
}

/// `[backend] tls = { mode = …, ca = …, server_name = … }`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendTls {
    /// `off` (default), `preferred`, `required`, `verify_ca` or `verify_identity`.
    #[serde(default)]
    pub mode: ServerTlsMode,
    /// PEM file of the CA certificate(s) the servers' chains are checked against; needed by
    /// `verify_ca` and `verify_identity`. Re-read on reload.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// Name the servers' certificates must carry (`verify_identity`) and the SNI sent. Unset:
    /// the address dialled (its IP address).
    #[serde(default)]
    pub server_name: Option<String>,
}

impl BackendTls {
    /// One-line summary (SHOW PROXYCONFIG).
    pub fn summary(&self) -> String {
        let mut s = self.mode.name().to_string();
        if let Some(ca) = &self.ca {
            s.push_str(&format!(" ca={}", ca.display()));
        }
        if let Some(n) = &self.server_name {
            s.push_str(&format!(" server_name={n}"));
        }
        s
    }
}
