//! Steering mode `cgroup` (docs/dataplane.md §2): applications' connects to database addresses are
//! rewritten to the gateway by `cgroup/connect4` / `connect6`, and the daemon learns each
//! connection's original destination through `getsockopt(SOL_IP, SO_ORIGINAL_DST)` (IPv6:
//! `SOL_IPV6, IP6T_SO_ORIGINAL_DST`).
//!
//! * connect4/6, sock_ops and getpeername4/6 are attached to each configured application cgroup
//!   (and so to their descendants); getsockopt to the gateway's own cgroup.
//! * Containers: cgroup programs run for every process of the cgroup, whatever its network
//!   namespace. A process in the gateway's namespace is sent to the listener; a process in another
//!   namespace (a container) to `[dataplane] container_addresses`, a host address it can reach
//!   (`targets.rs`). The gateway's peer is then the container's own address, which keys the
//!   original destination exactly as for host processes.
//! * The daemon's own upstream connects are never rewritten: the programs are scoped to the
//!   application cgroups, and connect4 also skips the gateway's cgroup id and process id.
//! * Fail-open: the listener is kept in a one-slot sockmap; the kernel drops it when the socket
//!   closes (also on SIGKILL), and connect4 then leaves the destination unchanged. The links are
//!   not pinned, so they also die with the process. With `fail_closed` the connect4 links are
//!   pinned as `<bpffs>/gateway-steer/connect4-<cgroup id>`, outlive the process and refuse
//!   connects (`EPERM`) while no listener is registered; the next start for the same cgroups
//!   removes those pins first (a clean stop keeps them: fail-closed means "no gateway, no access").
//! * Direct route (`direct.rs`, off by default): for sessions whose route is fixed before they
//!   start, connect4 sends the connect straight to the server; the daemon keeps that map.
//! * IPv6: native IPv6 destinations have their own maps; IPv4-mapped ones (`::ffff:a.b.c.d`) are
//!   IPv4. Direct route is IPv4 and host namespace only.
//! * Self-check (`selfcheck.rs`): per cgroup and per family, from the kernel's own answers.

mod attach;
mod cgroup;
mod daemon;
pub(crate) mod direct;
mod original_dst;
pub(crate) mod selfcheck;
pub(crate) mod targets;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use aya::maps::{HashMap, MapData, PerCpuArray};
use aya::programs::links::{FdLink, PinnedLink};
use aya::programs::{CgroupSockAddr, SockOps};
use aya::Ebpf;
use gateway_common::steer::{
    Ipv4Endpoint, Ipv6Endpoint, SteerConfig, STEER_CONNECT4_PROGRAM, STEER_CONNECT6_PROGRAM,
    STEER_GETPEERNAME4_PROGRAM, STEER_GETPEERNAME6_PROGRAM, STEER_SOCK_OPS_PROGRAM, STEER_STATS_MAP, STEER_STAT_SLOTS,
    STEER_TARGETS6_MAP, STEER_TARGETS_MAP, STEER_TARGETS_MAX,
};

use attach::{
    attach_getsockopt, attach_sock_addr, attach_sock_ops, map_error, missing, open_cgroup, pin, pin_path, prepare_pins,
    program_error, register_listener, write_config,
};
pub use cgroup::{bpffs_mount, cgroup2_mount, cgroup_id, own_cgroup};
pub use daemon::{start, SteeringHandle};
pub use original_dst::{is_intercepted, original_destination, steered_backend};
use selfcheck::{attach_type, Attached};
use targets::{endpoint4 as endpoint, endpoint6, RewriteTargets};

use super::steer_status::{CgroupSteering, FamilyCheck};
use super::{load_object, DataplaneError};

/// Directory under the bpffs mount holding pinned links (`fail_closed` only).
const PIN_DIR: &str = "gateway-steer";

/// Errors of the steering set-up.
#[derive(Debug, thiserror::Error)]
pub enum SteerError {
    /// Loading, attaching or a map operation failed.
    #[error(transparent)]
    Dataplane(#[from] DataplaneError),
    /// No cgroup2 file system is mounted.
    #[error("no cgroup2 file system is mounted; steering mode `cgroup` needs cgroup v2")]
    NoCgroup2,
    /// `/proc/self/cgroup` has no unified-hierarchy line.
    #[error("cannot find this process's cgroup v2 (no `0::` line in /proc/self/cgroup)")]
    NoOwnCgroup,
    /// A cgroup directory (or a proc file) could not be read.
    #[error("cgroup {}: {source}", path.display())]
    Cgroup {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// Mode `cgroup` without application cgroups.
    #[error("[dataplane] mode = \"cgroup\" needs at least one entry in app_cgroups")]
    NoAppCgroups,
    /// A `[dataplane] container_addresses` entry cannot be used.
    #[error("[dataplane] container_addresses: {addr}: {why}")]
    ContainerAddress {
        /// The entry.
        addr: SocketAddr,
        /// Why not.
        why: &'static str,
    },
    /// No listener to steer to.
    #[error("the gateway has no listener that steered connects could reach")]
    NoListener,
    /// A configured application cgroup is not a cgroup v2 directory.
    #[error("{}: not a cgroup v2 directory (cgroup programs attach to cgroup v2 only)", .0.display())]
    NotCgroup2(PathBuf),
    /// `fail_closed` without a bpffs to pin the programs in.
    #[error("fail_closed needs a bpffs mount to pin its programs (mount -t bpf bpf /sys/fs/bpf)")]
    NoBpffs,
    /// Pinning or unpinning links failed.
    #[error("pinned links under {}: {message}", path.display())]
    Pin {
        /// The pin path.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// More intercepted addresses than the map holds.
    #[error("{count} intercepted addresses, the eBPF map holds at most {max}")]
    TooManyTargets {
        /// Addresses requested.
        count: usize,
        /// Map capacity.
        max: u32,
    },
}

impl SteerError {
    /// True when eBPF is not available here (no object, no privilege): run userspace-only.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Dataplane(e) if e.is_unavailable())
    }
}

/// What to attach where.
#[derive(Debug, Clone)]
pub struct SteerSettings {
    /// The gateway's bound listeners, the main one first (rewrite targets, `targets.rs`).
    pub listeners: Vec<SocketAddr>,
    /// Host addresses containers are sent to, one per family (`[dataplane] container_addresses`).
    pub container_addresses: Vec<SocketAddr>,
    /// Application cgroups (absolute or relative to the cgroup2 mount).
    pub app_cgroups: Vec<String>,
    /// Refuse connects to intercepted addresses while the daemon is gone.
    pub fail_closed: bool,
}

/// Counters of the steering programs, summed over CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SteerStats {
    /// Connects rewritten to the gateway.
    pub redirected: u64,
    /// Connects of the gateway itself, left alone.
    pub skipped_self: u64,
    /// Connects left alone because the daemon was gone.
    pub fail_open: u64,
    /// Connects refused because the daemon was gone (`fail_closed`).
    pub refused: u64,
    /// Steered sockets established.
    pub established: u64,
    /// `SO_ORIGINAL_DST` answers.
    pub original_dst: u64,
    /// `getpeername()` rewrites.
    pub peername: u64,
    /// Connects sent straight to their server (direct route).
    pub direct: u64,
    /// Connects from another network namespace left alone: no container address of the family.
    pub other_netns: u64,
    /// Connects from another network namespace steered to a container address.
    pub container: u64,
    /// IPv6 connects steered.
    pub redirected6: u64,
}

/// The attached steering programs. Dropping it detaches them (except pinned `fail_closed` links).
pub struct Steering {
    /// Owns programs, links and maps; must live as long as steering should (docs/dataplane.md §5).
    ebpf: Ebpf,
    app_cgroups: Vec<PathBuf>,
    gateway_cgroup: PathBuf,
    rewrite: RewriteTargets,
    /// Loaded application-cgroup programs (for the self-check).
    programs: Vec<Attached>,
    targets: BTreeSet<SocketAddrV4>,
    targets6: BTreeSet<SocketAddrV6>,
    /// Installed direct routes (dialled address → server), see `direct.rs`.
    direct: BTreeMap<SocketAddrV4, SocketAddrV4>,
    /// `fail_closed`: connect4 links pinned on bpffs (they outlive the process).
    _pinned: Vec<PinnedLink>,
    /// Fail-open: connect4 links owned by this process only (they die with it).
    _links: Vec<FdLink>,
}

impl std::fmt::Debug for Steering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Steering")
            .field("app_cgroups", &self.app_cgroups)
            .field("gateway_cgroup", &self.gateway_cgroup)
            .field("rewrite", &self.rewrite)
            .field("targets", &self.targets)
            .field("targets6", &self.targets6)
            .field("direct", &self.direct)
            .finish_non_exhaustive()
    }
}

impl Steering {
    /// Loads the programs, registers `listener` (the daemon's listening socket) as the liveness
    /// entry, and attaches everything. The target set starts empty: see [`Self::set_targets`].
    pub fn attach(settings: &SteerSettings, listener: &impl AsRawFd) -> Result<Self, SteerError> {
        if settings.app_cgroups.is_empty() {
            return Err(SteerError::NoAppCgroups);
        }
        let rewrite = RewriteTargets::plan(&settings.listeners, &settings.container_addresses)?;
        // First: no object / no privilege must read as "unavailable", whatever else is missing.
        let mut ebpf = load_object()?;
        let mount = cgroup2_mount()?;
        let own = own_cgroup()?;
        let gateway_cgroup = cgroup::resolve(&mount, &own);
        let app_cgroups: Vec<PathBuf> = settings.app_cgroups.iter().map(|c| cgroup::resolve(&mount, c)).collect();
        for app in &app_cgroups {
            if app.is_dir() && !selfcheck::is_cgroup2(app) {
                return Err(SteerError::NotCgroup2(app.clone()));
            }
            if gateway_cgroup.starts_with(app) {
                tracing::warn!(app = %app.display(), gateway = %gateway_cgroup.display(),
                    "the gateway runs inside an application cgroup; its own connects are skipped \
                     by cgroup id and pid only");
            }
        }
        if gateway_cgroup == mount {
            tracing::warn!(
                "the gateway runs in the cgroup2 root: cgroup/getsockopt is attached \
                            to the root and runs for every process's getsockopt()"
            );
        }
        let pin_dir = prepare_pins(settings.fail_closed, &app_cgroups)?;
        let config = steer_config(&rewrite, settings.fail_closed, cgroup_id(&gateway_cgroup)?, listener);
        write_config(&mut ebpf, config)?;
        register_listener(&mut ebpf, listener)?;
        let (mut pinned, mut owned) = (Vec::new(), Vec::new());
        attach_getsockopt(&mut ebpf, &gateway_cgroup)?;
        for app in &app_cgroups {
            let dir = open_cgroup(app)?;
            attach_sock_ops(&mut ebpf, &dir)?;
            attach_sock_addr(&mut ebpf, STEER_GETPEERNAME4_PROGRAM, &dir)?;
            attach_sock_addr(&mut ebpf, STEER_GETPEERNAME6_PROGRAM, &dir)?;
            for program in [STEER_CONNECT4_PROGRAM, STEER_CONNECT6_PROGRAM] {
                match (&pin_dir, attach_sock_addr(&mut ebpf, program, &dir)?) {
                    (Some(pin_dir), Some(link)) => pinned.push(pin(link, &pin_path(pin_dir, app, program)?)?),
                    (None, Some(link)) => owned.push(link),
                    _ => {}
                }
            }
        }
        let programs = loaded_programs(&ebpf)?;
        tracing::info!(rewrite = ?rewrite, apps = ?app_cgroups, gateway_cgroup = %gateway_cgroup.display(),
            fail_closed = settings.fail_closed, "cgroup steering attached");
        Ok(Steering {
            ebpf,
            app_cgroups,
            gateway_cgroup,
            rewrite,
            programs,
            targets: BTreeSet::new(),
            targets6: BTreeSet::new(),
            direct: BTreeMap::new(),
            _pinned: pinned,
            _links: owned,
        })
    }

    /// Replaces the set of intercepted destinations (IPv4-mapped IPv6 addresses count as IPv4).
    pub fn set_targets(&mut self, addrs: impl IntoIterator<Item = SocketAddr>) -> Result<(), SteerError> {
        let (wanted, wanted6) = targets::split(addrs);
        for count in [wanted.len(), wanted6.len()] {
            if count > STEER_TARGETS_MAX as usize {
                return Err(SteerError::TooManyTargets { count, max: STEER_TARGETS_MAX });
            }
        }
        if !wanted6.is_empty() && self.rewrite.host6.is_none() && self.rewrite.container6.is_none() {
            tracing::warn!(targets = ?wanted6, "IPv6 destinations are intercepted but the gateway has no IPv6 \
                listener (nor an IPv6 container address): they are NOT steered");
        }
        let mut map: HashMap<&mut MapData, Ipv4Endpoint, u8> =
            HashMap::try_from(self.ebpf.map_mut(STEER_TARGETS_MAP).ok_or(missing(STEER_TARGETS_MAP))?)
                .map_err(|e| map_error(STEER_TARGETS_MAP, e))?;
        for stale in self.targets.difference(&wanted) {
            map.remove(&endpoint(*stale)).map_err(|e| map_error(STEER_TARGETS_MAP, e))?;
        }
        for add in wanted.difference(&self.targets) {
            map.insert(endpoint(*add), 1u8, 0).map_err(|e| map_error(STEER_TARGETS_MAP, e))?;
        }
        let mut map6: HashMap<&mut MapData, Ipv6Endpoint, u8> =
            HashMap::try_from(self.ebpf.map_mut(STEER_TARGETS6_MAP).ok_or(missing(STEER_TARGETS6_MAP))?)
                .map_err(|e| map_error(STEER_TARGETS6_MAP, e))?;
        for stale in self.targets6.difference(&wanted6) {
            map6.remove(&endpoint6(*stale)).map_err(|e| map_error(STEER_TARGETS6_MAP, e))?;
        }
        for add in wanted6.difference(&self.targets6) {
            map6.insert(endpoint6(*add), 1u8, 0).map_err(|e| map_error(STEER_TARGETS6_MAP, e))?;
        }
        tracing::info!(targets = ?wanted, targets6 = ?wanted6, "intercepted destinations");
        self.targets = wanted;
        self.targets6 = wanted6;
        Ok(())
    }

    /// The self-check: what the kernel and the file system say about each configured cgroup, and
    /// whether each family is steered.
    pub fn check(&self) -> CgroupSteering {
        let cgroups: Vec<_> = self.app_cgroups.iter().map(|c| selfcheck::check(c, &self.programs)).collect();
        let effective = |names: &[&str]| {
            cgroups.iter().all(|c| c.programs.iter().filter(|(p, _)| names.contains(&p.as_str())).all(|(_, on)| *on))
        };
        let show = |a: Option<SocketAddr>| a.map(|a| a.to_string()).unwrap_or_default();
        let (r, sock_ops) = (&self.rewrite, STEER_SOCK_OPS_PROGRAM);
        let v4 = FamilyCheck {
            family: "ipv4".into(),
            attached: (r.host4.is_some() || r.container4.is_some())
                && effective(&[STEER_CONNECT4_PROGRAM, STEER_GETPEERNAME4_PROGRAM, sock_ops]),
            host: show(r.host4.map(SocketAddr::V4)),
            container: show(r.container4.map(SocketAddr::V4)),
            targets: self.targets.len() as u64,
        };
        let v6 = FamilyCheck {
            family: "ipv6".into(),
            attached: (r.host6.is_some() || r.container6.is_some())
                && effective(&[STEER_CONNECT6_PROGRAM, STEER_GETPEERNAME6_PROGRAM, sock_ops]),
            host: show(r.host6.map(SocketAddr::V6)),
            container: show(r.container6.map(SocketAddr::V6)),
            targets: self.targets6.len() as u64,
        };
        CgroupSteering { cgroups, families: vec![v4, v6] }
    }

    /// The intercepted IPv4 destinations.
    pub fn targets(&self) -> &BTreeSet<SocketAddrV4> {
        &self.targets
    }

    /// The intercepted IPv6 destinations.
    pub fn targets6(&self) -> &BTreeSet<SocketAddrV6> {
        &self.targets6
    }

    /// The loaded application-cgroup programs and their kernel ids.
    pub fn programs(&self) -> &[Attached] {
        &self.programs
    }

    /// The application cgroups the programs are attached to.
    pub fn app_cgroups(&self) -> &[PathBuf] {
        &self.app_cgroups
    }

    /// Reads the per-CPU counters and sums them.
    pub fn stats(&self) -> Result<SteerStats, SteerError> {
        let map: PerCpuArray<&MapData, u64> =
            PerCpuArray::try_from(self.ebpf.map(STEER_STATS_MAP).ok_or(missing(STEER_STATS_MAP))?)
                .map_err(|e| map_error(STEER_STATS_MAP, e))?;
        let mut sums = [0u64; STEER_STAT_SLOTS as usize];
        for (slot, sum) in (0u32..).zip(sums.iter_mut()) {
            let per_cpu = map.get(&slot, 0).map_err(|e| map_error(STEER_STATS_MAP, e))?;
            *sum = per_cpu.iter().fold(0u64, |a, v| a.saturating_add(*v));
        }
        let [redirected, skipped_self, fail_open, refused, established, original_dst, peername, direct, other_netns, container, redirected6] =
            sums;
        Ok(SteerStats {
            redirected,
            skipped_self,
            fail_open,
            refused,
            established,
            original_dst,
            peername,
            direct,
            other_netns,
            container,
            redirected6,
        })
    }
}

/// The programs' configuration: rewrite targets, the gateway's identity and namespace.
fn steer_config(
    rewrite: &RewriteTargets,
    fail_closed: bool,
    gateway_cgroup_id: u64,
    listener: &impl AsRawFd,
) -> SteerConfig {
    let host_netns_cookie = match targets::netns_cookie(listener) {
        Ok(c) => c,
        Err(e) => {
            // Without it every connect counts as the host's: containers cannot be told apart.
            tracing::warn!(error = %e, "SO_NETNS_COOKIE unavailable (Linux < 5.14): container connects \
                are treated as host connects");
            0
        }
    };
    let v4 = |a: Option<SocketAddrV4>| a.map(endpoint).unwrap_or_default();
    let v6 = |a: Option<SocketAddrV6>| a.map(endpoint6).unwrap_or_default();
    SteerConfig {
        listener: v4(rewrite.host4),
        gateway_tgid: std::process::id(),
        fail_closed: u32::from(fail_closed),
        gateway_cgroup_id,
        host_netns_cookie,
        container4: v4(rewrite.container4),
        listener6: v6(rewrite.host6),
        container6: v6(rewrite.container6),
    }
}

/// Kernel ids of the application-cgroup programs (loaded and attached by now).
fn loaded_programs(ebpf: &Ebpf) -> Result<Vec<Attached>, SteerError> {
    let mut out = Vec::new();
    for (name, attach_type) in [
        (STEER_CONNECT4_PROGRAM, attach_type::CONNECT4),
        (STEER_CONNECT6_PROGRAM, attach_type::CONNECT6),
        (STEER_GETPEERNAME4_PROGRAM, attach_type::GETPEERNAME4),
        (STEER_GETPEERNAME6_PROGRAM, attach_type::GETPEERNAME6),
    ] {
        let prog: &CgroupSockAddr =
            ebpf.program(name).and_then(|p| p.try_into().ok()).ok_or(DataplaneError::ProgramMissing { name })?;
        let id = prog.info().map_err(|e| program_error(name, e))?.id();
        out.push(Attached { name, attach_type, id });
    }
    let name = STEER_SOCK_OPS_PROGRAM;
    let prog: &SockOps =
        ebpf.program(name).and_then(|p| p.try_into().ok()).ok_or(DataplaneError::ProgramMissing { name })?;
    let id = prog.info().map_err(|e| program_error(name, e))?.id();
    out.push(Attached { name, attach_type: attach_type::SOCK_OPS, id });
    Ok(out)
}
