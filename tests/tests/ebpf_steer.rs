//! Privileged eBPF test: steering mode `cgroup` (docs/dataplane.md §2) with real servers and clients.
//!
//! ```text
//!  cgroup gwt-steer-<pid>-app            cgroup gwt-steer-<pid>-gw
//!  mariadb CLI / PyMySQL ──connect(B)──▶ gateway (connect4 rewrites to its listener)
//!                                          └─ SO_ORIGINAL_DST = B ──▶ MariaDB B (intercept)
//!                                             MariaDB A = [backend] address (must stay unused)
//! ```
//!
//! Checks: an unmodified client in the application cgroup that dials MariaDB B is served by the
//! gateway (B sees the gateway's socket, not the client's; the gateway logs the session), the
//! gateway connects to B (the original destination), not to `[backend]` A, and without looping;
//! the client's `getpeername()` shows B; the session gets the `[[listen.dialled]]` defaults of
//! B, the address the application dialled; a client outside the cgroup is not steered; after
//! SIGKILL of the gateway, new clients in the cgroup reach B directly (fail-open).
//!
//! Both cgroups are created under the detected cgroup2 mount and removed by a drop guard, even
//! on failure. Without root or the eBPF object the test prints why it skips.

use gateway_tests::skip::{unmet, Need};
use gateway_tests::{ebpf_unmet, skip_if};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gateway::dataplane;
use gateway_tests::bpffs::Bpffs;
use gateway_tests::cgroup::{command_in, in_cgroup_wrapper, port_of, TestCgroups};
use gateway_tests::{clients, Gateway, MariaDb};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The tenant `[[listen.dialled]]` gives logins that dialled MariaDB B.
const STEERED_TENANT: &str = "steered_tenant";

#[test]
fn cgroup_steering_serves_apps_and_fails_open() {
    skip_if!("ebpf_steer", skip_reason());
    let mount = dataplane::steer::cgroup2_mount().expect("cgroup2 mount");
    let pid = std::process::id();
    // Declared first so that it is dropped last, after the processes inside it are stopped.
    let cgroups = TestCgroups::create(&mount, &[format!("gwt-steer-{pid}-app"), format!("gwt-steer-{pid}-gw")])
        .unwrap_or_else(|e| panic!("creating test cgroups: {e}"));
    let (app, gw_cg) = (cgroups.dir(0).to_path_buf(), cgroups.dir(1).to_path_buf());

    let backend = MariaDb::start("steer-a").expect("starting MariaDB A");
    let target = MariaDb::start("steer-b").expect("starting MariaDB B");
    let listen_port = gateway_tests::free_port().expect("free port");
    let toml = format!(
        "[listen]\naddress = \"127.0.0.1:{listen_port}\"\n\n[backend]\naddress = \"{}\"\n\n\
         [[users]]\nname = \"root\"\npassword = \"\"\nadmin = true\n\n[log]\nlevel = \"info,gateway=debug\"\n\n\
         [dataplane]\nmode = \"cgroup\"\napp_cgroups = [\"{}\"]\nintercept = [\"{}\"]\n\n\
         [[listen.dialled]]\naddress = \"{}\"\ntenant = \"{STEERED_TENANT}\"\n",
        backend.addr(),
        app.display(),
        target.addr(),
        target.addr()
    );
    let wrapper = in_cgroup_wrapper(&gw_cg, "steer-wrapper").expect("gateway wrapper script");
    let mut gw = Gateway::start_with_bin(&wrapper, &toml).expect("starting the gateway in its cgroup");
    let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    if log.contains("eBPF steering unavailable") {
        gateway_tests::skip::skip(
            "ebpf_steer",
            &format!("the gateway reports eBPF unavailable:\n{}", gw.log_tail(2000)),
        );
        return;
    }
    assert!(log.contains("cgroup steering attached"), "steering not attached:\n{}", gw.log_tail(4000));

    // 1. PyMySQL in the application cgroup dials B directly: served by the gateway.
    let r =
        probe(Some(&app), target.addr(), "steer-marker-py").unwrap_or_else(|e| panic!("{e}\n{}", gw.log_tail(4000)));
    eprintln!("steered PyMySQL: {r:?}");
    assert_eq!(r["peer"], target.addr().to_string(), "getpeername() must show the dialled address");
    assert_ne!(
        port_of(&r["server_sees"]),
        port_of(&r["sock"]),
        "B saw the client's own socket: the connection was not steered"
    );
    let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    assert!(
        log.contains(&format!("peer={}", r["sock"])) && log.contains(&format!("backend={}", target.addr())),
        "the gateway did not log a session from {} to {}:\n{}",
        r["sock"],
        target.addr(),
        gw.log_tail(4000)
    );
    assert!(target.general_log().contains("steer-marker-py"), "B never ran the statement");
    assert!(!backend.general_log().contains("steer-marker-py"), "the statement went to [backend] A");

    // 2. The mariadb CLI in the application cgroup.
    let out =
        run_in(Some(&app), "mariadb", &cli_args(target.addr(), "SELECT 'steer-marker-cli'")).expect("mariadb CLI");
    assert!(out.status_ok, "steered mariadb CLI failed: {}\n{}", out.stderr, gw.log_tail(4000));
    assert!(out.stdout.contains("steer-marker-cli"), "CLI output: {}", out.stdout);
    assert!(target.general_log().contains("steer-marker-cli"), "B never ran the CLI statement");
    // The dialled address the data plane preserved (B) picks the login's defaults: the session
    // gets B's `[[listen.dialled]]` tenant, as SHOW PROXYSESSION of the steered session shows.
    let out = run_in(Some(&app), "mariadb", &cli_args(target.addr(), "SHOW PROXYSESSION")).expect("mariadb CLI");
    assert!(out.status_ok, "steered SHOW PROXYSESSION failed: {}\n{}", out.stderr, gw.log_tail(4000));
    assert!(out.stdout.contains(STEERED_TENANT), "the steered session lacks B's dialled tenant:\n{}", out.stdout);
    let opened = std::fs::read_to_string(gw.log_path()).unwrap_or_default().matches("session open").count();
    assert!(opened >= 2, "expected two gateway sessions, log shows {opened}:\n{}", gw.log_tail(4000));

    // 3. A client outside the application cgroups is not steered.
    let r = probe(None, target.addr(), "steer-marker-outside").expect("probe outside the cgroup");
    assert_eq!(port_of(&r["server_sees"]), port_of(&r["sock"]), "a client outside the cgroup was steered: {r:?}");

    // 4. Fail-open: SIGKILL the gateway; new clients in the cgroup reach B directly.
    // SAFETY: plain kill(2) on the PID of the gateway this test started.
    assert_eq!(unsafe { libc::kill(gw.pid() as libc::pid_t, libc::SIGKILL) }, 0, "kill -9 gateway");
    let deadline = Instant::now() + Duration::from_secs(10);
    while gw.is_alive() {
        assert!(Instant::now() < deadline, "gateway survived SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = probe(Some(&app), target.addr(), "steer-marker-after-kill")
        .unwrap_or_else(|e| panic!("client in the cgroup failed after the gateway died (not fail-open): {e}"));
    eprintln!("after SIGKILL: {r:?}");
    assert_eq!(r["peer"], target.addr().to_string());
    assert_eq!(port_of(&r["server_sees"]), port_of(&r["sock"]), "not direct after the gateway died: {r:?}");
    let out =
        run_in(Some(&app), "mariadb", &cli_args(target.addr(), "SELECT 'steer-marker-cli-2'")).expect("mariadb CLI");
    assert!(out.status_ok, "mariadb CLI after SIGKILL failed: {}", out.stderr);
    drop(gw);
}

/// `fail_closed = true`: the connect4 links are pinned, outlive the SIGKILLed daemon, and refuse
/// connects while its listener is gone (the sockmap liveness check, not link teardown). Removing
/// the pins (what the next start does) lets clients through again.
#[test]
fn fail_closed_refuses_while_the_gateway_is_gone() {
    skip_if!("ebpf_steer/fail_closed", skip_reason());
    let mount = dataplane::steer::cgroup2_mount().expect("cgroup2 mount");
    let pid = std::process::id();
    let cgroups = TestCgroups::create(&mount, &[format!("gwt-steer-{pid}-fc-app"), format!("gwt-steer-{pid}-fc-gw")])
        .unwrap_or_else(|e| panic!("creating test cgroups: {e}"));
    let (app, gw_cg) = (cgroups.dir(0).to_path_buf(), cgroups.dir(1).to_path_buf());
    let bpffs = Bpffs::ensure(
        dataplane::steer::bpffs_mount().expect("mountinfo"),
        dataplane::steer::cgroup_id(&app).expect("cgroup id"),
    )
    .unwrap_or_else(|e| panic!("bpffs: {e}"));
    let target = MariaDb::start("steer-fc").expect("starting MariaDB");
    let listen_port = gateway_tests::free_port().expect("free port");
    let toml = format!(
        "[listen]\naddress = \"127.0.0.1:{listen_port}\"\n\n[backend]\naddress = \"{}\"\n\n\
         [[users]]\nname = \"root\"\npassword = \"\"\n\n[dataplane]\nmode = \"cgroup\"\n\
         app_cgroups = [\"{}\"]\nfail_closed = true\n",
        target.addr(),
        app.display()
    );
    let wrapper = in_cgroup_wrapper(&gw_cg, "steer-wrapper").expect("gateway wrapper script");
    let mut gw = Gateway::start_with_bin(&wrapper, &toml).expect("starting the gateway in its cgroup");
    let r = probe(Some(&app), target.addr(), "fc-steered").unwrap_or_else(|e| panic!("{e}\n{}", gw.log_tail(4000)));
    assert_ne!(port_of(&r["server_sees"]), port_of(&r["sock"]), "not steered: {r:?}");

    // SAFETY: plain kill(2) on the PID of the gateway this test started.
    assert_eq!(unsafe { libc::kill(gw.pid() as libc::pid_t, libc::SIGKILL) }, 0, "kill -9 gateway");
    let deadline = Instant::now() + Duration::from_secs(10);
    while gw.is_alive() {
        assert!(Instant::now() < deadline, "gateway survived SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    let err = probe(Some(&app), target.addr(), "fc-refused").expect_err("connect allowed with fail_closed");
    eprintln!("fail_closed after SIGKILL: {err}");
    assert!(err.to_string().contains("Operation not permitted"), "expected EPERM: {err}");
    assert!(!target.general_log().contains("fc-refused"));

    // The pins are what keeps the refusal alive: removing them (as the next start does) frees it.
    bpffs.remove_pins();
    let r = probe(Some(&app), target.addr(), "fc-after-unpin").expect("client after removing the pins");
    assert_eq!(port_of(&r["server_sees"]), port_of(&r["sock"]), "still steered after unpinning: {r:?}");
    drop(gw);
}

/// Why this file's tests cannot run here, or `None`.
fn skip_reason() -> Option<String> {
    unmet(&[Need::Root]).or_else(|| ebpf_unmet!()).or_else(|| unmet(&[Need::Cgroup2, Need::Python]))
}

fn cli_args(addr: SocketAddr, sql: &str) -> Vec<String> {
    vec![
        "--no-defaults".into(),
        "--protocol=TCP".into(),
        format!("-h{}", addr.ip()),
        format!("-P{}", addr.port()),
        "-uroot".into(),
        "--connect-timeout=5".into(),
        "--batch".into(),
        "--skip-column-names".into(),
        "-e".into(),
        sql.into(),
    ]
}

/// Runs the PyMySQL probe (inside `cgroup` when given) and parses its `key=value` lines.
fn probe(cgroup: Option<&Path>, addr: SocketAddr, marker: &str) -> Result<BTreeMap<String, String>> {
    let python = clients::venv_python();
    let args = vec![
        clients::py_script("socket_probe.py").display().to_string(),
        addr.ip().to_string(),
        addr.port().to_string(),
        marker.to_string(),
    ];
    let out = run_in(cgroup, &python.to_string_lossy(), &args)?;
    if !out.status_ok {
        return Err(format!("PyMySQL probe failed: {}\n{}", out.stdout, out.stderr).into());
    }
    let kv = clients::parse_kv(&out.stdout);
    for key in ["peer", "sock", "server_sees"] {
        if !kv.contains_key(key) {
            return Err(format!("probe output lacks {key}: {}", out.stdout).into());
        }
    }
    Ok(kv)
}

struct Output {
    status_ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `program args` to completion; with `cgroup`, the shell moves itself into the cgroup and
/// then execs the program, so the client's sockets are created inside it.
fn run_in(cgroup: Option<&Path>, program: &str, args: &[String]) -> Result<Output> {
    let mut cmd = match cgroup {
        Some(cg) => command_in(cg, program),
        None => Command::new(program),
    };
    let out = cmd.args(args).stdin(Stdio::null()).output()?;
    Ok(Output {
        status_ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}
