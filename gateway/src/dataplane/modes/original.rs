//! The session hook of the VIP modes: the accepted socket's `local_addr()` is the `VIP:port` the
//! client dialled (docs/dataplane.md §2). It is logged, and used as the session's server only when it
//! names an intercepted server that the gateway can reach directly, i.e. one outside the VIP
//! ranges: a VIP is local on this host (its `local` route), so dialling it would come back here
//! (sk_lookup) or be refused (router).

use std::net::{IpAddr, SocketAddr};

use tokio::net::TcpStream;

use super::plan::Ipv4Cidr;
use crate::config::{Config, SteeringMode};
use crate::planner::Planner;

/// In router / sk_lookup mode, the server of a steered connection; `None` = `[backend] address`.
pub fn vip_backend(stream: &TcpStream, config: &Config, planner: Option<&Planner>) -> Option<SocketAddr> {
    let dp = config.dataplane.as_ref()?;
    if !matches!(dp.mode, SteeringMode::Router | SteeringMode::SkLookup) {
        return None;
    }
    let orig = stream.local_addr().ok()?;
    if orig == config.listen.address {
        return None;
    }
    let in_vip = match orig.ip() {
        IpAddr::V4(ip) => dp.vip_cidrs.iter().filter_map(|c| Ipv4Cidr::parse(c).ok()).any(|c| c.contains(ip)),
        IpAddr::V6(_) => false,
    };
    if in_vip {
        tracing::info!(original = %orig, "steered VIP connection; serving it from [backend]");
        return None;
    }
    if crate::dataplane::steer::is_intercepted(orig, config, planner) {
        tracing::info!(original = %orig, "steered connection to an intercepted server");
        return Some(orig);
    }
    None
}
