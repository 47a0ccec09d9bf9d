//! Authentication for the raw client: the mysql_native_password and caching_sha2_password
//! scrambles, and a probe that tells the caching_sha2 fast path from full authentication.

use std::net::SocketAddr;

use anyhow::bail;

use super::{parse_err, ErrPacket, RawConn};

/// `mysql_native_password` scramble: SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))); empty for "".
pub fn scramble_native(password: &str, salt: &[u8]) -> Vec<u8> {
    use sha1::{Digest, Sha1};
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password.as_bytes());
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(&salt[..salt.len().min(20)]);
    h.update(stage2);
    let x = h.finalize();
    stage1.iter().zip(x.iter()).map(|(a, b)| a ^ b).collect()
}

/// `caching_sha2_password` scramble: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce).
pub fn scramble_caching_sha2(password: &str, nonce: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    if password.is_empty() {
        return Vec::new();
    }
    let p1 = Sha256::digest(password.as_bytes());
    let p2 = Sha256::digest(p1);
    let mut h = Sha256::new();
    h.update(p2);
    h.update(&nonce[..nonce.len().min(20)]);
    let p3 = h.finalize();
    p1.iter().zip(p3.iter()).map(|(a, b)| a ^ b).collect()
}

/// How a `caching_sha2_password` server answered a scramble.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sha2Path {
    /// `0x01 0x03`: fast authentication succeeded (the account is in the server's cache).
    Fast,
    /// `0x01 0x04`: full authentication required (the probe stops there).
    Full,
    /// OK without an extra round (e.g. empty password).
    Ok,
    /// An ERR packet.
    Err(ErrPacket),
}

/// Logs in as `user` with a caching_sha2_password scramble and reports whether the server took the
/// fast path or asked for full authentication; closes the connection before any full
/// authentication, so the probe itself never fills the server's cache.
pub fn probe_caching_sha2(addr: SocketAddr, user: &str, password: &str) -> anyhow::Result<Sha2Path> {
    let mut c = RawConn::connect(addr)?;
    let mut resp = c.handshake_response(user, "", None);
    // Replace the (empty) native scramble and the plugin name.
    let scramble = scramble_caching_sha2(password, &c.greeting.salt);
    let user_end = 4 + 4 + 1 + 23 + user.len() + 1;
    resp.truncate(user_end);
    resp.push(scramble.len() as u8);
    resp.extend_from_slice(&scramble);
    resp.extend_from_slice(b"caching_sha2_password\0");
    c.write_packet(&resp)?;
    loop {
        let p = c.read_packet()?;
        match (p.first(), p.get(1)) {
            (Some(0x00), _) => return Ok(Sha2Path::Ok),
            (Some(0xff), _) => {
                return Ok(Sha2Path::Err(parse_err(&p).unwrap_or(ErrPacket {
                    code: 0,
                    sql_state: String::new(),
                    message: String::new(),
                })))
            }
            (Some(0x01), Some(0x03)) => return Ok(Sha2Path::Fast),
            (Some(0x01), Some(0x04)) => return Ok(Sha2Path::Full),
            (Some(0xfe), _) => {
                let nul = p[1..].iter().position(|&b| b == 0).map(|i| i + 1).unwrap_or(p.len());
                let plugin = String::from_utf8_lossy(&p[1..nul]).into_owned();
                if plugin != "caching_sha2_password" {
                    bail!("auth switch to {plugin}, not caching_sha2_password");
                }
                let nonce: Vec<u8> = p.get(nul + 1..).unwrap_or(&[]).iter().copied().take(20).collect();
                c.write_packet(&scramble_caching_sha2(password, &nonce))?;
            }
            _ => bail!("unexpected auth packet {:02x?}", &p[..p.len().min(32)]),
        }
    }
}
