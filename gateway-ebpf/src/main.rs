//! eBPF programs of the gateway data plane, built for `bpfel-unknown-none` by `gateway/build.rs`.
//!
//! `port_counter` (TC classifier, clsact ingress): counts TCP packets and bytes whose source or
//! destination port is one of the configured MySQL ports. It never changes a verdict.
#![no_std]
#![no_main]

mod lookup;
mod original;
mod router;
mod splice;
mod steer;

use aya_ebpf::{
    macros::{classifier, map},
    maps::{HashMap, PerCpuArray},
    programs::TcContext,
};
use gateway_common::{TrafficCounters, COUNTER_MYSQL, COUNTER_OTHER_TCP, COUNTER_SLOTS, MYSQL_PORTS_MAX};

/// Configured MySQL ports (host byte order) → 1. Written by userspace.
#[map(name = "MYSQL_PORTS")]
static MYSQL_PORTS: HashMap<u16, u8> = HashMap::with_max_entries(MYSQL_PORTS_MAX, 0);

/// Per-CPU packet/byte counters, indexed by `COUNTER_*` (no atomics on bpfel: docs/dataplane.md §5).
#[map(name = "PORT_COUNTERS")]
static PORT_COUNTERS: PerCpuArray<TrafficCounters> = PerCpuArray::with_max_entries(COUNTER_SLOTS, 0);

/// `TC_ACT_UNSPEC`: continue with the next program / the default action (TCX_NEXT on TCX).
const TC_ACT_UNSPEC: i32 = -1;

const ETH_HLEN: usize = 14;
const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88a8;
const IPPROTO_TCP: u8 = 6;
const IPV6_HLEN: usize = 40;

#[classifier]
pub fn port_counter(ctx: TcContext) -> i32 {
    if let Some((sport, dport)) = tcp_ports(&ctx) {
        let slot = if is_mysql_port(sport) || is_mysql_port(dport) { COUNTER_MYSQL } else { COUNTER_OTHER_TCP };
        count(slot, ctx.len());
    }
    TC_ACT_UNSPEC
}

#[inline(always)]
fn is_mysql_port(port: u16) -> bool {
    MYSQL_PORTS.get_ptr(port).is_some()
}

#[inline(always)]
fn count(slot: u32, len: u32) {
    if let Some(c) = PORT_COUNTERS.get_ptr_mut(slot) {
        // SAFETY: the pointer comes from a successful lookup in a per-CPU array: it is valid for
        // the program's run and only this CPU writes this slot (TC runs with migration disabled).
        unsafe {
            (*c).packets += 1;
            (*c).bytes += u64::from(len);
        }
    }
}

/// TCP (source, destination) ports in host order, for IPv4 (first fragment) and IPv6 without
/// extension headers, behind an Ethernet header with at most one VLAN tag.
#[inline(always)]
fn tcp_ports(ctx: &TcContext) -> Option<(u16, u16)> {
    let mut l3 = ETH_HLEN;
    let mut proto = u16::from_be(ctx.load::<u16>(12).ok()?);
    if proto == ETH_P_8021Q || proto == ETH_P_8021AD {
        proto = u16::from_be(ctx.load::<u16>(16).ok()?);
        l3 += 4;
    }
    let l4 = match proto {
        ETH_P_IP => {
            let ver_ihl: u8 = ctx.load(l3).ok()?;
            let frag: u16 = u16::from_be(ctx.load::<u16>(l3 + 6).ok()?);
            let ip_proto: u8 = ctx.load(l3 + 9).ok()?;
            if ver_ihl >> 4 != 4 || ip_proto != IPPROTO_TCP || frag & 0x1fff != 0 {
                return None;
            }
            l3 + usize::from(ver_ihl & 0x0f) * 4
        }
        ETH_P_IPV6 => {
            let next: u8 = ctx.load(l3 + 6).ok()?;
            if next != IPPROTO_TCP {
                return None;
            }
            l3 + IPV6_HLEN
        }
        _ => return None,
    };
    let ports: [u8; 4] = ctx.load(l4).ok()?;
    Some((u16::from_be_bytes([ports[0], ports[1]]), u16::from_be_bytes([ports[2], ports[3]])))
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    loop {}
}

/// GPL-compatible licence string (as in aya-template), required for GPL-only helpers.
#[unsafe(link_section = "license")]
#[unsafe(no_mangle)]
static LICENSE: [u8; 13] = *b"Dual MIT/GPL\0";
