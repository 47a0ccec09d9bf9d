//! Types shared by the eBPF programs and the daemon: map keys, values and well-known names.
#![no_std]

pub mod router;
pub mod splice;
pub mod steer;

/// Name of the TC classifier (in `gateway-ebpf`) that counts MySQL-port traffic.
pub const PORT_COUNTER_PROGRAM: &str = "port_counter";

/// Name of the config map: `HashMap<u16, u8>`, key = TCP port in host byte order, value = 1.
/// A packet matches when its TCP source or destination port is a key of this map.
pub const MYSQL_PORTS_MAP: &str = "MYSQL_PORTS";

/// Capacity of [`MYSQL_PORTS_MAP`].
pub const MYSQL_PORTS_MAX: u32 = 64;

/// Name of the statistics map: `PerCpuArray<TrafficCounters>` with [`COUNTER_SLOTS`] entries.
pub const PORT_COUNTERS_MAP: &str = "PORT_COUNTERS";

/// Slot of [`PORT_COUNTERS_MAP`] for TCP packets whose source or destination port is configured.
pub const COUNTER_MYSQL: u32 = 0;
/// Slot of [`PORT_COUNTERS_MAP`] for all other TCP packets (shows the program sees traffic).
pub const COUNTER_OTHER_TCP: u32 = 1;
/// Number of slots in [`PORT_COUNTERS_MAP`].
pub const COUNTER_SLOTS: u32 = 2;

/// Packet and byte counts of one counter slot on one CPU (userspace sums the CPUs).
///
/// `bytes` is the skb length as seen by the TC hook, i.e. including the Ethernet header.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrafficCounters {
    /// Packets (skbs) counted.
    pub packets: u64,
    /// Bytes counted (skb length, L2 header included).
    pub bytes: u64,
}

impl TrafficCounters {
    /// Adds another slot's counts (saturating), e.g. to sum per-CPU values.
    pub fn add(&mut self, other: &TrafficCounters) {
        self.packets = self.packets.saturating_add(other.packets);
        self.bytes = self.bytes.saturating_add(other.bytes);
    }
}

// SAFETY: `TrafficCounters` is `#[repr(C)]`, made only of `u64`s (no padding, every bit
// pattern valid), so it can be copied to and from BPF map memory.
#[cfg(feature = "user")]
unsafe impl aya::Pod for TrafficCounters {}
