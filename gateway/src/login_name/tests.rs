//! Every login-name form of docs/routing.md §14, the precedence rules, limits and the error packets.

use super::*;

fn p(name: &str) -> Result<LoginName, LoginError> {
    parse(name, &Separators::default())
}

/// (user, tenant, cluster, cluster id) of a name that must parse.
fn parts(name: &str) -> (String, Option<String>, Option<String>, Option<i64>) {
    let n = p(name).unwrap_or_else(|e| panic!("{name:?} should parse: {e}"));
    (n.user, n.tenant, n.cluster, n.cluster_id)
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

#[test]
fn standard_forms() {
    assert_eq!(parts("app"), ("app".into(), None, None, None));
    assert_eq!(parts("app@t1"), ("app".into(), s("t1"), None, None));
    assert_eq!(parts("app#obcluster"), ("app".into(), None, s("obcluster"), None));
    assert_eq!(parts("app@t1#obcluster"), ("app".into(), s("t1"), s("obcluster"), None));
    assert_eq!(parts("app@t1#obcluster:2"), ("app".into(), s("t1"), s("obcluster"), Some(2)));
    assert_eq!(parts("app#obcluster:2"), ("app".into(), None, s("obcluster"), Some(2)));
    assert_eq!(p("app@t1#c").unwrap().separator, None);
}

#[test]
fn separator_forms_with_and_without_cluster_id() {
    for sep in [':', '-', '.'] {
        let name = format!("obcluster{sep}t1{sep}app");
        assert_eq!(parts(&name), ("app".into(), s("t1"), s("obcluster"), None), "{name}");
        assert_eq!(p(&name).unwrap().separator, Some(sep));
        let with_id = format!("obcluster{sep}t1{sep}app{sep}7");
        assert_eq!(parts(&with_id), ("app".into(), s("t1"), s("obcluster"), Some(7)), "{with_id}");
        let colon_id = format!("obcluster{sep}t1{sep}app:8");
        assert_eq!(parts(&colon_id), ("app".into(), s("t1"), s("obcluster"), Some(8)), "{colon_id}");
    }
}

#[test]
fn separators_are_tried_in_list_order() {
    // Both ':' and '.' occur twice; ':' comes first in ":;-;.".
    assert_eq!(parts("a.b:t:u"), ("u".into(), s("t"), s("a.b"), None));
    // '-' occurs once only, so '.' is used and the dash stays in the cluster.
    assert_eq!(parts("my-c.t.u"), ("u".into(), s("t"), s("my-c"), None));
    // Both occur twice in "a:b.c:d.e": the list order decides.
    assert_eq!(parts("a:b.c:d.e"), ("d.e".into(), s("b.c"), s("a"), None));
    let dots_first = Separators::parse(".;:").unwrap();
    let n = parse("a:b.c:d.e", &dots_first).unwrap();
    assert_eq!((n.cluster, n.tenant, n.user, n.separator), (s("a:b"), s("c:d"), "e".into(), Some('.')));
}

#[test]
fn at_or_hash_makes_a_name_standard_whatever_its_separators() {
    assert_eq!(parts("a-b-c@t1"), ("a-b-c".into(), s("t1"), None, None));
    assert_eq!(parts("x.y.z#c"), ("x.y.z".into(), None, s("c"), None));
    assert_eq!(parts("u:v:w@t#c:3"), ("u:v:w".into(), s("t"), s("c"), Some(3)));
}

#[test]
fn user_names_containing_separator_characters() {
    // One occurrence: not the non-standard form, the whole name is the user.
    assert_eq!(parts("first.last"), ("first.last".into(), None, None, None));
    assert_eq!(parts("app-01"), ("app-01".into(), None, None, None));
    // Two occurrences: ODP's precedence makes it cluster/tenant/user (documented pitfall).
    assert_eq!(parts("my-app-01"), ("01".into(), s("app"), s("my"), None));
    // A separator after the user starts the cluster id, so a dotted user fails as in ODP...
    assert!(matches!(p("c.t.first.last"), Err(LoginError::BadClusterId { ref id, .. }) if id == "last"));
    // ...and logs in with `@` or with the separator form switched off.
    assert_eq!(parts("first.last@t"), ("first.last".into(), s("t"), None, None));
    let none = Separators::parse("").unwrap();
    assert_eq!(parse("my-app-01", &none).unwrap().user, "my-app-01");
    // '#' and '@' inside the user: the first '@' ends the user; a '#' before it is part of it [GW].
    assert_eq!(parts("a#b@t1"), ("a#b".into(), s("t1"), None, None));
    assert_eq!(parts("a#b@t1#c"), ("a#b".into(), s("t1"), s("c"), None));
    // A second '@' stays in the tenant, as in ODP (the server then refuses it).
    assert_eq!(parts("a@b@c"), ("a".into(), s("b@c"), None, None));
    // ':' in the standard form only separates the cluster id inside the cluster part.
    assert_eq!(parts("a:b@t"), ("a:b".into(), s("t"), None, None));
}

#[test]
fn empty_parts_mean_not_given() {
    assert_eq!(parts("app@"), ("app".into(), None, None, None));
    assert_eq!(parts("app@#"), ("app".into(), None, None, None));
    assert_eq!(parts("app@t#"), ("app".into(), s("t"), None, None));
    assert_eq!(parts("app@t#c:"), ("app".into(), s("t"), s("c"), None));
    assert_eq!(parts("app@t#:5"), ("app".into(), s("t"), None, Some(5)));
    assert_eq!(parts("::app"), ("app".into(), None, None, None));
    assert_eq!(parts("c::app"), ("app".into(), None, s("c"), None));
    assert_eq!(parts("c.t.app."), ("app".into(), s("t"), s("c"), None));
}

#[test]
fn malformed_names() {
    for name in ["", "@t1", "#c", "@", "@t#c:1", "c:t:", "c.t..5", ":::"] {
        assert!(matches!(p(name), Err(LoginError::EmptyUser { .. })), "{name:?}: {:?}", p(name));
    }
    for (name, id) in [("u@t#c:x", "x"), ("u@t#c:1:2", "1:2"), ("c-t-u-9a", "9a"), ("c:t:u: 1", " 1")] {
        assert_eq!(p(name), Err(LoginError::BadClusterId { name: name.into(), id: id.into() }), "{name}");
    }
    assert_eq!(parts("u@t#c:-1").3, Some(-1));
    assert!(matches!(p("u@t#c:99999999999999999999"), Err(LoginError::BadClusterId { .. })));
}

#[test]
fn unicode_names() {
    assert_eq!(parts("用户@租户#集群:3"), ("用户".into(), s("租户"), s("集群"), Some(3)));
    assert_eq!(parts("集群.租户.ユーザー"), ("ユーザー".into(), s("租户"), s("集群"), None));
    assert_eq!(parts("émile"), ("émile".into(), None, None, None));
    let fancy = Separators::parse("→").unwrap();
    let n = parse("c→t→u", &fancy).unwrap();
    assert_eq!((n.cluster, n.tenant, n.user), (s("c"), s("t"), "u".to_string()));
}

#[test]
fn length_limits_count_bytes() {
    let t64 = "t".repeat(MAX_TENANT_LEN);
    assert!(p(&format!("u@{t64}")).is_ok());
    let t65 = "t".repeat(MAX_TENANT_LEN + 1);
    assert!(matches!(p(&format!("u@{t65}")), Err(LoginError::TooLong { part: "tenant", .. })));
    // 22 three-byte characters are 66 bytes.
    let wide = "租".repeat(22);
    assert!(matches!(p(&format!("u@{wide}")), Err(LoginError::TooLong { part: "tenant", .. })));
    let c256 = "c".repeat(MAX_CLUSTER_LEN);
    assert!(p(&format!("u@t#{c256}")).is_ok());
    let c257 = "c".repeat(MAX_CLUSTER_LEN + 1);
    assert!(matches!(p(&format!("u@t#{c257}")), Err(LoginError::TooLong { part: "cluster", .. })));
    // user@tenant#cluster must stay below 384 bytes: 64 + 1 + 64 + 1 + 254 = 384.
    let long_user = "u".repeat(64);
    assert!(p(&format!("{long_user}@{t64}#{}", "c".repeat(253))).is_ok());
    assert!(matches!(
        p(&format!("{long_user}@{t64}#{}", "c".repeat(254))),
        Err(LoginError::TooLong { part: "full name", .. })
    ));
}

#[test]
fn separator_lists() {
    assert_eq!(Separators::parse(DEFAULT_SEPARATORS).unwrap(), Separators::default());
    assert_eq!(Separators::parse("").unwrap().chars(), &[] as &[char]);
    assert_eq!(Separators::parse("_").unwrap().chars(), &['_']);
    assert!(Separators::parse(":-").is_err());
    assert!(Separators::parse(":;").is_err());
    assert!(Separators::parse("@").is_err());
    assert!(Separators::parse("#;:").is_err());
    let custom = Separators::parse("_").unwrap();
    assert_eq!(parse("c_t_u", &custom).unwrap().user, "u");
    assert_eq!(parse("c:t:u", &custom).unwrap().user, "c:t:u");
}

fn listener(t: Option<&str>, c: Option<&str>) -> Defaults {
    Defaults { tenant: t.map(String::from), cluster: c.map(String::from) }
}

fn resolve_name(name: &str, l: &Defaults, config: &LoginConfig) -> Result<Resolved, LoginError> {
    resolve(&parse(name, &config.separators())?, l, config)
}

#[test]
fn explicit_parts_win_over_listener_defaults() {
    let l = listener(Some("vt"), Some("vc"));
    let cfg = LoginConfig::default();
    let r = resolve_name("app@t1#c1:4", &l, &cfg).unwrap();
    assert_eq!((r.tenant, r.cluster, r.cluster_id), (s("t1"), s("c1"), Some(4)));
    assert_eq!((r.tenant_from, r.cluster_from), (Origin::Name, Origin::Name));
    let r = resolve_name("app@t1", &l, &cfg).unwrap();
    assert_eq!((r.tenant.as_deref(), r.cluster.as_deref()), (Some("t1"), Some("vc")));
    assert_eq!(r.cluster_from, Origin::Listener);
    let r = resolve_name("app#c1", &l, &cfg).unwrap();
    assert_eq!((r.tenant.as_deref(), r.cluster.as_deref()), (Some("vt"), Some("c1")));
    let r = resolve_name("app", &l, &cfg).unwrap();
    assert_eq!((r.tenant_from, r.cluster_from), (Origin::Listener, Origin::Listener));
    let r = resolve_name("app", &Defaults::default(), &cfg).unwrap();
    assert_eq!((r.tenant, r.cluster, r.tenant_from), (None, None, Origin::Unset));
}

#[test]
fn configured_pair_applies_only_when_the_name_gives_neither_part() {
    let l = listener(Some("vt"), Some("vc"));
    let cfg = LoginConfig { tenant: s("pt"), cluster: s("pc"), ..LoginConfig::default() };
    let r = resolve_name("app", &l, &cfg).unwrap();
    assert_eq!((r.tenant.as_deref(), r.cluster.as_deref(), r.tenant_from), (Some("pt"), Some("pc"), Origin::Config));
    let r = resolve_name("app@t1", &l, &cfg).unwrap();
    assert_eq!((r.tenant.as_deref(), r.cluster.as_deref()), (Some("t1"), Some("vc")));
    let half = LoginConfig { tenant: s("pt"), ..LoginConfig::default() };
    let r = resolve_name("app", &l, &half).unwrap();
    assert_eq!(r.tenant.as_deref(), Some("vt"));
}

#[test]
fn full_username_required() {
    let l = listener(Some("sys"), Some("obc"));
    let cfg = LoginConfig { enable_full_username: true, ..LoginConfig::default() };
    assert!(resolve_name("app@t1#c1", &l, &cfg).is_ok());
    assert!(resolve_name("c1:t1:app", &l, &cfg).is_ok());
    assert!(resolve_name("root@proxysys", &l, &cfg).is_ok());
    assert_eq!(resolve_name("app@t1", &l, &cfg), Err(LoginError::FullNameRequired { name: "app@t1".into() }));
    assert_eq!(resolve_name("app#c1", &l, &cfg), Err(LoginError::FullNameRequired { name: "app@sys#c1".into() }));
    let e = resolve_name("app", &l, &cfg).unwrap_err();
    let pkt = e.to_err_packet("10.0.0.9", true);
    assert_eq!((pkt.code, &pkt.sql_state), (1045, b"42000"));
    assert_eq!(pkt.message, "Access denied for user 'app@sys'@'10.0.0.9' (using password: YES)");
}

#[test]
fn server_gets_user_at_tenant_or_the_bare_user() {
    let l = listener(Some("sys"), Some("obc"));
    let r = resolve_name("root@sys#obcluster:1", &l, &LoginConfig::default()).unwrap();
    assert_eq!(r.server_user(ServerKind::OceanBase), "root@sys");
    assert_eq!(r.server_user(ServerKind::Mysql), "root");
    assert_eq!(r.full_name(), "root@sys#obcluster:1");
    let r = resolve_name("obc.t1.app", &l, &LoginConfig::default()).unwrap();
    assert_eq!(r.server_user(ServerKind::OceanBase), "app@t1");
    let r = resolve_name("app", &Defaults::default(), &LoginConfig::default()).unwrap();
    assert_eq!(r.server_user(ServerKind::OceanBase), "app");
    assert_eq!(r.full_name(), "app");
}

#[test]
fn resolved_full_name_limit_includes_defaults() {
    let l = listener(Some(&"t".repeat(64)), Some(&"c".repeat(256)));
    let e = resolve_name(&"u".repeat(64), &l, &LoginConfig::default()).unwrap_err();
    assert!(matches!(e, LoginError::TooLong { part: "full name", .. }), "{e:?}");
}

#[test]
fn error_packets() {
    let e = p("u@t#c:x").unwrap_err();
    let pkt = e.to_err_packet("127.0.0.1", true);
    assert_eq!((pkt.code, &pkt.sql_state), (1045, b"28000"));
    assert!(
        pkt.message.starts_with("Access denied for user 'u@t#c:x'@'127.0.0.1' (malformed login name:"),
        "{}",
        pkt.message
    );
    let pkt = LoginError::UnknownCluster { cluster: "nope".into() }.to_err_packet("h", true);
    assert_eq!((pkt.code, &pkt.sql_state, pkt.message.as_str()), (4669, b"HY000", "cluster not exist"));
    let pkt = LoginError::UnknownTenant { tenant: "t9".into() }.to_err_packet("h", true);
    assert_eq!((pkt.code, pkt.message.as_str()), (5157, "Unknown tenant 't9'"));
}

#[test]
fn config_validation() {
    assert!(LoginConfig::default().validate().is_ok());
    let bad = LoginConfig { username_separator: "::".into(), ..LoginConfig::default() };
    assert!(bad.validate().unwrap_err().contains("login.username_separator"));
    let empty = LoginConfig { tenant: s(""), ..LoginConfig::default() };
    assert!(empty.validate().unwrap_err().contains("login.tenant"));
    let long = LoginConfig { cluster: Some("c".repeat(257)), ..LoginConfig::default() };
    assert!(long.validate().unwrap_err().contains("login.cluster"));
}

#[test]
fn server_kind_from_the_greeting_and_the_name_each_kind_gets() {
    assert_eq!(ServerKind::of_version("5.7.25-OceanBase_CE-v4.2.1.0"), ServerKind::OceanBase);
    assert_eq!(ServerKind::of_version("10.11.19-MariaDB"), ServerKind::Mysql);
    assert_eq!(ServerKind::of_version("8.0.36"), ServerKind::Mysql);
    assert_eq!(server_user("app", Some("t1"), ServerKind::OceanBase), "app@t1");
    assert_eq!(server_user("app", Some("t1"), ServerKind::Mysql), "app");
    assert_eq!(server_user("app", None, ServerKind::OceanBase), "app");
}
