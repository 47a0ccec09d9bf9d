//! Privileged eBPF tests of the VIP steering modes, with a real MariaDB, the real gateway binary
//! and the `mariadb` CLI, each in network namespaces the test creates and deletes (even on failure).
//!
//! Router mode (docs/dataplane.md §2):
//!
//! ```text
//!  netns gwr-<pid>-cli                     netns gwr-<pid>-gw
//!  gwr1 10.200.0.1/24  <──── veth ────>  gwr0 10.200.0.2/24, router_assign on gwr0 ingress
//!  10.255.0.0/16 via 10.200.0.2           local 10.255.0.0/16 dev lo (added by the gateway)
//!  mariadb -h 10.255.0.1 -P 3306  ───────▶  gateway 0.0.0.0:<port> ──▶ mariadbd 127.0.0.1:<port>
//! ```
//!
//! sk_lookup mode (docs/dataplane.md §2): one namespace holding client, gateway and MariaDB; the client dials
//! 10.254.0.7:3306, the gateway owns 10.254.0.0/24 through its local route.
//!
//! Processes are stopped by PID (SIGTERM, which also checks the clean detach); without root, or
//! with a gateway built with `AYA_BUILD_SKIP`, the privileged tests print why they skip. The
//! status test without eBPF runs everywhere.

use gateway_tests::skip::{unmet, Need};
use gateway_tests::{ebpf_unmet, skip_if};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gateway_tests::netns::{ip, Netns};
use gateway_tests::process;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const VIP: &str = "10.255.0.1";
const VIP_CIDR: &str = "10.255.0.0/16";
const GW_IF: &str = "gwr0";
const CLI_IF: &str = "gwr1";
const QUERY: &str = "SELECT CONCAT('served-by-', @@port), 6*7";

#[test]
fn router_mode_steers_vip_connections_across_a_veth() {
    skip_if!("ebpf_router/router", skip_reason());
    let nets = netns_for(&["gw", "cli"]).unwrap_or_else(|e| panic!("creating netns: {e}"));
    let (gw, cli) = (nets.name(0), nets.name(1));
    let setup = || -> Result<()> {
        ip(&["-n", gw, "link", "add", GW_IF, "type", "veth", "peer", "name", CLI_IF, "netns", cli])?;
        ip(&["-n", gw, "addr", "add", "10.200.0.2/24", "dev", GW_IF])?;
        ip(&["-n", cli, "addr", "add", "10.200.0.1/24", "dev", CLI_IF])?;
        for (ns, dev) in [(gw, GW_IF), (cli, CLI_IF)] {
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
        }
        ip(&["-n", cli, "route", "add", VIP_CIDR, "via", "10.200.0.2"])?;
        Ok(())
    };
    setup().unwrap_or_else(|e| panic!("veth setup: {e}"));

    let db = NsMariaDb::start(gw).unwrap_or_else(|e| panic!("mariadbd in {gw}: {e}"));
    let listen = free_port_in(gw);
    let metrics = free_port_in(gw);
    let dataplane = format!(
        "mode = \"router\"\nrouter_interface = \"{GW_IF}\"\nvip_cidrs = [\"{VIP_CIDR}\"]\nmetrics_address = \"127.0.0.1:{metrics}\""
    );
    let mut gateway = NsGateway::start(gw, &format!("0.0.0.0:{listen}"), db.port, &dataplane)
        .unwrap_or_else(|e| panic!("gateway in {gw}: {e}"));
    if let Some(reason) = gateway.unavailable() {
        gateway_tests::skip::skip("ebpf_router/router", &reason);
        return;
    }
    assert!(
        ip_out(&["-n", gw, "route", "show", "table", "local"]).contains(VIP_CIDR),
        "local route missing; gateway log:\n{}",
        gateway.log()
    );

    let out = mariadb_cli(cli, VIP, 3306, QUERY).unwrap_or_else(|e| panic!("{e}\ngateway log:\n{}", gateway.log()));
    assert_eq!(out.trim(), format!("served-by-{}\t42", db.port), "query result through the VIP");
    let log = gateway.log();
    assert!(log.contains(&format!("original={VIP}:3306")), "gateway log lacks the original destination:\n{log}");
    assert!(log.contains("peer=10.200.0.1:"), "gateway did not see the client's own address:\n{log}");
    assert!(db.general_log().contains("served-by-"), "the statement did not reach MariaDB");

    let status = gateway.status().unwrap_or_else(|e| panic!("dataplane status: {e}"));
    eprintln!("{status}");
    for want in [
        "mode:             router (eBPF active",
        &format!("interface:        {GW_IF}"),
        &format!("VIP range:        {VIP_CIDR} (local route added by the gateway)"),
        &format!("program:          router_assign (sched_cls) on tc ingress {GW_IF}"),
        "map:              VIP_CIDRS 2/1024 entries",
        "steered ports:    3306, 2881",
        "splice:",
    ] {
        assert!(status.contains(want), "status lacks {want:?}:\n{status}");
    }
    assert!(counter(&status, "assign_listener") >= 1, "no SYN assigned to the listener:\n{status}");
    assert!(counter(&status, "assign_established") >= 1, "no established packet assigned:\n{status}");

    gateway.stop_and_check_clean(true);
    let routes = ip_out(&["-n", gw, "route", "show", "table", "local"]);
    assert!(!routes.contains(VIP_CIDR), "local route left behind after SIGTERM:\n{routes}");
    assert!(mariadb_cli(cli, VIP, 3306, "SELECT 1").is_err(), "VIP still served after the gateway stopped");
}

#[test]
fn sk_lookup_mode_serves_a_local_vip() {
    skip_if!("ebpf_router/sk_lookup", skip_reason());
    let nets = netns_for(&["skl"]).unwrap_or_else(|e| panic!("creating netns: {e}"));
    let ns = nets.name(0);
    ip(&["-n", ns, "link", "set", "lo", "up"]).unwrap_or_else(|e| panic!("{e}"));
    let db = NsMariaDb::start(ns).unwrap_or_else(|e| panic!("mariadbd in {ns}: {e}"));
    let (listen, metrics) = (free_port_in(ns), free_port_in(ns));
    let dataplane =
        format!("mode = \"sk_lookup\"\nvip_cidrs = [\"10.254.0.0/24\"]\nmetrics_address = \"127.0.0.1:{metrics}\"");
    let mut gateway = NsGateway::start(ns, &format!("127.0.0.1:{listen}"), db.port, &dataplane)
        .unwrap_or_else(|e| panic!("gateway in {ns}: {e}"));
    if let Some(reason) = gateway.unavailable() {
        gateway_tests::skip::skip("ebpf_router/sk_lookup", &reason);
        return;
    }
    let out =
        mariadb_cli(ns, "10.254.0.7", 3306, QUERY).unwrap_or_else(|e| panic!("{e}\ngateway log:\n{}", gateway.log()));
    assert_eq!(out.trim(), format!("served-by-{}\t42", db.port));
    let log = gateway.log();
    assert!(log.contains("original=10.254.0.7:3306"), "gateway log lacks the original destination:\n{log}");

    let status = gateway.status().unwrap_or_else(|e| panic!("dataplane status: {e}"));
    eprintln!("{status}");
    assert!(status.contains("mode:             sk_lookup (eBPF active"), "{status}");
    assert!(status.contains("program:          vip_lookup (sk_lookup) on netns"), "{status}");
    assert!(counter(&status, "lookup_redirected") >= 1, "no lookup redirected:\n{status}");

    gateway.stop_and_check_clean(true);
    let routes = ip_out(&["-n", ns, "route", "show", "table", "local"]);
    assert!(!routes.contains("10.254.0.0/24"), "local route left behind:\n{routes}");
}

/// Without capabilities the gateway says why and serves clients in userspace; nothing is attached.
#[test]
fn without_privilege_the_gateway_runs_userspace_only() {
    skip_if!("ebpf_router/unprivileged", skip_reason());
    let nets = netns_for(&["upr"]).unwrap_or_else(|e| panic!("creating netns: {e}"));
    let ns = nets.name(0);
    ip(&["-n", ns, "link", "set", "lo", "up"]).unwrap_or_else(|e| panic!("{e}"));
    let db = NsMariaDb::start(ns).unwrap_or_else(|e| panic!("mariadbd in {ns}: {e}"));
    let (listen, metrics) = (free_port_in(ns), free_port_in(ns));
    let dataplane =
        format!("mode = \"sk_lookup\"\nvip_cidrs = [\"10.253.0.0/24\"]\nmetrics_address = \"127.0.0.1:{metrics}\"");
    let drop_caps = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--"];
    let mut gateway = NsGateway::start_wrapped(ns, &drop_caps, &format!("127.0.0.1:{listen}"), db.port, &dataplane)
        .unwrap_or_else(|e| panic!("gateway in {ns}: {e}"));
    let reason = gateway.unavailable().unwrap_or_else(|| panic!("no fallback message:\n{}", gateway.log()));
    assert!(reason.contains("userspace-only"), "{reason}");
    let out = mariadb_cli(ns, "127.0.0.1", listen, QUERY).unwrap_or_else(|e| panic!("{e}\n{}", gateway.log()));
    assert_eq!(out.trim(), format!("served-by-{}\t42", db.port));
    let status = gateway.status().unwrap_or_else(|e| panic!("dataplane status: {e}"));
    assert!(
        status.contains("mode:             sk_lookup (eBPF unavailable, userspace only: eBPF not permitted"),
        "{status}"
    );
    assert!(!status.contains("program:"), "{status}");
    let routes = ip_out(&["-n", ns, "route", "show", "table", "local"]);
    assert!(!routes.contains("10.253.0.0/24"), "a route was added without privilege:\n{routes}");
    gateway.stop_and_check_clean(false);
}

/// `gateway dataplane status` against a daemon without eBPF (mode off) and against nothing.
#[test]
fn dataplane_status_reports_a_userspace_daemon() {
    let metrics = gateway_tests::free_port().unwrap_or_else(|e| panic!("{e}"));
    let cfg = gateway_tests::GatewayConfig::new("127.0.0.1:9".parse().unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
    let toml = format!("{}\n[dataplane]\nmode = \"off\"\nmetrics_address = \"127.0.0.1:{metrics}\"\n", cfg.to_toml());
    let gw = gateway_tests::Gateway::start(&toml).unwrap_or_else(|e| panic!("gateway: {e}"));
    let bin = gateway_tests::gateway::gateway_bin().unwrap_or_else(|e| panic!("{e}"));
    let config = gw.dir().join("gateway.toml");
    let out = Command::new(&bin)
        .args(["dataplane", "status", "--config"])
        .arg(&config)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "status failed: {}{}", text, String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!("daemon:           http://127.0.0.1:{metrics}/metrics")), "{text}");
    assert!(text.contains(&format!("mode:             off (eBPF off; daemon pid {})", gw.pid())), "{text}");
    assert!(text.contains("splice:"), "{text}");
    let raw = Command::new(&bin)
        .args(["dataplane", "status", "--raw", "--address", &format!("127.0.0.1:{metrics}")])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(String::from_utf8_lossy(&raw.stdout).contains("# TYPE gateway_dataplane_info gauge"));
    drop(gw);
    let dead = Command::new(&bin)
        .args(["dataplane", "status", "--address", &format!("127.0.0.1:{metrics}")])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&dead.stderr);
    assert!(!dead.status.success() && err.contains("metrics endpoint"), "no clear error: {err}");
}

/// The value of `event=N` in a status report's steering events line.
fn counter(status: &str, event: &str) -> u64 {
    let prefix = format!("{event}=");
    status.split_whitespace().find_map(|w| w.strip_prefix(prefix.as_str())).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Why this file's tests cannot run here, or `None`.
fn skip_reason() -> Option<String> {
    ebpf_unmet!().or_else(|| unmet(&[Need::Tools(&["ip", "mariadbd", "mariadb", "mariadb-install-db"])]))
}

// ---------------------------------------------------------------------------------------------
// Fixtures: namespaces, MariaDB and the gateway inside a namespace, the client.

/// Network namespaces `gwr-<pid>-<tag>`, deleted on drop (which also deletes their veths).
fn netns_for(tags: &[&str]) -> Result<Netns> {
    let names: Vec<String> = tags.iter().map(|tag| format!("gwr-{}-{tag}", std::process::id())).collect();
    Ok(Netns::create(&names)?)
}

/// A free TCP port inside `ns` (the namespaces are fresh, so nothing else races for it).
fn free_port_in(_ns: &str) -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let base = 20000 + (std::process::id() % 20000) as u16;
    base + NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A `mariadbd` run with `ip netns exec` on 127.0.0.1 of a namespace, from a fresh data directory.
struct NsMariaDb {
    dir: PathBuf,
    port: u16,
    child: Child,
}

impl NsMariaDb {
    fn start(ns: &str) -> Result<Self> {
        let dir = gateway_tests::scratch_dir(&format!("mariadb-{ns}"))?;
        let data = dir.join("data");
        // A private tmpdir: a starting mariadbd deletes every `#sql*` file in its tmpdir, so
        // servers sharing /tmp break each other's temporary tables.
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp)?;
        let out = Command::new("mariadb-install-db")
            .args(["--no-defaults", "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .output()?;
        if !out.status.success() {
            return Err(format!("mariadb-install-db: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        let port = free_port_in(ns);
        let d = |f: &str| dir.join(f).display().to_string();
        let mut cmd = Command::new("ip");
        cmd.args([
            "netns",
            "exec",
            ns,
            "mariadbd",
            "--no-defaults",
            "--user=root",
            "--bind-address=127.0.0.1",
            "--skip-name-resolve",
        ])
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--port={port}"))
        .arg(format!("--socket={}", d("mysqld.sock")))
        .arg(format!("--pid-file={}", d("mysqld.pid")))
        .arg(format!("--log-error={}", d("error.log")))
        .arg(format!("--tmpdir={}", d("tmp")))
        .arg("--general-log=1")
        .arg(format!("--general-log-file={}", d("general.log")))
        .arg("--innodb-buffer-pool-size=64M")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // `ip netns exec` execs the command, so the PID is mariadbd's own.
        let child = process::spawn_owned(cmd)?;
        process::register(child.id(), None);
        let mut db = Self { dir, port, child };
        let deadline = Instant::now() + Duration::from_secs(60);
        while mariadb_cli(ns, "127.0.0.1", port, "SELECT 1").is_err() {
            if Instant::now() > deadline || db.child.try_wait()?.is_some() {
                let log = gateway_tests::tail_file(&db.dir.join("error.log"), 3000);
                return Err(format!("mariadbd did not come up in {ns}:\n{log}").into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(db)
    }

    fn general_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("general.log")).unwrap_or_default()
    }
}

impl Drop for NsMariaDb {
    fn drop(&mut self) {
        process::terminate_child(&mut self.child, Duration::from_secs(30));
        process::unregister(self.child.id());
    }
}

/// The gateway binary run with `ip netns exec` (so its listener, the interface and the routes
/// are all in that namespace).
struct NsGateway {
    ns: String,
    dir: PathBuf,
    child: Child,
}

impl NsGateway {
    fn start(ns: &str, listen: &str, backend_port: u16, dataplane: &str) -> Result<Self> {
        Self::start_wrapped(ns, &[], listen, backend_port, dataplane)
    }

    /// [`Self::start`] with `wrapper` (e.g. `setpriv …`) between `ip netns exec` and the binary.
    fn start_wrapped(ns: &str, wrapper: &[&str], listen: &str, backend_port: u16, dataplane: &str) -> Result<Self> {
        let bin = gateway_tests::gateway::gateway_bin().map_err(|e| e.to_string())?;
        let dir = gateway_tests::scratch_dir(&format!("gateway-{ns}"))?;
        let config = dir.join("gateway.toml");
        let toml = format!(
            "[listen]\naddress = \"{listen}\"\n\n[backend]\naddress = \"127.0.0.1:{backend_port}\"\n\n\
             [[users]]\nname = \"root\"\npassword = \"\"\nauth_plugin = \"mysql_native_password\"\n\n\
             [log]\nlevel = \"info\"\n\n[dataplane]\n{dataplane}\n"
        );
        std::fs::write(&config, toml)?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .args(wrapper)
            .arg(&bin)
            .args(["run", "--config"])
            .arg(&config)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout.log"))?)
            .stderr(std::fs::File::create(dir.join("stderr.log"))?);
        let child = process::spawn_owned(cmd)?;
        process::register(child.id(), None);
        let mut gw = Self { ns: ns.to_owned(), dir, child };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !gw.log().contains("gateway listening") {
            if let Some(status) = gw.child.try_wait()? {
                return Err(format!("gateway exited with {status}:\n{}", gw.log()).into());
            }
            if Instant::now() > deadline {
                return Err(format!("gateway not listening after 30 s:\n{}", gw.log()).into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(gw)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
    }

    /// The reason the gateway runs without eBPF, if it logged one.
    fn unavailable(&self) -> Option<String> {
        let log = self.log();
        log.lines().find(|l| l.contains("eBPF data plane unavailable")).map(str::to_owned)
    }

    /// `gateway dataplane status --config FILE`, run inside the namespace.
    fn status(&self) -> Result<String> {
        let bin = gateway_tests::gateway::gateway_bin().map_err(|e| e.to_string())?;
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns])
            .arg(&bin)
            .args(["dataplane", "status", "--config"])
            .arg(self.dir.join("gateway.toml"))
            .output()?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// SIGTERM by PID; the gateway must exit 0 (having detached and removed its routes if `attached`).
    fn stop_and_check_clean(&mut self, attached: bool) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid} failed");
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                Ok(None) => panic!("gateway {pid} still running 10 s after SIGTERM:\n{}", self.log()),
                Err(e) => panic!("waiting for the gateway: {e}"),
            }
        };
        let log = self.log();
        assert!(status.success(), "gateway exit status {status}:\n{log}");
        assert!(log.contains("SIGTERM: stopping"), "{log}");
        if attached {
            assert!(log.contains("VIP steering detached, local routes removed"), "no clean detach:\n{log}");
        }
    }
}

impl Drop for NsGateway {
    fn drop(&mut self) {
        process::terminate_child(&mut self.child, Duration::from_secs(10));
        process::unregister(self.child.id());
        if std::thread::panicking() {
            eprintln!("gateway log ({}):\n{}", self.dir.display(), self.log());
        }
    }
}

/// The `mariadb` CLI as root inside `ns`; stdout on success.
fn mariadb_cli(ns: &str, host: &str, port: u16, sql: &str) -> Result<String> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "mariadb", "--no-defaults", "--protocol=TCP", "--connect-timeout=5"])
        .arg(format!("-h{host}"))
        .arg(format!("-P{port}"))
        .args(["-uroot", "--batch", "--skip-column-names", "-e", sql])
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(
            format!("mariadb -h{host} -P{port} in {ns}: {}", String::from_utf8_lossy(&out.stderr).trim()).into()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn ip_out(args: &[&str]) -> String {
    Command::new("ip").args(args).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default()
}
