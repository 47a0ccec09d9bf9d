//! Steering mode `cgroup` (docs/ebpf.md §3.2): applications' connects to database addresses are
//! rewritten to the gateway listener by `cgroup/connect4`, and the daemon learns each connection's
//! original destination through `getsockopt(SOL_IP, SO_ORIGINAL_DST)`.
//!
//! * connect4, sock_ops and getpeername4 are attached to each configured application cgroup
//!   (and so to their descendants); getsockopt to the gateway's own cgroup.
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
//! * IPv4 only: connect6 is not hooked, IPv6 connects reach their destination directly.

mod cgroup;
mod daemon;
pub mod direct;
mod original_dst;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io;
use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use aya::maps::{Array, HashMap, MapData, PerCpuArray, SockMap};
use aya::programs::links::{FdLink, PinnedLink};
use aya::programs::{CgroupAttachMode, CgroupSockAddr, CgroupSockopt, SockOps};
use aya::Ebpf;
use gateway_common::steer::{
    Ipv4Endpoint, SteerConfig, STEER_CONFIG_MAP, STEER_CONNECT4_PROGRAM,
    STEER_GETPEERNAME4_PROGRAM, STEER_GETSOCKOPT_PROGRAM, STEER_LIVENESS_MAP,
    STEER_SOCK_OPS_PROGRAM, STEER_STATS_MAP, STEER_STAT_SLOTS, STEER_TARGETS_MAP,
    STEER_TARGETS_MAX,
};

pub use cgroup::{bpffs_mount, cgroup2_mount, cgroup_id, own_cgroup};
pub use daemon::{start, SteeringHandle};
pub use original_dst::{is_intercepted, original_destination, steered_backend};

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
    /// The listener is IPv6.
    #[error("listener {0} is not IPv4; cgroup steering rewrites IPv4 connects only")]
    ListenerNotIpv4(SocketAddr),
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
    /// Rewrite target: the gateway listener (a wildcard address is replaced by 127.0.0.1).
    pub listener: SocketAddr,
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
}

/// The attached steering programs. Dropping it detaches them (except pinned `fail_closed` links).
pub struct Steering {
    /// Owns programs, links and maps; must live as long as steering should (docs/ebpf.md §8).
    ebpf: Ebpf,
    app_cgroups: Vec<PathBuf>,
    gateway_cgroup: PathBuf,
    targets: BTreeSet<SocketAddrV4>,
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
            .field("targets", &self.targets)
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
        let target = rewrite_target(settings.listener)?;
        // First: no object / no privilege must read as "unavailable", whatever else is missing.
        let mut ebpf = load_object()?;
        let mount = cgroup2_mount()?;
        let own = own_cgroup()?;
        let gateway_cgroup = cgroup::resolve(&mount, &own);
        let app_cgroups: Vec<PathBuf> = settings
            .app_cgroups
            .iter()
            .map(|c| cgroup::resolve(&mount, c))
            .collect();
        for app in &app_cgroups {
            if gateway_cgroup.starts_with(app) {
                tracing::warn!(app = %app.display(), gateway = %gateway_cgroup.display(),
                    "the gateway runs inside an application cgroup; its own connects are skipped \
                     by cgroup id and pid only");
            }
        }
        if gateway_cgroup == mount {
            tracing::warn!("the gateway runs in the cgroup2 root: cgroup/getsockopt is attached \
                            to the root and runs for every process's getsockopt()");
        }
        let pin_dir = prepare_pins(settings.fail_closed, &app_cgroups)?;
        let config = SteerConfig {
            listener: endpoint(target),
            gateway_tgid: std::process::id(),
            fail_closed: u32::from(settings.fail_closed),
            gateway_cgroup_id: cgroup_id(&gateway_cgroup)?,
        };
        write_config(&mut ebpf, config)?;
        register_listener(&mut ebpf, listener)?;
        let (mut pinned, mut owned) = (Vec::new(), Vec::new());
        attach_getsockopt(&mut ebpf, &gateway_cgroup)?;
        for app in &app_cgroups {
            let dir = open_cgroup(app)?;
            attach_sock_ops(&mut ebpf, &dir)?;
            attach_sock_addr(&mut ebpf, STEER_GETPEERNAME4_PROGRAM, &dir)?;
            let link = attach_sock_addr(&mut ebpf, STEER_CONNECT4_PROGRAM, &dir)?;
            match (&pin_dir, link) {
                (Some(pin_dir), Some(link)) => {
                    pinned.push(pin(link, &pin_path(pin_dir, app)?)?);
                }
                (None, Some(link)) => owned.push(link),
                _ => {}
            }
        }
        tracing::info!(listener = %target, apps = ?app_cgroups, gateway_cgroup = %gateway_cgroup.display(),
            fail_closed = settings.fail_closed, "cgroup steering attached");
        Ok(Steering {
            ebpf,
            app_cgroups,
            gateway_cgroup,
            targets: BTreeSet::new(),
            direct: BTreeMap::new(),
            _pinned: pinned,
            _links: owned,
        })
    }

    /// Replaces the set of intercepted destinations. IPv6 addresses are skipped (not steered).
    pub fn set_targets(&mut self, addrs: impl IntoIterator<Item = SocketAddr>) -> Result<(), SteerError> {
        let wanted: BTreeSet<SocketAddrV4> = addrs
            .into_iter()
            .filter_map(|a| match a {
                SocketAddr::V4(v4) => Some(v4),
                SocketAddr::V6(v6) => {
                    tracing::warn!(addr = %v6, "IPv6 destinations are not steered");
                    None
                }
            })
            .collect();
        if wanted.len() > STEER_TARGETS_MAX as usize {
            return Err(SteerError::TooManyTargets { count: wanted.len(), max: STEER_TARGETS_MAX });
        }
        let mut map: HashMap<&mut MapData, Ipv4Endpoint, u8> = HashMap::try_from(
            self.ebpf.map_mut(STEER_TARGETS_MAP).ok_or(missing(STEER_TARGETS_MAP))?,
        )
        .map_err(|e| map_error(STEER_TARGETS_MAP, e))?;
        for stale in self.targets.difference(&wanted) {
            map.remove(&endpoint(*stale)).map_err(|e| map_error(STEER_TARGETS_MAP, e))?;
        }
        for add in wanted.difference(&self.targets) {
            map.insert(endpoint(*add), 1u8, 0).map_err(|e| map_error(STEER_TARGETS_MAP, e))?;
        }
        tracing::info!(targets = ?wanted, "intercepted destinations");
        self.targets = wanted;
        Ok(())
    }

    /// The intercepted destinations.
    pub fn targets(&self) -> &BTreeSet<SocketAddrV4> {
        &self.targets
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
        let [redirected, skipped_self, fail_open, refused, established, original_dst, peername, direct] = sums;
        Ok(SteerStats { redirected, skipped_self, fail_open, refused, established, original_dst, peername, direct })
    }
}

/// Where connects are rewritten to: the listener, with a wildcard address made loopback.
fn rewrite_target(listener: SocketAddr) -> Result<SocketAddrV4, SteerError> {
    match listener {
        SocketAddr::V4(v4) if v4.ip().is_unspecified() => {
            Ok(SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, v4.port()))
        }
        SocketAddr::V4(v4) => Ok(v4),
        SocketAddr::V6(_) => Err(SteerError::ListenerNotIpv4(listener)),
    }
}

/// The map key of an address (network-order address, host-order port).
fn endpoint(addr: SocketAddrV4) -> Ipv4Endpoint {
    Ipv4Endpoint::new(u32::from_ne_bytes(addr.ip().octets()), addr.port())
}

/// Removes the connect4 pins an earlier run left for these application cgroups (unlinking a pin
/// releases that link, which detaches it); returns the pin directory when `fail_closed` needs
/// one. Pins of other cgroups (another gateway on this host) are left alone.
fn prepare_pins(fail_closed: bool, app_cgroups: &[PathBuf]) -> Result<Option<PathBuf>, SteerError> {
    let Some(bpffs) = cgroup::bpffs_mount()? else {
        return if fail_closed { Err(SteerError::NoBpffs) } else { Ok(None) };
    };
    let dir = bpffs.join(PIN_DIR);
    for app in app_cgroups {
        let pin = pin_path(&dir, app)?;
        if pin.exists() {
            std::fs::remove_file(&pin).map_err(|e| SteerError::Pin { path: pin.clone(), message: e.to_string() })?;
            tracing::info!(pin = %pin.display(), "removed the pinned steering link of an earlier run");
        }
    }
    if !fail_closed {
        return Ok(None);
    }
    std::fs::create_dir_all(&dir).map_err(|e| SteerError::Pin { path: dir.clone(), message: e.to_string() })?;
    Ok(Some(dir))
}

/// `<bpffs>/gateway-steer/connect4-<cgroup id>`.
fn pin_path(dir: &Path, app: &Path) -> Result<PathBuf, SteerError> {
    Ok(dir.join(format!("connect4-{}", cgroup_id(app)?)))
}

fn pin(link: FdLink, path: &Path) -> Result<PinnedLink, SteerError> {
    link.pin(path).map_err(|e| {
        let cause = std::error::Error::source(&e).map(|c| format!(": {c}")).unwrap_or_default();
        SteerError::Pin { path: path.to_path_buf(), message: format!("{e}{cause}") }
    })
}

fn open_cgroup(dir: &Path) -> Result<File, SteerError> {
    File::open(dir).map_err(|source| SteerError::Cgroup { path: dir.to_path_buf(), source })
}

fn write_config(ebpf: &mut Ebpf, config: SteerConfig) -> Result<(), SteerError> {
    let mut map: Array<&mut MapData, SteerConfig> =
        Array::try_from(ebpf.map_mut(STEER_CONFIG_MAP).ok_or(missing(STEER_CONFIG_MAP))?)
            .map_err(|e| map_error(STEER_CONFIG_MAP, e))?;
    map.set(0, config, 0).map_err(|e| map_error(STEER_CONFIG_MAP, e))?;
    Ok(())
}

fn register_listener(ebpf: &mut Ebpf, listener: &impl AsRawFd) -> Result<(), SteerError> {
    let mut map: SockMap<&mut MapData> =
        SockMap::try_from(ebpf.map_mut(STEER_LIVENESS_MAP).ok_or(missing(STEER_LIVENESS_MAP))?)
            .map_err(|e| map_error(STEER_LIVENESS_MAP, e))?;
    map.set(0, listener, 0).map_err(|e| map_error(STEER_LIVENESS_MAP, e))?;
    Ok(())
}

fn attach_getsockopt(ebpf: &mut Ebpf, cgroup: &Path) -> Result<(), SteerError> {
    let name = STEER_GETSOCKOPT_PROGRAM;
    let dir = open_cgroup(cgroup)?;
    let prog: &mut CgroupSockopt = ebpf
        .program_mut(name)
        .and_then(|p| p.try_into().ok())
        .ok_or(DataplaneError::ProgramMissing { name })?;
    prog.load().map_err(|e| program_error(name, e))?;
    prog.attach(&dir, CgroupAttachMode::Single).map_err(|e| program_error(name, e))?;
    Ok(())
}

fn attach_sock_ops(ebpf: &mut Ebpf, dir: &File) -> Result<(), SteerError> {
    let name = STEER_SOCK_OPS_PROGRAM;
    let prog: &mut SockOps =
        ebpf.program_mut(name).and_then(|p| p.try_into().ok()).ok_or(DataplaneError::ProgramMissing { name })?;
    if prog.fd().is_err() {
        prog.load().map_err(|e| program_error(name, e))?;
    }
    prog.attach(dir, CgroupAttachMode::Single).map_err(|e| program_error(name, e))?;
    Ok(())
}

/// Attaches a `cgroup_sock_addr` program; returns the link as an owned [`FdLink`] for connect4
/// (so it can be pinned), `None` for the others (kept by the program).
fn attach_sock_addr(ebpf: &mut Ebpf, name: &'static str, dir: &File) -> Result<Option<FdLink>, SteerError> {
    let prog: &mut CgroupSockAddr =
        ebpf.program_mut(name).and_then(|p| p.try_into().ok()).ok_or(DataplaneError::ProgramMissing { name })?;
    if prog.fd().is_err() {
        prog.load().map_err(|e| program_error(name, e))?;
    }
    let id = prog.attach(dir, CgroupAttachMode::Single).map_err(|e| program_error(name, e))?;
    if name != STEER_CONNECT4_PROGRAM {
        return Ok(None);
    }
    let link = prog.take_link(id).map_err(|e| program_error(name, e))?;
    // Owned links detach when dropped; the caller pins it or keeps it alive.
    FdLink::try_from(link)
        .map(Some)
        .map_err(|e| SteerError::Pin { path: PathBuf::from(name), message: e.to_string() })
}

fn missing(name: &'static str) -> DataplaneError {
    DataplaneError::MapMissing { name }
}

fn map_error(name: &'static str, source: aya::maps::MapError) -> SteerError {
    DataplaneError::Map { name, source: Box::new(source) }.classify().into()
}

fn program_error(name: &'static str, source: aya::programs::ProgramError) -> SteerError {
    DataplaneError::Program { name, source: Box::new(source) }.classify().into()
}
