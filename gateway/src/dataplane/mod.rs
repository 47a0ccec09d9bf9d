//! eBPF data plane: loads the object built from `gateway-ebpf` and attaches its programs.
//!
//! The object is embedded at build time by `gateway/build.rs` (aya-build). A build with
//! `AYA_BUILD_SKIP=1` embeds an empty placeholder; every entry point then fails with
//! [`DataplaneError::ObjectMissing`], so the daemon can run as a plain userspace proxy.
//! This is the only module of the gateway allowed to use `unsafe`.

mod counter;
pub mod modes;
pub mod netns;
pub mod ring;
pub mod splice;
pub(crate) mod status;
pub mod steer;
pub(crate) mod steer_status;

use std::{error::Error as StdError, io};

pub use counter::{PortCounter, PortCounterSnapshot};
pub use gateway_common::TrafficCounters;

/// The eBPF object (`gateway` = the `[[bin]]` name of gateway-ebpf), 8-byte aligned for aya.
static EBPF_OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/gateway"));

/// Linux capability numbers (include/uapi/linux/capability.h).
const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_BPF: u32 = 39;

/// Errors of the eBPF data plane.
#[derive(Debug, thiserror::Error)]
pub enum DataplaneError {
    /// The binary was built without the eBPF object (`AYA_BUILD_SKIP`).
    #[error("this gateway was built without its eBPF object (AYA_BUILD_SKIP was set)")]
    ObjectMissing,
    /// The process may not load BPF programs or change qdiscs.
    #[error("eBPF not permitted: {0}")]
    NotPermitted(String),
    /// The object could not be parsed or its maps could not be created.
    #[error("loading the eBPF object")]
    Load(#[source] Box<aya::EbpfError>),
    /// A program is missing from the object or has an unexpected type.
    #[error("program `{name}` missing from the eBPF object or of the wrong type")]
    ProgramMissing {
        /// Program name.
        name: &'static str,
    },
    /// A map is missing from the object.
    #[error("map `{name}` missing from the eBPF object")]
    MapMissing {
        /// Map name.
        name: &'static str,
    },
    /// A map has an unexpected type or a map operation failed.
    #[error("map `{name}`")]
    Map {
        /// Map name.
        name: &'static str,
        /// What went wrong.
        #[source]
        source: Box<aya::maps::MapError>,
    },
    /// Loading (verifier) or attaching a program failed.
    #[error("program `{name}`")]
    Program {
        /// Program name.
        name: &'static str,
        /// What went wrong.
        #[source]
        source: Box<aya::programs::ProgramError>,
    },
    /// Setting up traffic control (clsact qdisc) on an interface failed.
    #[error("traffic control on interface `{iface}`")]
    Tc {
        /// Interface name.
        iface: String,
        /// What went wrong.
        #[source]
        source: Box<aya::programs::tc::TcError>,
    },
    /// Entering a network namespace failed.
    #[error("entering network namespace {path}")]
    Netns {
        /// Namespace file.
        path: String,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// The `[dataplane]` settings cannot be used (router / sk_lookup modes).
    #[error("data-plane configuration: {0}")]
    Config(String),
    /// Adding or removing a `local` route for a VIP range failed (rtnetlink).
    #[error("{what} the local route for {cidr}")]
    Route {
        /// `adding` / `removing`.
        what: &'static str,
        /// The VIP range.
        cidr: String,
        /// The kernel's answer.
        #[source]
        source: io::Error,
    },
    /// The metrics endpoint could not be bound or reached.
    #[error("metrics endpoint {addr}")]
    Metrics {
        /// Endpoint address.
        addr: std::net::SocketAddr,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// A status page was not understood.
    #[error("data-plane status: {0}")]
    Status(String),
    /// A socket operation of the kernel splice failed (cookie, TCP progress, forwarding).
    #[error("splice: {op}")]
    Socket {
        /// What was being done.
        op: &'static str,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// A lock was poisoned by a panicking thread.
    #[error("{0}: lock poisoned")]
    Poisoned(&'static str),
    /// More ports than the eBPF config map holds.
    #[error("{count} ports configured, the eBPF map holds at most {max}")]
    TooManyPorts {
        /// Ports requested.
        count: usize,
        /// Map capacity.
        max: u32,
    },
}

impl DataplaneError {
    /// True when eBPF is simply not available here (no object, no privilege): the caller should
    /// fall back to userspace-only operation (or a test should skip), not treat it as a bug.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::ObjectMissing | Self::NotPermitted(_))
    }

    /// Turns an error whose cause chain holds `EPERM`/`EACCES` into [`Self::NotPermitted`].
    fn classify(self) -> Self {
        if self.is_unavailable() {
            return self;
        }
        let mut cause: Option<&(dyn StdError + 'static)> = self.source();
        while let Some(err) = cause {
            if let Some(errno @ (libc::EPERM | libc::EACCES)) = errno_of(err) {
                let os = io::Error::from_raw_os_error(errno);
                return Self::NotPermitted(format!("{self}: {err}: {os}"));
            }
            cause = err.source();
        }
        self
    }
}

/// The OS error carried by one link of an error chain. aya's `#[error(transparent)]` wrappers
/// (`TcError::IoError`, `NetlinkError`) hide their `io::Error` from `source()`, so they are
/// looked into explicitly.
fn errno_of(err: &(dyn StdError + 'static)) -> Option<i32> {
    use aya::{programs::tc::TcError, sys::NetlinkError};
    if let Some(e) = err.downcast_ref::<io::Error>() {
        return e.raw_os_error();
    }
    if let Some(e) = err.downcast_ref::<NetlinkError>() {
        return e.raw_os_error();
    }
    // thiserror hands out a `#[source] Box<T>` field as the box itself.
    let tc = err.downcast_ref::<TcError>().or_else(|| err.downcast_ref::<Box<TcError>>().map(|b| &**b))?;
    match tc {
        TcError::IoError(e) => e.raw_os_error(),
        TcError::NetlinkError(e) => e.raw_os_error(),
        _ => None,
    }
}

/// True when this binary carries a (non-empty) eBPF object.
pub fn object_available() -> bool {
    !EBPF_OBJECT.is_empty()
}

/// Checks that the process may load BPF programs and attach them to interfaces:
/// `CAP_SYS_ADMIN`, or `CAP_BPF` together with `CAP_NET_ADMIN`, in the effective set.
pub fn check_permitted() -> Result<(), DataplaneError> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| DataplaneError::NotPermitted(format!("cannot read /proc/self/status: {e}")))?;
    let cap_eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .ok_or_else(|| DataplaneError::NotPermitted("no CapEff in /proc/self/status".into()))?;
    let has = |cap: u32| cap_eff & (1u64 << cap) != 0;
    if has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_NET_ADMIN)) {
        Ok(())
    } else {
        Err(DataplaneError::NotPermitted(format!(
            "needs root (CAP_SYS_ADMIN, or CAP_BPF + CAP_NET_ADMIN); effective capabilities \
             are {cap_eff:#x}"
        )))
    }
}

/// Loads the embedded object: checks that it exists and that BPF is permitted, raises
/// `RLIMIT_MEMLOCK` (needed on kernels that do not charge BPF memory to the memcg), then
/// creates the maps. Programs are loaded by their owners.
fn load_object() -> Result<aya::Ebpf, DataplaneError> {
    if !object_available() {
        return Err(DataplaneError::ObjectMissing);
    }
    check_permitted()?;
    raise_memlock_limit();
    aya::Ebpf::load(EBPF_OBJECT).map_err(|e| DataplaneError::Load(Box::new(e)).classify())
}

fn raise_memlock_limit() {
    let limit = libc::rlimit { rlim_cur: libc::RLIM_INFINITY, rlim_max: libc::RLIM_INFINITY };
    // SAFETY: setrlimit reads a valid, fully initialised rlimit struct that outlives the call.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &limit) };
    if rc != 0 {
        tracing::debug!(error = %io::Error::last_os_error(), "could not raise RLIMIT_MEMLOCK");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_errors_are_classified() {
        assert!(DataplaneError::ObjectMissing.is_unavailable());
        assert!(DataplaneError::NotPermitted("x".into()).is_unavailable());
        let tc = DataplaneError::Tc {
            iface: "veth0".into(),
            source: Box::new(aya::programs::tc::TcError::IoError(io::Error::from_raw_os_error(libc::EPERM))),
        };
        assert!(tc.classify().is_unavailable());
        let tc = DataplaneError::Tc {
            iface: "veth0".into(),
            source: Box::new(aya::programs::tc::TcError::IoError(io::Error::from_raw_os_error(libc::ENODEV))),
        };
        assert!(!tc.classify().is_unavailable());
    }
}
