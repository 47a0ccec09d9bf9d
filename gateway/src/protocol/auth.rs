//! Password scrambles of `mysql_native_password` and `caching_sha2_password`, and RSA for the
//! latter's full authentication without TLS.

use rand::RngCore;
use rsa::pkcs8::{DecodePublicKey, EncodePublicKey, LineEnding};
use rsa::{Oaep, RsaPrivateKey, RsaPublicKey};
use sha1::{Digest, Sha1};
use sha2::Sha256;

/// Name of the SHA1 plugin.
pub const NATIVE: &str = "mysql_native_password";
/// Name of the SHA256 plugin.
pub const CACHING_SHA2: &str = "caching_sha2_password";

/// caching_sha2_password: "request public key" from the client.
pub const SHA2_REQUEST_PUBLIC_KEY: u8 = 0x02;
/// caching_sha2_password: fast authentication succeeded.
pub const SHA2_FAST_OK: u8 = 0x03;
/// caching_sha2_password: the server needs the full password.
pub const SHA2_FULL_AUTH: u8 = 0x04;

/// A fresh 20-byte salt of printable, non-NUL bytes (as servers generate them).
pub fn new_salt() -> Vec<u8> {
    let mut raw = [0u8; 20];
    rand::thread_rng().fill_bytes(&mut raw);
    raw.iter().map(|b| 0x21 + b % 0x5E).collect()
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn xor<const N: usize>(a: &[u8; N], b: &[u8; N]) -> [u8; N] {
    let mut out = [0u8; N];
    for i in 0..N {
        out[i] = a[i] ^ b[i];
    }
    out
}

/// SHA1(password): what a native-password client proves it knows.
pub fn native_stage1(password: &[u8]) -> [u8; 20] {
    sha1(&[password])
}

/// SHA1(SHA1(password)): the stored hash (`mysql.user.authentication_string` without the `*`).
pub fn native_stage2(stage1: &[u8; 20]) -> [u8; 20] {
    sha1(&[stage1])
}

/// Parses a stored `*HEX` native hash.
pub fn parse_native_hash(text: &str) -> Option<[u8; 20]> {
    let hex_part = text.strip_prefix('*')?;
    let mut out = [0u8; 20];
    hex::decode_to_slice(hex_part, &mut out).ok()?;
    Some(out)
}

/// The client's native scramble for `salt` given SHA1(password).
pub fn native_scramble(stage1: &[u8; 20], salt: &[u8]) -> [u8; 20] {
    let stage2 = native_stage2(stage1);
    xor(stage1, &sha1(&[salt, &stage2]))
}

/// Checks a native scramble against the stored hash; on success returns SHA1(password), which
/// lets the gateway log in to a backend with a different salt.
pub fn native_verify(response: &[u8], salt: &[u8], stage2: &[u8; 20]) -> Option<[u8; 20]> {
    let resp: &[u8; 20] = response.try_into().ok()?;
    let stage1 = xor(resp, &sha1(&[salt, stage2]));
    (native_stage2(&stage1) == *stage2).then_some(stage1)
}

/// The client's caching_sha2 scramble: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || nonce).
pub fn sha2_scramble(password: &[u8], nonce: &[u8]) -> [u8; 32] {
    let p1 = sha256(&[password]);
    let p2 = sha256(&[&p1]);
    xor(&p1, &sha256(&[&p2, nonce]))
}

/// Checks a caching_sha2 fast-path scramble against the plain password.
pub fn sha2_verify(response: &[u8], nonce: &[u8], password: &[u8]) -> bool {
    response.len() == 32 && constant_time_eq(response, &sha2_scramble(password, nonce))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Compares a claimed password with the configured one without early exit.
pub fn password_eq(a: &[u8], b: &[u8]) -> bool {
    constant_time_eq(a, b)
}

/// XORs the NUL-terminated password with the nonce repeated, as both RSA directions require.
fn xor_with_nonce(data: &[u8], nonce: &[u8]) -> Vec<u8> {
    if nonce.is_empty() {
        return data.to_vec();
    }
    data.iter().enumerate().map(|(i, b)| b ^ nonce[i % nonce.len()]).collect()
}

/// The server side of full authentication: an RSA key pair and its PEM public key.
pub struct RsaKeys {
    private: RsaPrivateKey,
    /// PEM (SubjectPublicKeyInfo) sent to clients that request it.
    pub public_pem: String,
}

/// Errors of RSA key handling.
#[derive(Debug, thiserror::Error)]
pub enum RsaError {
    /// Key generation or PEM encoding failed.
    #[error("rsa key: {0}")]
    Key(String),
    /// A ciphertext that does not decrypt with our key.
    #[error("rsa decrypt failed")]
    Decrypt,
}

impl RsaKeys {
    /// Generates a 2048-bit key pair.
    pub fn generate() -> Result<Self, RsaError> {
        let private = RsaPrivateKey::new(&mut rand::thread_rng(), 2048).map_err(|e| RsaError::Key(e.to_string()))?;
        let public_pem =
            RsaPublicKey::from(&private).to_public_key_pem(LineEnding::LF).map_err(|e| RsaError::Key(e.to_string()))?;
        Ok(RsaKeys { private, public_pem })
    }

    /// Decrypts a client's RSA-OAEP(SHA1) password and removes the nonce mask and trailing NUL.
    pub fn decrypt_password(&self, ciphertext: &[u8], nonce: &[u8]) -> Result<Vec<u8>, RsaError> {
        let plain = self.private.decrypt(Oaep::new::<Sha1>(), ciphertext).map_err(|_| RsaError::Decrypt)?;
        let mut pw = xor_with_nonce(&plain, nonce);
        if pw.last() == Some(&0) {
            pw.pop();
        }
        Ok(pw)
    }
}

/// The client side of full authentication: encrypts `password` for a server's PEM public key.
pub fn rsa_encrypt_password(pem: &[u8], password: &[u8], nonce: &[u8]) -> Result<Vec<u8>, RsaError> {
    let text = std::str::from_utf8(pem).map_err(|e| RsaError::Key(e.to_string()))?;
    let key =
        RsaPublicKey::from_public_key_pem(text.trim_end_matches('\0')).map_err(|e| RsaError::Key(e.to_string()))?;
    let mut with_nul = password.to_vec();
    with_nul.push(0);
    let masked = xor_with_nonce(&with_nul, nonce);
    key.encrypt(&mut rand::thread_rng(), Oaep::new::<Sha1>(), &masked).map_err(|e| RsaError::Key(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_hash_matches_mysql_password_function() {
        // SELECT PASSWORD('secret') on MySQL 5.7 / MariaDB.
        let h = parse_native_hash("*14E65567ABDB5135D0CFD9A70B3032C179A49EE7").unwrap();
        assert_eq!(native_stage2(&native_stage1(b"secret")), h);
    }

    #[test]
    fn native_verify_recovers_stage1() {
        let salt = new_salt();
        let s1 = native_stage1(b"pw");
        let resp = native_scramble(&s1, &salt);
        assert_eq!(native_verify(&resp, &salt, &native_stage2(&s1)), Some(s1));
        assert_eq!(native_verify(&resp, &salt, &native_stage2(&native_stage1(b"other"))), None);
        assert_eq!(native_verify(&resp[..19], &salt, &native_stage2(&s1)), None);
    }

    #[test]
    fn sha2_verify_accepts_only_the_password() {
        let nonce = new_salt();
        let r = sha2_scramble(b"pw", &nonce);
        assert!(sha2_verify(&r, &nonce, b"pw"));
        assert!(!sha2_verify(&r, &nonce, b"pw2"));
    }

    #[test]
    fn rsa_round_trip() {
        let keys = RsaKeys::generate().unwrap();
        let nonce = new_salt();
        let c = rsa_encrypt_password(keys.public_pem.as_bytes(), b"s3cret", &nonce).unwrap();
        assert_eq!(keys.decrypt_password(&c, &nonce).unwrap(), b"s3cret");
    }
}
