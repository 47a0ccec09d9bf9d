//! Steering (docs/ebpf.md §3.2): map names, keys and values shared by the cgroup programs in
//! `gateway-ebpf/src/steer.rs` and the loader in `gateway/src/dataplane/steer/`.
//!
//! Byte-order convention for every key and value here: IPv4 addresses are kept exactly as the
//! kernel hands them to BPF programs (network byte order in a `u32`, i.e.
//! `u32::from_ne_bytes(ip.octets())` in userspace); ports are in **host** byte order. Each program
//! converts its own context's port representation (they differ per program type, §8) into this one.

/// `cgroup/connect4`: rewrites connects to intercepted addresses to the gateway listener.
pub const STEER_CONNECT4_PROGRAM: &str = "steer_connect4";
/// `sock_ops`: at `ACTIVE_ESTABLISHED` copies the original destination to a key by client address.
pub const STEER_SOCK_OPS_PROGRAM: &str = "steer_sock_ops";
/// `cgroup/getsockopt` (gateway's cgroup): answers `getsockopt(SOL_IP, SO_ORIGINAL_DST)`.
pub const STEER_GETSOCKOPT_PROGRAM: &str = "steer_getsockopt";
/// `cgroup/getpeername4`: shows the application the address it dialled.
pub const STEER_GETPEERNAME4_PROGRAM: &str = "steer_getpeername4";

/// `Array<SteerConfig>` with one entry (index 0).
pub const STEER_CONFIG_MAP: &str = "STEER_CONFIG";
/// `HashMap<Ipv4Endpoint, u8>`: intercepted destinations → 1.
pub const STEER_TARGETS_MAP: &str = "STEER_TARGETS";
/// `LruHashMap<u64, Ipv4Endpoint>`: socket cookie of a steered application socket → its
/// original destination. Written by connect4, read by getpeername4, removed at close.
pub const STEER_ORIG_BY_COOKIE_MAP: &str = "STEER_ORIG_BY_COOKIE";
/// `LruHashMap<Ipv4Endpoint, Ipv4Endpoint>`: the application socket's local address (= the peer
/// the gateway sees on its accepted socket) → original destination. Written by sock_ops at
/// `ACTIVE_ESTABLISHED`, read by getsockopt, removed at close.
pub const STEER_ORIG_BY_CLIENT_MAP: &str = "STEER_ORIG_BY_CLIENT";
/// `SockMap` with one slot: the gateway's listening socket. The kernel removes a socket from a
/// sockmap when it is closed, so an empty slot means "the daemon is gone" (also after SIGKILL).
pub const STEER_LIVENESS_MAP: &str = "STEER_LIVENESS";
/// `HashMap<Ipv4Endpoint, Ipv4Endpoint>`: direct route (`[dataplane] direct_route`): an
/// intercepted destination → the server connect4 sends it to instead of the gateway listener.
/// Written by the daemon (`gateway/src/dataplane/steer/direct.rs`); entries are removed when the
/// condition that allowed them stops holding.
pub const STEER_DIRECT_MAP: &str = "STEER_DIRECT";
/// `LruHashMap<u64, Ipv4Endpoint>`: socket cookie of a direct-routed application socket → the
/// address it dialled (for getpeername4). Written by connect4, removed at close.
pub const STEER_DIRECT_BY_COOKIE_MAP: &str = "STEER_DIRECT_BY_COOKIE";
/// `PerCpuArray<u64>` with [`STEER_STAT_SLOTS`] counters (`STEER_STAT_*`).
pub const STEER_STATS_MAP: &str = "STEER_STATS";

/// Capacity of [`STEER_TARGETS_MAP`].
pub const STEER_TARGETS_MAX: u32 = 4096;
/// Capacity of [`STEER_DIRECT_MAP`].
pub const STEER_DIRECT_MAX: u32 = 4096;
/// Capacity of the two original-destination maps (LRU: the oldest entries go first).
pub const STEER_ORIG_MAX: u32 = 65536;

/// Connects rewritten to the gateway listener.
pub const STEER_STAT_REDIRECTED: u32 = 0;
/// Connects to an intercepted address left alone because the caller is the gateway itself.
pub const STEER_STAT_SKIPPED_SELF: u32 = 1;
/// Connects to an intercepted address left alone because the daemon is gone (fail-open).
pub const STEER_STAT_FAIL_OPEN: u32 = 2;
/// Connects refused because the daemon is gone and `fail_closed` is set.
pub const STEER_STAT_REFUSED: u32 = 3;
/// Steered sockets that reached `ACTIVE_ESTABLISHED` (entry copied to the client key).
pub const STEER_STAT_ESTABLISHED: u32 = 4;
/// `SO_ORIGINAL_DST` answers given by the getsockopt program.
pub const STEER_STAT_ORIGINAL_DST: u32 = 5;
/// `getpeername()` results rewritten to the original destination.
pub const STEER_STAT_PEERNAME: u32 = 6;
/// Connects rewritten straight to their server (direct route), bypassing the gateway.
pub const STEER_STAT_DIRECT: u32 = 7;
/// Number of counters in [`STEER_STATS_MAP`].
pub const STEER_STAT_SLOTS: u32 = 8;

/// `SOL_IP` / `IPPROTO_IP`.
pub const SOL_IP: i32 = 0;
/// `SO_ORIGINAL_DST` (linux/netfilter_ipv4.h).
pub const SO_ORIGINAL_DST: i32 = 80;

/// An IPv4 address and TCP port (see the module docs for byte orders).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ipv4Endpoint {
    /// IPv4 address, network byte order (as in `bpf_sock_addr.user_ip4`).
    pub addr: u32,
    /// TCP port, host byte order.
    pub port: u16,
    /// Always zero (keeps hash keys free of uninitialised padding).
    pub pad: u16,
}

impl Ipv4Endpoint {
    /// An endpoint from an address in network byte order and a port in host byte order.
    pub const fn new(addr: u32, port: u16) -> Self {
        Self { addr, port, pad: 0 }
    }
}

/// The steering configuration the programs read (slot 0 of [`STEER_CONFIG_MAP`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SteerConfig {
    /// Where steered connects go: the gateway listener (never a wildcard address).
    pub listener: Ipv4Endpoint,
    /// The gateway's process id (tgid): its own connects are never rewritten.
    pub gateway_tgid: u32,
    /// 1: refuse connects to intercepted addresses while the daemon is gone; 0: let them through.
    pub fail_closed: u32,
    /// The gateway's cgroup v2 id: connects from it are never rewritten.
    pub gateway_cgroup_id: u64,
}

// SAFETY: both types are `#[repr(C)]`, made of integers with explicit padding fields (no implicit
// padding, every bit pattern valid), so they can be copied to and from BPF map memory.
#[cfg(feature = "user")]
unsafe impl aya::Pod for Ipv4Endpoint {}
#[cfg(feature = "user")]
unsafe impl aya::Pod for SteerConfig {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_kernel_side() {
        assert_eq!(core::mem::size_of::<Ipv4Endpoint>(), 8);
        assert_eq!(core::mem::size_of::<SteerConfig>(), 24);
    }
}
