//! The selection tree of docs/routing.md §5, one row per branch.

use super::{addr, server, strong_select};
use crate::route::candidate::Candidate;
use crate::route::consistency::{Consistency, ReadConsistency};
use crate::route::error::RouteError;
use crate::route::policy::{ProxyRoutePolicy, RoutePolicy};
use crate::route::request::{RequestKind, RouteRequest, TargetDbServer, TargetSource};
use crate::route::select::{choose_policy, TenantFacts};

use Consistency::{Strong, Weak};
use RoutePolicy as P;

fn normal() -> Vec<Candidate> {
    vec![server("ANWPL", 1), server("BNWPF", 2), server("CNWT", 3)]
}

fn with_readonly() -> Vec<Candidate> {
    vec![server("ANWPL", 1), server("ANRPF", 2), server("BNRT", 3)]
}

fn with_dup() -> Vec<Candidate> {
    vec![server("ANWPL", 1), server("BNWPD", 2)]
}

type Setup = fn(&mut RouteRequest);

fn none(_: &mut RouteRequest) {}
fn target(r: &mut RouteRequest) {
    // Host 2 is a candidate of every list here: a tenant server.
    r.target_db_server = Some(TargetDbServer { addrs: vec![addr(2)], source: TargetSource::Comment }.into());
}
fn target_empty(r: &mut RouteRequest) {
    r.target_db_server = Some(TargetDbServer { addrs: vec![], source: TargetSource::Config }.into());
}
fn locking(r: &mut RouteRequest) {
    r.consistency.locking_read = true;
}
fn dml(r: &mut RouteRequest) {
    r.kind = RequestKind::OtherStatement;
    r.consistency.is_select = false;
}
fn no_table(r: &mut RouteRequest) {
    r.names_table = false;
}
fn set_stmt(r: &mut RouteRequest) {
    r.kind = RequestKind::SessionStatement;
    r.consistency.is_select = false;
}
fn command(r: &mut RouteRequest) {
    r.kind = RequestKind::Command;
    r.consistency.is_select = false;
}
fn set_weak_var(r: &mut RouteRequest) {
    set_stmt(r);
    r.consistency.session = Some(ReadConsistency::Weak);
}
fn set_strong_var(r: &mut RouteRequest) {
    set_stmt(r);
    r.consistency.session = Some(ReadConsistency::Strong);
}
fn rp0(r: &mut RouteRequest) {
    r.ob_route_policy = Some(0);
}
fn rp3(r: &mut RouteRequest) {
    r.ob_route_policy = Some(3);
}
fn rp_bad(r: &mut RouteRequest) {
    r.ob_route_policy = Some(5);
}
fn ff_var(r: &mut RouteRequest) {
    r.proxy_route_policy_var = ProxyRoutePolicy::parse("Follower_First");
}
fn uff_config(r: &mut RouteRequest) {
    r.proxy_route_policy_config = ProxyRoutePolicy::parse("unmerge_follower_first");
}
fn fo_var_over_config(r: &mut RouteRequest) {
    r.proxy_route_policy_var = ProxyRoutePolicy::parse("follower_only");
    r.proxy_route_policy_config = ProxyRoutePolicy::parse("follower_first");
}
fn invalid_var_then_config(r: &mut RouteRequest) {
    r.proxy_route_policy_var = ProxyRoutePolicy::parse("nonsense");
    r.proxy_route_policy_config = ProxyRoutePolicy::parse("FOLLOWER_ONLY");
}
fn newer_name(r: &mut RouteRequest) {
    r.proxy_route_policy_var = ProxyRoutePolicy::parse("TARGET_REPLICA_TYPE_FOLLOWER_ONLY");
}
fn pzn(r: &mut RouteRequest) {
    r.proxy_primary_zone_name = Some(vec!["z1".to_owned()].into());
}
fn ff_and_pzn(r: &mut RouteRequest) {
    ff_var(r);
    pzn(r);
}
fn no_primary_zone(r: &mut RouteRequest) {
    r.enable_primary_zone = false;
}
fn random_mode(r: &mut RouteRequest) {
    r.random_routing_mode = true;
}
fn force_ro(r: &mut RouteRequest) {
    r.proxy_route_policy_config = ProxyRoutePolicy::parse("force_readonly_zone");
}
fn force_ro_command(r: &mut RouteRequest) {
    force_ro(r);
    command(r);
}
fn force_ro_and_target(r: &mut RouteRequest) {
    force_ro(r);
    target(r);
}

/// (case, candidates, consistency, setup, expected policy)
#[allow(clippy::type_complexity)]
const TREE: &[(&str, fn() -> Vec<Candidate>, Consistency, Setup, P)] = &[
    ("target_db_server wins", normal, Strong, target, P::TargetDbServerOnly),
    ("empty target_db_server is ignored", normal, Strong, target_empty, P::PrimaryZoneFirst),
    ("target_db_server beats FORCE_READONLY_ZONE", normal, Strong, force_ro_and_target, P::TargetDbServerOnly),
    ("strong select of a duplicate table", with_dup, Strong, none, P::DupReplicaFirst),
    ("weak select of a duplicate table", with_dup, Weak, none, P::MergeIdcOrder),
    ("locking read of a duplicate table", with_dup, Strong, locking, P::PrimaryZoneFirst),
    ("DML on a duplicate table", with_dup, Strong, dml, P::PrimaryZoneFirst),
    ("read-only zones, weak, default ob_route_policy", with_readonly, Weak, none, P::ReadonlyZoneFirst),
    ("read-only zones, weak, ob_route_policy 0", with_readonly, Weak, rp0, P::MergeIdcOrder),
    ("read-only zones, weak, ob_route_policy 3", with_readonly, Weak, rp3, P::UnmergeZoneFirst),
    ("read-only zones, weak, ob_route_policy 5", with_readonly, Weak, rp_bad, P::ReadonlyZoneFirst),
    ("read-only zones, weak ignores follower_first", with_readonly, Weak, ff_var, P::ReadonlyZoneFirst),
    ("read-only zones, strong select with table", with_readonly, Strong, none, P::OnlyReadwriteZone),
    ("read-only zones, strong select without table", with_readonly, Strong, no_table, P::MergeIdcOrder),
    ("read-only zones, SET, variable not set", with_readonly, Strong, set_stmt, P::MergeIdcOrder),
    ("read-only zones, command (login)", with_readonly, Strong, command, P::MergeIdcOrder),
    ("read-only zones, SET, ob_read_consistency WEAK", with_readonly, Strong, set_weak_var, P::ReadonlyZoneFirst),
    ("read-only zones, SET, ob_read_consistency STRONG", with_readonly, Strong, set_strong_var, P::OnlyReadwriteZone),
    ("read-only zones, DML", with_readonly, Strong, dml, P::OnlyReadwriteZone),
    ("normal, weak, default", normal, Weak, none, P::MergeIdcOrder),
    ("normal, weak, @proxy_route_policy follower_first", normal, Weak, ff_var, P::FollowerFirst),
    ("normal, weak, config unmerge_follower_first", normal, Weak, uff_config, P::UnmergeFollowerFirst),
    ("normal, weak, variable beats config", normal, Weak, fo_var_over_config, P::FollowerOnly),
    ("normal, weak, invalid variable → config", normal, Weak, invalid_var_then_config, P::FollowerOnly),
    ("normal, weak, newer policy name", normal, Weak, newer_name, P::MergeIdcOrder),
    ("normal, weak, proxy_primary_zone_name", normal, Weak, pzn, P::ProxyPrimaryZoneNameOnly),
    ("normal, weak, follower_first beats zone name", normal, Weak, ff_and_pzn, P::FollowerFirst),
    ("normal, strong ignores follower_first", normal, Strong, ff_var, P::PrimaryZoneFirst),
    ("normal, strong, proxy_primary_zone_name", normal, Strong, pzn, P::ProxyPrimaryZoneNameOnly),
    ("normal, strong, primary zone", normal, Strong, none, P::PrimaryZoneFirst),
    ("normal, strong, enable_primary_zone off", normal, Strong, no_primary_zone, P::MergeIdcOrder),
    ("normal, strong, random routing mode", normal, Strong, random_mode, P::MergeIdcOrder),
    ("FORCE_READONLY_ZONE, weak", normal, Weak, force_ro, P::OnlyReadonlyZone),
    ("FORCE_READONLY_ZONE, login command", with_readonly, Strong, force_ro_command, P::OnlyReadonlyZone),
];

#[test]
fn selection_tree() {
    for (case, cands, consistency, setup, want) in TREE {
        let mut req = strong_select(cands(), 1);
        setup(&mut req);
        let facts = TenantFacts::of(&req.candidates);
        let got = choose_policy(&req, *consistency, facts).map(|c| c.policy);
        assert_eq!(got, Ok(*want), "{case}");
    }
}

#[test]
fn force_readonly_zone_marks_the_choice_and_rejects_strong() {
    let mut req = strong_select(normal(), 1);
    force_ro(&mut req);
    let facts = TenantFacts::of(&req.candidates);
    assert!(choose_policy(&req, Weak, facts).unwrap().readonly_only);
    assert_eq!(choose_policy(&req, Strong, facts), Err(RouteError::ForceReadonlyZoneNotWeak(Strong)));
}

#[test]
fn a_target_that_is_not_a_candidate_is_refused() {
    let mut req = strong_select(normal(), 1);
    req.target_db_server = Some(TargetDbServer { addrs: vec![addr(2), addr(9)], source: TargetSource::Config }.into());
    let facts = TenantFacts::of(&req.candidates);
    assert_eq!(
        choose_policy(&req, Strong, facts),
        Err(RouteError::target(&addr(9).to_string(), crate::route::TargetRefusal::NotATenantServer))
    );
    assert_eq!(
        TargetDbServer::parse("10.0.0.9:2881, '10.0.0.2:2881'", TargetSource::Comment).map(|t| t.addrs),
        Ok(vec![addr(9), addr(2)])
    );
    use crate::route::TargetRefusal as R;
    let why = |text: &str| match TargetDbServer::parse(text, TargetSource::Comment) {
        Err(RouteError::TargetNotAllowed { why, .. }) => Some(why),
        _ => None,
    };
    for (bad, want) in
        [("", R::Empty), (" , ", R::Empty), ("10.0.0.9", R::NotAnAddress), ("10.0.0.2:2881,host:2881", R::NotAnAddress)]
    {
        assert_eq!(why(bad), Some(want), "{bad:?}");
    }
    // A bound on distinct addresses, not on repetitions.
    let many = |n: u16| (0..n).map(|i| format!("10.0.{}.{}:2881", i / 250, i % 250)).collect::<Vec<_>>().join(",");
    assert_eq!(TargetDbServer::parse(&many(64), TargetSource::Comment).map(|t| t.addrs.len()), Ok(64));
    assert_eq!(why(&many(65)), Some(R::TooMany));
    let repeated = vec!["10.0.0.2:2881"; 10_000].join(",");
    assert_eq!(TargetDbServer::parse(&repeated, TargetSource::Comment).map(|t| t.addrs), Ok(vec![addr(2)]));
    // The message quotes at most 64 bytes of the text.
    let e = TargetDbServer::parse(&format!("{},x", many(300)), TargetSource::Comment).unwrap_err();
    assert!(e.to_string().len() < 160, "{e}");
}

#[test]
fn force_readonly_zone_lets_session_statements_through() {
    let mut req = strong_select(normal(), 1);
    force_ro(&mut req);
    req.kind = RequestKind::SessionStatement;
    let facts = TenantFacts::of(&req.candidates);
    assert_eq!(
        choose_policy(&req, Strong, facts).map(|c| (c.policy, c.readonly_only)),
        Ok((P::PrimaryZoneFirst, false))
    );
    req.kind = RequestKind::OtherStatement;
    assert_eq!(choose_policy(&req, Strong, facts), Err(RouteError::ForceReadonlyZoneNotWeak(Strong)));
}

#[test]
fn warnings_for_ignored_settings() {
    let mut req = strong_select(with_readonly(), 1);
    rp_bad(&mut req);
    let facts = TenantFacts::of(&req.candidates);
    assert_eq!(choose_policy(&req, Weak, facts).unwrap().warnings.len(), 1);
    let mut req = strong_select(normal(), 1);
    newer_name(&mut req);
    let facts = TenantFacts::of(&req.candidates);
    assert_eq!(choose_policy(&req, Weak, facts).unwrap().warnings.len(), 1);
}

#[test]
fn ob_route_policy_values() {
    assert_eq!(P::from_ob_route_policy(None), (P::ReadonlyZoneFirst, false));
    assert_eq!(P::from_ob_route_policy(Some(0)), (P::MergeIdcOrder, false));
    assert_eq!(P::from_ob_route_policy(Some(1)), (P::ReadonlyZoneFirst, false));
    assert_eq!(P::from_ob_route_policy(Some(2)), (P::OnlyReadonlyZone, false));
    assert_eq!(P::from_ob_route_policy(Some(3)), (P::UnmergeZoneFirst, false));
    assert_eq!(P::from_ob_route_policy(Some(4)), (P::ReadonlyZoneFirst, true));
}

#[test]
fn proxy_route_policy_names() {
    assert_eq!(ProxyRoutePolicy::parse(" 'follower_first' "), Some(ProxyRoutePolicy::FollowerFirst));
    assert_eq!(ProxyRoutePolicy::parse("Force_ReadOnly_Zone"), Some(ProxyRoutePolicy::ForceReadonlyZone));
    assert_eq!(
        ProxyRoutePolicy::parse("weakread_weight_load_balance"),
        Some(ProxyRoutePolicy::Unspecified("WEAKREAD_WEIGHT_LOAD_BALANCE"))
    );
    assert_eq!(ProxyRoutePolicy::parse("merge_idc_order"), None);
    let config = ProxyRoutePolicy::parse("follower_only");
    assert_eq!(ProxyRoutePolicy::resolve(ProxyRoutePolicy::parse("x"), config), Some(ProxyRoutePolicy::FollowerOnly));
    assert_eq!(
        ProxyRoutePolicy::resolve(ProxyRoutePolicy::parse("follower_first"), config),
        Some(ProxyRoutePolicy::FollowerFirst)
    );
    assert_eq!(ProxyRoutePolicy::resolve(None, None), None);
}
