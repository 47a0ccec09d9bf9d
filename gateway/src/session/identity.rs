//! The application's identity at an OceanBase server: the connection attributes ODP sends in its
//! login (obproxy `ob_mysql_handshake_response`), as an OceanBase 4.x server reads them from a
//! plain MySQL-protocol login (observer `obmp_connect.cpp`, `check_client_property`).
//!
//! The server takes `__client_ip` only from a login that declares itself a proxy
//! (`__mysql_client_type = __ob_proxy`). Such a login is then checked against
//! `__proxy_scramble` XOR the server's own scramble (20 bytes) instead of the greeting's
//! scramble, so the gateway sends 20 zero bytes: the "proxy scramble" is then the greeting's and
//! the password scramble stays the usual one. The gateway's connection id goes in
//! `__proxy_connection_id` (the server's `PROXY_SESSID`). Attributes a client sent under these
//! reserved names are dropped, so that no application can claim another address.
//!
//! Not done (it needs the OceanBase 2.0 protocol or ODP's capability negotiation,
//! `__proxy_capability_flag`): per-statement trace and client info (full-link trace), session
//! variable sync through the OK packet extra info, and the proxy-side audit fields.

use std::net::SocketAddr;

/// `__mysql_client_type`: which kind of client logs in.
const CLIENT_TYPE: &[u8] = b"__mysql_client_type";
/// The value of `__mysql_client_type` that marks a proxy login.
const PROXY_CLIENT: &[u8] = b"__ob_proxy";
/// `__proxy_scramble`: XORed with the server's scramble to give the one the password is checked with.
const PROXY_SCRAMBLE: &[u8] = b"__proxy_scramble";
/// `__client_ip`: the application's address.
const CLIENT_IP: &[u8] = b"__client_ip";
/// `__client_addr_port`: the application's address and port.
const CLIENT_ADDR_PORT: &[u8] = b"__client_addr_port";
/// `__proxy_connection_id`: the proxy's id of the client session.
const PROXY_CONNECTION_ID: &[u8] = b"__proxy_connection_id";
/// Attributes a client may pass to OceanBase: its own driver's (`__ob_client_*` of OceanBase
/// drivers) and every name not starting with `__`.
const CLIENT_PREFIX: &[u8] = b"__ob_client";
/// Length of a MySQL scramble.
const SCRAMBLE_LEN: usize = 20;

/// Who a server connection is opened for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIdentity {
    /// The application's address (the client leg's peer).
    pub addr: SocketAddr,
    /// The gateway's connection id of the client session.
    pub conn_id: u32,
}

/// Whether a client attribute may reach an OceanBase server as it is.
fn client_may_send(key: &[u8]) -> bool {
    !key.starts_with(b"__") || key.starts_with(CLIENT_PREFIX)
}

/// The attributes of a login to an OceanBase server: the client's own (reserved names dropped),
/// then, with an `identity`, the proxy attributes that carry it.
pub fn oceanbase_attributes(
    client: &[(Vec<u8>, Vec<u8>)],
    identity: Option<&ClientIdentity>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = client.iter().filter(|(k, _)| client_may_send(k)).cloned().collect();
    let Some(identity) = identity else { return out };
    let text = |k: &[u8], v: String| (k.to_vec(), v.into_bytes());
    out.push((CLIENT_TYPE.to_vec(), PROXY_CLIENT.to_vec()));
    out.push((PROXY_SCRAMBLE.to_vec(), vec![0; SCRAMBLE_LEN]));
    out.push(text(CLIENT_IP, identity.addr.ip().to_string()));
    out.push(text(CLIENT_ADDR_PORT, identity.addr.to_string()));
    out.push(text(PROXY_CONNECTION_ID, identity.conn_id.to_string()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(k: &str, v: &str) -> (Vec<u8>, Vec<u8>) {
        (k.as_bytes().to_vec(), v.as_bytes().to_vec())
    }

    #[test]
    fn identity_attributes_replace_what_a_client_claims() {
        let client = [
            kv("_client_name", "libmariadb"),
            kv("__client_ip", "10.9.9.9"),
            kv("__mysql_client_type", "__ob_proxy"),
            kv("__ob_client_name", "OceanBase Connector/J"),
        ];
        let id = ClientIdentity { addr: "192.0.2.7:50123".parse().unwrap(), conn_id: 42 };
        let out = oceanbase_attributes(&client, Some(&id));
        assert_eq!(oceanbase_attributes(&client, None), [client[0].clone(), client[3].clone()]);
        let get =
            |k: &str| out.iter().filter(|(key, _)| key == k.as_bytes()).map(|(_, v)| v.clone()).collect::<Vec<_>>();
        assert_eq!(get("__client_ip"), [b"192.0.2.7".to_vec()]);
        assert_eq!(get("__client_addr_port"), [b"192.0.2.7:50123".to_vec()]);
        assert_eq!(get("__mysql_client_type"), [b"__ob_proxy".to_vec()]);
        assert_eq!(get("__proxy_connection_id"), [b"42".to_vec()]);
        assert_eq!(get("__proxy_scramble"), [vec![0u8; 20]]);
        assert_eq!(get("_client_name"), [b"libmariadb".to_vec()]);
        assert_eq!(get("__ob_client_name"), [b"OceanBase Connector/J".to_vec()]);
    }
}
