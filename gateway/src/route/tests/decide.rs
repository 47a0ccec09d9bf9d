//! Whole decisions: leader first, the optimized switch, congestion, ties, fallbacks.

use std::collections::HashSet;

use super::{addr, codes, congested, hosts, server, servers, strong_select, weak_select};
use crate::route::candidate::ReplicaType;
use crate::route::congestion::{CongestionKind, CongestionState};
use crate::route::decision::decide;
use crate::route::order::Via;
use crate::route::policy::{ProxyRoutePolicy, RoutePolicy};
use crate::route::primary_zone::PrimaryZone;
use crate::route::request::{PartitionState, RequestKind, TargetDbServer, TargetSource};

const DEAD: CongestionState = CongestionState::Congested(CongestionKind::Dead);
const ALIVE_CONGESTED: CongestionState = CongestionState::Congested(CongestionKind::Alive);

#[test]
fn strong_read_leader_first_then_policy_order() {
    // Leader in another region, followers local: the leader still comes first (docs/routing.md §4).
    let cands = servers(&["ANWPF", "BNWPF", "CNWPL", "ANWT"]);
    for seed in 0..8 {
        let d = decide(&strong_select(cands.clone(), seed)).unwrap();
        assert_eq!(d.chosen.via, Via::Leader);
        assert_eq!(d.chosen.via.route_type(), "ROUTE_TYPE_LEADER");
        assert_eq!(codes(&d), ["CNWPL", "ANWPF", "BNWPF", "ANWT"]);
        assert_eq!(d.policy, RoutePolicy::PrimaryZoneFirst);
    }
}

#[test]
fn weak_read_treats_the_leader_as_an_ordinary_candidate() {
    let d = decide(&weak_select(servers(&["ANWPF", "BNWPF", "CNWPL"]), 3)).unwrap();
    assert_eq!(codes(&d), ["ANWPF", "BNWPF", "CNWPL"]);
    assert_eq!(d.chosen.via.route_type(), "ROUTE_TYPE_PARTITION_UNMERGE_LOCAL");
}

#[test]
fn congested_leader_is_skipped_and_retried_last() {
    let mut cands = servers(&["ANWPL", "ANWPF", "BNWPF"]);
    cands[0] = congested(cands[0].clone(), ALIVE_CONGESTED);
    let d = decide(&strong_select(cands, 1)).unwrap();
    assert_eq!(hosts(&d), [2, 3, 1]);
    assert_eq!(d.skipped_congested.len(), 1);
    assert!(!d.force_retry_congested);
}

#[test]
fn dead_after_other_congested_and_force_retry_when_all_congested() {
    let cands = vec![
        congested(server("ANWPF", 1), DEAD),
        congested(server("BNWPF", 2), ALIVE_CONGESTED),
        congested(server("CNWPF", 3), CongestionState::Congested(CongestionKind::Detect)),
    ];
    let d = decide(&weak_select(cands, 1)).unwrap();
    assert_eq!(hosts(&d), [3, 2, 1]);
    assert!(d.force_retry_congested);
}

#[test]
fn retry_due_server_is_usable_in_place() {
    let cands = vec![congested(server("ANWPF", 1), CongestionState::RetryDue), server("BNWPF", 2)];
    let d = decide(&weak_select(cands, 1)).unwrap();
    assert_eq!(hosts(&d), [1, 2]);
}

/// docs/routing.md §4 cases: (case, candidates, strong?, congested hosts, expected policy walked, expected order)
#[test]
fn optimized_switch() {
    type Case = (&'static str, &'static [&'static str], bool, &'static [u8], RoutePolicy, &'static [u8]);
    let cases: &[Case] = &[
        (
            "weak, local P exists: no switch",
            &["ANWT", "CNWPF", "BNWPF"],
            false,
            &[],
            RoutePolicy::MergeIdcOrder,
            &[3, 1, 2],
        ),
        (
            "weak, no local P: remote P before local T",
            &["ANWT", "CNWPF", "BNWT"],
            false,
            &[],
            RoutePolicy::MergeIdcOrderOptimized,
            &[2, 1, 3],
        ),
        (
            "weak, local P dead: switch, dead last",
            &["ANWPF", "CNWPF", "ANWT"],
            false,
            &[1],
            RoutePolicy::MergeIdcOrderOptimized,
            &[2, 3, 1],
        ),
        (
            "weak, local P alive-congested is not force-congested",
            &["ANWPF", "CNWPF", "ANWT"],
            false,
            &[],
            RoutePolicy::MergeIdcOrder,
            &[1, 3, 2],
        ),
        (
            "strong, usable leader: no switch",
            &["CNWPL", "CNWPF", "ANWT"],
            true,
            &[],
            RoutePolicy::MergeIdcOrder,
            &[1, 3, 2],
        ),
        (
            "strong, dead leader, no local P: switch",
            &["CNWPL", "CNWPF", "ANWT"],
            true,
            &[1],
            RoutePolicy::MergeIdcOrderOptimized,
            &[2, 3, 1],
        ),
        (
            "strong, no leader, no local P: switch",
            &["CNWPF", "ANWT"],
            true,
            &[],
            RoutePolicy::MergeIdcOrderOptimized,
            &[1, 2],
        ),
    ];
    for (case, list, strong, dead, want_policy, want_hosts) in cases {
        let cands = servers(list)
            .into_iter()
            .enumerate()
            .map(|(i, c)| if dead.contains(&(i as u8 + 1)) { congested(c, DEAD) } else { c })
            .collect();
        let mut req = if *strong { strong_select(cands, 5) } else { weak_select(cands, 5) };
        req.enable_primary_zone = false;
        let d = decide(&req).unwrap();
        assert_eq!(d.policy, RoutePolicy::MergeIdcOrder, "{case}");
        assert_eq!(d.effective_policy, *want_policy, "{case}");
        assert_eq!(hosts(&d), *want_hosts, "{case}");
    }
}

#[test]
fn optimized_switch_for_follower_first() {
    let mut req = weak_select(servers(&["ANWT", "ANWPL", "CNWPF"]), 2);
    req.proxy_route_policy_var = ProxyRoutePolicy::parse("follower_first");
    let d = decide(&req).unwrap();
    // A local leader is a same-region partition server: no switch, ANPL before ANT.
    assert_eq!((d.effective_policy, hosts(&d)), (RoutePolicy::FollowerFirst, vec![2, 1, 3]));
    let mut req = weak_select(servers(&["ANWT", "CNWPL", "CNWPF"]), 2);
    req.proxy_route_policy_var = ProxyRoutePolicy::parse("follower_first");
    let d = decide(&req).unwrap();
    assert_eq!((d.effective_policy, hosts(&d)), (RoutePolicy::FollowerFirstOptimized, vec![3, 2, 1]));
}

#[test]
fn seeded_ties_are_deterministic_and_vary_with_the_seed() {
    let cands = servers(&["ANWPF", "ANWPF", "ANWPF", "ANWPF", "ANWPF", "ANWPF", "BNWPF"]);
    let mut firsts = HashSet::new();
    for seed in 0..32 {
        let a = decide(&weak_select(cands.clone(), seed)).unwrap();
        let b = decide(&weak_select(cands.clone(), seed)).unwrap();
        assert_eq!(a, b, "same seed, same decision");
        assert_eq!(hosts(&a)[6], 7, "the B server stays behind the A class");
        firsts.insert(hosts(&a)[0]);
    }
    assert!(firsts.len() >= 4, "ties must vary with the seed: {firsts:?}");
}

#[test]
fn partition_calc_failed_uses_the_tables_servers() {
    // Servers 1–3 hold partitions of the table (2 and 3 lead some), 4–5 are tenant servers only.
    let cands = servers(&["BNWPF", "BNWPL", "CNWPL", "ANWT", "ANWT"]);
    let mut leaders = HashSet::new();
    for seed in 0..16 {
        let mut req = strong_select(cands.clone(), seed);
        req.partition = PartitionState::CalcFailed;
        let d = decide(&req).unwrap();
        assert_eq!(d.chosen.via, Via::Leader);
        leaders.insert(hosts(&d)[0]);
        let mut weak = weak_select(cands.clone(), seed);
        weak.partition = PartitionState::CalcFailed;
        let d = decide(&weak).unwrap();
        assert!(d.chosen.code.unwrap().partition, "weak: a server holding a partition");
    }
    assert_eq!(leaders, HashSet::from([2, 3]), "a random partition leader");
}

#[test]
fn no_location_makes_every_candidate_a_tenant_server() {
    let mut req = strong_select(servers(&["ANWPL", "BNWPF"]), 1);
    req.partition = PartitionState::NoLocation;
    req.enable_primary_zone = false;
    let d = decide(&req).unwrap();
    assert_eq!(codes(&d), ["ANWT", "BNWT"]);
}

#[test]
fn primary_zone_first_without_location() {
    // Zones: hz1-z1 … hz1-z4 (all A). Primary zone 'hz1-z3,hz1-z4;hz1-z2'.
    let cands = servers(&["ANWT", "ANWT", "ANWT", "ANWT"]);
    for seed in 0..8 {
        let mut req = strong_select(cands.clone(), seed);
        req.kind = RequestKind::SessionStatement;
        req.names_table = false;
        req.partition = PartitionState::NoLocation;
        req.primary_zone = PrimaryZone::parse("hz1-z3,hz1-z4;hz1-z2");
        let d = decide(&req).unwrap();
        assert_eq!(d.policy, RoutePolicy::PrimaryZoneFirst);
        let h = hosts(&d);
        assert_eq!(HashSet::from([h[0], h[1]]), HashSet::from([3, 4]));
        assert_eq!(h[2..], [2, 1]);
        assert_eq!(d.chosen.via.route_type(), "ROUTE_TYPE_PRIMARY_ZONE");
    }
}

#[test]
fn primary_zone_ignored_when_the_partition_is_located() {
    let mut req = strong_select(servers(&["BNWPF", "ANWPL", "ANWT"]), 1);
    req.primary_zone = PrimaryZone::parse("hz1-z3");
    let d = decide(&req).unwrap();
    assert_eq!(hosts(&d), [2, 1, 3], "leader, then MERGE_IDC_ORDER (BNP before ANT), no primary zone");
}

#[test]
fn proxy_primary_zone_name_only() {
    let mut req = strong_select(servers(&["ANWPL", "BNWPF", "CNWPF", "ANWT"]), 1);
    req.proxy_primary_zone_name = Some(vec!["sh1-z3".to_owned(), "hz2-z2".to_owned()].into());
    let d = decide(&req).unwrap();
    assert_eq!(d.policy, RoutePolicy::ProxyPrimaryZoneNameOnly);
    assert_eq!(hosts(&d), [3, 2], "only the listed zones, in list order; no leader first");
}

#[test]
fn target_db_server_only() {
    let mut req = weak_select(servers(&["ANWPL", "BNWPF"]), 1);
    req.target_db_server =
        Some(TargetDbServer { addrs: vec![addr(2), addr(1), addr(2)], source: TargetSource::Comment }.into());
    let d = decide(&req).unwrap();
    assert_eq!(d.policy, RoutePolicy::TargetDbServerOnly);
    assert_eq!(hosts(&d), [2, 1], "in the order given, each once");
    assert_eq!(d.max_attempts(3), 5);
    req.target_db_server = Some(TargetDbServer { addrs: vec![addr(99)], source: TargetSource::Comment }.into());
    assert_eq!(
        decide(&req).map(|d| d.policy),
        Err(crate::route::RouteError::target(&addr(99).to_string(), crate::route::TargetRefusal::NotATenantServer))
    );
}

#[test]
fn dup_replica_first_prefers_a_local_duplicate_over_a_remote_leader() {
    let d = decide(&strong_select(servers(&["CNWPL", "ANWPD", "BNWPF"]), 1)).unwrap();
    assert_eq!(d.policy, RoutePolicy::DupReplicaFirst);
    assert_eq!(codes(&d), ["ANWPD", "CNWPL", "BNWPF"]);
}

#[test]
fn log_only_replicas_are_never_candidates() {
    let cands = vec![server("ANWPF", 1).with_replica_type(ReplicaType::LogOnly), server("BNWPF", 2)];
    let d = decide(&weak_select(cands, 1)).unwrap();
    assert_eq!(hosts(&d), [2]);
}

#[test]
fn duplicate_addresses_keep_the_partition_entry() {
    let cands = vec![server("ANWT", 1), server("ANWPF", 1), server("BNWT", 2)];
    let d = decide(&weak_select(cands, 1)).unwrap();
    assert_eq!(codes(&d), ["ANWPF", "BNWT"]);
}

#[test]
fn disable_merge_status_check_ignores_merging() {
    let mut req = weak_select(servers(&["BNWPF", "AMWPF"]), 1);
    assert_eq!(hosts(&decide(&req).unwrap()), [1, 2]);
    req.disable_merge_status_check = true;
    assert_eq!(hosts(&decide(&req).unwrap()), [2, 1]);
}
