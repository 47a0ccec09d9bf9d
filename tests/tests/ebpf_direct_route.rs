//! Privileged eBPF test: direct route (`[dataplane] direct_route`, docs/dataplane.md §2) with two
//! real MariaDB servers and PyMySQL.
//!
//! ```text
//!  cgroup gwt-direct-<pid>-app                      cgroup gwt-direct-<pid>-gw
//!  PyMySQL ──connect(X = MariaDB B's address)──▶ connect4: STEER_DIRECT[X] = A ──▶ MariaDB A
//!                                                  (gateway running, but not in the path)
//! ```
//!
//! Checks, with the gateway steering X (`intercept`) and `direct_route_targets = { X = A }`:
//! the client is served by A (`SELECT @@port`), A sees the client's own socket (no proxy between),
//! the gateway logs no session, and the client's `getpeername()` shows X. Without the entry, and
//! with the entry but `direct_route = false`, the same client goes through the gateway (to B).
//! After SIGKILL of the gateway the map is ignored: fail-open reaches X = B itself.
//!
//! Both cgroups are created under the detected cgroup2 mount and removed by a drop guard, even on
//! failure. Without root or the eBPF object the test prints why it skips.

use gateway_tests::skip::{unmet, Need};
use gateway_tests::{ebpf_unmet, skip_if};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use gateway::dataplane;
use gateway_tests::cgroup::{command_in, in_cgroup_wrapper, port_of, TestCgroups};
use gateway_tests::{clients, Gateway, MariaDb};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

#[test]
fn direct_route_bypasses_the_gateway_only_when_configured() {
    skip_if!("ebpf_direct_route", skip_reason());
    let mount = dataplane::steer::cgroup2_mount().expect("cgroup2 mount");
    let pid = std::process::id();
    // Declared first so that it is dropped last, after the processes inside it are stopped.
    let cgroups = TestCgroups::create(&mount, &[format!("gwt-direct-{pid}-app"), format!("gwt-direct-{pid}-gw")])
        .unwrap_or_else(|e| panic!("creating test cgroups: {e}"));
    let (app, gw_cg) = (cgroups.dir(0).to_path_buf(), cgroups.dir(1).to_path_buf());
    let a = MariaDb::start("direct-a").expect("starting MariaDB A");
    let b = MariaDb::start("direct-b").expect("starting MariaDB B");
    let x = b.addr();
    let wrapper = in_cgroup_wrapper(&gw_cg, "direct-wrapper").expect("gateway wrapper script");

    // 1. direct_route = true with X → A: the connect goes straight to A.
    let mut gw = start_gateway(&wrapper, &app, x, Some((x, a.addr())), true);
    if gw.is_none() {
        return;
    }
    let g = gw.as_mut().expect("checked");
    let log = std::fs::read_to_string(g.log_path()).unwrap_or_default();
    assert!(log.contains("direct routes"), "direct routes not installed:\n{}", g.log_tail(4000));
    let r = probe(&app, x, "direct-marker-1").unwrap_or_else(|e| panic!("{e}\n{}", g.log_tail(4000)));
    eprintln!("direct-routed: {r:?}");
    assert_eq!(r["served_by"], a.port().to_string(), "not served by A: {r:?}");
    assert_eq!(r["peer"], x.to_string(), "getpeername() must show the dialled address");
    assert_eq!(port_of(&r["server_sees"]), port_of(&r["sock"]), "A saw a proxy, not the client: {r:?}");
    assert!(a.general_log().contains("direct-marker-1"), "A never ran the statement");
    assert!(!b.general_log().contains("direct-marker-1"), "B ran the direct-routed statement");
    let log = std::fs::read_to_string(g.log_path()).unwrap_or_default();
    assert_eq!(log.matches("session open").count(), 0, "the gateway served a session:\n{}", g.log_tail(4000));

    // 2. Fail-open is unchanged: with the daemon gone the map is ignored, X itself answers.
    let mut g = gw.take().expect("checked");
    // SAFETY: plain kill(2) on the PID of the gateway this test started.
    assert_eq!(unsafe { libc::kill(g.pid() as libc::pid_t, libc::SIGKILL) }, 0, "kill -9 gateway");
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.is_alive() {
        assert!(Instant::now() < deadline, "gateway survived SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(g);
    let r = probe(&app, x, "direct-marker-2").expect("client after the gateway died");
    eprintln!("after SIGKILL: {r:?}");
    assert_eq!(r["served_by"], b.port().to_string(), "fail-open must reach the dialled address: {r:?}");
    assert_eq!(port_of(&r["server_sees"]), port_of(&r["sock"]), "not direct after the gateway died: {r:?}");

    // 3. Without the entry, and 4. with it but direct_route off: through the gateway to B.
    for (case, entry, on) in [("no entry", None, true), ("direct_route off", Some((x, a.addr())), false)] {
        let Some(g) = start_gateway(&wrapper, &app, x, entry, on) else { return };
        let marker = format!("direct-marker-{}", case.replace(' ', "-"));
        let r = probe(&app, x, &marker).unwrap_or_else(|e| panic!("{case}: {e}\n{}", g.log_tail(4000)));
        eprintln!("{case}: {r:?}");
        assert_eq!(r["served_by"], b.port().to_string(), "{case}: not served by B: {r:?}");
        assert_eq!(r["peer"], x.to_string(), "{case}: getpeername()");
        assert_ne!(port_of(&r["server_sees"]), port_of(&r["sock"]), "{case}: not steered: {r:?}");
        let log = std::fs::read_to_string(g.log_path()).unwrap_or_default();
        assert!(
            log.contains("session open") && log.contains(&format!("peer={}", r["sock"])),
            "{case}: the gateway logged no session for {}:\n{}",
            r["sock"],
            g.log_tail(4000)
        );
        assert!(!a.general_log().contains(&marker), "{case}: A ran the statement");
    }
}

/// Starts the gateway in its cgroup, steering `app`'s connects to `x`; `None` (after printing
/// why) when the gateway reports eBPF as unavailable.
fn start_gateway(
    wrapper: &Path,
    app: &Path,
    x: SocketAddr,
    entry: Option<(SocketAddr, SocketAddr)>,
    direct_route: bool,
) -> Option<Gateway> {
    let listen_port = gateway_tests::free_port().expect("free port");
    let targets = entry.map(|(from, to)| format!("direct_route_targets = {{ \"{from}\" = \"{to}\" }}\n"));
    let toml = format!(
        "[listen]\naddress = \"127.0.0.1:{listen_port}\"\n\n[backend]\naddress = \"{x}\"\n\n\
         [[users]]\nname = \"root\"\npassword = \"\"\n\n[log]\nlevel = \"info,gateway=debug\"\n\n\
         [dataplane]\nmode = \"cgroup\"\napp_cgroups = [\"{}\"]\nintercept = [\"{x}\"]\n\
         direct_route = {direct_route}\n{}",
        app.display(),
        targets.unwrap_or_default()
    );
    let gw = Gateway::start_with_bin(wrapper, &toml).expect("starting the gateway in its cgroup");
    let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    if log.contains("eBPF steering unavailable") {
        gateway_tests::skip::skip(
            "ebpf_direct_route",
            &format!("the gateway reports eBPF unavailable:\n{}", gw.log_tail(2000)),
        );
        return None;
    }
    assert!(log.contains("cgroup steering attached"), "steering not attached:\n{}", gw.log_tail(4000));
    Some(gw)
}

/// Why this file's tests cannot run here, or `None`.
fn skip_reason() -> Option<String> {
    unmet(&[Need::Root]).or_else(|| ebpf_unmet!()).or_else(|| unmet(&[Need::Cgroup2, Need::Python]))
}

/// Runs the PyMySQL probe inside `cgroup` and parses its `key=value` lines.
fn probe(cgroup: &Path, addr: SocketAddr, marker: &str) -> Result<BTreeMap<String, String>> {
    let python = clients::venv_python();
    let out = command_in(cgroup, &python)
        .arg(clients::py_script("socket_probe.py"))
        .args([&addr.ip().to_string(), &addr.port().to_string(), marker])
        .stdin(Stdio::null())
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("PyMySQL probe failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let kv = clients::parse_kv(&stdout);
    for key in ["peer", "sock", "served_by", "server_sees"] {
        if !kv.contains_key(key) {
            return Err(format!("probe output lacks {key}: {stdout}").into());
        }
    }
    Ok(kv)
}
