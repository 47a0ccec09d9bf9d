//! Candidate ordering: leader first, primary zone, the policy's LDC order, the `_OPTIMIZED`
//! switch (docs/routing.md §4).

use std::net::SocketAddr;

use super::candidate::{Candidate, ReplicaType};
use super::congestion::CongestionState;
use super::consistency::Consistency;
use super::entry::RouteEntry;
use super::ldc::{IdcType, LdcCode, RoleLetter};
use super::orders::{self, Order};
use super::policy::RoutePolicy;
use super::primary_zone::{zone_position, PrimaryZone};
use super::request::PartitionState;

/// Why a candidate is at its place in the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
    /// The tablet's leader, first for strong reads (docs/routing.md §4).
    Leader,
    /// A server of the tenant's primary zone, by weight group (docs/routing.md §4).
    PrimaryZone {
        /// Weight group (0 first).
        weight: usize,
    },
    /// An entry of the policy's LDC order.
    Entry(RouteEntry),
    /// A zone of `proxy_primary_zone_name`, by list position (policy 17).
    ProxyPrimaryZone {
        /// Position of the zone in the list.
        position: usize,
    },
    /// A `target_db_server` address (policy 18).
    TargetDbServer,
}

impl Via {
    /// Route-type name as printed in `ROUTE_POLICY:{chosen_route_type:…}`.
    pub fn route_type(&self) -> String {
        match self {
            Via::Leader => "ROUTE_TYPE_LEADER".to_owned(),
            Via::PrimaryZone { .. } => "ROUTE_TYPE_PRIMARY_ZONE".to_owned(),
            Via::Entry(e) => e.odp_route_type(),
            Via::ProxyPrimaryZone { .. } => "ROUTE_TYPE_PROXY_PRIMARY_ZONE".to_owned(),
            Via::TargetDbServer => "ROUTE_TYPE_TARGET_DB_SERVER".to_owned(),
        }
    }
}

/// One candidate at its place in the order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedCandidate {
    /// Server address.
    pub addr: SocketAddr,
    /// LDC letter code (docs/routing.md §3); `None` for a target address that is not a known server.
    pub code: Option<LdcCode>,
    /// Why it is here.
    pub via: Via,
    /// Congestion state when the order was built.
    pub congestion: CongestionState,
    /// Replica type.
    pub replica_type: ReplicaType,
}

/// Candidates in order: inline for the usual few replicas (no allocation per routed statement).
pub type Ranked = smallvec::SmallVec<[RankedCandidate; 3]>;

/// A candidate with its LDC code.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Classified<'a> {
    pub cand: &'a Candidate,
    pub code: LdcCode,
}

impl Classified<'_> {
    fn rank(&self, via: Via) -> RankedCandidate {
        RankedCandidate {
            addr: self.cand.addr,
            code: Some(self.code),
            via,
            congestion: self.cand.congestion,
            replica_type: self.cand.replica_type,
        }
    }

    fn is_leader(&self) -> bool {
        self.code.partition && self.code.role == Some(RoleLetter::Leader)
    }
}

/// Settings the order depends on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OrderParams<'a> {
    pub consistency: Consistency,
    pub policy: RoutePolicy,
    pub readonly_only: bool,
    pub partition: PartitionState,
    pub primary_zone: &'a PrimaryZone,
    pub proxy_primary_zone_name: &'a [String],
    pub targets: &'a [SocketAddr],
}

/// The policy order of the candidates, before congestion is taken into account.
#[derive(Debug, Clone)]
pub(crate) struct PolicyOrder {
    pub ranked: Ranked,
    /// The policy actually walked (the `_OPTIMIZED` variant after the switch).
    pub effective: RoutePolicy,
}

/// Orders a shuffled pool of classified candidates under `p.policy`.
pub(crate) fn build(pool: &[Classified<'_>], p: &OrderParams<'_>) -> PolicyOrder {
    match p.policy {
        RoutePolicy::TargetDbServerOnly => plain(target_order(pool, p.targets), p.policy),
        RoutePolicy::ProxyPrimaryZoneNameOnly => plain(proxy_zone_order(pool, p.proxy_primary_zone_name), p.policy),
        _ => ldc_order(pool, p),
    }
}

fn plain(ranked: Ranked, effective: RoutePolicy) -> PolicyOrder {
    PolicyOrder { ranked, effective }
}

/// Policy 18: the target addresses in the given order, known servers with their code.
fn target_order(pool: &[Classified<'_>], targets: &[SocketAddr]) -> Ranked {
    let mut out = Ranked::new();
    for addr in targets {
        if out.iter().any(|r| r.addr == *addr) {
            continue;
        }
        let ranked = match pool.iter().find(|x| x.cand.addr == *addr) {
            Some(x) => x.rank(Via::TargetDbServer),
            None => RankedCandidate {
                addr: *addr,
                code: None,
                via: Via::TargetDbServer,
                congestion: CongestionState::Alive,
                replica_type: ReplicaType::Full,
            },
        };
        out.push(ranked);
    }
    out
}

/// Policy 17: servers of the listed zones, by list position, random within a zone.
fn proxy_zone_order(pool: &[Classified<'_>], zones: &[String]) -> Ranked {
    let mut picked: Vec<(usize, RankedCandidate)> = pool
        .iter()
        .filter_map(|x| {
            let position = zone_position(zones, &x.cand.zone)?;
            Some((position, x.rank(Via::ProxyPrimaryZone { position })))
        })
        .collect();
    picked.sort_by_key(|(pos, _)| *pos);
    picked.into_iter().map(|(_, r)| r).collect()
}

/// Bookkeeping of which pool members were placed.
struct Walk<'p, 'a> {
    pool: &'p [Classified<'a>],
    /// Inline for the usual few replicas: no allocation per statement.
    used: smallvec::SmallVec<[bool; 16]>,
    /// Members not placed yet: the walk ends when none is left.
    left: usize,
    out: Ranked,
}

impl<'p, 'a> Walk<'p, 'a> {
    fn new(pool: &'p [Classified<'a>]) -> Self {
        let (used, left) = (smallvec::smallvec![false; pool.len()], pool.len());
        Walk { pool, used, left, out: Ranked::with_capacity(pool.len()) }
    }

    fn remaining(&self) -> impl Iterator<Item = &Classified<'a>> + '_ {
        self.pool.iter().zip(&self.used).filter(|(_, used)| !**used).map(|(x, _)| x)
    }

    /// Places every unused member accepted by `pred`, in pool order.
    fn take_all(&mut self, pred: impl Fn(&Classified<'a>) -> Option<Via>) {
        for (i, x) in self.pool.iter().enumerate() {
            if self.used[i] {
                continue;
            }
            if let Some(via) = pred(x) {
                self.used[i] = true;
                self.left -= 1;
                self.out.push(x.rank(via));
            }
        }
    }

    /// Places the first unused member accepted by `pred`.
    fn take_first(&mut self, pred: impl Fn(&Classified<'a>) -> bool, via: Via) -> Option<RankedCandidate> {
        let i = (0..self.pool.len()).find(|&i| !self.used[i] && pred(&self.pool[i]))?;
        self.used[i] = true;
        self.left -= 1;
        let ranked = self.pool[i].rank(via);
        self.out.push(ranked.clone());
        Some(ranked)
    }
}

/// Policies with an LDC order (0–16, and 19 over MERGE_IDC_ORDER).
fn ldc_order(pool: &[Classified<'_>], p: &OrderParams<'_>) -> PolicyOrder {
    let mut walk = Walk::new(pool);
    let leader_first =
        p.consistency == Consistency::Strong && p.policy != RoutePolicy::DupReplicaFirst && !p.readonly_only;
    let leader = if leader_first { walk.take_first(Classified::is_leader, Via::Leader) } else { None };
    if p.policy == RoutePolicy::PrimaryZoneFirst && p.partition != PartitionState::Located {
        take_primary_zone(&mut walk, p.primary_zone);
    }
    let base = if p.policy == RoutePolicy::PrimaryZoneFirst { RoutePolicy::MergeIdcOrder } else { p.policy };
    let (walked, start) = optimized_switch(&walk, base, p.consistency, leader.as_ref());
    if let Some(order) = orders::order(walked) {
        walk_entries(&mut walk, order, start);
    }
    let effective = if p.policy == RoutePolicy::PrimaryZoneFirst { p.policy } else { walked };
    PolicyOrder { ranked: walk.out, effective }
}

/// docs/routing.md §4: primary-zone servers by weight group; the pool is shuffled, so a stable sort keeps the
/// servers of one group in random order.
fn take_primary_zone(walk: &mut Walk<'_, '_>, pz: &PrimaryZone) {
    if pz.is_empty() {
        return;
    }
    let start = walk.out.len();
    walk.take_all(|x| pz.weight(&x.cand.zone).map(|weight| Via::PrimaryZone { weight }));
    walk.out[start..].sort_by_key(|r| match r.via {
        Via::PrimaryZone { weight } => weight,
        _ => usize::MAX,
    });
}

/// docs/routing.md §4: switch to the `_OPTIMIZED` variant when no same-region partition server is usable and
/// the request is weak or has no usable leader. Returns the policy to walk and the entry index
/// to start at (the first remote-partition entry after a switch).
fn optimized_switch(
    walk: &Walk<'_, '_>,
    base: RoutePolicy,
    consistency: Consistency,
    leader: Option<&RankedCandidate>,
) -> (RoutePolicy, usize) {
    let (Some(opt), Some(order)) = (base.optimized(), orders::order(base)) else {
        return (base, 0);
    };
    let local_available = walk.remaining().any(|x| {
        x.code.partition
            && x.code.idc != IdcType::OtherRegion
            && !x.cand.congestion.is_force_congested()
            && orders::entries(order).any(|e| e.matches(&x.code))
    });
    let leader_usable = leader.is_some_and(|l| !l.congestion.is_force_congested());
    if local_available || (consistency == Consistency::Strong && leader_usable) {
        return (base, 0);
    }
    let start = orders::order(opt).and_then(orders::first_remote_partition).unwrap_or(0);
    (opt, start)
}

/// Walks the entries from `start` to the end, then the skipped ones before `start` (their
/// servers are force-congested, so they end up last anyway).
fn walk_entries(walk: &mut Walk<'_, '_>, order: Order, start: usize) {
    // Two passes over the static order instead of collecting it: no allocation per statement.
    for entry in orders::entries(order).skip(start).chain(orders::entries(order).take(start)) {
        // Every member placed: the remaining entries would place none.
        if walk.left == 0 {
            break;
        }
        walk.take_all(|x| entry.matches(&x.code).then_some(Via::Entry(*entry)));
    }
}
