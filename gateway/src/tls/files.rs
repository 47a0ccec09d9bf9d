//! Certificate, key and CA files (PEM), read at start and on every reload.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{RootCertStore, ServerConfig};

use super::{provider, TlsError};

/// The client leg's TLS server configuration: `cert` (chain, leaf first) and its `key`.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, TlsError> {
    let chain = certificates(cert)?;
    let key_err = |why: String| TlsError::File { path: key.display().to_string(), why };
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| key_err(e.to_string()))?;
    // Parsed on its own first, so that a broken key file is named as such.
    provider()
        .key_provider
        .load_private_key(key_der.clone_key())
        .map_err(|e| key_err(format!("unusable private key: {e}")))?;
    let config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| TlsError::File {
            path: cert.display().to_string(),
            why: format!("certificate and key {} do not fit: {e}", key.display()),
        })?;
    Ok(Arc::new(config))
}

/// The CA certificates of `path`, as trust anchors.
pub fn roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in certificates(path)? {
        roots.add(cert).map_err(|e| TlsError::File {
            path: path.display().to_string(),
            why: format!("not a usable CA certificate: {e}"),
        })?;
    }
    Ok(roots)
}

/// Every certificate of a PEM file; at least one.
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let file_err = |why: String| TlsError::File { path: path.display().to_string(), why };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_err(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_err(e.to_string()))?;
    if certs.is_empty() {
        return Err(file_err("no CERTIFICATE in the file".into()));
    }
    Ok(certs)
}
