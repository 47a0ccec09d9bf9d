//! A "container" made the way container runtimes make one, for the eBPF steering tests: a
//! network namespace joined by a veth pair to a bridge in the host namespace (IPv4 and IPv6 ULA
//! addresses on both sides), its own cgroup v2 directory, and processes started inside both.
//!
//! ```text
//!  host netns                                   netns gwc<n>-<pid> (the container)
//!  bridge gwbr<n>…  10.213.<n>.1/24           veth gwc<n>…  10.213.<n>.2/24
//!                   fd00:213:<n>::1/64 ◀──veth──▶            fd00:213:<n>::2/64
//! ```
//!
//! Everything is removed on drop, even after a failed assertion: the processes left in the
//! cgroup are killed, the namespace (and with it the veth pair) and the bridge are deleted, the
//! cgroup directory is removed.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cgroup::TestCgroups;
use crate::netns::{ip, Netns};

/// One test container; `n` (1..=250) keeps concurrent tests apart (names and subnets).
pub struct Container {
    // Field order is drop order: processes, then links and namespace, then the cgroup.
    sleeper: Option<Child>,
    _bridge: LinkGuard,
    netns: Netns,
    cgroups: TestCgroups,
    n: u8,
}

/// Deletes a host-namespace link on drop (a veth's peer goes with it).
struct LinkGuard(String);

impl Drop for LinkGuard {
    fn drop(&mut self) {
        if Path::new("/sys/class/net").join(&self.0).exists() {
            if let Err(e) = ip(&["link", "del", &self.0]) {
                eprintln!("cleanup: deleting link {}: {e}", self.0);
            }
        }
    }
}

impl Container {
    /// Creates the cgroup `<cgroup2>/gwt-ctr<n>-<pid>`, the namespace, bridge and veth pair with
    /// their addresses, and starts a long-lived process inside both (so the cgroup is populated
    /// the way a running container's is).
    pub fn create(cgroup2: &Path, n: u8) -> anyhow::Result<Container> {
        let pid = std::process::id();
        let short = pid % 100_000;
        let cgroups = TestCgroups::create(cgroup2, &[format!("gwt-ctr{n}-{pid}")])?;
        let netns = Netns::create(&[format!("gwc{n}-{pid}")])?;
        let (br, vh, vc) = (format!("gwbr{n}-{short}"), format!("gwvh{n}-{short}"), format!("gwvc{n}-{short}"));
        for stale in [&br, &vh] {
            if Path::new("/sys/class/net").join(stale).exists() {
                ip(&["link", "del", stale])?;
            }
        }
        ip(&["link", "add", &br, "type", "bridge"])?;
        let bridge = LinkGuard(br.clone());
        let mut me = Container { sleeper: None, _bridge: bridge, netns, cgroups, n };
        let ns = me.netns.name(0).to_owned();
        ip(&["link", "add", &vh, "type", "veth", "peer", "name", &vc, "netns", &ns])?;
        ip(&["link", "set", &vh, "master", &br])?;
        ip(&["addr", "add", &format!("{}/24", me.host_v4()), "dev", &br])?;
        ip(&["-6", "addr", "add", &format!("{}/64", me.host_v6()), "dev", &br, "nodad"])?;
        ip(&["link", "set", &br, "up"])?;
        ip(&["link", "set", &vh, "up"])?;
        ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        ip(&["-n", &ns, "addr", "add", &format!("{}/24", me.container_v4()), "dev", &vc])?;
        ip(&["-n", &ns, "-6", "addr", "add", &format!("{}/64", me.container_v6()), "dev", &vc, "nodad"])?;
        ip(&["-n", &ns, "link", "set", &vc, "up"])?;
        let sleeper = me.command("sleep", &["600"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
        me.sleeper = Some(sleeper);
        me.wait_populated(Duration::from_secs(5))?;
        Ok(me)
    }

    fn wait_populated(&self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while std::fs::read_to_string(self.cgroup().join("cgroup.procs")).unwrap_or_default().trim().is_empty() {
            anyhow::ensure!(Instant::now() < deadline, "the container's first process never entered its cgroup");
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// The container's cgroup directory.
    pub fn cgroup(&self) -> &Path {
        self.cgroups.dir(0)
    }

    /// The container's network namespace name (`ip netns`).
    pub fn netns(&self) -> &str {
        self.netns.name(0)
    }

    /// The bridge's (host side) IPv4 address.
    pub fn host_v4(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 213, self.n, 1)
    }
    /// The container's IPv4 address.
    pub fn container_v4(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 213, self.n, 2)
    }
    /// The bridge's (host side) IPv6 ULA address.
    pub fn host_v6(&self) -> Ipv6Addr {
        Ipv6Addr::new(0xfd00, 0x213, u16::from(self.n), 0, 0, 0, 0, 1)
    }
    /// The container's IPv6 ULA address.
    pub fn container_v6(&self) -> Ipv6Addr {
        Ipv6Addr::new(0xfd00, 0x213, u16::from(self.n), 0, 0, 0, 0, 2)
    }

    /// `program args` started inside the container: the shell moves itself into the cgroup,
    /// then execs `ip netns exec` (which enters the namespace and execs the program, same PID).
    /// The cgroup comes first because `ip netns exec` remounts /sys for the namespace.
    pub fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(r#"echo $$ > "$1" && ns="$2" && shift 2 && exec ip netns exec "$ns" "$@""#)
            .arg("sh")
            .arg(self.cgroup().join("cgroup.procs"))
            .arg(self.netns())
            .arg(program)
            .args(args)
            .stdin(Stdio::null());
        c
    }

    /// Path of the cgroup's `cgroup.procs`, for host processes that should join the cgroup.
    pub fn procs_file(&self) -> PathBuf {
        self.cgroup().join("cgroup.procs")
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if let Some(mut c) = self.sleeper.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Anything else still inside the cgroup was started by this test: kill it by PID so
        // that the namespace and the cgroup can go.
        let procs = std::fs::read_to_string(self.cgroup().join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
            // SAFETY: kill(2) on a PID listed in this test's own cgroup.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}
