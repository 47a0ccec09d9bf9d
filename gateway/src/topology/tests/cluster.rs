//! Primary zones, zone types, replica types, cluster validation.

use crate::metadata::StaticSource;
use crate::topology::{PrimaryZone, ReplicaType, ZoneType};

#[test]
fn primary_zone_groups() {
    let pz = PrimaryZone::parse("zone1;zone2,zone3");
    assert_eq!(pz, PrimaryZone::Groups(vec![vec!["zone1".into()], vec!["zone2".into(), "zone3".into()]]));
    assert_eq!((pz.weight("zone1"), pz.weight("zone3"), pz.weight("zone9")), (Some(0), Some(1), None));
    assert_eq!(PrimaryZone::parse("RANDOM"), PrimaryZone::Random);
    assert_eq!(PrimaryZone::parse(" z1 , z2 ;; "), PrimaryZone::Groups(vec![vec!["z1".into(), "z2".into()]]));
}

#[test]
fn zone_and_replica_types_from_views() {
    assert_eq!(ZoneType::from_view("ReadOnly"), ZoneType::ReadOnly);
    assert_eq!(ZoneType::from_view("READ_ONLY"), ZoneType::ReadOnly);
    assert_eq!(ZoneType::from_view("Encryption"), ZoneType::Encryption);
    assert_eq!(ZoneType::from_view("whatever"), ZoneType::ReadWrite);
    assert!(!ReplicaType::from_code(5).is_routable());
    assert!(!ReplicaType::from_code(261).is_routable());
    assert!(ReplicaType::from_code(16).is_routable());
    assert_eq!(ReplicaType::from_code(16).name(), "READONLY");
}

#[test]
fn cluster_rejects_unknown_zone_and_duplicate_address() {
    let bad_zone = r#"
        [[zones]]
        name = "z1"
        [[servers]]
        name = "a"
        addr = "127.0.0.1:1"
        zone = "z2"
    "#;
    assert!(StaticSource::from_toml(bad_zone, &Default::default()).is_err());
    let dup = r#"
        [[zones]]
        name = "z1"
        [[servers]]
        name = "a"
        addr = "127.0.0.1:1"
        zone = "z1"
        [[servers]]
        name = "b"
        addr = "127.0.0.1:1"
        zone = "z1"
    "#;
    let err = StaticSource::from_toml(dup, &Default::default()).err().map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.contains("two servers have address")));
}

#[test]
fn read_only_detection() {
    let src = StaticSource::demo(&Default::default()).unwrap();
    let c = src.cluster();
    let addr = |n: &str| c.server_by_name(n).unwrap().addr;
    assert!(!c.any_read_only([addr("s1"), addr("s2")]));
    assert!(c.any_read_only([addr("s1"), addr("s3")]));
}
