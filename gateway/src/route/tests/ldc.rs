//! LDC classification (docs/routing.md §3).

use super::{addr, client, server};
use crate::route::candidate::{Candidate, ZoneType};
use crate::route::ldc::{ClientLocation, IdcType, LdcContext};
use crate::route::primary_zone::{parse_zone_list, PrimaryZone};

fn srv(n: u8, zone: &str, region: &str, idc: &str) -> Candidate {
    Candidate::tenant_server(addr(n), zone, region, idc)
}

#[test]
fn letter_codes_of_the_fixtures() {
    let cands: Vec<Candidate> =
        ["ANWPL", "BMRT", "CNRPF", "ANWPD", "AMWT"].iter().enumerate().map(|(i, c)| server(c, i as u8 + 1)).collect();
    let here = client();
    let ldc = LdcContext::new(&here, &cands, false);
    let got: Vec<String> = cands.iter().map(|c| ldc.classify(c, true).to_string()).collect();
    assert_eq!(got, ["ANWPL", "BMRT", "CNRPF", "ANWPD", "AMWT"]);
    let unlocated: Vec<String> = cands.iter().map(|c| ldc.classify(c, false).to_string()).collect();
    assert_eq!(unlocated, ["ANWT", "BMRT", "CNRT", "ANWT", "AMWT"]);
    let here = client();
    let ignore_merge = LdcContext::new(&here, &cands, true);
    assert_eq!(ignore_merge.classify(&cands[1], true).to_string(), "BNRT");
}

#[test]
fn no_idc_name_means_no_ldc() {
    let cands = vec![srv(1, "z1", "sh", "sh1")];
    for idc in [None, Some(""), Some("  ")] {
        let loc = ClientLocation { idc: idc.map(Into::into), regions: vec![] };
        let ldc = LdcContext::new(&loc, &cands, false);
        assert!(!ldc.is_used());
        assert_eq!(ldc.idc_type(&cands[0]), IdcType::SameIdc);
    }
}

#[test]
fn unknown_idc_name_means_no_ldc() {
    let cands = vec![srv(1, "z1", "sh", "sh1"), srv(2, "z2", "hz", "hz1")];
    let loc = ClientLocation { idc: Some("bj9".into()), regions: vec![] };
    let ldc = LdcContext::new(&loc, &cands, false);
    assert!(!ldc.is_used());
    assert_eq!(ldc.idc_type(&cands[0]), IdcType::SameIdc);
}

#[test]
fn region_from_idc_then_zone_prefix_then_config() {
    // IDC match, case-insensitive.
    let cands = vec![srv(1, "z1", "hz", "HZ1"), srv(2, "z2", "hz", "hz2"), srv(3, "z3", "sh", "sh1")];
    let here = client();
    let ldc = LdcContext::new(&here, &cands, false);
    let types: Vec<IdcType> = cands.iter().map(|c| ldc.idc_type(c)).collect();
    assert_eq!(types, [IdcType::SameIdc, IdcType::SameRegion, IdcType::OtherRegion]);
    // No IDC column: zone names starting with the IDC name.
    let cands = vec![srv(1, "hz1_zone1", "hz", ""), srv(2, "hz2_zone1", "hz", ""), srv(3, "sh1_z", "sh", "")];
    let here = client();
    let ldc = LdcContext::new(&here, &cands, false);
    let types: Vec<IdcType> = cands.iter().map(|c| ldc.idc_type(c)).collect();
    assert_eq!(types, [IdcType::SameIdc, IdcType::SameRegion, IdcType::OtherRegion]);
    // Neither: the configured regions.
    let cands = vec![srv(1, "a", "hz", "x1"), srv(2, "b", "sh", "x2")];
    let loc = ClientLocation { idc: Some("hz1".into()), regions: vec!["HZ".to_owned()] };
    let ldc = LdcContext::new(&loc, &cands, false);
    assert_eq!(ldc.regions(), ["HZ".to_owned()]);
    let types: Vec<IdcType> = cands.iter().map(|c| ldc.idc_type(c)).collect();
    assert_eq!(types, [IdcType::SameRegion, IdcType::OtherRegion]);
}

#[test]
fn server_missing_from_the_server_list_is_other_region() {
    let cands = vec![srv(1, "z1", "hz", "hz1"), srv(2, "", "", "")];
    let here = client();
    let ldc = LdcContext::new(&here, &cands, false);
    assert_eq!(ldc.idc_type(&cands[1]), IdcType::OtherRegion);
}

#[test]
fn zone_type_letters() {
    assert_eq!(ZoneType::ReadOnly.letter(), 'R');
    assert_eq!(ZoneType::ReadWrite.letter(), 'W');
}

#[test]
fn primary_zone_weights() {
    let pz = PrimaryZone::parse("z1, z2; z3");
    assert_eq!((pz.weight("z1"), pz.weight("Z2"), pz.weight("z3"), pz.weight("z4")), (Some(0), Some(0), Some(1), None));
    assert!(PrimaryZone::parse("RANDOM").is_empty());
    assert!(PrimaryZone::parse("").is_empty());
    assert_eq!(parse_zone_list("z1; z2;"), ["z1", "z2"]);
}
