//! Reload and ALTER PROXYCONFIG against real files in a temporary directory.

use super::*;

fn text(port: u16, users: &str, extra: &str) -> String {
    format!(
        "[listen]\naddress = \"127.0.0.1:{port}\"\n[backend]\naddress = \"127.0.0.1:3306\"\n{users}\n\
         [routing]\ntopology = \"demo\"\n{extra}"
    )
}

const ROOT: &str = "[[users]]\nname = \"root\"\npassword = \"\"\n";

fn file(name: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gw-live-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("gateway.toml");
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn reload_applies_users_and_keeps_restart_only_settings() {
    let p = file("apply", &text(2883, ROOT, ""));
    let live = LiveConfig::load(&p).unwrap();
    let more = format!("{ROOT}[[users]]\nname = \"new\"\npassword = \"pw\"\nadmin = true\n");
    std::fs::write(&p, text(2999, &more, "idc = \"z9\"\nconnect_observer_max_retries = 4\n")).unwrap();
    let kept = live.reload().unwrap();
    assert_eq!(kept, vec!["listen.address", "routing.idc"]);
    let c = live.get();
    assert!(c.user("new").is_some_and(|u| u.admin));
    assert_eq!(c.listen.address.port(), 2883, "restart-only: old value kept");
    let r = c.routing.as_ref().unwrap();
    assert_eq!((r.idc.as_deref(), r.connect_observer_max_retries), (None, 4));
}

#[test]
fn invalid_reload_is_refused_and_the_old_config_stays() {
    let p = file("invalid", &text(2883, ROOT, ""));
    let live = LiveConfig::load(&p).unwrap();
    std::fs::write(&p, text(2883, "", "")).unwrap();
    let e = live.reload().unwrap_err().to_string();
    assert!(e.contains("no [[users]]"), "{e}");
    std::fs::write(&p, "[listen\n").unwrap();
    assert!(live.reload().is_err());
    assert!(live.get().user("root").is_some());
}

#[test]
fn alter_changes_runtime_settings_only() {
    let live = LiveConfig::new(Config::parse(&text(2883, ROOT, ""), "t").unwrap(), None);
    live.alter("LISTEN.MAX_PACKET_SIZE", "4096").unwrap();
    assert_eq!(live.get().listen.max_packet_size, 4096);
    live.alter("routing.connect_observer_max_retries", "5").unwrap();
    let e = live.alter("listen.max_packet_size", "12").unwrap_err().to_string();
    assert!(e.contains("at least 1024"), "{e}");
    assert!(matches!(live.alter("listen.address", "1.2.3.4:5"), Err(ReloadError::NotRuntime(..))));
    assert!(matches!(live.alter("users", "x"), Err(ReloadError::NotRuntime(..))));
    assert!(matches!(live.alter("nope", "1"), Err(ReloadError::UnknownKey(_))));
    assert!(matches!(live.alter("log.level", "[[["), Err(ReloadError::BadValue(..))));
    assert!(matches!(live.alter("routing.connect_observer_max_retries", "9"), Err(ReloadError::BadValue(..))));
    assert_eq!(live.get().listen.max_packet_size, 4096);
    assert!(matches!(live.reload(), Err(ReloadError::NoFile)));
}

#[test]
fn a_copy_follows_every_swap_and_only_loads_after_one() {
    let p = file("copy", &text(2883, ROOT, ""));
    let live = LiveConfig::load(&p).unwrap();
    let mut copy = ConfigCopy::of(&live);
    let first = Arc::clone(copy.current(&live));
    assert!(Arc::ptr_eq(&first, copy.current(&live)), "no swap: the same configuration, not loaded again");
    live.alter("listen.max_packet_size", "4096").unwrap();
    assert_eq!(copy.current(&live).listen.max_packet_size, 4096, "an ALTER is seen at the next look");
    // A refused change swaps nothing.
    assert!(live.alter("listen.max_packet_size", "12").is_err());
    let altered = Arc::clone(copy.current(&live));
    assert!(Arc::ptr_eq(&altered, copy.current(&live)));
    std::fs::write(&p, text(2883, ROOT, "connect_observer_max_retries = 4\n")).unwrap();
    live.reload().unwrap();
    let r = copy.current(&live).routing.as_ref().unwrap().connect_observer_max_retries;
    assert_eq!(r, 4, "a reload is seen at the next look");
}
