//! Steering of application connections to the gateway (docs/dataplane.md §2): the connect side.
//!
//! * `steer_connect4` / `steer_connect6` (`cgroup/connect4` / `connect6`, application cgroups): a
//!   TCP connect to an address in `STEER_TARGETS` (IPv4, also when dialled as IPv4-mapped IPv6)
//!   or `STEER_TARGETS6` (IPv6) is rewritten to the gateway and the original destination is
//!   stored under the socket cookie. Where it goes depends on the caller's network namespace: a
//!   process in the gateway's own namespace goes to the listener (`listener` / `listener6`), a
//!   process in any other namespace (a container) to a host address every container can reach
//!   (`container4` / `container6`); without one, the connect is left alone and counted, never
//!   sent to a loopback the container does not share (nor refused by `fail_closed`). Skipped for
//!   the gateway's own cgroup and process. When the daemon's listener is no longer in
//!   `STEER_LIVENESS` (the daemon is gone), a connect that would be steered is left alone
//!   (fail-open) or refused with `EPERM` (`fail_closed`).
//! * `steer_sock_ops` (`sock_ops`, application cgroups): at `ACTIVE_ESTABLISHED` copies the entry
//!   to a key by the socket's local address, which is the peer address the gateway sees; at
//!   `TCP_CLOSE` removes the entries.
//! * The answering side (`SO_ORIGINAL_DST`, `getpeername()`) is in `original.rs`.
//!
//! Direct route (`[dataplane] direct_route`, off by default, IPv4 and host namespace only): when
//! the daemon has put the dialled address into `STEER_DIRECT` (a session whose route is fixed
//! before it starts and whose login the server accepts as-is; the daemon decides,
//! `gateway/src/dataplane/steer/direct.rs`), connect4 rewrites the destination to that server
//! instead of the listener, so the daemon is not in the path at all. The dialled address is kept
//! in `STEER_DIRECT_BY_COOKIE` for getpeername4; no client-keyed entry is made (the gateway never
//! accepts such a socket). The liveness check comes first: with the daemon gone the map is not
//! trusted and fail-open / fail-closed apply exactly as without direct route.

use core::ffi::c_void;

use aya_ebpf::{
    bindings::bpf_sock_addr,
    helpers::{
        bpf_get_current_cgroup_id, bpf_get_current_pid_tgid, bpf_get_netns_cookie, bpf_get_socket_cookie,
        bpf_map_lookup_elem, bpf_sk_release,
    },
    macros::{cgroup_sock_addr, map, sock_ops},
    maps::{Array, HashMap, LruHashMap, PerCpuArray, SockMap},
    programs::{SockAddrContext, SockOpsContext},
    EbpfContext as _,
};
use gateway_common::steer::{
    ipv4_mapped, mapped_ipv4, Ipv4Endpoint, Ipv6Endpoint, SteerConfig, STEER_DIRECT_MAX, STEER_ORIG_MAX,
    STEER_STAT_CONTAINER, STEER_STAT_DIRECT, STEER_STAT_ESTABLISHED, STEER_STAT_FAIL_OPEN, STEER_STAT_OTHER_NETNS,
    STEER_STAT_REDIRECTED, STEER_STAT_REDIRECTED6, STEER_STAT_REFUSED, STEER_STAT_SKIPPED_SELF, STEER_STAT_SLOTS,
    STEER_TARGETS_MAX,
};

#[map(name = "STEER_CONFIG")]
static STEER_CONFIG: Array<SteerConfig> = Array::with_max_entries(1, 0);

#[map(name = "STEER_TARGETS")]
static STEER_TARGETS: HashMap<Ipv4Endpoint, u8> = HashMap::with_max_entries(STEER_TARGETS_MAX, 0);

#[map(name = "STEER_TARGETS6")]
static STEER_TARGETS6: HashMap<Ipv6Endpoint, u8> = HashMap::with_max_entries(STEER_TARGETS_MAX, 0);

#[map(name = "STEER_ORIG_BY_COOKIE")]
pub(crate) static STEER_ORIG_BY_COOKIE: LruHashMap<u64, Ipv4Endpoint> = LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_ORIG_BY_CLIENT")]
pub(crate) static STEER_ORIG_BY_CLIENT: LruHashMap<Ipv4Endpoint, Ipv4Endpoint> =
    LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_ORIG6_BY_COOKIE")]
pub(crate) static STEER_ORIG6_BY_COOKIE: LruHashMap<u64, Ipv6Endpoint> =
    LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_ORIG6_BY_CLIENT")]
pub(crate) static STEER_ORIG6_BY_CLIENT: LruHashMap<Ipv6Endpoint, Ipv6Endpoint> =
    LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_DIRECT")]
static STEER_DIRECT: HashMap<Ipv4Endpoint, Ipv4Endpoint> = HashMap::with_max_entries(STEER_DIRECT_MAX, 0);

#[map(name = "STEER_DIRECT_BY_COOKIE")]
pub(crate) static STEER_DIRECT_BY_COOKIE: LruHashMap<u64, Ipv4Endpoint> =
    LruHashMap::with_max_entries(STEER_ORIG_MAX, 0);

#[map(name = "STEER_LIVENESS")]
static STEER_LIVENESS: SockMap = SockMap::with_max_entries(1, 0);

#[map(name = "STEER_STATS")]
static STEER_STATS: PerCpuArray<u64> = PerCpuArray::with_max_entries(STEER_STAT_SLOTS, 0);

pub(crate) const AF_INET: u32 = 2;
pub(crate) const AF_INET6: u32 = 10;
const SOCK_STREAM: u32 = 1;
const BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB: u32 = 4;
const BPF_SOCK_OPS_STATE_CB: u32 = 10;
const BPF_SOCK_OPS_STATE_CB_FLAG: i32 = 1 << 2;
const TCP_CLOSE: u32 = 7;

/// Verdicts of cgroup programs: 1 = carry on, 0 = refuse with `EPERM`.
pub(crate) const ALLOW: i32 = 1;
const REFUSE: i32 = 0;

/// What to do with a connect.
enum Verdict<T> {
    /// Leave the destination unchanged.
    Leave,
    /// Refuse with `EPERM` (fail-closed while the daemon is gone).
    Refuse,
    /// Rewrite the destination to this endpoint.
    To(T),
}

#[cgroup_sock_addr(connect4)]
pub fn steer_connect4(ctx: SockAddrContext) -> i32 {
    let sa = ctx.sock_addr;
    // SAFETY: the context pointer is valid for the program's run; these fields are readable.
    let (family, sock_type, ip, port) = unsafe { ((*sa).user_family, (*sa).type_, (*sa).user_ip4, (*sa).user_port) };
    if family != AF_INET || sock_type != SOCK_STREAM {
        return ALLOW;
    }
    // user_port: network order in the low 16 bits (docs/dataplane.md §5).
    match steer_v4(&ctx, Ipv4Endpoint::new(ip, u16::from_be(port as u16))) {
        Verdict::Leave => ALLOW,
        Verdict::Refuse => REFUSE,
        Verdict::To(to) => {
            rewrite4(sa, to);
            ALLOW
        }
    }
}

#[cgroup_sock_addr(connect6)]
pub fn steer_connect6(ctx: SockAddrContext) -> i32 {
    let sa = ctx.sock_addr;
    // SAFETY: the context pointer is valid for the program's run; these fields are readable.
    let (family, sock_type, ip, port) = unsafe { ((*sa).user_family, (*sa).type_, (*sa).user_ip6, (*sa).user_port) };
    if family != AF_INET6 || sock_type != SOCK_STREAM {
        return ALLOW;
    }
    let port = u16::from_be(port as u16);
    // `::ffff:a.b.c.d` is IPv4: its own maps, rewritten to the mapped form of the IPv4 target.
    if let Some(v4) = mapped_ipv4(&ip) {
        return match steer_v4(&ctx, Ipv4Endpoint::new(v4, port)) {
            Verdict::Leave => ALLOW,
            Verdict::Refuse => REFUSE,
            Verdict::To(to) => {
                rewrite6(sa, Ipv6Endpoint::new(ipv4_mapped(to.addr), to.port));
                ALLOW
            }
        };
    }
    match steer_v6(&ctx, Ipv6Endpoint::new(ip, port)) {
        Verdict::Leave => ALLOW,
        Verdict::Refuse => REFUSE,
        Verdict::To(to) => {
            rewrite6(sa, to);
            ALLOW
        }
    }
}

/// The liveness check both families share once a rewrite target is known: `Some(verdict)` when
/// the daemon is gone (fail-open or fail-closed), `None` to go on.
#[inline(always)]
fn gone<T>(cfg: &SteerConfig) -> Option<Verdict<T>> {
    if daemon_alive() {
        return None;
    }
    if cfg.fail_closed != 0 {
        count(STEER_STAT_REFUSED);
        return Some(Verdict::Refuse);
    }
    count(STEER_STAT_FAIL_OPEN);
    Some(Verdict::Leave)
}

/// The gateway's own connects are never steered.
#[inline(always)]
fn is_self(cfg: &SteerConfig) -> bool {
    if is_gateway(cfg) {
        count(STEER_STAT_SKIPPED_SELF);
        return true;
    }
    false
}

/// Decision for an IPv4 destination (also when dialled as IPv4-mapped IPv6).
#[inline(always)]
fn steer_v4(ctx: &SockAddrContext, dest: Ipv4Endpoint) -> Verdict<Ipv4Endpoint> {
    if STEER_TARGETS.get_ptr(dest).is_none() {
        return Verdict::Leave;
    }
    let Some(cfg) = STEER_CONFIG.get(0) else {
        return Verdict::Leave;
    };
    if is_self(cfg) {
        return Verdict::Leave;
    }
    let host = in_host_netns(ctx, cfg);
    let to = if host { cfg.listener } else { cfg.container4 };
    // No target for this caller (a container without container address): not steered at all,
    // so not refused either when the daemon is gone.
    if to.port == 0 {
        if !host {
            count(STEER_STAT_OTHER_NETNS);
        }
        return Verdict::Leave;
    }
    if let Some(v) = gone(cfg) {
        return v;
    }
    // SAFETY: the context is a valid `bpf_sock_addr` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    if host {
        // SAFETY: the value is copied out at once.
        if let Some(server) = (unsafe { STEER_DIRECT.get(dest) }).copied() {
            // Direct route: without the cookie entry getpeername could not show the dialled
            // address; then the connection goes through the gateway as usual.
            if STEER_DIRECT_BY_COOKIE.insert(cookie, dest, 0).is_ok() {
                count(STEER_STAT_DIRECT);
                return Verdict::To(server);
            }
        }
    }
    if STEER_ORIG_BY_COOKIE.insert(cookie, dest, 0).is_err() {
        // Without the entry the gateway could not tell where the client was going.
        return Verdict::Leave;
    }
    count(STEER_STAT_REDIRECTED);
    if !host {
        count(STEER_STAT_CONTAINER);
    }
    Verdict::To(to)
}

/// Decision for a native IPv6 destination.
#[inline(always)]
fn steer_v6(ctx: &SockAddrContext, dest: Ipv6Endpoint) -> Verdict<Ipv6Endpoint> {
    if STEER_TARGETS6.get_ptr(&dest).is_none() {
        return Verdict::Leave;
    }
    let Some(cfg) = STEER_CONFIG.get(0) else {
        return Verdict::Leave;
    };
    if is_self(cfg) {
        return Verdict::Leave;
    }
    let host = in_host_netns(ctx, cfg);
    let to = if host { cfg.listener6 } else { cfg.container6 };
    if !to.is_set() {
        if !host {
            count(STEER_STAT_OTHER_NETNS);
        }
        return Verdict::Leave;
    }
    if let Some(v) = gone(cfg) {
        return v;
    }
    // SAFETY: the context is a valid `bpf_sock_addr` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    if STEER_ORIG6_BY_COOKIE.insert(cookie, dest, 0).is_err() {
        return Verdict::Leave;
    }
    count(STEER_STAT_REDIRECTED);
    count(STEER_STAT_REDIRECTED6);
    if !host {
        count(STEER_STAT_CONTAINER);
    }
    Verdict::To(to)
}

/// True when the connecting socket lives in the gateway's network namespace (or when that
/// namespace is unknown).
#[inline(always)]
fn in_host_netns(ctx: &SockAddrContext, cfg: &SteerConfig) -> bool {
    if cfg.host_netns_cookie == 0 {
        return true;
    }
    // SAFETY: the context is a valid `bpf_sock_addr`; the helper reads the socket's namespace.
    let netns = unsafe { bpf_get_netns_cookie(ctx.as_ptr()) };
    netns == cfg.host_netns_cookie
}

/// Points an IPv4 connect (or getpeername answer) at `to`.
#[inline(always)]
pub(crate) fn rewrite4(sa: *mut bpf_sock_addr, to: Ipv4Endpoint) {
    // SAFETY: `sa` is the program's valid context; volatile so that LLVM does not merge the
    // stores (docs/dataplane.md §5).
    unsafe {
        core::ptr::write_volatile(&mut (*sa).user_ip4, to.addr);
        core::ptr::write_volatile(&mut (*sa).user_port, u32::from(to.port.to_be()));
    }
}

/// Points an IPv6 connect (or getpeername answer) at `to`, one 4-byte store per word.
#[inline(always)]
pub(crate) fn rewrite6(sa: *mut bpf_sock_addr, to: Ipv6Endpoint) {
    // SAFETY: as in `rewrite4`; the verifier accepts 4-byte stores to `user_ip6[i]`.
    unsafe {
        core::ptr::write_volatile(&mut (*sa).user_ip6[0], to.addr[0]);
        core::ptr::write_volatile(&mut (*sa).user_ip6[1], to.addr[1]);
        core::ptr::write_volatile(&mut (*sa).user_ip6[2], to.addr[2]);
        core::ptr::write_volatile(&mut (*sa).user_ip6[3], to.addr[3]);
        core::ptr::write_volatile(&mut (*sa).user_port, u32::from(to.port.to_be()));
    }
}

#[sock_ops]
pub fn steer_sock_ops(ctx: SockOpsContext) -> u32 {
    let family = ctx.family();
    if family != AF_INET && family != AF_INET6 {
        return 1;
    }
    match ctx.op() {
        BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB => established(&ctx, family),
        BPF_SOCK_OPS_STATE_CB if ctx.arg(1) == TCP_CLOSE => closed(&ctx, family),
        _ => {}
    }
    1
}

/// The socket's local address as the gateway sees its peer: IPv4 (also an IPv6 socket talking
/// IPv4 through a mapped address) or IPv6. sock_ops: local_port is host order (docs/dataplane.md §5).
enum Local {
    V4(Ipv4Endpoint),
    V6(Ipv6Endpoint),
}

#[inline(always)]
fn local_of(ctx: &SockOpsContext, family: u32) -> Local {
    let port = ctx.local_port() as u16;
    if family == AF_INET {
        return Local::V4(Ipv4Endpoint::new(ctx.local_ip4(), port));
    }
    let ip6 = ctx.local_ip6();
    match mapped_ipv4(&ip6) {
        Some(v4) => Local::V4(Ipv4Endpoint::new(v4, port)),
        None => Local::V6(Ipv6Endpoint::new(ip6, port)),
    }
}

/// The application's socket is connected (to the gateway): key its entry by the local address.
#[inline(always)]
fn established(ctx: &SockOpsContext, family: u32) {
    // SAFETY: the context is a valid `bpf_sock_ops` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    match local_of(ctx, family) {
        Local::V4(client) => {
            // SAFETY: the value is copied out at once; LRU eviction cannot free it during this run.
            match (unsafe { STEER_ORIG_BY_COOKIE.get(cookie) }).copied() {
                Some(orig) => {
                    if STEER_ORIG_BY_CLIENT.insert(client, orig, 0).is_ok() {
                        count(STEER_STAT_ESTABLISHED);
                    }
                }
                // Direct-routed: nothing for the gateway; only the close callback is wanted.
                None if STEER_DIRECT_BY_COOKIE.get_ptr(cookie).is_some() => {}
                None => return,
            }
        }
        Local::V6(client) => {
            // SAFETY: as above.
            let Some(orig) = (unsafe { STEER_ORIG6_BY_COOKIE.get(cookie) }).copied() else {
                return;
            };
            if STEER_ORIG6_BY_CLIENT.insert(&client, &orig, 0).is_ok() {
                count(STEER_STAT_ESTABLISHED);
            }
        }
    }
    // Ask for the state callback so the entries go away when the socket closes.
    let _ = ctx.set_cb_flags(BPF_SOCK_OPS_STATE_CB_FLAG);
}

#[inline(always)]
fn closed(ctx: &SockOpsContext, family: u32) {
    // SAFETY: the context is a valid `bpf_sock_ops` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    let _ = STEER_ORIG_BY_COOKIE.remove(cookie);
    let _ = STEER_DIRECT_BY_COOKIE.remove(cookie);
    let _ = STEER_ORIG6_BY_COOKIE.remove(cookie);
    match local_of(ctx, family) {
        Local::V4(client) => {
            let _ = STEER_ORIG_BY_CLIENT.remove(client);
        }
        Local::V6(client) => {
            let _ = STEER_ORIG6_BY_CLIENT.remove(&client);
        }
    }
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
pub(crate) fn count(slot: u32) {
    if let Some(c) = STEER_STATS.get_ptr_mut(slot) {
        // SAFETY: per-CPU slot from a successful lookup; only this CPU writes it.
        unsafe { *c += 1 };
    }
}
