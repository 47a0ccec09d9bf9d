//! Every policy order, exactly as docs/routing.md §4 writes it, and walked over real candidates.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{client, server};
use crate::route::candidate::Candidate;
use crate::route::consistency::Consistency;
use crate::route::entry::RouteEntry;
use crate::route::ldc::LdcContext;
use crate::route::order::{build, Classified, OrderParams, Via};
use crate::route::orders::{entries, first_remote_partition, order, Order};
use crate::route::policy::RoutePolicy;
use crate::route::primary_zone::PrimaryZone;
use crate::route::request::PartitionState;

/// Renders an order in docs/routing.md's notation, `ANP BNP | ANT …`.
fn render(order: Order) -> String {
    let groups: Vec<String> =
        order.iter().map(|g| g.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ")).collect();
    groups.join(" | ")
}

/// docs/routing.md §4, the "exact order" column, verbatim.
const SPEC: &[(&str, &str)] = &[
    ("MERGE_IDC_ORDER", "ANP BNP AMP BMP | ANT BNT AMT BMT | CNP CMP | CNT CMT"),
    ("READONLY_ZONE_FIRST", "ANRP BNRP AMRP BMRP ANWP BNWP AMWP BMWP | ANRT BNRT AMRT BMRT ANWT BNWT AMWT BMWT | CNRP CMRP CNWP CMWP | CNRT CMRT CNWT CMWT"),
    ("ONLY_READONLY_ZONE", "ANRP BNRP AMRP BMRP | ANRT BNRT AMRT BMRT | CNRP CMRP | CNRT CMRT"),
    ("UNMERGE_ZONE_FIRST", "ANRP BNRP ANWP BNWP AMRP BMRP AMWP BMWP | ANRT BNRT ANWT BNWT AMRT BMRT AMWT BMWT | CNRP CNWP CMRP CMWP | CNRT CNWT CMRT CMWT"),
    ("ONLY_READWRITE_ZONE", "ANWP BNWP AMWP BMWP | ANWT BNWT AMWT BMWT | CNWP CMWP | CNWT CMWT"),
    ("MERGE_IDC_ORDER_OPTIMIZED", "ANP BNP AMP BMP | CNP CMP | ANT BNT AMT BMT | CNT CMT"),
    ("READONLY_ZONE_FIRST_OPTIMIZED", "ANRP BNRP AMRP BMRP ANWP BNWP AMWP BMWP | CNRP CMRP CNWP CMWP | ANRT BNRT AMRT BMRT ANWT BNWT AMWT BMWT | CNRT CMRT CNWT CMWT"),
    ("ONLY_READONLY_ZONE_OPTIMIZED", "ANRP BNRP AMRP BMRP | CNRP CMRP | ANRT BNRT AMRT BMRT | CNRT CMRT"),
    ("UNMERGE_ZONE_FIRST_OPTIMIZED", "ANRP BNRP ANWP BNWP AMRP BMRP AMWP BMWP | CNRP CNWP CMRP CMWP | ANRT BNRT ANWT BNWT AMRT BMRT AMWT BMWT | CNRT CNWT CMRT CMWT"),
    ("ONLY_READWRITE_ZONE_OPTIMIZED", "ANWP BNWP AMWP BMWP | CNWP CMWP | ANWT BNWT AMWT BMWT | CNWT CMWT"),
    ("FOLLOWER_FIRST", "ANPF BNPF AMPF BMPF | ANPL BNPL AMPL BMPL | ANT BNT AMT BMT | CNPF CMPF | CNPL CMPL | CNT CMT"),
    ("UNMERGE_FOLLOWER_FIRST", "ANPF BNPF ANPL BNPL | AMPF BMPF AMPL BMPL | ANT BNT AMT BMT | CNPF CNPL | CMPF CMPL | CNT CMT"),
    ("FOLLOWER_FIRST_OPTIMIZED", "ANPF BNPF AMPF BMPF | ANPL BNPL AMPL BMPL | CNPF CMPF | CNPL CMPL | ANT BNT AMT BMT | CNT CMT"),
    ("UNMERGE_FOLLOWER_FIRST_OPTIMIZED", "ANPF BNPF ANPL BNPL | AMPF BMPF AMPL BMPL | CNPF CNPL | CMPF CMPL | ANT BNT AMT BMT | CNT CMT"),
    ("DUP_REPLICA_FIRST", "ANPD BNPD AMPD BMPD CNPD CMPD | ANP BNP AMP BMP | CNP CMP | ANT BNT AMT BMT | CNT CMT"),
    ("FOLLOWER_ONLY", "ANPF BNPF AMPF BMPF | ANT BNT AMT BMT | CNPF CMPF | CNT CMT"),
    ("FOLLOWER_ONLY_OPTIMIZED", "ANPF BNPF AMPF BMPF | CNPF CMPF | ANT BNT AMT BMT | CNT CMT"),
];

fn policy(name: &str) -> RoutePolicy {
    RoutePolicy::from_name(name).unwrap()
}

#[test]
fn every_order_is_the_documented_one() {
    for (name, spec) in SPEC {
        let p = policy(name);
        assert_eq!(render(order(p).unwrap()), *spec, "{name}");
        assert_eq!(p as u8 as usize, RoutePolicy::ALL.iter().position(|x| x == &p).unwrap(), "{name} number");
    }
}

#[test]
fn policies_without_ldc_order() {
    for p in [RoutePolicy::ProxyPrimaryZoneNameOnly, RoutePolicy::TargetDbServerOnly, RoutePolicy::PrimaryZoneFirst] {
        assert!(order(p).is_none(), "{p}");
    }
    assert_eq!(RoutePolicy::ALL.len(), 20);
    assert_eq!(RoutePolicy::PrimaryZoneFirst as u8, 19);
}

#[test]
fn entries_parse_and_print_back() {
    for code in ["ANP", "CMT", "BNRP", "AMWT", "ANPF", "BMPL", "CNPD"] {
        assert_eq!(RouteEntry::parse(code).to_string(), code);
    }
    assert_eq!(RouteEntry::parse("ANRP").odp_route_type(), "ROUTE_TYPE_PARTITION_READONLY_UNMERGE_LOCAL");
    assert_eq!(RouteEntry::parse("BMPF").odp_route_type(), "ROUTE_TYPE_FOLLOWER_PARTITION_MERGE_REGION");
    assert_eq!(RouteEntry::parse("CNT").odp_route_type(), "ROUTE_TYPE_NONPARTITION_UNMERGE_REMOTE");
    assert_eq!(RouteEntry::parse("CMPD").odp_route_type(), "ROUTE_TYPE_DUP_PARTITION_MERGE_REMOTE");
}

#[test]
fn optimized_variants_and_their_start_entry() {
    let cases = [
        ("MERGE_IDC_ORDER", "MERGE_IDC_ORDER_OPTIMIZED", "CNP"),
        ("READONLY_ZONE_FIRST", "READONLY_ZONE_FIRST_OPTIMIZED", "CNRP"),
        ("ONLY_READONLY_ZONE", "ONLY_READONLY_ZONE_OPTIMIZED", "CNRP"),
        ("UNMERGE_ZONE_FIRST", "UNMERGE_ZONE_FIRST_OPTIMIZED", "CNRP"),
        ("ONLY_READWRITE_ZONE", "ONLY_READWRITE_ZONE_OPTIMIZED", "CNWP"),
        ("FOLLOWER_FIRST", "FOLLOWER_FIRST_OPTIMIZED", "CNPF"),
        ("UNMERGE_FOLLOWER_FIRST", "UNMERGE_FOLLOWER_FIRST_OPTIMIZED", "CNPF"),
        ("FOLLOWER_ONLY", "FOLLOWER_ONLY_OPTIMIZED", "CNPF"),
    ];
    for (base, opt, start) in cases {
        let o = policy(opt);
        assert_eq!(policy(base).optimized(), Some(o), "{base}");
        let i = first_remote_partition(order(o).unwrap()).unwrap();
        assert_eq!(entries(order(o).unwrap()).nth(i).unwrap().to_string(), start, "{opt}");
    }
    for p in RoutePolicy::ALL {
        let has = cases.iter().any(|(b, _, _)| policy(b) == p);
        assert_eq!(p.optimized().is_some(), has, "{p}");
    }
}

/// Two servers per entry, shuffled with several seeds: the walk must visit the entries in
/// order, each entry's two servers together.
#[test]
fn every_order_walked_over_candidates() {
    for (name, _) in SPEC {
        let p = policy(name);
        let want: Vec<RouteEntry> = entries(order(p).unwrap()).copied().collect();
        let mut cands: Vec<Candidate> = Vec::new();
        for (i, e) in want.iter().enumerate() {
            cands.push(server(&e.to_string(), (2 * i + 1) as u8));
            cands.push(server(&e.to_string(), (2 * i + 2) as u8));
        }
        for seed in 0..5 {
            assert_eq!(walk(p, &cands, seed), doubled(&want), "{name} seed {seed}");
        }
    }
}

fn doubled(entries: &[RouteEntry]) -> Vec<RouteEntry> {
    entries.iter().flat_map(|e| [*e, *e]).collect()
}

fn walk(p: RoutePolicy, cands: &[Candidate], seed: u64) -> Vec<RouteEntry> {
    let here = client();
    let ldc = LdcContext::new(&here, cands, false);
    let mut pool: Vec<Classified<'_>> =
        cands.iter().map(|c| Classified { cand: c, code: ldc.classify(c, true) }).collect();
    pool.shuffle(&mut StdRng::seed_from_u64(seed));
    let pz = PrimaryZone::default();
    let params = OrderParams {
        consistency: Consistency::Weak,
        policy: p,
        readonly_only: false,
        partition: PartitionState::Located,
        primary_zone: &pz,
        proxy_primary_zone_name: &[],
        targets: &[],
    };
    let built = build(&pool, &params);
    assert_eq!(built.effective, p, "no optimized switch with local partition servers");
    built
        .ranked
        .iter()
        .map(|r| match r.via {
            Via::Entry(e) => e,
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}
