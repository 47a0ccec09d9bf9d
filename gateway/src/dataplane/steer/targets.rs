//! Where steered connects are sent, per address family and per caller (the gateway's own network
//! namespace, or a container's), and the intercepted destinations split by family.
//!
//! * Host namespace: the gateway's listener of that family; a wildcard listener is reached on
//!   loopback (`127.0.0.1` / `::1`); a dual-stack `[::]` listener also serves IPv4.
//! * Other namespaces (containers): `[dataplane] container_addresses`, one host address per family
//!   that every application container can reach (e.g. the host side of the container bridge) and
//!   on which the gateway listens. A container's loopback is its own, so without such an address
//!   container connects are left alone (and counted), never sent to `127.0.0.1`.
//! * IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are IPv4 everywhere.

use std::collections::BTreeSet;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::AsRawFd;

use gateway_common::steer::{Ipv4Endpoint, Ipv6Endpoint};

use super::SteerError;

/// Rewrite targets of both families for both kinds of caller; `None` = not steered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewriteTargets {
    /// IPv4 connects from the gateway's namespace.
    pub host4: Option<SocketAddrV4>,
    /// IPv6 connects from the gateway's namespace.
    pub host6: Option<SocketAddrV6>,
    /// IPv4 connects from other namespaces.
    pub container4: Option<SocketAddrV4>,
    /// IPv6 connects from other namespaces.
    pub container6: Option<SocketAddrV6>,
}

impl RewriteTargets {
    /// Plans the targets from the gateway's bound listeners (the main one first) and the
    /// configured container addresses, each of which must be served by a listener.
    pub fn plan(listeners: &[SocketAddr], containers: &[SocketAddr]) -> Result<Self, SteerError> {
        let mut t = RewriteTargets { host4: host4(listeners), host6: host6(listeners), ..Default::default() };
        for &addr in containers {
            let addr = unmap(addr);
            if addr.ip().is_loopback() || addr.ip().is_unspecified() {
                return Err(SteerError::ContainerAddress {
                    addr,
                    why: "a container cannot reach the host's loopback or a wildcard",
                });
            }
            if !listeners.iter().any(|&l| serves(l, addr)) {
                return Err(SteerError::ContainerAddress {
                    addr,
                    why: "no gateway listener serves it (add it to [listen] extra_addresses)",
                });
            }
            let dup = match addr {
                SocketAddr::V4(v4) => t.container4.replace(v4).is_some(),
                SocketAddr::V6(v6) => t.container6.replace(v6).is_some(),
            };
            if dup {
                return Err(SteerError::ContainerAddress { addr, why: "one container address per address family" });
            }
        }
        if t.host4.is_none() && t.host6.is_none() {
            return Err(SteerError::NoListener);
        }
        Ok(t)
    }
}

/// The IPv4 rewrite target for the host namespace: a loopback listener, else a wildcard one
/// (reached on 127.0.0.1; a dual-stack `[::]` accepts IPv4 too, IPV6_V6ONLY being off by
/// default), else the first IPv4 listener.
fn host4(listeners: &[SocketAddr]) -> Option<SocketAddrV4> {
    let v4 = || {
        listeners.iter().filter_map(|l| match unmap(*l) {
            SocketAddr::V4(v4) => Some(v4),
            SocketAddr::V6(_) => None,
        })
    };
    let loopback = |port| SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    v4().find(|a| a.ip().is_loopback())
        .or_else(|| v4().find(|a| a.ip().is_unspecified()).map(|a| loopback(a.port())))
        .or_else(|| listeners.iter().find(|l| l.is_ipv6() && l.ip().is_unspecified()).map(|l| loopback(l.port())))
        .or_else(|| v4().next())
}

/// The IPv6 rewrite target for the host namespace: a loopback listener, else a wildcard one
/// (reached on ::1), else the first IPv6 listener.
fn host6(listeners: &[SocketAddr]) -> Option<SocketAddrV6> {
    let v6 = || {
        listeners.iter().filter_map(|l| match unmap(*l) {
            SocketAddr::V6(v6) => Some(v6),
            SocketAddr::V4(_) => None,
        })
    };
    v6().find(|a| a.ip().is_loopback())
        .or_else(|| {
            v6().find(|a| a.ip().is_unspecified()).map(|a| SocketAddrV6::new(Ipv6Addr::LOCALHOST, a.port(), 0, 0))
        })
        .or_else(|| v6().next())
}

/// Whether a listener bound to `listener` accepts connections to `addr`.
fn serves(listener: SocketAddr, addr: SocketAddr) -> bool {
    let listener = unmap(listener);
    if listener.port() != addr.port() {
        return false;
    }
    match (listener, addr) {
        (l, a) if l == a => true,
        (SocketAddr::V4(l), SocketAddr::V4(_)) => l.ip().is_unspecified(),
        (SocketAddr::V6(l), _) => l.ip().is_unspecified(),
        _ => false,
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it carries; anything else unchanged.
pub fn unmap(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::V4(SocketAddrV4::new(v4, v6.port())),
            None => addr,
        },
        v4 => v4,
    }
}

/// Intercepted destinations split by family (IPv4-mapped ones are IPv4).
pub fn split(addrs: impl IntoIterator<Item = SocketAddr>) -> (BTreeSet<SocketAddrV4>, BTreeSet<SocketAddrV6>) {
    let (mut v4, mut v6) = (BTreeSet::new(), BTreeSet::new());
    for a in addrs {
        match unmap(a) {
            SocketAddr::V4(a) => v4.insert(a),
            SocketAddr::V6(a) => v6.insert(SocketAddrV6::new(*a.ip(), a.port(), 0, 0)),
        };
    }
    (v4, v6)
}

/// The map key of an IPv4 address (network-order address, host-order port).
pub fn endpoint4(addr: SocketAddrV4) -> Ipv4Endpoint {
    Ipv4Endpoint::new(u32::from_ne_bytes(addr.ip().octets()), addr.port())
}

/// The map key of an IPv6 address (four network-order words, host-order port).
pub fn endpoint6(addr: SocketAddrV6) -> Ipv6Endpoint {
    let o = addr.ip().octets();
    let words = std::array::from_fn(|i| u32::from_ne_bytes([o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]]));
    Ipv6Endpoint::new(words, addr.port())
}

/// The network-namespace cookie of a socket's namespace (`SO_NETNS_COOKIE`, Linux 5.14+).
pub fn netns_cookie(socket: &impl AsRawFd) -> io::Result<u64> {
    const SO_NETNS_COOKIE: libc::c_int = 71;
    let mut cookie: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: the fd is borrowed for the call; the buffer and its length describe `cookie`,
    // which outlives the call.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_NETNS_COOKIE,
            std::ptr::addr_of_mut!(cookie).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cookie)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn host_targets_come_from_the_listeners() {
        let t = RewriteTargets::plan(&addrs(&["0.0.0.0:6033", "[::]:6034"]), &[]).unwrap();
        assert_eq!(t.host4, Some("127.0.0.1:6033".parse().unwrap()));
        assert_eq!(t.host6, Some("[::1]:6034".parse().unwrap()));
        assert_eq!((t.container4, t.container6), (None, None));
        // A dual-stack wildcard alone serves both families.
        let t = RewriteTargets::plan(&addrs(&["[::]:6033"]), &[]).unwrap();
        assert_eq!(t.host4, Some("127.0.0.1:6033".parse().unwrap()));
        assert_eq!(t.host6, Some("[::1]:6033".parse().unwrap()));
        // IPv4 only: IPv6 is not steered.
        let t = RewriteTargets::plan(&addrs(&["127.0.0.1:6033"]), &[]).unwrap();
        assert_eq!(t.host6, None);
        // Loopback first, whatever the order.
        let t =
            RewriteTargets::plan(&addrs(&["10.77.0.1:6033", "[fd00:77::1]:6033", "[::1]:6033", "127.0.0.1:6033"]), &[])
                .unwrap();
        assert_eq!(t.host4, Some("127.0.0.1:6033".parse().unwrap()));
        assert_eq!(t.host6, Some("[::1]:6033".parse().unwrap()));
    }

    #[test]
    fn container_addresses_must_be_served_reachable_and_one_per_family() {
        let l = addrs(&["127.0.0.1:6033", "10.77.0.1:6033", "[fd00:77::1]:6033"]);
        let t = RewriteTargets::plan(&l, &addrs(&["10.77.0.1:6033", "[fd00:77::1]:6033"])).unwrap();
        assert_eq!(t.container4, Some("10.77.0.1:6033".parse().unwrap()));
        assert_eq!(t.container6, Some("[fd00:77::1]:6033".parse().unwrap()));
        // Mapped form is IPv4.
        let t = RewriteTargets::plan(&l, &addrs(&["[::ffff:10.77.0.1]:6033"])).unwrap();
        assert_eq!(t.container4, Some("10.77.0.1:6033".parse().unwrap()));
        // Served by a wildcard of the right port.
        assert!(RewriteTargets::plan(&addrs(&["0.0.0.0:6033"]), &addrs(&["10.0.0.1:6033"])).is_ok());
        for bad in ["10.77.0.2:6033", "10.77.0.1:7000", "127.0.0.1:6033"] {
            assert!(RewriteTargets::plan(&l, &addrs(&[bad])).is_err(), "{bad} accepted");
        }
        assert!(RewriteTargets::plan(&addrs(&["0.0.0.0:6033"]), &addrs(&["10.0.0.1:6033", "10.0.0.2:6033"])).is_err());
    }

    #[test]
    fn split_puts_mapped_addresses_with_ipv4() {
        let (v4, v6) = split(addrs(&["10.0.0.5:3306", "[::ffff:10.0.0.6]:3306", "[fd00::5]:3306"]));
        assert_eq!(v4.len(), 2);
        assert!(v4.contains(&"10.0.0.6:3306".parse().unwrap()));
        assert_eq!(v6.into_iter().collect::<Vec<_>>(), vec!["[fd00::5]:3306".parse().unwrap()]);
    }

    #[test]
    fn ipv6_keys_keep_the_wire_order() {
        let ep = endpoint6("[fd00:77::1]:3306".parse().unwrap());
        assert_eq!(ep.addr[0].to_ne_bytes(), [0xfd, 0x00, 0x00, 0x77]);
        assert_eq!(ep.addr[3].to_ne_bytes(), [0, 0, 0, 1]);
        assert_eq!(ep.port, 3306);
    }

    #[test]
    fn a_socket_has_a_netns_cookie() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = netns_cookie(&l).unwrap();
        let b = netns_cookie(&std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
        assert_ne!(a, 0);
        assert_eq!(a, b, "two sockets of one namespace share its cookie");
    }
}
