//! The gateway as a TLS client of database servers: the `[backend] tls` mode, the CA, and the
//! certificate checks each mode makes (none, chain only, chain and name).

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;

use super::config::{BackendTls, ServerTlsMode};
use super::{files, provider, Stream, TlsError};

/// Server-leg TLS as configured, ready for handshakes (one per configuration load).
#[derive(Clone)]
pub struct ServerTls {
    /// The mode (never `Off`: no `ServerTls` then).
    pub mode: ServerTlsMode,
    connector: tokio_rustls::TlsConnector,
    server_name: Option<ServerName<'static>>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("mode", &self.mode)
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Builds the client configuration of `[backend] tls` (reading its CA file); `None` when off.
    pub fn load(cfg: &BackendTls) -> Result<Option<ServerTls>, TlsError> {
        if cfg.mode == ServerTlsMode::Off {
            return Ok(None);
        }
        let verifier: Arc<dyn ServerCertVerifier> = match (cfg.mode.verifies(), &cfg.ca) {
            (true, Some(ca)) => Arc::new(Verifier {
                roots: Some(files::roots(ca)?),
                check_name: cfg.mode == ServerTlsMode::VerifyIdentity,
            }),
            (true, None) => return Err(TlsError::Config(format!("[backend] tls mode {} needs ca", cfg.mode.name()))),
            (false, _) => Arc::new(Verifier { roots: None, check_name: false }),
        };
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Config(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        let server_name = match &cfg.server_name {
            Some(n) => Some(ServerName::try_from(n.clone()).map_err(|_| {
                TlsError::Config(format!("[backend] tls server_name {n:?} is not a DNS name or IP address"))
            })?),
            None => None,
        };
        Ok(Some(ServerTls {
            mode: cfg.mode,
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            server_name,
        }))
    }

    /// Whether a server whose greeting does (not) offer TLS is to be connected with TLS:
    /// `Ok(false)` plain, `Err` when TLS is required and the server does not offer it.
    pub fn wanted(&self, server_offers: bool) -> Result<bool, TlsError> {
        match (self.mode, server_offers) {
            (ServerTlsMode::Off, _) => Ok(false),
            (ServerTlsMode::Preferred, offers) => Ok(offers),
            (_, true) => Ok(true),
            (mode, false) => Err(TlsError::NotOffered(mode.name())),
        }
    }

    /// TLS handshake on `tcp` (after the SSLRequest was sent) with the server at `addr`.
    pub async fn connect(&self, tcp: TcpStream, addr: SocketAddr) -> Result<Stream, TlsError> {
        let name = self.server_name.clone().unwrap_or_else(|| ServerName::IpAddress(addr.ip().into()));
        let tls = self.connector.connect(name, tcp).await.map_err(TlsError::Handshake)?;
        Ok(Stream::Client(Box::new(tls)))
    }
}

/// The server-certificate check of a mode: the chain against the configured CA (`roots`, for
/// `verify_ca` and `verify_identity`) and the name when asked (`verify_identity`); none for
/// `preferred` and `required` (MySQL's meaning: encryption without authenticating the server).
/// The handshake signatures are checked in every mode.
#[derive(Debug)]
struct Verifier {
    roots: Option<RootCertStore>,
    check_name: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else {
            return Ok(ServerCertVerified::assertion());
        };
        let cert = ParsedCertificate::try_from(end_entity)?;
        let algs = provider().signature_verification_algorithms.all;
        verify_server_cert_signed_by_trust_anchor(&cert, roots, intermediates, now, algs)?;
        if self.check_name {
            verify_server_name(&cert, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(m, c, d, &provider().signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(m, c, d, &provider().signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        provider().signature_verification_algorithms.supported_schemes()
    }
}
