//! The route decision: consistency, policy, ordered candidates, congestion, trace (docs/routing.md §1 stages 6–8).

use std::borrow::Cow;
use std::net::SocketAddr;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::candidate::Candidate;
use super::consistency::{decide_consistency, Consistency, ConsistencyRule};
use super::error::RouteError;
use super::explain;
use super::ldc::LdcContext;
use super::order::{self, Classified, OrderParams, Ranked, RankedCandidate};
use super::policy::RoutePolicy;
use super::request::{PartitionState, RouteRequest};
use super::select::{choose_policy, PolicyChoice, TenantFacts};
use super::trace::RoutePlan;

/// Where a request goes, why, and where it goes next if that fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteDecision {
    /// The chosen server: the first candidate of the order.
    pub chosen: RankedCandidate,
    /// The remaining candidates in retry order: usable ones in policy order, then congested ones
    /// by increasing severity (dead last).
    pub retry: Ranked,
    /// Every candidate was congested: the chosen one is tried anyway (`force_retry_congested`).
    pub force_retry_congested: bool,
    /// Congested candidates that the policy ranked before the first usable one (skipped, docs/routing.md §6);
    /// all of them when every candidate is congested.
    pub skipped_congested: Vec<RankedCandidate>,
    /// Consistency of the request.
    pub consistency: Consistency,
    /// Rule of docs/routing.md §2 that decided the consistency.
    pub consistency_rule: ConsistencyRule,
    /// Policy chosen by the selection tree (docs/routing.md §5).
    pub policy: RoutePolicy,
    /// Policy actually walked: `policy`, or its `_OPTIMIZED` variant (docs/routing.md §4).
    pub effective_policy: RoutePolicy,
    /// Warnings (ignored or unspecified settings).
    pub warnings: Vec<String>,
    /// Seed of the tie-breaking RNG.
    pub seed: u64,
    /// The trace, printable as EXPLAIN ROUTE.
    pub plan: RoutePlan,
}

impl RouteDecision {
    /// The chosen server's address.
    pub fn server(&self) -> SocketAddr {
        self.chosen.addr
    }

    /// The whole order: chosen, then the retry candidates.
    pub fn order(&self) -> impl Iterator<Item = &RankedCandidate> {
        std::iter::once(&self.chosen).chain(&self.retry)
    }

    /// Connection attempts allowed (docs/routing.md §7): the largest of the target address count,
    /// `connect_observer_max_retries` and 2 × candidates + 1.
    pub fn max_attempts(&self, connect_observer_max_retries: usize) -> usize {
        let n = 1 + self.retry.len();
        let targets = if self.policy == RoutePolicy::TargetDbServerOnly { n } else { 0 };
        targets.max(connect_observer_max_retries).max(2 * n + 1)
    }
}

/// Decides the route of one request. Pure and deterministic for a given request (seed included).
///
/// # Errors
///
/// [`RouteError::ForceReadonlyZoneNotWeak`] (4007) for a non-weak request under
/// FORCE_READONLY_ZONE; [`RouteError::NoCandidate`] when no server fits the policy.
pub fn decide(req: &RouteRequest) -> Result<RouteDecision, RouteError> {
    let mut decision = decide_untraced(req)?;
    decision.plan = explain::plan(req, &decision);
    Ok(decision)
}

/// [`decide`] without the EXPLAIN trace (`plan` stays empty): the per-statement path of a
/// routed session, which never prints it.
///
/// # Errors
///
/// As [`decide`].
pub fn decide_untraced(req: &RouteRequest) -> Result<RouteDecision, RouteError> {
    let (consistency, consistency_rule) = decide_consistency(&req.consistency);
    let candidates = dedup(&req.candidates);
    let choice = choose_policy(req, consistency, TenantFacts::of(&candidates))?;
    let pool_order = order_candidates(req, &candidates, consistency, &choice);
    // In place: the order is not moved or copied again (it is most of the decision's size).
    let mut retry = pool_order.ranked;
    let skipped_congested = apply_congestion(&mut retry);
    if retry.is_empty() {
        return Err(RouteError::NoCandidate(choice.policy));
    }
    let chosen = retry.remove(0);
    Ok(RouteDecision {
        force_retry_congested: chosen.congestion.is_congested(),
        chosen,
        retry,
        skipped_congested,
        consistency,
        consistency_rule,
        policy: choice.policy,
        effective_policy: pool_order.effective,
        warnings: choice.warnings,
        seed: req.seed,
        plan: RoutePlan::default(),
    })
}

/// One entry per address; a partition-server entry wins over a tenant-server entry. Without
/// duplicates (the planner's lists), the candidates as given.
fn dedup(candidates: &[Candidate]) -> Cow<'_, [Candidate]> {
    let duplicated = candidates.iter().enumerate().any(|(i, c)| candidates[..i].iter().any(|o| o.addr == c.addr));
    if !duplicated {
        return Cow::Borrowed(candidates);
    }
    let mut out: Vec<Candidate> = Vec::with_capacity(candidates.len());
    for c in candidates {
        match out.iter_mut().find(|o| o.addr == c.addr) {
            Some(o) if c.partition_server && !o.partition_server => *o = c.clone(),
            Some(_) => {}
            None => out.push(c.clone()),
        }
    }
    Cow::Owned(out)
}

/// Classifies and shuffles the candidates, then orders them under the chosen policy.
fn order_candidates(
    req: &RouteRequest,
    candidates: &[Candidate],
    consistency: Consistency,
    choice: &PolicyChoice,
) -> order::PolicyOrder {
    let ldc = LdcContext::new(&req.client, candidates, req.disable_merge_status_check);
    let located = req.partition != PartitionState::NoLocation;
    // Inline for the usual few replicas: no allocation per statement.
    let mut pool: smallvec::SmallVec<[Classified<'_>; 8]> = candidates
        .iter()
        .filter(|c| !c.replica_type.is_log_only())
        .filter(|c| !choice.readonly_only || c.zone_type == super::candidate::ZoneType::ReadOnly)
        .map(|c| Classified { cand: c, code: ldc.classify(c, located) })
        .collect();
    // A small non-cryptographic generator: the shuffle only breaks ties; seeding a ChaCha
    // generator per statement cost a block computation each time. One candidate has no tie.
    if pool.len() > 1 {
        pool.shuffle(&mut SmallRng::seed_from_u64(req.seed));
    }
    let targets = req.target_db_server.as_ref().map(|t| t.addrs.as_slice()).unwrap_or_default();
    let params = OrderParams {
        consistency,
        policy: choice.policy,
        readonly_only: choice.readonly_only,
        partition: req.partition,
        primary_zone: &req.primary_zone,
        proxy_primary_zone_name: req.proxy_primary_zone_name.as_deref().unwrap_or_default(),
        targets,
    };
    order::build(&pool, &params)
}

/// Moves congested candidates behind the usable ones (stable, by severity) and reports those
/// the policy had ranked before the first usable one.
fn apply_congestion(ranked: &mut Ranked) -> Vec<RankedCandidate> {
    // The usual case: nothing congested, nothing to move.
    if ranked.iter().all(|r| !r.congestion.is_congested()) {
        return Vec::new();
    }
    // Empty, so not allocated, unless a candidate is congested.
    let skipped: Vec<RankedCandidate> = match ranked.iter().position(|r| !r.congestion.is_congested()) {
        Some(first_usable) => ranked[..first_usable].to_vec(),
        None => ranked.to_vec(),
    };
    ranked.sort_by_key(|r| r.congestion.severity());
    skipped
}
