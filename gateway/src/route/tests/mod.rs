//! Tests of the route engine, with fixtures that build candidates from LDC letter codes.

mod congestion;
mod consistency;
mod decide;
mod explain;
mod ldc;
mod orders;
mod seeds;
mod select;

use std::net::SocketAddr;

use super::candidate::{Candidate, Role, ZoneType};
use super::congestion::CongestionState;
use super::decision::RouteDecision;
use super::ldc::ClientLocation;
use super::request::RouteRequest;

/// The gateway's IDC in every fixture: IDC `hz1` in region `hz`.
pub(super) fn client() -> ClientLocation {
    ClientLocation { idc: Some("hz1".into()), regions: Vec::new() }
}

/// Address `10.0.0.n:2881`.
pub(super) fn addr(n: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, n], 2881))
}

/// A server whose LDC code (seen from [`client`]) is `code`: `A`/`B`/`C` (zone `hz1-z*`,
/// `hz2-z*`, `sh1-z*`), `N`/`M`, optional `R`/`W` (default W), `P`/`T`, optional `L`/`F`/`D`
/// (default F for P).
pub(super) fn server(code: &str, n: u8) -> Candidate {
    let b = code.as_bytes();
    let (region, idc) = match b[0] {
        b'A' => ("hz", "hz1"),
        b'B' => ("hz", "hz2"),
        _ => ("sh", "sh1"),
    };
    let mut i = 2;
    let zone_type = match b[i] {
        b'R' => {
            i += 1;
            ZoneType::ReadOnly
        }
        b'W' => {
            i += 1;
            ZoneType::ReadWrite
        }
        _ => ZoneType::ReadWrite,
    };
    let partition = b[i] == b'P';
    let role = match b.get(i + 1) {
        Some(b'L') => Role::Leader,
        _ if partition => Role::Follower,
        _ => Role::None,
    };
    let zone = format!("{idc}-z{n}");
    Candidate::tenant_server(addr(n), &zone, region, idc)
        .with_zone_type(zone_type)
        .with_merging(b[1] == b'M')
        .with_replica(role)
        .with_duplicate(b.get(i + 1) == Some(&b'D'))
}

/// Servers numbered 1, 2, … in the order of `codes`.
pub(super) fn servers(codes: &[&str]) -> Vec<Candidate> {
    codes.iter().enumerate().map(|(i, c)| server(c, i as u8 + 1)).collect()
}

/// Sets a server's congestion state.
pub(super) fn congested(mut c: Candidate, state: CongestionState) -> Candidate {
    c.congestion = state;
    c
}

/// A weak SELECT naming a located table, from [`client`].
pub(super) fn weak_select(candidates: Vec<Candidate>, seed: u64) -> RouteRequest {
    let mut req = RouteRequest::select(candidates, seed);
    req.client = client();
    req.consistency.hint = Some(super::consistency::Consistency::Weak);
    req
}

/// A strong SELECT naming a located table, from [`client`].
pub(super) fn strong_select(candidates: Vec<Candidate>, seed: u64) -> RouteRequest {
    let mut req = RouteRequest::select(candidates, seed);
    req.client = client();
    req
}

/// LDC codes of the decision's order.
pub(super) fn codes(d: &RouteDecision) -> Vec<String> {
    d.order().map(|r| r.code.map(|c| c.to_string()).unwrap_or_default()).collect()
}

/// Addresses (host byte) of the decision's order.
pub(super) fn hosts(d: &RouteDecision) -> Vec<u8> {
    d.order()
        .map(|r| match r.addr {
            SocketAddr::V4(a) => a.ip().octets()[3],
            SocketAddr::V6(_) => 0,
        })
        .collect()
}

/// Drops the fifth letter (role) of partition-server codes: `ANWPL` → `ANWP`.
pub(super) fn without_role(codes: &[String]) -> Vec<String> {
    codes.iter().map(|c| c.chars().take(4).collect()).collect()
}
