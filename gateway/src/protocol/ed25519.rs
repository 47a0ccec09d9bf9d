//! MariaDB's `ed25519` authentication (client plugin `client_ed25519`): the server sends a
//! 32-byte nonce in an auth switch, the client answers with the Ed25519 signature of the nonce
//! made with the expanded secret key SHA-512(password), and the server checks it with the
//! account's public key (what `mysql.global_priv` stores, base64).

use ed25519_dalek::hazmat::{raw_sign, ExpandedSecretKey};
use ed25519_dalek::{Signature, VerifyingKey};
use rand::RngCore;
use sha2::{Digest, Sha512};

/// The client plugin's name, sent in the auth switch.
pub const CLIENT_PLUGIN: &str = "client_ed25519";
/// Length of the server's nonce.
pub const NONCE_LEN: usize = 32;

fn expanded_key(password: &[u8]) -> ExpandedSecretKey {
    let digest: [u8; 64] = Sha512::digest(password).into();
    ExpandedSecretKey::from_bytes(&digest)
}

/// The account's public key for `password`.
pub fn public_key(password: &[u8]) -> VerifyingKey {
    VerifyingKey::from(&expanded_key(password))
}

/// A fresh nonce for a client's `client_ed25519` answer.
pub fn new_nonce() -> [u8; NONCE_LEN] {
    let mut nonce = [0u8; NONCE_LEN];
    rand::thread_rng().fill_bytes(&mut nonce);
    nonce
}

/// The client's answer to `nonce` (64-byte signature).
pub fn sign(password: &[u8], nonce: &[u8]) -> [u8; 64] {
    let key = expanded_key(password);
    raw_sign::<Sha512>(&key, nonce, &VerifyingKey::from(&key)).to_bytes()
}

/// Whether `answer` is the signature of `nonce` by the holder of `key`'s password.
pub fn verify(key: &VerifyingKey, nonce: &[u8], answer: &[u8]) -> bool {
    let Ok(signature) = Signature::from_slice(answer) else { return false };
    key.verify_strict(nonce, &signature).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_key_is_what_mariadb_stores() {
        // `CREATE USER ed IDENTIFIED VIA ed25519 USING PASSWORD('edpw')` on MariaDB 10.11.19
        // stored "LIEvGDGjHTmKyz3peLRjPqahOct5n6/BQCNm1bOvot4" (base64 without padding).
        let stored = "LIEvGDGjHTmKyz3peLRjPqahOct5n6/BQCNm1bOvot4";
        assert_eq!(base64_nopad(public_key(b"edpw").as_bytes()), stored);
    }

    #[test]
    fn signatures_verify_only_for_the_password_and_nonce() {
        let nonce = new_nonce();
        let answer = sign(b"secret", &nonce);
        assert!(verify(&public_key(b"secret"), &nonce, &answer));
        assert!(!verify(&public_key(b"other"), &nonce, &answer));
        assert!(!verify(&public_key(b"secret"), &new_nonce(), &answer));
        assert!(!verify(&public_key(b"secret"), &nonce, &answer[..63]));
        assert!(!verify(&public_key(b"secret"), &nonce, &[]));
    }

    /// Standard base64 without padding, to compare with the stored key.
    fn base64_nopad(bytes: &[u8]) -> String {
        const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        out
    }
}
