//! Steering (docs/dataplane.md §2), the answering side: the original destination of steered
//! connections, for the gateway and for the application.
//!
//! * `steer_getsockopt` (`cgroup/getsockopt`, the gateway's cgroup): answers
//!   `getsockopt(SOL_IP, SO_ORIGINAL_DST)` on an accepted IPv4 socket (or an IPv6 socket whose
//!   peer is IPv4-mapped) and `getsockopt(SOL_IPV6, IP6T_SO_ORIGINAL_DST)` on an accepted IPv6
//!   socket, from the client-keyed maps `steer.rs` fills.
//! * `steer_getpeername4` / `steer_getpeername6` (application cgroups): the application's
//!   `getpeername()` reports the address it dialled, not the gateway.

use aya_ebpf::{
    bindings::{bpf_sock, bpf_sock_addr, bpf_sockopt},
    helpers::bpf_get_socket_cookie,
    macros::{cgroup_sock_addr, cgroup_sockopt},
    programs::{SockAddrContext, SockoptContext},
    EbpfContext as _,
};
use gateway_common::steer::{
    ipv4_mapped, mapped_ipv4, Ipv4Endpoint, Ipv6Endpoint, IP6T_SO_ORIGINAL_DST, SOL_IP, SOL_IPV6, SO_ORIGINAL_DST,
    STEER_STAT_ORIGINAL_DST, STEER_STAT_PEERNAME,
};

use crate::steer::{
    count, rewrite4, rewrite6, AF_INET, AF_INET6, ALLOW, STEER_DIRECT_BY_COOKIE, STEER_ORIG6_BY_CLIENT,
    STEER_ORIG6_BY_COOKIE, STEER_ORIG_BY_CLIENT, STEER_ORIG_BY_COOKIE,
};

/// `struct sockaddr_in` is 16 bytes.
const SOCKADDR_IN_LEN: usize = 16;
/// `struct sockaddr_in6` is 28 bytes.
const SOCKADDR_IN6_LEN: usize = 28;

/// The original destination found for an accepted socket.
enum Found {
    V4(Ipv4Endpoint),
    V6(Ipv6Endpoint),
}

#[cgroup_sockopt(getsockopt)]
pub fn steer_getsockopt(ctx: SockoptContext) -> i32 {
    let so: *mut bpf_sockopt = ctx.sockopt;
    // SAFETY: the context pointer is valid for the program's run; these fields are readable.
    let (level, optname) = unsafe { ((*so).level, (*so).optname) };
    let v4_query = level == SOL_IP && optname == SO_ORIGINAL_DST;
    let v6_query = level == SOL_IPV6 && optname == IP6T_SO_ORIGINAL_DST;
    if !v4_query && !v6_query {
        return ALLOW;
    }
    // SAFETY: `sk` is always set for cgroup/getsockopt.
    let sk: *mut bpf_sock = unsafe { (*so).__bindgen_anon_1.sk };
    if sk.is_null() {
        return ALLOW;
    }
    let Some(found) = lookup(sk, v4_query) else {
        return ALLOW;
    };
    // SAFETY: the buffer bounds come from the context and are checked before each write.
    unsafe {
        let start = (*so).__bindgen_anon_2.optval as *mut u8;
        let end = (*so).__bindgen_anon_3.optval_end as *mut u8;
        if start.is_null() {
            return ALLOW;
        }
        let len = match found {
            Found::V4(orig) => {
                if start.add(SOCKADDR_IN_LEN) > end {
                    return ALLOW;
                }
                write_sockaddr_in(start, orig);
                SOCKADDR_IN_LEN
            }
            Found::V6(orig) => {
                if start.add(SOCKADDR_IN6_LEN) > end {
                    return ALLOW;
                }
                write_sockaddr_in6(start, orig);
                SOCKADDR_IN6_LEN
            }
        };
        core::ptr::write_volatile(&mut (*so).optlen, len as i32);
        core::ptr::write_volatile(&mut (*so).retval, 0);
    }
    count(STEER_STAT_ORIGINAL_DST);
    ALLOW
}

/// The entry for the accepted socket `sk`, by its peer address. An IPv4 query (`SOL_IP`) finds
/// IPv4 entries, also for an IPv6 socket whose peer is IPv4-mapped; an IPv6 query finds IPv6
/// entries only.
#[inline(always)]
fn lookup(sk: *mut bpf_sock, v4_query: bool) -> Option<Found> {
    // SAFETY: checked non-null by the caller; the verifier allows reading these fields.
    let (family, port) = unsafe { ((*sk).family, u16::from_be((*sk).dst_port)) };
    let peer4 = if family == AF_INET {
        // SAFETY: as above.
        Some(unsafe { (*sk).dst_ip4 })
    } else if family == AF_INET6 {
        // SAFETY: as above; four 4-byte loads.
        let ip6 = unsafe { [(*sk).dst_ip6[0], (*sk).dst_ip6[1], (*sk).dst_ip6[2], (*sk).dst_ip6[3]] };
        match mapped_ipv4(&ip6) {
            Some(v4) => Some(v4),
            None if v4_query => return None,
            None => {
                let client = Ipv6Endpoint::new(ip6, port);
                // SAFETY: copied out at once.
                return (unsafe { STEER_ORIG6_BY_CLIENT.get(&client) }).copied().map(Found::V6);
            }
        }
    } else {
        None
    };
    let peer4 = peer4?;
    if !v4_query {
        return None;
    }
    // bpf_sock.dst_port is __be16 (docs/dataplane.md §5).
    let client = Ipv4Endpoint::new(peer4, port);
    // SAFETY: copied out at once.
    (unsafe { STEER_ORIG_BY_CLIENT.get(client) }).copied().map(Found::V4)
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

/// Writes a `struct sockaddr_in6` for `ep` at `p` (flow info and scope id 0).
///
/// # Safety
/// `p` must be valid for 28 bytes of writes.
#[inline(always)]
unsafe fn write_sockaddr_in6(p: *mut u8, ep: Ipv6Endpoint) {
    unsafe {
        core::ptr::write_volatile(p.cast::<u16>(), AF_INET6 as u16);
        core::ptr::write_volatile(p.add(2).cast::<u16>(), ep.port.to_be());
        core::ptr::write_volatile(p.add(4).cast::<u32>(), 0);
        core::ptr::write_volatile(p.add(8).cast::<u32>(), ep.addr[0]);
        core::ptr::write_volatile(p.add(12).cast::<u32>(), ep.addr[1]);
        core::ptr::write_volatile(p.add(16).cast::<u32>(), ep.addr[2]);
        core::ptr::write_volatile(p.add(20).cast::<u32>(), ep.addr[3]);
        core::ptr::write_volatile(p.add(24).cast::<u32>(), 0);
    }
}

/// The IPv4 address a steered (or direct-routed) socket dialled, by its cookie.
#[inline(always)]
fn dialled_v4(cookie: u64) -> Option<Ipv4Endpoint> {
    // SAFETY: copied out at once.
    match (unsafe { STEER_ORIG_BY_COOKIE.get(cookie) }).copied() {
        Some(orig) => Some(orig),
        // SAFETY: copied out at once.
        None => (unsafe { STEER_DIRECT_BY_COOKIE.get(cookie) }).copied(),
    }
}

#[cgroup_sock_addr(getpeername4)]
pub fn steer_getpeername4(ctx: SockAddrContext) -> i32 {
    let sa: *mut bpf_sock_addr = ctx.sock_addr;
    // SAFETY: the context is a valid `bpf_sock_addr` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    if let Some(orig) = dialled_v4(cookie) {
        rewrite4(sa, orig);
        count(STEER_STAT_PEERNAME);
    }
    ALLOW
}

#[cgroup_sock_addr(getpeername6)]
pub fn steer_getpeername6(ctx: SockAddrContext) -> i32 {
    let sa: *mut bpf_sock_addr = ctx.sock_addr;
    // SAFETY: the context is a valid `bpf_sock_addr` for the program's run.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    // SAFETY: copied out at once.
    let orig = match (unsafe { STEER_ORIG6_BY_COOKIE.get(cookie) }).copied() {
        Some(orig) => orig,
        // An IPv4 destination dialled as `::ffff:a.b.c.d` is shown in that form again.
        None => match dialled_v4(cookie) {
            Some(v4) => Ipv6Endpoint::new(ipv4_mapped(v4.addr), v4.port),
            None => return ALLOW,
        },
    };
    rewrite6(sa, orig);
    count(STEER_STAT_PEERNAME);
    ALLOW
}
