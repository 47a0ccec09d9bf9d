//! Steering of application connections to the gateway (docs/ebpf.md §3.2).
//!
//! * `steer_connect4` (`cgroup/connect4`, application cgroups): a TCP connect to an address in
//!   `STEER_TARGETS` is rewritten to the gateway listener and the original destination is stored
//!   under the socket cookie. Skipped for the gateway's own cgroup and process. When the daemon's
//!   listener is no longer in `STEER_LIVENESS` (the daemon is gone), the connect is left alone
//!   (fail-open) or refused with `EPERM` (`fail_closed`).
//! * `steer_sock_ops` (`sock_ops`, application cgroups): at `ACTIVE_ESTABLISHED` copies the entry
//!   to a key by the socket's local address, which is the peer address the gateway sees; at
//!   `TCP_CLOSE` removes both entries.
//! * `steer_getsockopt` (`cgroup/getsockopt`, the gateway's cgroup): answers
//!   `getsockopt(SOL_IP, SO_ORIGINAL_DST)` on an accepted socket from the client-keyed map.
//! * `steer_getpeername4` (`cgroup/getpeername4`, application cgroups): the application's
//!   `getpeername()` reports the address it dialled, not the gateway.
//!
//! Direct route (`[dataplane] direct_route`, off by default): when the daemon has put the dialled
//! address into `STEER_DIRECT` (a session whose route is fixed before it starts and whose login
//! the server accepts as-is; the daemon decides, `gateway/src/dataplane/steer/direct.rs`),
//! connect4 rewrites the destination to that server instead of the listener, so the daemon is not
//! in the path at all. The dialled address is kept in `STEER_DIRECT_BY_COOKIE` for getpeername4;
//! no client-keyed entry is made (the gateway never accepts such a socket). The liveness check
//! comes first: with the daemon gone the map is not trusted and fail-open / fail-closed apply
//! exactly as without direct route.
//!
//! IPv4 only: `connect6` is not hooked, so IPv6 (and IPv4-mapped IPv6) connects are not steered.

use core::ffi::c_void;

use aya_ebpf::{
    bindings::{bpf_sock, bpf_sock_addr, bpf_sockopt},
    helpers::{
        bpf_get_current_cgroup_id, bpf_get_current_pid_tgid, bpf_get_socket_cookie,
        bpf_map_lookup_elem, bpf_sk_release,
    },
    macros::{cgroup_sock_addr, cgroup_sockopt, map, sock_ops},
    maps::{Array, HashMap, LruHashMap, PerCpuArray, SockMap},
    programs::{SockAddrContext, SockOpsContext, SockoptContext},
    EbpfContext as _,
};
use gateway_common::steer::{
    Ipv4Endpoint, SteerConfig, SOL_IP, SO_ORIGINAL_DST, STEER_ORIG_MAX, STEER_STAT_ESTABLISHED,
    STEER_STAT_FAIL_OPEN, STEER_STAT_ORIGINAL_DST, STEER_STAT_PEERNAME, STEER_STAT_REDIRECTED,
    STEER_STAT_REFUSED, STEER_STAT_SKIPPED_SELF, STEER_STAT_SLOTS, STEER_TARGETS_MAX,
    STEER_DIRECT_MAX, STEER_STAT_DIRECT,
};

#[map(name = "STEER_CONFIG")]
static STEER_CONFIG: Array<SteerConfig> = Array::with_max_entries(1, 0);

#[map(name = "STEER_TARGETS")]
static STEER_TARGETS: HashMap<Ipv4Endpoint, u8> = HashMap::with_max_entries(STEER_TARGETS_MAX, 0);

#[map(name = "STEER_ORIG_BY_COOKIE")]
static STEER_ORIG_BY_COOKIE: LruHashMap<u64, Ipv4Endpoint> =
    LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_ORIG_BY_CLIENT")]
static STEER_ORIG_BY_CLIENT: LruHashMap<Ipv4Endpoint, Ipv4Endpoint> =
    LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_DIRECT")]
static STEER_DIRECT: HashMap<Ipv4Endpoint, Ipv4Endpoint> = HashMap::with_max_entries(STEER_DIRECT_MAX, 0);

#[map(name = "STEER_DIRECT_BY_COOKIE")]
static STEER_DIRECT_BY_COOKIE: LruHashMap<u64, Ipv4Endpoint> =
    LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_LIVENESS")]
static STEER_LIVENESS: SockMap = SockMap::with_max_entries(1, 0);

#[map(name = "STEER_STATS")]
static STEER_STATS: PerCpuArray<u64> = PerCpuArray::with_max_entries(STEER_STAT_SLOTS, 0);

const AF_INET: u32 = 2;
const SOCK_STREAM: u32 = 1;
const BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB: u32 = 4;
const BPF_SOCK_OPS_STATE_CB: u32 = 10;
const BPF_SOCK_OPS_STATE_CB_FLAG: i32 = 1 << 2;
const TCP_CLOSE: u32 = 7;
/// `struct sockaddr_in` is 16 bytes.
const SOCKADDR_IN_LEN: usize = 16;

/// Verdicts of cgroup programs: 1 = carry on, 0 = refuse with `EPERM`.
const ALLOW: i32 = 1;
const REFUSE: i32 = 0;

#[cgroup_sock_addr(connect4)]
pub fn steer_connect4(ctx: SockAddrContext) -> i32 {
    let sa = ctx.sock_addr;
    // SAFETY: the context pointer is valid for the program's run; these fields are readable.
    let (family, sock_type, ip, port) =
        unsafe { ((*sa).user_family, (*sa).type_, (*sa).user_ip4, (*sa).user_port) };
    if family != AF_INET || sock_type != SOCK_STREAM {
        return ALLOW;
    }
    // user_port: network order in the low 16 bits (§8).
    let dest = Ipv4Endpoint::new(ip, u16::from_be(port as u16));
    if STEER_TARGETS.get_ptr(dest).is_none() {
        return ALLOW;
    }
    let Some(cfg) = STEER_CONFIG.get(0) else {
        return ALLOW;
    };
    if is_gateway(cfg) {
        count(STEER_STAT_SKIPPED_SELF);
        return ALLOW;
    }
    if !daemon_alive() {
        if cfg.fail_closed != 0 {
            count(STEER_STAT_REFUSED);
            return REFUSE;
        }
        count(STEER_STAT_FAIL_OPEN);
        return ALLOW;
    }
    // SAFETY: the context is a valid `bpf_sock_addr` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    // SAFETY: the value is copied out at once.
    if let Some(server) = (unsafe { STEER_DIRECT.get(dest) }).copied() {
        // Direct route: without the cookie entry getpeername4 could not show the dialled
        // address; then the connection goes through the gateway as usual.
        if STEER_DIRECT_BY_COOKIE.insert(cookie, dest, 0).is_ok() {
            rewrite(sa, server);
            count(STEER_STAT_DIRECT);
            return ALLOW;
        }
    }
    if STEER_ORIG_BY_COOKIE.insert(cookie, dest, 0).is_err() {
        // Without the entry the gateway could not tell where the client was going.
        return ALLOW;
    }
    rewrite(sa, cfg.listener);
    count(STEER_STAT_REDIRECTED);
    ALLOW
}

/// Points a connect at `to`.
#[inline(always)]
fn rewrite(sa: *mut bpf_sock_addr, to: Ipv4Endpoint) {
    // SAFETY: `sa` is the program's valid context; volatile so that LLVM does not merge the
    // stores (§8).
    unsafe {
        core::ptr::write_volatile(&mut (*sa).user_ip4, to.addr);
        core::ptr::write_volatile(&mut (*sa).user_port, u32::from(to.port.to_be()));
    }
}

#[sock_ops]
pub fn steer_sock_ops(ctx: SockOpsContext) -> u32 {
    if ctx.family() != AF_INET {
        return 1;
    }
    match ctx.op() {
        BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB => established(&ctx),
        BPF_SOCK_OPS_STATE_CB if ctx.arg(1) == TCP_CLOSE => closed(&ctx),
        _ => {}
    }
    1
}

/// The application's socket is connected (to the gateway): key its entry by the local address.
#[inline(always)]
fn established(ctx: &SockOpsContext) {
    // SAFETY: the context is a valid `bpf_sock_ops` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    // SAFETY: the value is copied out at once; LRU eviction cannot free it during this run.
    match (unsafe { STEER_ORIG_BY_COOKIE.get(cookie) }).copied() {
        Some(orig) => {
            // sock_ops: local_port is host order (§8).
            let client = Ipv4Endpoint::new(ctx.local_ip4(), ctx.local_port() as u16);
            if STEER_ORIG_BY_CLIENT.insert(client, orig, 0).is_ok() {
                count(STEER_STAT_ESTABLISHED);
            }
        }
        // Direct-routed: nothing for the gateway; only the close callback is wanted.
        None if STEER_DIRECT_BY_COOKIE.get_ptr(cookie).is_some() => {}
        None => return,
    }
    // Ask for the state callback so both entries go away when the socket closes.
    let _ = ctx.set_cb_flags(BPF_SOCK_OPS_STATE_CB_FLAG);
}

#[inline(always)]
fn closed(ctx: &SockOpsContext) {
    // SAFETY: the context is a valid `bpf_sock_ops` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    let _ = STEER_ORIG_BY_COOKIE.remove(cookie);
    let _ = STEER_DIRECT_BY_COOKIE.remove(cookie);
    let client = Ipv4Endpoint::new(ctx.local_ip4(), ctx.local_port() as u16);
    let _ = STEER_ORIG_BY_CLIENT.remove(client);
}

#[cgroup_sockopt(getsockopt)]
pub fn steer_getsockopt(ctx: SockoptContext) -> i32 {
    let so: *mut bpf_sockopt = ctx.sockopt;
    // SAFETY: the context pointer is valid for the program's run; these fields are readable.
    let (level, optname) = unsafe { ((*so).level, (*so).optname) };
    if level != SOL_IP || optname != SO_ORIGINAL_DST {
        return ALLOW;
    }
    // SAFETY: `sk` is always set for cgroup/getsockopt.
    let sk: *mut bpf_sock = unsafe { (*so).__bindgen_anon_1.sk };
    if sk.is_null() {
        return ALLOW;
    }
    // SAFETY: checked non-null; the verifier allows reading these `bpf_sock` fields.
    let (family, peer_ip, peer_port) = unsafe { ((*sk).family, (*sk).dst_ip4, (*sk).dst_port) };
    if family != AF_INET {
        return ALLOW;
    }
    // bpf_sock.dst_port is __be16 (§8).
    let client = Ipv4Endpoint::new(peer_ip, u16::from_be(peer_port));
    // SAFETY: copied out at once.
    let Some(orig) = (unsafe { STEER_ORIG_BY_CLIENT.get(client) }).copied() else {
        return ALLOW;
    };
    // SAFETY: the buffer bounds come from the context and are checked before the write.
    unsafe {
        let start = (*so).__bindgen_anon_2.optval as *mut u8;
        let end = (*so).__bindgen_anon_3.optval_end as *mut u8;
        if start.is_null() || start.add(SOCKADDR_IN_LEN) > end {
            return ALLOW;
        }
        write_sockaddr_in(start, orig);
        core::ptr::write_volatile(&mut (*so).optlen, SOCKADDR_IN_LEN as i32);
        core::ptr::write_volatile(&mut (*so).retval, 0);
    }
    count(STEER_STAT_ORIGINAL_DST);
    ALLOW
}

/// Writes a `struct sockaddr_in` for `ep` at `p`, one field at a time (no merged stores).
///
/// # Safety
/// `p` must be valid for 16 bytes of writes.
#[inline(always)]
unsafe fn write_sockaddr_in(p: *mut u8, ep: Ipv4Endpoint) {
    unsafe {
        core::ptr::write_volatile(p.cast::<u16>(), AF_INET as u16);
        core::ptr::write_volatile(p.add(2).cast::<u16>(), ep.port.to_be());
        core::ptr::write_volatile(p.add(4).cast::<u32>(), ep.addr);
        core::ptr::write_volatile(p.add(8).cast::<u32>(), 0);
        core::ptr::write_volatile(p.add(12).cast::<u32>(), 0);
    }
}

#[cgroup_sock_addr(getpeername4)]
pub fn steer_getpeername4(ctx: SockAddrContext) -> i32 {
    let sa: *mut bpf_sock_addr = ctx.sock_addr;
    // SAFETY: the context is a valid `bpf_sock_addr` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    // SAFETY: copied out at once.
    let orig = match (unsafe { STEER_ORIG_BY_COOKIE.get(cookie) }).copied() {
        Some(orig) => orig,
        // SAFETY: copied out at once.
        None => match (unsafe { STEER_DIRECT_BY_COOKIE.get(cookie) }).copied() {
            Some(orig) => orig,
            None => return ALLOW,
        },
    };
    rewrite(sa, orig);
    count(STEER_STAT_PEERNAME);
    ALLOW
}

/// The caller is the gateway (its cgroup or its process): never steer it.
#[inline(always)]
fn is_gateway(cfg: &SteerConfig) -> bool {
    // SAFETY: plain helper call without arguments.
    let cgroup = unsafe { bpf_get_current_cgroup_id() };
    let tgid = (bpf_get_current_pid_tgid() >> 32) as u32;
    (cfg.gateway_cgroup_id != 0 && cgroup == cfg.gateway_cgroup_id)
        || (cfg.gateway_tgid != 0 && tgid == cfg.gateway_tgid)
}

/// True while the daemon's listening socket is in `STEER_LIVENESS` (the kernel drops it from the
/// sockmap when the socket is closed, e.g. when the daemon is killed).
#[inline(always)]
fn daemon_alive() -> bool {
    let key: u32 = 0;
    // SAFETY: `SockMap` is `repr(transparent)` over its map definition, so its address is the
    // map pointer the helper expects; a hit returns a referenced socket that is released at once.
    unsafe {
        let map = core::ptr::addr_of!(STEER_LIVENESS) as *mut c_void;
        let sk = bpf_map_lookup_elem(map, core::ptr::addr_of!(key).cast());
        if sk.is_null() {
            return false;
        }
        bpf_sk_release(sk);
    }
    true
}

#[inline(always)]
fn count(slot: u32) {
    if let Some(c) = STEER_STATS.get_ptr_mut(slot) {
        // SAFETY: per-CPU slot from a successful lookup; only this CPU writes it.
        unsafe { *c += 1 };
    }
}
