//! Steering (docs/dataplane.md §2): map names, keys and values shared by the cgroup programs in
//! `gateway-ebpf/src/steer.rs` and the loader in `gateway/src/dataplane/steer/`.
//!
//! Byte-order convention for every key and value here: IPv4 addresses are kept exactly as the
//! kernel hands them to BPF programs (network byte order in a `u32`, i.e.
//! `u32::from_ne_bytes(ip.octets())` in userspace); ports are in **host** byte order. Each program
//! converts its own context's port representation (they differ per program type, docs/dataplane.md §5) into this one.
//! IPv6 addresses are four such `u32`s (`user_ip6`, `local_ip6`, …). An IPv4-mapped IPv6 address
//! (`::ffff:a.b.c.d`) is always handled as IPv4: its keys live in the IPv4 maps.

/// `cgroup/connect4`: rewrites connects to intercepted addresses to the gateway listener.
pub const STEER_CONNECT4_PROGRAM: &str = "steer_connect4";
/// `sock_ops`: at `ACTIVE_ESTABLISHED` copies the original destination to a key by client address.
pub const STEER_SOCK_OPS_PROGRAM: &str = "steer_sock_ops";
/// `cgroup/getsockopt` (gateway's cgroup): answers `getsockopt(SOL_IP, SO_ORIGINAL_DST)`.
pub const STEER_GETSOCKOPT_PROGRAM: &str = "steer_getsockopt";
/// `cgroup/getpeername4`: shows the application the address it dialled.
pub const STEER_GETPEERNAME4_PROGRAM: &str = "steer_getpeername4";

/// `cgroup/connect6`: the same as connect4 for IPv6 sockets (IPv4-mapped destinations as IPv4).
pub const STEER_CONNECT6_PROGRAM: &str = "steer_connect6";
/// `cgroup/getpeername6`: shows an IPv6 application the address it dialled.
pub const STEER_GETPEERNAME6_PROGRAM: &str = "steer_getpeername6";

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
/// `HashMap<Ipv6Endpoint, u8>`: intercepted IPv6 destinations → 1.
pub const STEER_TARGETS6_MAP: &str = "STEER_TARGETS6";
/// `LruHashMap<u64, Ipv6Endpoint>`: [`STEER_ORIG_BY_COOKIE_MAP`] for IPv6 destinations.
pub const STEER_ORIG6_BY_COOKIE_MAP: &str = "STEER_ORIG6_BY_COOKIE";
/// `LruHashMap<Ipv6Endpoint, Ipv6Endpoint>`: [`STEER_ORIG_BY_CLIENT_MAP`] for IPv6 connections.
pub const STEER_ORIG6_BY_CLIENT_MAP: &str = "STEER_ORIG6_BY_CLIENT";
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
/// Connects to an intercepted address from another network namespace (a container) left alone
/// because no container address of that family is configured (`[dataplane] container_addresses`).
pub const STEER_STAT_OTHER_NETNS: u32 = 8;
/// Connects from another network namespace rewritten to a container address (subset of
/// [`STEER_STAT_REDIRECTED`]).
pub const STEER_STAT_CONTAINER: u32 = 9;
/// IPv6 connects rewritten to the gateway (subset of [`STEER_STAT_REDIRECTED`]; IPv4-mapped
/// destinations count as IPv4).
pub const STEER_STAT_REDIRECTED6: u32 = 10;
/// Number of counters in [`STEER_STATS_MAP`].
pub const STEER_STAT_SLOTS: u32 = 11;

/// `SOL_IP` / `IPPROTO_IP`.
pub const SOL_IP: i32 = 0;
/// `SO_ORIGINAL_DST` (linux/netfilter_ipv4.h).
pub const SO_ORIGINAL_DST: i32 = 80;
/// `SOL_IPV6` / `IPPROTO_IPV6`.
pub const SOL_IPV6: i32 = 41;
/// `IP6T_SO_ORIGINAL_DST` (linux/netfilter_ipv6/ip6_tables.h), read at level [`SOL_IPV6`].
pub const IP6T_SO_ORIGINAL_DST: i32 = 80;

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

/// An IPv6 address and TCP port (see the module docs for byte orders).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ipv6Endpoint {
    /// IPv6 address as four `u32`s in network byte order (as in `bpf_sock_addr.user_ip6`).
    pub addr: [u32; 4],
    /// TCP port, host byte order.
    pub port: u16,
    /// Always zero (keeps hash keys free of uninitialised padding).
    pub pad: u16,
}

impl Ipv6Endpoint {
    /// An endpoint from an address as the kernel hands it over and a port in host byte order.
    pub const fn new(addr: [u32; 4], port: u16) -> Self {
        Self { addr, port, pad: 0 }
    }

    /// True for a configured endpoint (port 0 means "none").
    pub const fn is_set(&self) -> bool {
        self.port != 0
    }
}

/// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), network byte order.
#[inline(always)]
pub fn mapped_ipv4(addr: &[u32; 4]) -> Option<u32> {
    // 0x0000ffff in network byte order, read as a native u32.
    let ffff = u32::from_ne_bytes([0, 0, 0xff, 0xff]);
    (addr[0] == 0 && addr[1] == 0 && addr[2] == ffff).then_some(addr[3])
}

/// The IPv4-mapped IPv6 form of an IPv4 address in network byte order.
#[inline(always)]
pub fn ipv4_mapped(addr: u32) -> [u32; 4] {
    [0, 0, u32::from_ne_bytes([0, 0, 0xff, 0xff]), addr]
}

/// The steering configuration the programs read (slot 0 of [`STEER_CONFIG_MAP`]).
///
/// Connects from the gateway's own network namespace ([`Self::host_netns_cookie`]) go to
/// `listener` / `listener6`; connects from any other namespace (containers) go to `container4` /
/// `container6`, host addresses every container can reach. An unset (port 0) target leaves that
/// kind of connect alone.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SteerConfig {
    /// Where steered IPv4 connects of the host namespace go: the gateway listener (never a
    /// wildcard address).
    pub listener: Ipv4Endpoint,
    /// The gateway's process id (tgid): its own connects are never rewritten.
    pub gateway_tgid: u32,
    /// 1: refuse connects to intercepted addresses while the daemon is gone; 0: let them through.
    pub fail_closed: u32,
    /// The gateway's cgroup v2 id: connects from it are never rewritten.
    pub gateway_cgroup_id: u64,
    /// Network-namespace cookie of the gateway's namespace (`SO_NETNS_COOKIE`); 0: unknown, every
    /// connect is treated as the host's.
    pub host_netns_cookie: u64,
    /// Where steered IPv4 connects from other namespaces go.
    pub container4: Ipv4Endpoint,
    /// Where steered IPv6 connects of the host namespace go.
    pub listener6: Ipv6Endpoint,
    /// Where steered IPv6 connects from other namespaces go.
    pub container6: Ipv6Endpoint,
}

// SAFETY: both types are `#[repr(C)]`, made of integers with explicit padding fields (no implicit
// padding, every bit pattern valid), so they can be copied to and from BPF map memory.
#[cfg(feature = "user")]
unsafe impl aya::Pod for Ipv4Endpoint {}
#[cfg(feature = "user")]
unsafe impl aya::Pod for Ipv6Endpoint {}
#[cfg(feature = "user")]
unsafe impl aya::Pod for SteerConfig {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_kernel_side() {
        assert_eq!(core::mem::size_of::<Ipv4Endpoint>(), 8);
        assert_eq!(core::mem::size_of::<Ipv6Endpoint>(), 20);
        assert_eq!(core::mem::size_of::<SteerConfig>(), 80);
    }

    #[test]
    fn mapped_addresses_round_trip() {
        let v4 = u32::from_ne_bytes([10, 77, 0, 1]);
        let mapped = ipv4_mapped(v4);
        assert_eq!(mapped_ipv4(&mapped), Some(v4));
        let bytes: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1];
        let from_std: [u32; 4] = core::array::from_fn(|i| {
            u32::from_ne_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]])
        });
        assert_eq!(from_std, mapped);
        assert_eq!(mapped_ipv4(&[0, 0, 0, u32::from_ne_bytes([0, 0, 0, 1])]), None);
    }
}
