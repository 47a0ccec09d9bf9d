//! Route policies (`ObRoutePolicyEnum`) and the names and numbers that select them (docs/routing.md §4, §5).

use std::fmt;

/// ODP's route policies, numbered as `ObRoutePolicyEnum` (docs/routing.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RoutePolicy {
    /// 0: primary/standby balanced, by IDC then merge state.
    MergeIdcOrder = 0,
    /// 1: read-only zones first (the `ob_route_policy` default).
    ReadonlyZoneFirst = 1,
    /// 2: read-only zones only.
    OnlyReadonlyZone = 2,
    /// 3: not-merging zones first.
    UnmergeZoneFirst = 3,
    /// 4: read-write zones only.
    OnlyReadwriteZone = 4,
    /// 5: optimized variant of 0.
    MergeIdcOrderOptimized = 5,
    /// 6: optimized variant of 1.
    ReadonlyZoneFirstOptimized = 6,
    /// 7: optimized variant of 2.
    OnlyReadonlyZoneOptimized = 7,
    /// 8: optimized variant of 3.
    UnmergeZoneFirstOptimized = 8,
    /// 9: optimized variant of 4.
    OnlyReadwriteZoneOptimized = 9,
    /// 10: followers first.
    FollowerFirst = 10,
    /// 11: not-merging followers first.
    UnmergeFollowerFirst = 11,
    /// 12: optimized variant of 10.
    FollowerFirstOptimized = 12,
    /// 13: optimized variant of 11.
    UnmergeFollowerFirstOptimized = 13,
    /// 14: duplicate replicas first (strong reads of duplicate tables).
    DupReplicaFirst = 14,
    /// 15: followers only.
    FollowerOnly = 15,
    /// 16: optimized variant of 15.
    FollowerOnlyOptimized = 16,
    /// 17: only the zones of `proxy_primary_zone_name`, in list order.
    ProxyPrimaryZoneNameOnly = 17,
    /// 18: only the `target_db_server` addresses.
    TargetDbServerOnly = 18,
    /// 19: the tenant's primary zone first, then the normal order.
    PrimaryZoneFirst = 19,
}

impl RoutePolicy {
    /// Every policy, in `ObRoutePolicyEnum` order.
    pub const ALL: [RoutePolicy; 20] = {
        use RoutePolicy as P;
        [
            P::MergeIdcOrder,
            P::ReadonlyZoneFirst,
            P::OnlyReadonlyZone,
            P::UnmergeZoneFirst,
            P::OnlyReadwriteZone,
            P::MergeIdcOrderOptimized,
            P::ReadonlyZoneFirstOptimized,
            P::OnlyReadonlyZoneOptimized,
            P::UnmergeZoneFirstOptimized,
            P::OnlyReadwriteZoneOptimized,
            P::FollowerFirst,
            P::UnmergeFollowerFirst,
            P::FollowerFirstOptimized,
            P::UnmergeFollowerFirstOptimized,
            P::DupReplicaFirst,
            P::FollowerOnly,
            P::FollowerOnlyOptimized,
            P::ProxyPrimaryZoneNameOnly,
            P::TargetDbServerOnly,
            P::PrimaryZoneFirst,
        ]
    };

    /// The policy with ODP's name `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<RoutePolicy> {
        Self::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(name.trim()))
    }

    /// ODP's name, as printed in EXPLAIN ROUTE.
    pub const fn name(self) -> &'static str {
        use RoutePolicy as P;
        match self {
            P::MergeIdcOrder => "MERGE_IDC_ORDER",
            P::ReadonlyZoneFirst => "READONLY_ZONE_FIRST",
            P::OnlyReadonlyZone => "ONLY_READONLY_ZONE",
            P::UnmergeZoneFirst => "UNMERGE_ZONE_FIRST",
            P::OnlyReadwriteZone => "ONLY_READWRITE_ZONE",
            P::MergeIdcOrderOptimized => "MERGE_IDC_ORDER_OPTIMIZED",
            P::ReadonlyZoneFirstOptimized => "READONLY_ZONE_FIRST_OPTIMIZED",
            P::OnlyReadonlyZoneOptimized => "ONLY_READONLY_ZONE_OPTIMIZED",
            P::UnmergeZoneFirstOptimized => "UNMERGE_ZONE_FIRST_OPTIMIZED",
            P::OnlyReadwriteZoneOptimized => "ONLY_READWRITE_ZONE_OPTIMIZED",
            P::FollowerFirst => "FOLLOWER_FIRST",
            P::UnmergeFollowerFirst => "UNMERGE_FOLLOWER_FIRST",
            P::FollowerFirstOptimized => "FOLLOWER_FIRST_OPTIMIZED",
            P::UnmergeFollowerFirstOptimized => "UNMERGE_FOLLOWER_FIRST_OPTIMIZED",
            P::DupReplicaFirst => "DUP_REPLICA_FIRST",
            P::FollowerOnly => "FOLLOWER_ONLY",
            P::FollowerOnlyOptimized => "FOLLOWER_ONLY_OPTIMIZED",
            P::ProxyPrimaryZoneNameOnly => "PROXY_PRIMARY_ZONE_NAME_ONLY",
            P::TargetDbServerOnly => "TARGET_DB_SERVER_ONLY",
            P::PrimaryZoneFirst => "PRIMARY_ZONE_FIRST",
        }
    }

    /// The `_OPTIMIZED` variant that docs/routing.md §4 switches to; `None` for policies without one.
    pub const fn optimized(self) -> Option<RoutePolicy> {
        use RoutePolicy as P;
        match self {
            P::MergeIdcOrder => Some(P::MergeIdcOrderOptimized),
            P::ReadonlyZoneFirst => Some(P::ReadonlyZoneFirstOptimized),
            P::OnlyReadonlyZone => Some(P::OnlyReadonlyZoneOptimized),
            P::UnmergeZoneFirst => Some(P::UnmergeZoneFirstOptimized),
            P::OnlyReadwriteZone => Some(P::OnlyReadwriteZoneOptimized),
            P::FollowerFirst => Some(P::FollowerFirstOptimized),
            P::UnmergeFollowerFirst => Some(P::UnmergeFollowerFirstOptimized),
            P::FollowerOnly => Some(P::FollowerOnlyOptimized),
            _ => None,
        }
    }

    /// Policy selected by the session variable `ob_route_policy` (docs/routing.md §5): 0–3 map to policies
    /// 0–3; `None` (unset) is the default READONLY_ZONE_FIRST. The flag is true for an
    /// unsupported value, which also falls back to READONLY_ZONE_FIRST with a warning.
    pub const fn from_ob_route_policy(value: Option<i64>) -> (RoutePolicy, bool) {
        match value {
            Some(0) => (RoutePolicy::MergeIdcOrder, false),
            None | Some(1) => (RoutePolicy::ReadonlyZoneFirst, false),
            Some(2) => (RoutePolicy::OnlyReadonlyZone, false),
            Some(3) => (RoutePolicy::UnmergeZoneFirst, false),
            Some(_) => (RoutePolicy::ReadonlyZoneFirst, true),
        }
    }
}

impl fmt::Display for RoutePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A value of `@proxy_route_policy` / `proxy_route_policy` (docs/routing.md §5, docs/routing.md §5, docs/routing.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProxyRoutePolicy {
    /// `FOLLOWER_FIRST` → policy 10.
    FollowerFirst,
    /// `UNMERGE_FOLLOWER_FIRST` → policy 11.
    UnmergeFollowerFirst,
    /// `FOLLOWER_ONLY` → policy 15.
    FollowerOnly,
    /// `FORCE_READONLY_ZONE` (documented, docs/routing.md §5): weak reads to read-only zones only, anything
    /// else rejected with error 4007.
    ForceReadonlyZone,
    /// A newer ODP name (`TARGET_REPLICA_TYPE_*`, `WEAKREAD_WEIGHT_LOAD_BALANCE`, docs/routing.md §5): accepted,
    /// routes as MERGE_IDC_ORDER with a warning until specified.
    Unspecified(&'static str),
}

const NEWER_NAMES: [&str; 4] = [
    "TARGET_REPLICA_TYPE_WITH_LEADER",
    "TARGET_REPLICA_TYPE_FOLLOWER_FIRST",
    "TARGET_REPLICA_TYPE_FOLLOWER_ONLY",
    "WEAKREAD_WEIGHT_LOAD_BALANCE",
];

impl ProxyRoutePolicy {
    /// Parses a name, case-insensitively and ignoring surrounding blanks and quotes; unknown
    /// names are `None` (ignored, docs/routing.md §5).
    pub fn parse(name: &str) -> Option<ProxyRoutePolicy> {
        let name = name.trim().trim_matches(|c| c == '\'' || c == '"').trim();
        let is = |s: &str| name.eq_ignore_ascii_case(s);
        if is("FOLLOWER_FIRST") {
            Some(ProxyRoutePolicy::FollowerFirst)
        } else if is("UNMERGE_FOLLOWER_FIRST") {
            Some(ProxyRoutePolicy::UnmergeFollowerFirst)
        } else if is("FOLLOWER_ONLY") {
            Some(ProxyRoutePolicy::FollowerOnly)
        } else if is("FORCE_READONLY_ZONE") {
            Some(ProxyRoutePolicy::ForceReadonlyZone)
        } else {
            NEWER_NAMES.iter().find(|n| is(n)).map(|n| ProxyRoutePolicy::Unspecified(n))
        }
    }

    /// The user variable if it is set and valid, else the configuration's (docs/routing.md §5).
    pub fn resolve(user_var: Option<ProxyRoutePolicy>, config: Option<ProxyRoutePolicy>) -> Option<ProxyRoutePolicy> {
        user_var.or(config)
    }

    /// Canonical upper-case name.
    pub const fn name(self) -> &'static str {
        match self {
            ProxyRoutePolicy::FollowerFirst => "FOLLOWER_FIRST",
            ProxyRoutePolicy::UnmergeFollowerFirst => "UNMERGE_FOLLOWER_FIRST",
            ProxyRoutePolicy::FollowerOnly => "FOLLOWER_ONLY",
            ProxyRoutePolicy::ForceReadonlyZone => "FORCE_READONLY_ZONE",
            ProxyRoutePolicy::Unspecified(n) => n,
        }
    }
}
