//! Test certificates made with rcgen: a CA and server certificates for `127.0.0.1` and
//! `localhost` signed by it, written as PEM files for the gateway, MariaDB and the clients.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use sha2::{Digest, Sha256};

/// A certificate authority whose certificate is `<dir>/<name>-ca.pem`.
pub struct TestCa {
    dir: PathBuf,
    name: String,
    cert: rcgen::Certificate,
    key: KeyPair,
}

/// The PEM files of one server certificate, and its CA's file.
#[derive(Debug, Clone)]
pub struct ServerTlsFiles {
    /// The certificate (`--ssl-cert`, `[tls] cert`).
    pub cert: PathBuf,
    /// Its private key.
    pub key: PathBuf,
    /// The CA certificate it is signed by.
    pub ca: PathBuf,
    /// Hex SHA-256 of the certificate's DER (what a client sees as the peer certificate).
    pub sha256: String,
}

impl TestCa {
    /// A new CA named `name`, its certificate written to `dir`.
    pub fn new(dir: &Path, name: &str) -> anyhow::Result<TestCa> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, format!("gateway test CA {name}"));
        let cert = params.self_signed(&key)?;
        let ca = TestCa { dir: dir.to_path_buf(), name: name.into(), cert, key };
        std::fs::write(ca.ca_path(), ca.cert.pem()).context("writing the CA certificate")?;
        Ok(ca)
    }

    /// The CA certificate's PEM file.
    pub fn ca_path(&self) -> PathBuf {
        self.dir.join(format!("{}-ca.pem", self.name))
    }

    /// A fresh server certificate for `127.0.0.1` and `localhost` (new key each time), written
    /// to `<dir>/<stem>.pem` and `<dir>/<stem>.key` (replacing earlier files of that stem).
    pub fn issue(&self, stem: &str) -> anyhow::Result<ServerTlsFiles> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])?;
        params.distinguished_name.push(DnType::CommonName, format!("gateway test server {stem}"));
        let cert = params.signed_by(&key, &self.cert, &self.key)?;
        let files = ServerTlsFiles {
            cert: self.dir.join(format!("{stem}.pem")),
            key: self.dir.join(format!("{stem}.key")),
            ca: self.ca_path(),
            sha256: crate::hex(&Sha256::digest(cert.der())),
        };
        // Key first: a reader that sees the new certificate must also find its key.
        std::fs::write(&files.key, key.serialize_pem()).context("writing the server key")?;
        std::fs::write(&files.cert, cert.pem()).context("writing the server certificate")?;
        Ok(files)
    }
}
