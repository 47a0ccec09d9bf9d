//! Router mode (docs/dataplane.md §2): `router_assign`, a TC classifier on the ingress of the
//! interface that traffic for the database VIPs arrives on.
//!
//! For an IPv4 TCP packet whose destination `VIP:port` is in [`VIP_CIDRS`]:
//! 1. `bpf_skc_lookup_tcp` on the 4-tuple; a socket that is not listening (an established flow, a
//!    request socket) is assigned with `bpf_sk_assign`;
//! 2. otherwise (a SYN) the gateway listener in slot 0 of [`LISTENER`] is assigned.
//!
//! Every other packet passes untouched. The assignment only takes effect because userspace adds a
//! `local` route for the VIP ranges; the gateway's `accept()`ed socket then has the VIP:port as
//! its local address. Also defines the maps the `sk_lookup` program (lookup.rs) shares.

use core::{ffi::c_void, mem::size_of, ptr};

use aya_ebpf::{
    bindings::{bpf_sock, bpf_sock_tuple, BPF_F_CURRENT_NETNS, BPF_TCP_LISTEN, TC_ACT_OK},
    helpers::{bpf_map_lookup_elem, bpf_sk_assign, bpf_sk_release, bpf_skc_lookup_tcp},
    macros::{classifier, map},
    maps::{lpm_trie::Key, LpmTrie, PerCpuArray, SockMap},
    programs::TcContext,
    EbpfContext as _,
};
use gateway_common::router::{
    VipKey, LISTENER_MAP_MAX, LISTENER_SLOT, STAT_ASSIGN_ESTABLISHED, STAT_ASSIGN_FAILED, STAT_ASSIGN_LISTENER,
    STAT_NO_LISTENER, STAT_SLOTS, STAT_VIP_PACKETS, VIP_MAP_MAX,
};

/// Steered destinations: key = port (16 bits) + IPv4 prefix, see `gateway_common::router`.
#[map(name = "VIP_CIDRS")]
pub(crate) static VIP_CIDRS: LpmTrie<VipKey, u32> = LpmTrie::with_max_entries(VIP_MAP_MAX, 0);

/// The gateway's listening socket, in slot `LISTENER_SLOT`. Written by userspace.
#[map(name = "LISTENER")]
pub(crate) static LISTENER: SockMap = SockMap::with_max_entries(LISTENER_MAP_MAX, 0);

/// Per-CPU event counters indexed by `STAT_*` (no atomics on bpfel: docs/dataplane.md §5).
#[map(name = "ROUTER_STATS")]
static ROUTER_STATS: PerCpuArray<u64> = PerCpuArray::with_max_entries(STAT_SLOTS, 0);

const ETH_HLEN: usize = 14;
const ETH_P_IP: u16 = 0x0800;
const IPPROTO_TCP: u8 = 6;

/// Whether `addr:port` (network-order bytes) is a steered destination.
#[inline(always)]
pub(crate) fn is_vip(addr: [u8; 4], port_be: [u8; 2]) -> bool {
    let key = Key::new(32 + 16, VipKey { port: port_be, addr });
    VIP_CIDRS.get(&key).is_some()
}

/// Adds one to a statistics slot of this CPU.
#[inline(always)]
pub(crate) fn bump(slot: u32) {
    if let Some(c) = ROUTER_STATS.get_ptr_mut(slot) {
        // SAFETY: the pointer comes from a successful per-CPU array lookup: valid for this run,
        // and only this CPU writes this slot (programs run with migration disabled).
        unsafe { *c += 1 };
    }
}

#[classifier]
pub fn router_assign(ctx: TcContext) -> i32 {
    match try_assign(&ctx) {
        Some(action) => action,
        None => TC_ACT_OK,
    }
}

#[inline(always)]
fn try_assign(ctx: &TcContext) -> Option<i32> {
    let mut tuple = ipv4_tcp_tuple(ctx)?;
    // SAFETY: `ipv4_tcp_tuple` initialised the ipv4 variant of the union.
    let v4 = unsafe { tuple.__bindgen_anon_1.ipv4 };
    if !is_vip(v4.daddr.to_ne_bytes(), v4.dport.to_ne_bytes()) {
        return None;
    }
    bump(STAT_VIP_PACKETS);
    let tuple_len = size_of::<u32>() * 2 + size_of::<u16>() * 2;
    // SAFETY: `tuple` is an initialised stack value of at least `tuple_len` bytes; the helper
    // returns a referenced socket or null, released below on every path.
    let sk = unsafe {
        bpf_skc_lookup_tcp(ctx.as_ptr(), ptr::from_mut(&mut tuple), tuple_len as u32, BPF_F_CURRENT_NETNS as u64, 0)
    };
    if !sk.is_null() {
        // SAFETY: non-null socket from the lookup helper; `state` is readable on sock_common.
        let state = unsafe { (*sk).state };
        if state != BPF_TCP_LISTEN {
            return Some(assign(ctx, sk, STAT_ASSIGN_ESTABLISHED));
        }
        // SAFETY: releasing the reference taken by the lookup.
        unsafe { bpf_sk_release(sk.cast()) };
    }
    let slot = LISTENER_SLOT;
    // SAFETY: a sockmap lookup from TC returns a referenced socket or null; the map pointer is the
    // address of the map definition (as aya-ebpf's own wrappers pass it).
    let listener = unsafe {
        bpf_map_lookup_elem(ptr::from_ref(&LISTENER).cast_mut().cast::<c_void>(), ptr::from_ref(&slot).cast())
    }
    .cast::<bpf_sock>();
    if listener.is_null() {
        bump(STAT_NO_LISTENER);
        return None;
    }
    Some(assign(ctx, listener, STAT_ASSIGN_LISTENER))
}

/// Assigns `sk` to the packet and releases the reference; counts `ok_slot` or a failure.
#[inline(always)]
fn assign(ctx: &TcContext, sk: *mut bpf_sock, ok_slot: u32) -> i32 {
    // SAFETY: `sk` is a referenced, non-null socket from a lookup helper; released right after.
    let rc = unsafe { bpf_sk_assign(ctx.as_ptr(), sk.cast(), 0) };
    // SAFETY: as above.
    unsafe { bpf_sk_release(sk.cast()) };
    bump(if rc == 0 { ok_slot } else { STAT_ASSIGN_FAILED });
    TC_ACT_OK
}

/// The IPv4 TCP 4-tuple (network byte order) of an Ethernet frame, first fragments only.
#[inline(always)]
fn ipv4_tcp_tuple(ctx: &TcContext) -> Option<bpf_sock_tuple> {
    if u16::from_be(ctx.load::<u16>(12).ok()?) != ETH_P_IP {
        return None;
    }
    let l3 = ETH_HLEN;
    let ver_ihl: u8 = ctx.load(l3).ok()?;
    let frag = u16::from_be(ctx.load::<u16>(l3 + 6).ok()?);
    let proto: u8 = ctx.load(l3 + 9).ok()?;
    if ver_ihl >> 4 != 4 || proto != IPPROTO_TCP || frag & 0x1fff != 0 {
        return None;
    }
    let saddr: u32 = ctx.load(l3 + 12).ok()?;
    let daddr: u32 = ctx.load(l3 + 16).ok()?;
    let l4 = l3 + usize::from(ver_ihl & 0x0f) * 4;
    let sport: u16 = ctx.load(l4).ok()?;
    let dport: u16 = ctx.load(l4 + 2).ok()?;
    // SAFETY: all-zero is a valid `bpf_sock_tuple` (plain integers in a union).
    let mut tuple: bpf_sock_tuple = unsafe { core::mem::zeroed() };
    tuple.__bindgen_anon_1.ipv4.saddr = saddr;
    tuple.__bindgen_anon_1.ipv4.daddr = daddr;
    tuple.__bindgen_anon_1.ipv4.sport = sport;
    tuple.__bindgen_anon_1.ipv4.dport = dport;
    Some(tuple)
}
