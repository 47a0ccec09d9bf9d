//! What the VIP steering modes steer, derived from `[dataplane]`: the VIP ranges, the ports, and
//! the entries of the `VIP_CIDRS` LPM trie. Pure values, checked before anything is attached.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};

use gateway_common::router::{VipKey, VIP_MAP_MAX};

use crate::config::{Config, SteeringMode};

use super::super::DataplaneError;

/// Ports steered when no `intercept` address inside a VIP range names one: MySQL and OceanBase.
pub const DEFAULT_PORTS: [u16; 2] = [3306, 2881];

/// An IPv4 prefix such as `10.255.0.0/16` (host bits must be zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ipv4Cidr {
    /// Network address.
    pub addr: Ipv4Addr,
    /// Prefix length, 0..=32.
    pub len: u8,
}

impl Ipv4Cidr {
    /// Parses `a.b.c.d/n` or a bare address (a /32).
    pub fn parse(text: &str) -> Result<Self, DataplaneError> {
        let bad = |why: &str| DataplaneError::Config(format!("VIP range `{text}`: {why}"));
        let (addr, len) = match text.trim().split_once('/') {
            Some((a, l)) => (a, l.parse::<u8>().map_err(|_| bad("bad prefix length"))?),
            None => (text.trim(), 32),
        };
        let addr: Ipv4Addr = addr.parse().map_err(|_| bad("not an IPv4 address"))?;
        if len > 32 {
            return Err(bad("prefix length above 32"));
        }
        let cidr = Self { addr, len };
        if u32::from(addr) & !cidr.mask() != 0 {
            return Err(bad("host bits set (write the network address)"));
        }
        Ok(cidr)
    }

    fn mask(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.len))
        }
    }

    /// Whether `ip` lies in this range.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr)
    }
}

impl fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// Which VIP steering mode runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VipMode {
    /// TC ingress + `bpf_sk_assign` on an interface (docs/dataplane.md §2).
    Router,
    /// `sk_lookup` on the network namespace (docs/dataplane.md §2).
    SkLookup,
}

impl VipMode {
    /// The configuration spelling (`router`, `sk_lookup`).
    pub fn name(self) -> &'static str {
        match self {
            VipMode::Router => "router",
            VipMode::SkLookup => "sk_lookup",
        }
    }
}

/// The checked steering plan of a router or sk_lookup configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VipPlan {
    /// The mode.
    pub mode: VipMode,
    /// Router mode: the ingress interface.
    pub interface: Option<String>,
    /// VIP ranges (each gets a `local` route on `lo`).
    pub cidrs: Vec<Ipv4Cidr>,
    /// Steered destination ports.
    pub ports: Vec<u16>,
}

impl VipPlan {
    /// The plan of `config`, `None` when its mode is not router or sk_lookup.
    pub fn from_config(config: &Config) -> Result<Option<Self>, DataplaneError> {
        let Some(dp) = &config.dataplane else {
            return Ok(None);
        };
        let mode = match dp.mode {
            SteeringMode::Router => VipMode::Router,
            SteeringMode::SkLookup => VipMode::SkLookup,
            SteeringMode::Off | SteeringMode::Cgroup => return Ok(None),
        };
        let interface = match (mode, &dp.router_interface) {
            (VipMode::Router, None) => {
                return Err(DataplaneError::Config("mode `router` needs `router_interface`".into()))
            }
            (VipMode::Router, Some(i)) if i.trim().is_empty() => {
                return Err(DataplaneError::Config("`router_interface` is empty".into()))
            }
            (_, i) => i.clone(),
        };
        let cidrs = dp.vip_cidrs.iter().map(|c| Ipv4Cidr::parse(c)).collect::<Result<Vec<_>, _>>()?;
        if cidrs.is_empty() {
            return Err(DataplaneError::Config(format!("mode `{}` needs at least one `vip_cidrs` entry", mode.name())));
        }
        let ports = steered_ports(&cidrs, &dp.intercept);
        let plan = Self { mode, interface, cidrs, ports };
        if plan.entries().len() > VIP_MAP_MAX as usize {
            return Err(DataplaneError::Config(format!(
                "{} VIP ranges x {} ports exceed the {VIP_MAP_MAX} entries of the VIP map",
                plan.cidrs.len(),
                plan.ports.len()
            )));
        }
        Ok(Some(plan))
    }

    /// The LPM trie entries: (prefix length, key) for every range × port.
    pub fn entries(&self) -> Vec<(u32, VipKey)> {
        let mut out = Vec::with_capacity(self.cidrs.len() * self.ports.len());
        for cidr in &self.cidrs {
            for &port in &self.ports {
                out.push((VipKey::prefix_len(cidr.len), VipKey::new(cidr.addr.octets(), port)));
            }
        }
        out
    }
}

/// Ports of the `intercept` addresses that lie in a VIP range; [`DEFAULT_PORTS`] if there are none.
fn steered_ports(cidrs: &[Ipv4Cidr], intercept: &[SocketAddr]) -> Vec<u16> {
    let ports: BTreeSet<u16> = intercept
        .iter()
        .filter_map(|a| match a {
            SocketAddr::V4(v4) if cidrs.iter().any(|c| c.contains(*v4.ip())) => Some(v4.port()),
            _ => None,
        })
        .collect();
    if ports.is_empty() {
        DEFAULT_PORTS.to_vec()
    } else {
        ports.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidrs_parse_and_match() {
        let c = Ipv4Cidr::parse("10.255.0.0/16").unwrap();
        assert!(c.contains("10.255.3.4".parse().unwrap()));
        assert!(!c.contains("10.254.0.1".parse().unwrap()));
        assert_eq!(Ipv4Cidr::parse("10.1.2.3").unwrap().len, 32);
        assert_eq!(Ipv4Cidr::parse("0.0.0.0/0").unwrap().to_string(), "0.0.0.0/0");
        for bad in ["10.255.0.1/16", "10.0.0.0/33", "x/8", "10.0.0.0/", "::1/128"] {
            assert!(Ipv4Cidr::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ports_come_from_intercepts_inside_the_ranges() {
        let cidrs = vec![Ipv4Cidr::parse("10.255.0.0/16").unwrap()];
        assert_eq!(steered_ports(&cidrs, &[]), DEFAULT_PORTS.to_vec());
        let intercept = ["10.255.0.1:3307".parse().unwrap(), "192.0.2.1:4000".parse().unwrap()];
        assert_eq!(steered_ports(&cidrs, &intercept), vec![3307]);
    }

    #[test]
    fn trie_keys_put_the_port_first() {
        let plan = VipPlan {
            mode: VipMode::SkLookup,
            interface: None,
            cidrs: vec![Ipv4Cidr::parse("10.255.0.0/16").unwrap()],
            ports: vec![3306],
        };
        let entries = plan.entries();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].0, 32);
        assert_eq!(entries[0].1.port, [0x0c, 0xea]);
        assert_eq!(entries[0].1.addr, [10, 255, 0, 0]);
    }
}
