//! Privileged eBPF test: cgroup steering of containerised applications and of IPv6.
//!
//! ```text
//!  container (netns gwc<n>-<pid> + cgroup gwt-ctr<n>-<pid>)      host netns
//!  PyMySQL / mariadb / sysbench ──connect(10.213.n.1:DB)──▶ connect4 rewrites to 10.213.n.1:G
//!                               ──connect([fd00:213:n::1]:DB)─▶ connect6 → [fd00:213:n::1]:G
//!                                     (over the veth and the bridge)  gateway ─▶ MariaDB
//!  host process in the same cgroup ──connect([::1]:DB)──▶ connect6 → [::1]:G ─▶ MariaDB
//! ```
//!
//! MariaDB listens on 127.0.0.1, ::1 and the bridge's addresses. The gateway listens on its
//! loopback address, on [::1] and on the bridge's addresses, which are its
//! `container_addresses`. Checks: every connection made in the container (and the host process
//! over IPv6) was served by the gateway — the server sees the gateway's address, never the
//! container's, in its processlist and in the `Connect` entries of its general log, and the
//! gateway's session list shows the container's address; `getpeername()` shows the dialled
//! address; the dialled address's `[[listen.dialled]]` tenant applies; `gateway dataplane
//! status` reports the cgroup (exists, cgroup v2, processes, in another namespace, programs the
//! kernel reports effective) and both families attached; after SIGKILL of the gateway the
//! container's new connections reach the server directly (fail-open). It also prints sysbench
//! QPS through the steered container against the same container dialling the gateway directly.
//!
//! A second test: without `container_addresses` the container's connects are left alone (not
//! sent to the container's own loopback, where nothing listens) and the gateway warns loudly.
//! A third: with `fail_closed`, the container's connects are refused while the daemon is gone.
//!
//! Everything (namespace, veth, bridge, cgroups, processes) is removed by drop guards. Without
//! root, the eBPF object, cgroup v2 or IPv6 the tests print why they skip.

use gateway_tests::skip::{unmet, Need};
use gateway_tests::{ebpf_unmet, skip_if};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gateway::dataplane;
use gateway_tests::bpffs::Bpffs;
use gateway_tests::cgroup::{in_cgroup_wrapper, port_of, TestCgroups};
use gateway_tests::container::Container;
use gateway_tests::mariadb::MariaDbOptions;
use gateway_tests::{clients, general_log, sysbench, Gateway, MariaDb};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const USER: &str = "ctr";
const PASSWORD: &str = "ctrpw";

#[test]
fn containers_and_ipv6_are_steered_and_fail_open() {
    skip_if!("ebpf_container", skip_reason());
    let mount = dataplane::steer::cgroup2_mount().expect("cgroup2 mount");
    let ctr = Container::create(&mount, 1).unwrap_or_else(|e| panic!("creating the container: {e}"));
    let gw_cg = TestCgroups::create(&mount, &[format!("gwt-ctr1-{}-gw", std::process::id())]).expect("gateway cgroup");
    let db = start_mariadb(&ctr, "ctr1");
    let g = gateway_tests::free_port().expect("free port");
    let metrics = gateway_tests::free_port().expect("free port");
    let (db4, db6, dbl6) = (
        SocketAddr::new(ctr.host_v4().into(), db.port()),
        SocketAddr::new(ctr.host_v6().into(), db.port()),
        SocketAddr::new("::1".parse().unwrap(), db.port()),
    );
    let toml = config(&ctr, g, db.port(), metrics, true);
    let wrapper = in_cgroup_wrapper(gw_cg.dir(0), "ctr1-wrapper").expect("gateway wrapper script");
    let mut gw = Gateway::start_with_bin(&wrapper, &toml).expect("starting the gateway in its cgroup");
    let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    assert!(log.contains("cgroup steering attached"), "steering not attached:\n{}", gw.log_tail(4000));
    // The start-up self-check: both families attached, the cgroup's process in another netns.
    assert!(
        log.contains("family=ipv4 attached=true") && log.contains("family=ipv6 attached=true"),
        "{}",
        gw.log_tail(4000)
    );
    assert!(log.contains("other_netns=1"), "{}", gw.log_tail(4000));

    // 1. PyMySQL in the container, IPv4 and IPv6: served by the gateway.
    for (dial, tenant) in [(db4, "ctr_v4"), (db6, "ctr_v6")] {
        let r = probe(&ctr, Where::Container, dial, &format!("ctr-marker-{}", tenant))
            .unwrap_or_else(|e| panic!("{e}\n{}", gw.log_tail(4000)));
        eprintln!("container -> {dial}: {r:?}");
        assert_eq!(r["peer"], show(dial), "getpeername() must show the dialled address");
        let sock_ip = host_of(&r["sock"]);
        assert!(sock_ip == ctr.container_v4().to_string() || sock_ip == ctr.container_v6().to_string(), "{r:?}");
        assert_ne!(host_of(&r["server_sees"]), sock_ip, "the server saw the container itself: not steered: {r:?}");
        assert_eq!(host_of(&r["server_sees"]), dial.ip().to_string(), "the server should see the gateway: {r:?}");
        let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
        assert!(
            log.contains(&format!("peer={}", as_rust(&r["sock"]))),
            "no gateway session from {}:\n{}",
            r["sock"],
            gw.log_tail(3000)
        );
        // The dialled address picks the login's defaults.
        let out = in_container_cli(&ctr, dial, "SHOW PROXYSESSION");
        assert!(out.contains(tenant), "the steered session lacks {dial}'s dialled tenant {tenant}:\n{out}");
    }

    // 2. A host process in the same cgroup over IPv6 loopback, and over IPv4-mapped IPv6.
    let r = probe(&ctr, Where::Host, dbl6, "host-v6-marker").unwrap_or_else(|e| panic!("{e}\n{}", gw.log_tail(4000)));
    eprintln!("host -> {dbl6}: {r:?}");
    assert_eq!(r["peer"], show(dbl6));
    assert_ne!(port_of(&r["server_sees"]), port_of(&r["sock"]), "host IPv6 connect not steered: {r:?}");
    assert!(std::fs::read_to_string(gw.log_path())
        .unwrap_or_default()
        .contains(&format!("peer={}", as_rust(&r["sock"]))));
    let args = cli_args(dbl6, "SHOW PROXYSESSION");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = command(&ctr, Where::Host, "mariadb", &args).output().expect("mariadb CLI");
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains("host_v6"), "the host's IPv6 session lacks [::1]'s dialled tenant:\n{out}");
    let mapped: SocketAddr = format!("[::ffff:127.0.0.1]:{}", db.port()).parse().unwrap();
    let r =
        probe(&ctr, Where::Host, mapped, "host-mapped-marker").unwrap_or_else(|e| panic!("{e}\n{}", gw.log_tail(4000)));
    eprintln!("host -> {mapped}: {r:?}");
    assert_eq!(r["peer"], show(mapped), "a mapped connect must show the mapped address it dialled");
    assert_ne!(port_of(&r["server_sees"]), port_of(&r["sock"]), "IPv4-mapped connect not steered: {r:?}");

    // 3. The self-check.
    let status = dataplane_status(&gw);
    eprintln!("{status}");
    let cg = ctr.cgroup().display().to_string();
    assert!(status.contains(&format!("cgroup:           {cg} (exists: yes, cgroup v2: yes, processes: ")), "{status}");
    assert!(!status.contains("in other netns: 0,"), "the container's process must count as another netns: {status}");
    assert!(
        status
            .contains("effective: steer_connect4 steer_connect6 steer_getpeername4 steer_getpeername6 steer_sock_ops"),
        "{status}"
    );
    assert!(
        status.contains(&format!(
            "steering ipv4:    attached (host -> 127.0.0.1:{g}, containers -> {}:{g}",
            ctr.host_v4()
        )),
        "{status}"
    );
    assert!(
        status
            .contains(&format!("steering ipv6:    attached (host -> [::1]:{g}, containers -> [{}]:{g}", ctr.host_v6())),
        "{status}"
    );
    assert!(!status.contains("WARNING"), "{status}");

    // 4. sysbench in the container, steered (IPv4, IPv6) and dialling the gateway directly.
    let prep = sysbench::Sysbench {
        user: USER.into(),
        password: PASSWORD.into(),
        ..sysbench::Sysbench::new(db.port(), "test")
    };
    prep.prepare().expect("sysbench prepare");
    let connects_before = connects(&db);
    // Steered and direct runs alternate (`GATEWAY_CTR_BENCH_ROUNDS`, default 1), so that load from
    // elsewhere on the machine affects both alike; the medians are compared.
    let gw_direct = SocketAddr::new(ctr.host_v4().into(), g);
    let rounds =
        std::env::var("GATEWAY_CTR_BENCH_ROUNDS").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(1).max(1);
    let (mut steered, mut direct) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 1 {
            direct.push(sysbench_in(&ctr, &gw, gw_direct, false));
        }
        steered.push(sysbench_in(&ctr, &gw, db4, true));
        if round % 2 == 0 {
            direct.push(sysbench_in(&ctr, &gw, gw_direct, false));
        }
    }
    let steered6 = sysbench_in(&ctr, &gw, db6, true);
    let (steered4, direct) = (median(&mut steered), median(&mut direct));
    let new: Vec<String> = connects(&db).into_iter().skip(connects_before.len()).collect();
    let from_container: Vec<&String> =
        new.iter().filter(|h| *h == &ctr.container_v4().to_string() || *h == &ctr.container_v6().to_string()).collect();
    assert!(from_container.is_empty(), "the server had direct connections from the container: {from_container:?}");
    assert!(
        new.iter().filter(|h| *h == &ctr.host_v6().to_string()).count() >= 2,
        "no IPv6 connections via the gateway: {new:?}"
    );
    eprintln!(
        "sysbench oltp_read_only in the container, 2 threads, 2x1000 rows, median of {rounds}: steered IPv4 {steered4:.0} QPS \
         (runs {steered:.0?}), gateway dialled directly {direct:.0} QPS; steered/direct = {:.2}; steered IPv6 {steered6:.0} QPS",
        steered4 / direct
    );

    // 5. Fail-open: SIGKILL the gateway; the container's new connections reach the server directly.
    // SAFETY: plain kill(2) on the PID of the gateway this test started.
    assert_eq!(unsafe { libc::kill(gw.pid() as libc::pid_t, libc::SIGKILL) }, 0, "kill -9 gateway");
    let deadline = Instant::now() + Duration::from_secs(10);
    while gw.is_alive() {
        assert!(Instant::now() < deadline, "gateway survived SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    for dial in [db4, db6] {
        let r = probe(&ctr, Where::Container, dial, "after-kill")
            .unwrap_or_else(|e| panic!("container client failed after the gateway died (not fail-open): {e}"));
        eprintln!("after SIGKILL, container -> {dial}: {r:?}");
        assert_eq!(r["peer"], show(dial));
        assert_eq!(host_of(&r["server_sees"]), host_of(&r["sock"]), "not direct after the gateway died: {r:?}");
    }
    drop(gw);
}

#[test]
fn containers_without_a_container_address_are_left_alone_and_warned_about() {
    skip_if!("ebpf_container/no_container_address", skip_reason());
    let mount = dataplane::steer::cgroup2_mount().expect("cgroup2 mount");
    let ctr = Container::create(&mount, 2).unwrap_or_else(|e| panic!("creating the container: {e}"));
    let gw_cg = TestCgroups::create(&mount, &[format!("gwt-ctr2-{}-gw", std::process::id())]).expect("gateway cgroup");
    let db = start_mariadb(&ctr, "ctr2");
    let g = gateway_tests::free_port().expect("free port");
    let metrics = gateway_tests::free_port().expect("free port");
    let toml = config(&ctr, g, db.port(), metrics, false);
    let wrapper = in_cgroup_wrapper(gw_cg.dir(0), "ctr2-wrapper").expect("gateway wrapper script");
    let gw = Gateway::start_with_bin(&wrapper, &toml).expect("starting the gateway in its cgroup");
    let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    assert!(
        log.contains("live in another network namespace (containers)") && log.contains("NOT steered"),
        "no start-up warning about the unreachable containers:\n{}",
        gw.log_tail(4000)
    );
    let dial = SocketAddr::new(ctr.host_v4().into(), db.port());
    let r = probe(&ctr, Where::Container, dial, "unsteered").unwrap_or_else(|e| panic!("container client failed: {e}"));
    assert_eq!(host_of(&r["server_sees"]), host_of(&r["sock"]), "expected a direct connection: {r:?}");
    let status = dataplane_status(&gw);
    eprintln!("{status}");
    assert!(status.contains("WARNING:") && status.contains("container_addresses is empty"), "{status}");
    assert!(status.contains("containers -> none"), "{status}");
    assert!(counter(&status, "other_netns_not_steered") >= 1, "{status}");
}

/// `fail_closed = true`: with the daemon gone, the container's connects to intercepted addresses
/// (IPv4 and IPv6) are refused, not sent around the gateway.
#[test]
fn fail_closed_refuses_container_connects_while_the_gateway_is_gone() {
    skip_if!("ebpf_container/fail_closed", skip_reason());
    let mount = dataplane::steer::cgroup2_mount().expect("cgroup2 mount");
    let ctr = Container::create(&mount, 3).unwrap_or_else(|e| panic!("creating the container: {e}"));
    let gw_cg = TestCgroups::create(&mount, &[format!("gwt-ctr3-{}-gw", std::process::id())]).expect("gateway cgroup");
    let id = dataplane::steer::cgroup_id(ctr.cgroup()).expect("cgroup id");
    let _pins =
        Bpffs::ensure(dataplane::steer::bpffs_mount().expect("mountinfo"), id).unwrap_or_else(|e| panic!("bpffs: {e}"));
    let db = start_mariadb(&ctr, "ctr3");
    let g = gateway_tests::free_port().expect("free port");
    let metrics = gateway_tests::free_port().expect("free port");
    let toml = config(&ctr, g, db.port(), metrics, true).replace("[dataplane]\n", "[dataplane]\nfail_closed = true\n");
    let wrapper = in_cgroup_wrapper(gw_cg.dir(0), "ctr3-wrapper").expect("gateway wrapper script");
    let mut gw = Gateway::start_with_bin(&wrapper, &toml).expect("starting the gateway in its cgroup");
    let (db4, db6) =
        (SocketAddr::new(ctr.host_v4().into(), db.port()), SocketAddr::new(ctr.host_v6().into(), db.port()));
    let r = probe(&ctr, Where::Container, db4, "fc-steered").unwrap_or_else(|e| panic!("{e}\n{}", gw.log_tail(4000)));
    assert_ne!(host_of(&r["server_sees"]), host_of(&r["sock"]), "not steered: {r:?}");
    // SAFETY: plain kill(2) on the PID of the gateway this test started.
    assert_eq!(unsafe { libc::kill(gw.pid() as libc::pid_t, libc::SIGKILL) }, 0, "kill -9 gateway");
    let deadline = Instant::now() + Duration::from_secs(10);
    while gw.is_alive() {
        assert!(Instant::now() < deadline, "gateway survived SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    for dial in [db4, db6] {
        let err = probe(&ctr, Where::Container, dial, "fc-refused").expect_err("connect allowed with fail_closed");
        eprintln!("fail_closed, container -> {dial}: {err}");
        assert!(err.to_string().contains("Operation not permitted"), "expected EPERM: {err}");
    }
    assert!(!db.general_log().contains("fc-refused"), "a refused statement reached the server");
}

/// Why this file's tests cannot run here, or `None`.
fn skip_reason() -> Option<String> {
    unmet(&[Need::Root]).or_else(|| ebpf_unmet!()).or_else(|| unmet(&[Need::Cgroup2, Need::Ipv6, Need::Python]))
}

/// MariaDB on 127.0.0.1, ::1 and the bridge's two addresses, with a user for every host.
fn start_mariadb(ctr: &Container, name: &str) -> MariaDb {
    let bind = format!("--bind-address=127.0.0.1,::1,{},{}", ctr.host_v4(), ctr.host_v6());
    let opts = MariaDbOptions { extra_args: vec![bind], ..Default::default() };
    let db = MariaDb::start_with(name, opts).expect("starting MariaDB");
    db.sql(&format!(
        "CREATE USER IF NOT EXISTS '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO '{USER}'@'%'"
    ))
    .expect("creating the test user");
    db
}

fn config(ctr: &Container, g: u16, db: u16, metrics: u16, container_addresses: bool) -> String {
    let (h4, h6) = (ctr.host_v4(), ctr.host_v6());
    let containers = if container_addresses {
        format!("container_addresses = [\"{h4}:{g}\", \"[{h6}]:{g}\"]\n")
    } else {
        String::new()
    };
    format!(
        "[listen]\naddress = \"127.0.0.1:{g}\"\nextra_addresses = [\"{h4}:{g}\", \"[{h6}]:{g}\", \"[::1]:{g}\"]\n\n\
         [backend]\naddress = \"127.0.0.1:{db}\"\n\n\
         [[users]]\nname = \"{USER}\"\npassword = \"{PASSWORD}\"\nadmin = true\n\n\
         [log]\nlevel = \"info,gateway=debug\"\n\n\
         [dataplane]\nmode = \"cgroup\"\napp_cgroups = [\"{}\"]\n\
         intercept = [\"{h4}:{db}\", \"[{h6}]:{db}\", \"[::1]:{db}\"]\n{containers}\
         metrics_address = \"127.0.0.1:{metrics}\"\n\n\
         [[listen.dialled]]\naddress = \"{h4}:{db}\"\ntenant = \"ctr_v4\"\n\n\
         [[listen.dialled]]\naddress = \"[{h6}]:{db}\"\ntenant = \"ctr_v6\"\n\n\
         [[listen.dialled]]\naddress = \"[::1]:{db}\"\ntenant = \"host_v6\"\n",
        ctr.cgroup().display()
    )
}

/// Where a client runs: inside the container (its cgroup and namespace), or on the host inside
/// the container's cgroup only (an application process of the host).
#[derive(Clone, Copy)]
enum Where {
    Container,
    Host,
}

fn command(ctr: &Container, at: Where, program: &str, args: &[&str]) -> Command {
    match at {
        Where::Container => ctr.command(program, args),
        Where::Host => {
            let mut c = gateway_tests::cgroup::command_in(ctr.cgroup(), program);
            c.args(args).stdin(Stdio::null());
            c
        }
    }
}

/// `ip:port` as Python prints a peer address (no brackets).
fn show(addr: SocketAddr) -> String {
    format!("{}:{}", addr.ip(), addr.port())
}

/// Python's `ip:port` as Rust (and the gateway's log) prints it: IPv6 in brackets.
fn as_rust(addr: &str) -> String {
    match addr.rsplit_once(':') {
        Some((ip, port)) if ip.contains(':') => format!("[{ip}]:{port}"),
        _ => addr.to_owned(),
    }
}

/// The address part of `ip:port` (IPv6 without brackets).
fn host_of(addr: &str) -> String {
    addr.rsplit_once(':').map_or(addr, |(h, _)| h).trim_start_matches('[').trim_end_matches(']').to_owned()
}

/// Runs the PyMySQL probe and parses its `key=value` lines.
fn probe(ctr: &Container, at: Where, addr: SocketAddr, marker: &str) -> Result<BTreeMap<String, String>> {
    let python = clients::venv_python();
    let script = clients::py_script("socket_probe.py");
    let (ip, port) = (addr.ip().to_string(), addr.port().to_string());
    let args = [script.to_str().unwrap_or_default(), &ip, &port, marker, USER, PASSWORD];
    let out = command(ctr, at, python.to_str().unwrap_or_default(), &args).output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(
            format!("PyMySQL probe to {addr} failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)).into()
        );
    }
    let kv = clients::parse_kv(&stdout);
    for key in ["peer", "sock", "server_sees"] {
        if !kv.contains_key(key) {
            return Err(format!("probe output lacks {key}: {stdout}").into());
        }
    }
    Ok(kv)
}

fn cli_args(addr: SocketAddr, sql: &str) -> Vec<String> {
    vec![
        "--no-defaults".into(),
        "--protocol=TCP".into(),
        format!("-h{}", addr.ip()),
        format!("-P{}", addr.port()),
        format!("-u{USER}"),
        format!("-p{PASSWORD}"),
        "--connect-timeout=5".into(),
        "--batch".into(),
        "--skip-column-names".into(),
        "-e".into(),
        sql.into(),
    ]
}

/// Runs `sql` with the mariadb CLI inside the container; its stdout.
fn in_container_cli(ctr: &Container, addr: SocketAddr, sql: &str) -> String {
    let args = cli_args(addr, sql);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = ctr.command("mariadb", &args).output().expect("mariadb CLI");
    assert!(out.status.success(), "mariadb CLI to {addr} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The client hosts of the server's `Connect` general-log entries, in order.
fn connects(db: &MariaDb) -> Vec<String> {
    general_log::read(&db.general_log_path())
        .into_iter()
        .filter(|e| e.command == "Connect")
        .filter_map(|e| e.text.split_once('@').map(|(_, rest)| rest.split_whitespace().next().unwrap_or("").to_owned()))
        .collect()
}

/// sysbench oltp_read_only (2 threads, `GATEWAY_CTR_BENCH_SECS` seconds, default 5) in the
/// container against `addr`; returns its QPS.
/// With `steered`, the gateway's session list must show the container's sessions while it runs.
fn sysbench_in(ctr: &Container, gw: &Gateway, addr: SocketAddr, steered: bool) -> f64 {
    let args = [
        "oltp_read_only".to_owned(),
        "--db-driver=mysql".into(),
        format!("--mysql-host={}", addr.ip()),
        format!("--mysql-port={}", addr.port()),
        format!("--mysql-user={USER}"),
        format!("--mysql-password={PASSWORD}"),
        "--mysql-db=test".into(),
        "--tables=2".into(),
        "--table-size=1000".into(),
        "--threads=2".into(),
        format!(
            "--time={}",
            std::env::var("GATEWAY_CTR_BENCH_SECS").ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(5)
        ),
        "--percentile=95".into(),
        "run".into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = ctr.command("sysbench", &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("sysbench");
    if steered {
        let want = match addr.ip() {
            IpAddr::V4(_) => ctr.container_v4().to_string(),
            IpAddr::V6(_) => ctr.container_v6().to_string(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let sessions = gw.cli().user(USER).password(PASSWORD).sql("SHOW PROXYSESSION").unwrap_or_default();
            let from_ctr = sessions
                .lines()
                .filter(|l| l.contains(&format!("\t{want}:")) || l.contains(&format!("\t[{want}]:")))
                .count();
            if from_ctr >= 2 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the gateway's session list never showed sysbench's sessions from {want}:\n{sessions}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let out = child.wait_with_output().expect("sysbench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "sysbench to {addr} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let report = sysbench::parse_report(&stdout).expect("sysbench report");
    assert!(report.queries > 0 && report.ignored_errors == 0, "sysbench to {addr}: {report:?}");
    report.qps
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// `gateway dataplane status --config FILE` of a running gateway.
fn dataplane_status(gw: &Gateway) -> String {
    let bin = gateway_tests::gateway::gateway_bin().expect("gateway binary");
    let out = Command::new(bin)
        .args(["dataplane", "status", "--config"])
        .arg(gw.config_path())
        .output()
        .expect("gateway dataplane status");
    assert!(out.status.success(), "dataplane status failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A counter of the `steering events:` line.
fn counter(status: &str, event: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("steering events:"))
        .and_then(|l| l.split_whitespace().find_map(|kv| kv.strip_prefix(&format!("{event}="))))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
