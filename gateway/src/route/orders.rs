//! The exact candidate order of every LDC route policy (docs/routing.md §4, `ob_ldc_route.cpp`).
//!
//! Each order is a list of groups (the lines ODP writes separately, `|` in docs/routing.md); the
//! groups only document the structure, the walk is entry by entry.

use super::entry::RouteEntry;
use super::policy::RoutePolicy;

/// A policy order: groups of entries, walked left to right.
pub type Order = &'static [&'static [RouteEntry]];

const fn e(code: &str) -> RouteEntry {
    RouteEntry::parse(code)
}

const MERGE_IDC_ORDER: Order = &[
    &[e("ANP"), e("BNP"), e("AMP"), e("BMP")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNP"), e("CMP")],
    &[e("CNT"), e("CMT")],
];

const READONLY_ZONE_FIRST: Order = &[
    &[e("ANRP"), e("BNRP"), e("AMRP"), e("BMRP"), e("ANWP"), e("BNWP"), e("AMWP"), e("BMWP")],
    &[e("ANRT"), e("BNRT"), e("AMRT"), e("BMRT"), e("ANWT"), e("BNWT"), e("AMWT"), e("BMWT")],
    &[e("CNRP"), e("CMRP"), e("CNWP"), e("CMWP")],
    &[e("CNRT"), e("CMRT"), e("CNWT"), e("CMWT")],
];

const ONLY_READONLY_ZONE: Order = &[
    &[e("ANRP"), e("BNRP"), e("AMRP"), e("BMRP")],
    &[e("ANRT"), e("BNRT"), e("AMRT"), e("BMRT")],
    &[e("CNRP"), e("CMRP")],
    &[e("CNRT"), e("CMRT")],
];

const UNMERGE_ZONE_FIRST: Order = &[
    &[e("ANRP"), e("BNRP"), e("ANWP"), e("BNWP"), e("AMRP"), e("BMRP"), e("AMWP"), e("BMWP")],
    &[e("ANRT"), e("BNRT"), e("ANWT"), e("BNWT"), e("AMRT"), e("BMRT"), e("AMWT"), e("BMWT")],
    &[e("CNRP"), e("CNWP"), e("CMRP"), e("CMWP")],
    &[e("CNRT"), e("CNWT"), e("CMRT"), e("CMWT")],
];

const ONLY_READWRITE_ZONE: Order = &[
    &[e("ANWP"), e("BNWP"), e("AMWP"), e("BMWP")],
    &[e("ANWT"), e("BNWT"), e("AMWT"), e("BMWT")],
    &[e("CNWP"), e("CMWP")],
    &[e("CNWT"), e("CMWT")],
];

const MERGE_IDC_ORDER_OPTIMIZED: Order = &[
    &[e("ANP"), e("BNP"), e("AMP"), e("BMP")],
    &[e("CNP"), e("CMP")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNT"), e("CMT")],
];

const READONLY_ZONE_FIRST_OPTIMIZED: Order = &[
    &[e("ANRP"), e("BNRP"), e("AMRP"), e("BMRP"), e("ANWP"), e("BNWP"), e("AMWP"), e("BMWP")],
    &[e("CNRP"), e("CMRP"), e("CNWP"), e("CMWP")],
    &[e("ANRT"), e("BNRT"), e("AMRT"), e("BMRT"), e("ANWT"), e("BNWT"), e("AMWT"), e("BMWT")],
    &[e("CNRT"), e("CMRT"), e("CNWT"), e("CMWT")],
];

const ONLY_READONLY_ZONE_OPTIMIZED: Order = &[
    &[e("ANRP"), e("BNRP"), e("AMRP"), e("BMRP")],
    &[e("CNRP"), e("CMRP")],
    &[e("ANRT"), e("BNRT"), e("AMRT"), e("BMRT")],
    &[e("CNRT"), e("CMRT")],
];

const UNMERGE_ZONE_FIRST_OPTIMIZED: Order = &[
    &[e("ANRP"), e("BNRP"), e("ANWP"), e("BNWP"), e("AMRP"), e("BMRP"), e("AMWP"), e("BMWP")],
    &[e("CNRP"), e("CNWP"), e("CMRP"), e("CMWP")],
    &[e("ANRT"), e("BNRT"), e("ANWT"), e("BNWT"), e("AMRT"), e("BMRT"), e("AMWT"), e("BMWT")],
    &[e("CNRT"), e("CNWT"), e("CMRT"), e("CMWT")],
];

const ONLY_READWRITE_ZONE_OPTIMIZED: Order = &[
    &[e("ANWP"), e("BNWP"), e("AMWP"), e("BMWP")],
    &[e("CNWP"), e("CMWP")],
    &[e("ANWT"), e("BNWT"), e("AMWT"), e("BMWT")],
    &[e("CNWT"), e("CMWT")],
];

const FOLLOWER_FIRST: Order = &[
    &[e("ANPF"), e("BNPF"), e("AMPF"), e("BMPF")],
    &[e("ANPL"), e("BNPL"), e("AMPL"), e("BMPL")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNPF"), e("CMPF")],
    &[e("CNPL"), e("CMPL")],
    &[e("CNT"), e("CMT")],
];

const UNMERGE_FOLLOWER_FIRST: Order = &[
    &[e("ANPF"), e("BNPF"), e("ANPL"), e("BNPL")],
    &[e("AMPF"), e("BMPF"), e("AMPL"), e("BMPL")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNPF"), e("CNPL")],
    &[e("CMPF"), e("CMPL")],
    &[e("CNT"), e("CMT")],
];

const FOLLOWER_FIRST_OPTIMIZED: Order = &[
    &[e("ANPF"), e("BNPF"), e("AMPF"), e("BMPF")],
    &[e("ANPL"), e("BNPL"), e("AMPL"), e("BMPL")],
    &[e("CNPF"), e("CMPF")],
    &[e("CNPL"), e("CMPL")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNT"), e("CMT")],
];

const UNMERGE_FOLLOWER_FIRST_OPTIMIZED: Order = &[
    &[e("ANPF"), e("BNPF"), e("ANPL"), e("BNPL")],
    &[e("AMPF"), e("BMPF"), e("AMPL"), e("BMPL")],
    &[e("CNPF"), e("CNPL")],
    &[e("CMPF"), e("CMPL")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNT"), e("CMT")],
];

const DUP_REPLICA_FIRST: Order = &[
    &[e("ANPD"), e("BNPD"), e("AMPD"), e("BMPD"), e("CNPD"), e("CMPD")],
    &[e("ANP"), e("BNP"), e("AMP"), e("BMP")],
    &[e("CNP"), e("CMP")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNT"), e("CMT")],
];

const FOLLOWER_ONLY: Order = &[
    &[e("ANPF"), e("BNPF"), e("AMPF"), e("BMPF")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNPF"), e("CMPF")],
    &[e("CNT"), e("CMT")],
];

const FOLLOWER_ONLY_OPTIMIZED: Order = &[
    &[e("ANPF"), e("BNPF"), e("AMPF"), e("BMPF")],
    &[e("CNPF"), e("CMPF")],
    &[e("ANT"), e("BNT"), e("AMT"), e("BMT")],
    &[e("CNT"), e("CMT")],
];

/// The LDC order of a policy; `None` for the three policies without one (17–19, which order
/// by zone list, address list or primary zone instead).
pub fn order(policy: RoutePolicy) -> Option<Order> {
    use RoutePolicy as P;
    Some(match policy {
        P::MergeIdcOrder => MERGE_IDC_ORDER,
        P::ReadonlyZoneFirst => READONLY_ZONE_FIRST,
        P::OnlyReadonlyZone => ONLY_READONLY_ZONE,
        P::UnmergeZoneFirst => UNMERGE_ZONE_FIRST,
        P::OnlyReadwriteZone => ONLY_READWRITE_ZONE,
        P::MergeIdcOrderOptimized => MERGE_IDC_ORDER_OPTIMIZED,
        P::ReadonlyZoneFirstOptimized => READONLY_ZONE_FIRST_OPTIMIZED,
        P::OnlyReadonlyZoneOptimized => ONLY_READONLY_ZONE_OPTIMIZED,
        P::UnmergeZoneFirstOptimized => UNMERGE_ZONE_FIRST_OPTIMIZED,
        P::OnlyReadwriteZoneOptimized => ONLY_READWRITE_ZONE_OPTIMIZED,
        P::FollowerFirst => FOLLOWER_FIRST,
        P::UnmergeFollowerFirst => UNMERGE_FOLLOWER_FIRST,
        P::FollowerFirstOptimized => FOLLOWER_FIRST_OPTIMIZED,
        P::UnmergeFollowerFirstOptimized => UNMERGE_FOLLOWER_FIRST_OPTIMIZED,
        P::DupReplicaFirst => DUP_REPLICA_FIRST,
        P::FollowerOnly => FOLLOWER_ONLY,
        P::FollowerOnlyOptimized => FOLLOWER_ONLY_OPTIMIZED,
        P::ProxyPrimaryZoneNameOnly | P::TargetDbServerOnly | P::PrimaryZoneFirst => return None,
    })
}

/// The entries of an order, flattened.
pub fn entries(order: Order) -> impl Iterator<Item = &'static RouteEntry> {
    order.iter().flat_map(|g| g.iter())
}

/// Index (in the flattened order) of the first remote-partition entry (`CNP`, `CNRP`, `CNWP`,
/// `CNPF`, …): where the `_OPTIMIZED` switch starts the walk (docs/routing.md §4).
pub fn first_remote_partition(order: Order) -> Option<usize> {
    entries(order).position(|e| e.partition && e.idc == super::ldc::IdcType::OtherRegion)
}
