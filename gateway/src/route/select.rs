//! The policy selection tree (docs/routing.md §5, `ObTransState::get_route_policy`, and docs/routing.md §5).

use super::candidate::{Candidate, ZoneType};
use super::consistency::{Consistency, ReadConsistency};
use super::error::RouteError;
use super::policy::{ProxyRoutePolicy, RoutePolicy};
use super::request::{RequestKind, RouteRequest};

/// Facts about the tenant and table learnt from the candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TenantFacts {
    /// Some tenant server is in a read-only zone (docs/routing.md §3).
    pub has_readonly_zone: bool,
    /// The table has duplicate (broadcast) replicas.
    pub has_dup_replica: bool,
}

impl TenantFacts {
    /// Derives the facts from a candidate list.
    pub fn of(candidates: &[Candidate]) -> Self {
        TenantFacts {
            has_readonly_zone: candidates.iter().any(|c| c.zone_type == ZoneType::ReadOnly),
            has_dup_replica: candidates.iter().any(|c| c.partition_server && c.duplicate),
        }
    }
}

/// The outcome of the selection tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyChoice {
    /// The policy chosen (before the `_OPTIMIZED` switch of docs/routing.md §4).
    pub policy: RoutePolicy,
    /// FORCE_READONLY_ZONE: only read-only-zone servers, no leader first (docs/routing.md §5).
    pub readonly_only: bool,
    /// Warnings to log and print (ignored or unspecified settings).
    pub warnings: Vec<String>,
}

impl PolicyChoice {
    fn plain(policy: RoutePolicy) -> Self {
        PolicyChoice { policy, readonly_only: false, warnings: Vec::new() }
    }
}

/// Chooses the route policy of a request (docs/routing.md §5), applying FORCE_READONLY_ZONE (docs/routing.md §5).
///
/// # Errors
///
/// [`RouteError::ForceReadonlyZoneNotWeak`] (4007) for a non-weak request under
/// FORCE_READONLY_ZONE.
pub fn choose_policy(
    req: &RouteRequest,
    consistency: Consistency,
    facts: TenantFacts,
) -> Result<PolicyChoice, RouteError> {
    if let Some(target) = req.target_db_server.as_ref().filter(|t| !t.addrs.is_empty()) {
        // Only the tenant's own servers: a hint must not make the gateway log in anywhere else.
        if let Some(addr) = target.addrs.iter().find(|a| !req.candidates.iter().any(|c| c.addr == **a)) {
            return Err(RouteError::target(&addr.to_string(), super::error::TargetRefusal::NotATenantServer));
        }
        return Ok(PolicyChoice::plain(RoutePolicy::TargetDbServerOnly));
    }
    let mut proxy_policy = ProxyRoutePolicy::resolve(req.proxy_route_policy_var, req.proxy_route_policy_config);
    if proxy_policy == Some(ProxyRoutePolicy::ForceReadonlyZone) {
        // `SET`, `USE`, `BEGIN`, `COMMIT` read no table data: they take the tree without the
        // policy, so that a session under it can always change it (`SET @proxy_route_policy`).
        if req.kind == RequestKind::SessionStatement && consistency != Consistency::Weak {
            proxy_policy = None;
        } else {
            return force_readonly_zone(req, consistency);
        }
    }
    let plain_strong_select =
        consistency == Consistency::Strong && req.consistency.is_select && !req.consistency.locking_read;
    if plain_strong_select && facts.has_dup_replica {
        return Ok(PolicyChoice::plain(RoutePolicy::DupReplicaFirst));
    }
    if facts.has_readonly_zone {
        Ok(readonly_deployment(req, consistency))
    } else {
        Ok(normal_deployment(req, consistency, proxy_policy))
    }
}

/// docs/routing.md §5: weak reads (and non-`COM_QUERY` commands such as the login) go to read-only zones
/// only; any other request is refused with error 4007.
fn force_readonly_zone(req: &RouteRequest, consistency: Consistency) -> Result<PolicyChoice, RouteError> {
    if consistency == Consistency::Weak || req.kind == RequestKind::Command {
        Ok(PolicyChoice { policy: RoutePolicy::OnlyReadonlyZone, readonly_only: true, warnings: Vec::new() })
    } else {
        Err(RouteError::ForceReadonlyZoneNotWeak(consistency))
    }
}

/// The tenant has read-only zones: `ob_route_policy` for weak reads, read-write zones otherwise.
fn readonly_deployment(req: &RouteRequest, consistency: Consistency) -> PolicyChoice {
    if consistency == Consistency::Weak {
        return from_ob_route_policy(req.ob_route_policy);
    }
    if !supports_readonly_zone(req, consistency) {
        return PolicyChoice::plain(RoutePolicy::OnlyReadwriteZone);
    }
    match req.consistency.session {
        Some(ReadConsistency::Weak) => from_ob_route_policy(req.ob_route_policy),
        Some(_) => PolicyChoice::plain(RoutePolicy::OnlyReadwriteZone),
        None => PolicyChoice::plain(RoutePolicy::MergeIdcOrder),
    }
}

/// `is_request_readonly_zone_support`.
fn supports_readonly_zone(req: &RouteRequest, consistency: Consistency) -> bool {
    match req.kind {
        RequestKind::Select => consistency == Consistency::Weak || !req.names_table,
        RequestKind::SessionStatement | RequestKind::Command => true,
        RequestKind::OtherStatement => false,
    }
}

fn from_ob_route_policy(value: Option<i64>) -> PolicyChoice {
    let (policy, invalid) = RoutePolicy::from_ob_route_policy(value);
    let mut choice = PolicyChoice::plain(policy);
    if invalid {
        let v = value.unwrap_or_default();
        choice.warnings.push(format!("unsupported ob_route_policy {v}, using {policy}"));
    }
    choice
}

/// No read-only zones: follower policies for weak reads, primary zones for strong requests.
fn normal_deployment(req: &RouteRequest, consistency: Consistency, proxy: Option<ProxyRoutePolicy>) -> PolicyChoice {
    let has_pzn = req.proxy_primary_zone_name.as_deref().is_some_and(|z| !z.is_empty());
    if consistency == Consistency::Weak {
        return match proxy {
            Some(ProxyRoutePolicy::FollowerFirst) => PolicyChoice::plain(RoutePolicy::FollowerFirst),
            Some(ProxyRoutePolicy::UnmergeFollowerFirst) => PolicyChoice::plain(RoutePolicy::UnmergeFollowerFirst),
            Some(ProxyRoutePolicy::FollowerOnly) => PolicyChoice::plain(RoutePolicy::FollowerOnly),
            Some(p @ (ProxyRoutePolicy::Unspecified(_) | ProxyRoutePolicy::ForceReadonlyZone)) => {
                let mut c = PolicyChoice::plain(RoutePolicy::MergeIdcOrder);
                c.warnings.push(format!("proxy_route_policy {} is not specified yet, using MERGE_IDC_ORDER", p.name()));
                c
            }
            None if has_pzn => PolicyChoice::plain(RoutePolicy::ProxyPrimaryZoneNameOnly),
            None => PolicyChoice::plain(RoutePolicy::MergeIdcOrder),
        };
    }
    if has_pzn {
        PolicyChoice::plain(RoutePolicy::ProxyPrimaryZoneNameOnly)
    } else if req.enable_primary_zone && !req.random_routing_mode {
        PolicyChoice::plain(RoutePolicy::PrimaryZoneFirst)
    } else {
        PolicyChoice::plain(RoutePolicy::MergeIdcOrder)
    }
}
