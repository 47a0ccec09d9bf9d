//! The original destination of an accepted connection: `getsockopt(SOL_IP, SO_ORIGINAL_DST)`.
//!
//! In cgroup mode the answer comes from the `steer_getsockopt` program (docs/dataplane.md §2 step 3);
//! after an nftables/iptables `redirect` the kernel's netfilter answers the same call, so both
//! deployments share this code path.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::AsRawFd;

use gateway_common::steer::{IP6T_SO_ORIGINAL_DST, SOL_IP, SOL_IPV6, SO_ORIGINAL_DST};

use crate::config::{Config, SteeringMode};
use crate::planner::Planner;

/// Reads the original destination of an accepted socket: `SO_ORIGINAL_DST` at `SOL_IP` (an IPv4
/// connection, also on an IPv6 socket whose peer is IPv4-mapped), then, for an IPv6 socket,
/// `IP6T_SO_ORIGINAL_DST` at `SOL_IPV6`. `Ok(None)` when the socket has none (not steered:
/// `ENOENT`, or no netfilter/BPF answer: `ENOPROTOOPT`).
pub fn original_destination(socket: &impl AsRawFd) -> io::Result<Option<SocketAddr>> {
    let v4 = query_v4(socket);
    if let Ok(Some(v4)) = v4 {
        return Ok(Some(SocketAddr::V4(v4)));
    }
    // An IPv6 socket may refuse the IPv4 question in its own way; its IPv6 answer decides.
    match query_v6(socket) {
        Ok(Some(v6)) => Ok(Some(v6)),
        Ok(None) => v4.map(|_| None),
        Err(e) => v4.and(Err(e)),
    }
}

fn query_v4(socket: &impl AsRawFd) -> io::Result<Option<SocketAddrV4>> {
    // SAFETY: sockaddr_in is plain old data; all-zero is a valid value.
    let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    if !getsockopt_into(socket, SOL_IP, SO_ORIGINAL_DST, &mut sin)? || i32::from(sin.sin_family) != libc::AF_INET {
        return Ok(None);
    }
    let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
    Ok(Some(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
}

fn query_v6(socket: &impl AsRawFd) -> io::Result<Option<SocketAddr>> {
    // SAFETY: sockaddr_in6 is plain old data; all-zero is a valid value.
    let mut sin6: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
    if !getsockopt_into(socket, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &mut sin6)?
        || i32::from(sin6.sin6_family) != libc::AF_INET6
    {
        return Ok(None);
    }
    let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
    let addr = SocketAddr::V6(SocketAddrV6::new(ip, u16::from_be(sin6.sin6_port), 0, 0));
    Ok(Some(super::targets::unmap(addr)))
}

/// `getsockopt(level, name)` into `out`; false when the socket has no such value (or the answer
/// is not exactly `T`-sized).
fn getsockopt_into<T>(socket: &impl AsRawFd, level: i32, name: i32, out: &mut T) -> io::Result<bool> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: the fd is borrowed for the call; the buffer and its length describe `out`, which
    // outlives the call.
    let rc = unsafe { libc::getsockopt(socket.as_raw_fd(), level, name, (out as *mut T).cast(), &mut len) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::ENOENT | libc::ENOPROTOOPT | libc::EOPNOTSUPP) => Ok(false),
            _ => Err(err),
        };
    }
    Ok(len as usize == std::mem::size_of::<T>())
}

/// Whether the gateway intercepts `addr`: `[backend] address`, `[dataplane] intercept`, or an SQL
/// address of the configured topology.
pub fn is_intercepted(addr: SocketAddr, config: &Config, planner: Option<&Planner>) -> bool {
    if addr == config.backend.address {
        return true;
    }
    if config.dataplane.as_ref().is_some_and(|d| d.intercept.contains(&addr)) {
        return true;
    }
    planner.is_some_and(|p| p.locator().cluster().server(addr).is_some())
}

/// The session hook: in cgroup mode, the server an accepted (steered) client originally dialled,
/// when it is an intercepted address; `None` means "use `[backend] address`".
///
/// A destination outside the intercepted set (a stale map entry, a client that connected to the
/// listener itself) is ignored, so the gateway never becomes an open relay.
pub fn steered_backend(socket: &impl AsRawFd, config: &Config, planner: Option<&Planner>) -> Option<SocketAddr> {
    if config.dataplane.as_ref().map(|d| d.mode) != Some(SteeringMode::Cgroup) {
        return None;
    }
    let orig = match original_destination(socket) {
        Ok(Some(orig)) => orig,
        Ok(None) => return None,
        Err(e) => {
            tracing::debug!(error = %e, "SO_ORIGINAL_DST failed");
            return None;
        }
    };
    if is_intercepted(orig, config, planner) {
        tracing::debug!(original = %orig, "steered connection");
        Some(orig)
    } else {
        tracing::info!(original = %orig, "original destination is not intercepted; using [backend]");
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_sockets_have_no_original_destination() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = std::net::TcpStream::connect(addr).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        // No BPF program in this cgroup and no conntrack entry: "none", not an error.
        assert!(original_destination(&accepted).unwrap_or(None).is_none());
        let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
            return; // no IPv6 loopback here
        };
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert!(original_destination(&accepted).unwrap_or(None).is_none());
    }
}
