//! Connection phase: the client's HandshakeResponse41 (and SSLRequest), COM_CHANGE_USER, the
//! server's auth switch request and greeting. What parses must survive a re-encode.
#![no_main]

use gateway::protocol::caps;
use gateway::protocol::handshake::{
    auth_switch_request, encode_change_user, parse_auth_switch, parse_change_user, Greeting, HandshakeResponse,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = HandshakeResponse::is_ssl_request(data);
    if let Ok(r) = HandshakeResponse::parse(data) {
        response_round_trip(&r);
    }
    if let Ok((plugin, auth)) = parse_auth_switch(data) {
        let again = parse_auth_switch(&auth_switch_request(&plugin, &auth));
        assert_eq!(again.ok(), Some((plugin, auth)), "auth switch request round trip");
    }
    for client_caps in [0, caps::SUPPORTED, caps::SECURE_CONNECTION | caps::PLUGIN_AUTH | caps::CONNECT_ATTRS] {
        if let Ok(r) = parse_change_user(data, client_caps) {
            let _ = encode_change_user(&r);
        }
    }
    if let Ok(g) = Greeting::parse(data) {
        if g.salt.len() >= 8 {
            let _ = Greeting::parse(&g.encode());
        }
    }
});

/// A parsed response, encoded and parsed again, is the same response. Only for the forms the
/// encoder writes: a length-prefixed auth response (SECURE_CONNECTION or lenenc) that fits.
fn response_round_trip(r: &HandshakeResponse) {
    let lenenc = r.capabilities & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0;
    let secure = r.capabilities & caps::SECURE_CONNECTION != 0;
    if !(lenenc || secure && r.auth_response.len() < 256) {
        return;
    }
    let again = HandshakeResponse::parse(&r.encode());
    let norm = |mut x: HandshakeResponse| {
        // An absent plugin name and an empty one are the same to the gateway.
        x.auth_plugin = x.auth_plugin.filter(|p| !p.is_empty());
        x
    };
    match again {
        Ok(again) => assert_eq!(norm(again), norm(r.clone()), "handshake response round trip"),
        Err(e) => panic!("re-encoded handshake response does not parse: {e}"),
    }
}
