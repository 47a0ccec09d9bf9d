//! Unit tests of the TLS settings: defaults, validation, the server-leg mode decision.

use super::*;
use crate::protocol::handshake::HandshakeResponse;

const BASE: &str = "[listen]\naddress = \"127.0.0.1:2883\"\n[backend]\naddress = \"127.0.0.1:3306\"\n";
const USERS: &str = "[[users]]\nname = \"r\"\npassword = \"\"\nrequire_tls = true\n";

fn parse(extra_listen: &str, rest: &str) -> Result<Config, String> {
    let text = BASE.replace("[backend]", &format!("{extra_listen}\n[backend]")) + rest + USERS;
    Config::parse(&text, "t").map_err(|e| e.to_string())
}

#[test]
fn client_leg_defaults_to_off_without_a_certificate() {
    let c = parse("", "").unwrap();
    assert_eq!(client_tls_mode(&c, Some(c.listen.address)), TlsMode::Off);
    assert!(c.users[0].require_tls);
    assert!(c.tls_loaded.acceptor.is_none() && c.tls_loaded.server.is_none());
}

#[test]
fn optional_or_required_without_a_certificate_is_refused() {
    for mode in ["optional", "required"] {
        let e = parse(&format!("tls = \"{mode}\""), "").unwrap_err();
        assert!(e.contains("needs a certificate"), "{e}");
    }
    assert!(parse("tls = \"off\"", "").is_ok());
    assert!(parse("tls = \"sometimes\"", "").is_err());
}

#[test]
fn missing_certificate_files_are_a_clear_config_error() {
    let e = parse("", "[tls]\ncert = \"/nonexistent/cert.pem\"\nkey = \"/nonexistent/key.pem\"\n").unwrap_err();
    assert!(e.contains("TLS: /nonexistent/cert.pem"), "{e}");
}

#[test]
fn verifying_modes_need_a_ca() {
    for mode in ["verify_ca", "verify_identity"] {
        let e = parse("", &format!("[backend.tls]\nmode = \"{mode}\"\n")).unwrap_err();
        assert!(e.contains("needs ca"), "{e}");
    }
    let c = parse("", "[backend.tls]\nmode = \"required\"\nserver_name = \"db.example\"\n").unwrap();
    assert_eq!(c.backend.tls.summary(), "required server_name=db.example");
    assert!(c.tls_loaded.server.is_some());
}

#[test]
fn server_leg_mode_decides_on_the_servers_offer() {
    let load = |mode| ServerTls::load(&BackendTls { mode, ..Default::default() }).unwrap();
    assert!(load(ServerTlsMode::Off).is_none());
    let preferred = load(ServerTlsMode::Preferred).unwrap();
    assert_eq!((preferred.wanted(true).unwrap(), preferred.wanted(false).unwrap()), (true, false));
    let required = load(ServerTlsMode::Required).unwrap();
    assert!(required.wanted(true).unwrap());
    let e = required.wanted(false).unwrap_err().to_string();
    assert_eq!(e, "the server does not offer TLS and [backend] tls mode is required");
}

#[test]
fn ssl_request_is_recognised_as_one() {
    let r = HandshakeResponse::ssl_request(crate::protocol::caps::PROTOCOL_41, 1 << 24, 45, 0);
    assert_eq!(r.len(), 32);
    assert!(HandshakeResponse::is_ssl_request(&r));
}

const CLUSTERS: &str = "[routing]\n\
    [[clusters]]\nname = \"c1\"\nrslist = [\"127.0.0.1:2881\"]\ntls = { mode = \"required\" }\n\
    [[clusters]]\nname = \"c2\"\nrslist = [\"127.0.0.1:2882\"]\n";

#[test]
fn a_cluster_with_its_own_tls_uses_it_and_the_others_use_backend_tls() {
    let c = parse("", CLUSTERS).unwrap();
    let mode = |cluster: Option<&str>| c.tls_loaded.server_for(cluster).map(|t| t.mode);
    assert_eq!(mode(Some("c1")), Some(ServerTlsMode::Required));
    assert_eq!(mode(Some("c2")), None, "c2 has no tls of its own: [backend] tls, off");
    assert_eq!(mode(None), None);
}

#[test]
fn a_cluster_verifying_without_a_ca_names_the_cluster() {
    let e = parse("", &CLUSTERS.replace("mode = \"required\"", "mode = \"verify_ca\"")).unwrap_err();
    assert!(e.contains("[[clusters]] \"c1\" tls mode \"verify_ca\" needs ca"), "{e}");
}

#[test]
fn a_dialled_address_has_its_own_tls_mode() {
    let dialled = "[[listen.dialled]]\naddress = \"127.0.0.1:2884\"\ntls = \"required\"\n";
    let e = parse("", dialled).unwrap_err();
    assert!(e.contains("needs a certificate"), "no [tls]: {e}");
    let mut c = parse("extra_addresses = [\"127.0.0.1:2884\"]", "").unwrap();
    c.tls = Some(TlsConfig { cert: "/c".into(), key: "/k".into() });
    let extra = c.listen.extra_addresses[0];
    c.listen.dialled.push(crate::clusters::DialledDefault {
        address: extra,
        cluster: None,
        tenant: None,
        tls: Some(TlsMode::Required),
    });
    assert_eq!(client_tls_mode(&c, Some(extra)), TlsMode::Required);
    assert_eq!(client_tls_mode(&c, Some(c.listen.address)), TlsMode::Optional);
    assert_eq!(client_tls_mode(&c, None), TlsMode::Optional);
}
