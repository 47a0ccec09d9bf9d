//! Recognition and access control of the admin commands, on a gateway state without servers.

use super::*;
use crate::config::testing;

fn shared() -> Shared {
    let users = format!("{}admin = true\n{}", testing::user("boss"), testing::user("app"));
    Shared::new(testing::config(&users), None)
}

/// The payload of the first packet of an answer.
fn first_payload(out: &[u8]) -> &[u8] {
    let len = u32::from_le_bytes([out[0], out[1], out[2], 0]) as usize;
    &out[4..4 + len]
}

#[test]
fn recognises_admin_statements() {
    assert!(matches!(recognise("show proxyconfig"), Some(Admin::ShowConfig(ShowProxyConfig { like: None }))));
    let Some(Admin::ShowStat(s)) = recognise("SHOW PROXYSTAT LIKE 'gateway_pool%';") else { panic!() };
    assert_eq!(s.like.as_deref(), Some("gateway_pool%"));
    let Some(Admin::AlterConfig(a)) = recognise("ALTER PROXYCONFIG SET log.level = 'debug'") else { panic!() };
    assert_eq!((a.name.as_str(), a.value.as_str()), ("log.level", "debug"));
    assert!(matches!(recognise("kill proxysession 12"), Some(Admin::KillSession(k)) if k.id == 12));
    assert!(matches!(recognise("SHOW PROXYSESSION"), Some(Admin::ShowSession(_))));
    assert!(matches!(recognise("show proxycongestion"), Some(Admin::ShowCongestion(_))));
    for s in ["SHOW TABLES", "SHOW PROXYCONFIG WHERE x", "ALTER PROXYCONFIG x", "KILL PROXYSESSION x", "KILL 5", "show"]
    {
        assert_eq!(recognise(s), None, "{s}");
    }
}

use show_proxyconfig::ShowProxyConfig;

#[test]
fn non_admin_users_are_refused_with_1227() {
    let shared = shared();
    let cmd = recognise("SHOW PROXYCONFIG").unwrap();
    let out = answer(&cmd, &AdminContext { shared: &shared, user: "app", id: 1 }, 0);
    let p = first_payload(&out);
    assert_eq!((p[0], u16::from_le_bytes([p[1], p[2]])), (0xff, ACCESS_DENIED));
    let out = answer(&cmd, &AdminContext { shared: &shared, user: "boss", id: 1 }, 0);
    assert_ne!(first_payload(&out)[0], 0xff);
}

#[test]
fn alter_answers_ok_or_a_clear_error() {
    let shared = shared();
    let cx = AdminContext { shared: &shared, user: "boss", id: 1 };
    let ok = answer(&recognise("ALTER PROXYCONFIG SET listen.max_packet_size = 2048").unwrap(), &cx, 0);
    assert_eq!(first_payload(&ok)[0], 0x00);
    assert_eq!(shared.config().listen.max_packet_size, 2048);
    let err = answer(&recognise("ALTER PROXYCONFIG SET listen.address = '1.1.1.1:1'").unwrap(), &cx, 0);
    let text = String::from_utf8_lossy(first_payload(&err)).into_owned();
    assert!(text.contains("needs a restart"), "{text}");
}
