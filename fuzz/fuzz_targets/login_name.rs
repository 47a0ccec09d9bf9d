//! Login-name parsing (`user@tenant#cluster:id` and the separator forms) and resolution against
//! listener and `[login]` defaults. Input lines: separator list, name, then optional listener
//! tenant, listener cluster, `[login]` tenant, `[login]` cluster.
#![no_main]

use gateway::login_name::{
    parse, resolve, server_user, Defaults, LoginConfig, Separators, ServerKind, MAX_CLUSTER_LEN, MAX_TENANT_LEN,
};
use gateway_fuzz::lines;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let l = lines(data, 7);
    let get = |i: usize| l.get(i).filter(|s| !s.is_empty()).cloned();
    let Some(spec) = l.first() else { return };
    let separators = Separators::parse(spec).unwrap_or_default();
    let name = get(1).unwrap_or_default();
    let parsed = match parse(&name, &separators) {
        Ok(p) => p,
        Err(e) => {
            let _ = e.to_err_packet("127.0.0.1", true).encode();
            return;
        }
    };
    assert!(!parsed.user.is_empty(), "{name:?} parsed with an empty user");
    assert!(parsed.tenant.as_ref().is_none_or(|t| !t.is_empty() && t.len() <= MAX_TENANT_LEN), "tenant of {name:?}");
    assert!(parsed.cluster.as_ref().is_none_or(|c| !c.is_empty() && c.len() <= MAX_CLUSTER_LEN), "cluster of {name:?}");
    let listener = Defaults { tenant: get(2), cluster: get(3) };
    let config = LoginConfig {
        tenant: get(4),
        cluster: get(5),
        enable_full_username: get(6).is_some(),
        ..LoginConfig::default()
    };
    match resolve(&parsed, &listener, &config) {
        Ok(r) => {
            let _ =
                (r.full_name(), r.shown_name(), r.server_user(ServerKind::OceanBase), r.server_user(ServerKind::Mysql));
        }
        Err(e) => {
            let _ = e.to_err_packet("::1", false).encode();
        }
    }
    let _ = server_user(&parsed.user, parsed.tenant.as_deref(), ServerKind::of_version(&name));
});
