//! Shared names and types of the VIP steering modes (docs/dataplane.md §2): the router-mode TC
//! classifier (`bpf_sk_assign`) and the netns-wide `sk_lookup` program.
//!
//! Both programs read the same two maps: [`VIP_MAP`] (which destinations are steered) and
//! [`LISTENER_MAP`] (the gateway listener in slot [`LISTENER_SLOT`]); both count into
//! [`ROUTER_STATS_MAP`].

/// Name of the TC classifier (router mode, clsact ingress of `router_interface`).
pub const ROUTER_PROGRAM: &str = "router_assign";

/// Name of the `sk_lookup` program (sk_lookup mode, attached to the network namespace).
pub const SK_LOOKUP_PROGRAM: &str = "vip_lookup";

/// Name of the steered-destination map: `LpmTrie<VipKey, u32>`. Prefix length = 16 (the port,
/// matched exactly) + the CIDR's prefix length. The value is unused (1).
pub const VIP_MAP: &str = "VIP_CIDRS";

/// Capacity of [`VIP_MAP`] (CIDRs × ports).
pub const VIP_MAP_MAX: u32 = 1024;

/// Name of the listener map: `SockMap` with [`LISTENER_MAP_MAX`] slots.
pub const LISTENER_MAP: &str = "LISTENER";

/// Slot of [`LISTENER_MAP`] holding the gateway's listening socket.
pub const LISTENER_SLOT: u32 = 0;

/// Capacity of [`LISTENER_MAP`].
pub const LISTENER_MAP_MAX: u32 = 1;

/// Name of the statistics map: `PerCpuArray<u64>` indexed by the `STAT_*` slots.
pub const ROUTER_STATS_MAP: &str = "ROUTER_STATS";

/// Router mode: TCP packets whose destination matched [`VIP_MAP`].
pub const STAT_VIP_PACKETS: u32 = 0;
/// Router mode: packets assigned to an existing (non-listening) socket found by
/// `bpf_skc_lookup_tcp` (established flows, request sockets).
pub const STAT_ASSIGN_ESTABLISHED: u32 = 1;
/// Router mode: SYNs assigned to the gateway listener.
pub const STAT_ASSIGN_LISTENER: u32 = 2;
/// Router mode: `bpf_sk_assign` failed; the packet continued unchanged.
pub const STAT_ASSIGN_FAILED: u32 = 3;
/// Both modes: a steered destination but no listener in [`LISTENER_MAP`] (daemon not ready).
pub const STAT_NO_LISTENER: u32 = 4;
/// sk_lookup mode: lookups redirected to the gateway listener.
pub const STAT_LOOKUP_REDIRECTED: u32 = 5;
/// sk_lookup mode: the redirect failed; the normal lookup went on.
pub const STAT_LOOKUP_FAILED: u32 = 6;
/// Number of slots in [`ROUTER_STATS_MAP`].
pub const STAT_SLOTS: u32 = 7;

/// Names of the `STAT_*` slots, in slot order (metric labels).
pub const STAT_NAMES: [&str; STAT_SLOTS as usize] = [
    "vip_packets",
    "assign_established",
    "assign_listener",
    "assign_failed",
    "no_listener",
    "lookup_redirected",
    "lookup_failed",
];

/// Data of a [`VIP_MAP`] key: destination port then IPv4 address, both in network byte order,
/// so that an LPM prefix of `16 + n` bits means "this port, and the first `n` address bits".
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VipKey {
    /// Destination TCP port, network byte order.
    pub port: [u8; 2],
    /// Destination IPv4 address, network byte order.
    pub addr: [u8; 4],
}

impl VipKey {
    /// Bits of the port that precede the address in the key.
    pub const PORT_BITS: u32 = 16;

    /// Key for `addr:port` (host-order port, address octets as written).
    pub const fn new(addr: [u8; 4], port: u16) -> Self {
        Self { port: port.to_be_bytes(), addr }
    }

    /// LPM prefix length for this key's port and an address prefix of `cidr_len` bits.
    pub const fn prefix_len(cidr_len: u8) -> u32 {
        Self::PORT_BITS + cidr_len as u32
    }
}

// SAFETY: `VipKey` is `#[repr(C)]` of byte arrays only: no padding, every bit pattern valid.
#[cfg(feature = "user")]
unsafe impl aya::Pod for VipKey {}
