//! The priority lists of the original ODP documentation (seeds/000_*.txt, docs/routing.md §4), one
//! test case each. Each list is quoted next to its case; the documented lists are the
//! partition-server projections of the docs/routing.md §4 arrays (docs/routing.md §4).

use super::{codes, server, strong_select, weak_select, without_role};
use crate::route::candidate::{Candidate, ZoneType};
use crate::route::consistency::{Consistency, ReadConsistency};
use crate::route::decision::{decide, RouteDecision};
use crate::route::error::RouteError;
use crate::route::order::Via;
use crate::route::policy::{ProxyRoutePolicy, RoutePolicy};
use crate::route::request::{PartitionState, RequestKind, RouteRequest};

/// Candidates for `classes` (in document order), reversed so that the input order never
/// happens to be the answer; returns the decision for several seeds.
fn decide_all(make: impl Fn(Vec<Candidate>, u64) -> RouteRequest, classes: &[&str]) -> Vec<RouteDecision> {
    let cands: Vec<Candidate> = classes.iter().enumerate().rev().map(|(i, c)| server(c, i as u8 + 1)).collect();
    (0..4).map(|seed| decide(&make(cands.clone(), seed)).unwrap()).collect()
}

fn assert_order(decisions: &[RouteDecision], want: &[&str], policy: RoutePolicy) {
    for d in decisions {
        assert_eq!(d.policy, policy);
        assert_eq!(codes(d), want, "seed {}", d.seed);
    }
}

/// プライマリ/スタンバイ均等ルーティング（デフォルト）, primary/standby balanced (default):
/// 1. 同一リージョン、同一IDC、メジャーコンパクション中でないノード。
/// 2. 同一リージョン、異なるIDC、メジャーコンパクション中でないノード。
/// 3. 同一リージョン、同一IDC、メジャーコンパクション中のノード。
/// 4. 同一リージョン、異なるIDC、メジャーコンパクション中のノード。
/// 5. 異なるリージョン、メジャーコンパクション中でないノード。
/// 6. 異なるリージョン、メジャーコンパクション中のノード。
#[test]
fn seed_primary_standby_balanced_default() {
    let list = ["ANWPF", "BNWPF", "AMWPL", "BMWPF", "CNWPF", "CMWPF"];
    assert_order(&decide_all(weak_select, &list), &list, RoutePolicy::MergeIdcOrder);
}

/// スタンバイ優先ルーティング, follower first (`set @proxy_route_policy='follower_first'`):
/// 1. 同一リージョン、同一IDC、メジャーコンパクション中でないスタンバイノード。
/// 2. 同一リージョン、異なるIDC、メジャーコンパクション中でないスタンバイノード。
/// 3. 同一リージョン、同一IDC、メジャーコンパクション中のスタンバイノード。
/// 4. 同一リージョン、異なるIDC、メジャーコンパクション中のスタンバイノード。
/// 5. 同一リージョン、同一IDC、メジャーコンパクション中でないプライマリノード。
/// 6. 同一リージョン、異なるIDC、メジャーコンパクション中でないプライマリノード。
/// 7. 異なるリージョン、メジャーコンパクション中でないスタンバイノード。
/// 8. 異なるリージョン、メジャーコンパクション中のスタンバイノード。
/// 9. 異なるリージョン、メジャーコンパクション中でないプライマリノード。
/// 10. 異なるリージョン、メジャーコンパクション中のプライマリノード。
///
/// (One "primary" per class, so this list has several leaders: the engine does not care.)
#[test]
fn seed_follower_first() {
    let list = ["ANWPF", "BNWPF", "AMWPF", "BMWPF", "ANWPL", "BNWPL", "CNWPF", "CMWPF", "CNWPL", "CMWPL"];
    let make = |c, s| {
        let mut r = weak_select(c, s);
        r.proxy_route_policy_var = ProxyRoutePolicy::parse("follower_first");
        r
    };
    assert_order(&decide_all(make, &list), &list, RoutePolicy::FollowerFirst);
}

/// 非メジャーコンパクション時のスタンバイ優先ルーティング, follower first outside compaction
/// (`set @proxy_route_policy='unmerge_follower_first'`):
/// 1. 同一リージョン、同一IDC、メジャーコンパクション中でないスタンバイノード。
/// 2. 同一リージョン、異なるIDC、メジャーコンパクション中でないスタンバイノード。
/// 3. 同一リージョン、同一IDC、メジャーコンパクション中でないプライマリノード。
/// 4. 同一リージョン、異なるIDC、メジャーコンパクション中でないプライマリノード。
/// 5. 同一リージョン、同一IDC、メジャーコンパクション中のスタンバイノード。
/// 6. 同一リージョン、異なるIDC、メジャーコンパクション中のスタンバイノード。
/// 7. 異なるリージョン、メジャーコンパクション中でないスタンバイノード。
/// 8. 異なるリージョン、メジャーコンパクション中でないプライマリノード。
/// 9. 異なるリージョン、メジャーコンパクション中のスタンバイノード。
/// 10. 異なるリージョン、メジャーコンパクション中のプライマリノード。
#[test]
fn seed_unmerge_follower_first() {
    let list = ["ANWPF", "BNWPF", "ANWPL", "BNWPL", "AMWPF", "BMWPF", "CNWPF", "CNWPL", "CMWPF", "CMWPL"];
    let make = |c, s| {
        let mut r = weak_select(c, s);
        r.proxy_route_policy_var = ProxyRoutePolicy::parse("UNMERGE_FOLLOWER_FIRST");
        r
    };
    assert_order(&decide_all(make, &list), &list, RoutePolicy::UnmergeFollowerFirst);
}

fn force_readonly(c: Vec<Candidate>, s: u64) -> RouteRequest {
    let mut r = weak_select(c, s);
    r.proxy_route_policy_var = ProxyRoutePolicy::parse("FORCE_READONLY_ZONE");
    r
}

/// 読み取り専用レプリカへの強制送信ルーティング (`set @proxy_route_policy='FORCE_READONLY_ZONE'`):
/// 「弱い整合性の読み取りリクエスト：読み取り専用レプリカ内のノードにルーティングされます。」
/// Weak reads go to read-only replicas only, never to read-write ones.
#[test]
fn seed_force_readonly_zone_weak_read() {
    let list = ["ANWPL", "ANRPF", "BNWPF", "BNRPF", "CNRPF", "ANWT", "ANRT"];
    for d in decide_all(force_readonly, &list) {
        assert_eq!(codes(&d), ["ANRPF", "BNRPF", "ANRT", "CNRPF"]);
        assert!(d.order().all(|r| r.code.unwrap().zone == ZoneType::ReadOnly));
    }
    let only_rw = ["ANWPL", "BNWPF"].iter().enumerate().map(|(i, c)| server(c, i as u8 + 1)).collect();
    assert_eq!(decide(&force_readonly(only_rw, 1)), Err(RouteError::NoCandidate(RoutePolicy::OnlyReadonlyZone)));
}

/// 「弱くない整合性の読み取りリクエスト：4007エラーを返します。このルーティングルールでは
/// 非読み取り専用リクエストは許可されません。」 Anything that is not a weak read: error 4007.
#[test]
fn seed_force_readonly_zone_rejects_non_weak_with_4007() {
    let cands = vec![server("ANRPF", 1), server("ANWPL", 2)];
    let mut strong = force_readonly(cands.clone(), 1);
    strong.consistency.hint = None;
    let err = decide(&strong).unwrap_err();
    assert_eq!(err, RouteError::ForceReadonlyZoneNotWeak(Consistency::Strong));
    assert_eq!((err.ob_code(), err.mysql_errno(), err.sql_state()), (-4007, 1235, "0A000"));
    let mut dml = force_readonly(cands.clone(), 1);
    dml.kind = RequestKind::OtherStatement;
    dml.consistency.is_select = false;
    assert_eq!(decide(&dml).unwrap_err().ob_code(), -4007);
    let mut locking = force_readonly(cands, 1);
    locking.consistency.locking_read = true;
    assert_eq!(decide(&locking).unwrap_err().ob_code(), -4007);
}

/// その他: 「proxy_route_policy 変数が他の値を取る場合…プライマリ/スタンバイ均等ルーティング
/// （デフォルト）に退化します。」 Other values degrade to the default balanced policy.
#[test]
fn seed_other_proxy_route_policy_values_degrade_to_default() {
    let list = ["ANWPF", "BNWPL", "AMWPF", "BMWPF", "CNWPF", "CMWPF"];
    let make = |c, s| {
        let mut r = weak_select(c, s);
        r.proxy_route_policy_var = ProxyRoutePolicy::parse("leader_first_please");
        r
    };
    assert_order(&decide_all(make, &list), &list, RoutePolicy::MergeIdcOrder);
}

/// 通常デプロイ: 「強整合性読み取りでSQLにテーブル名が指定されている場合、そのテーブルの対応する
/// パーティションのリーダーを保持しているOBServerノードにルーティングされます。」
/// Normal deployment, strong read naming a table → the partition leader.
#[test]
fn seed_normal_strong_read_goes_to_leader() {
    let list = ["ANWPF", "BNWPF", "CNWPL", "ANWT"];
    for d in decide_all(strong_select, &list) {
        assert_eq!(d.chosen.code.unwrap().to_string(), "CNWPL");
        assert_eq!(d.chosen.via, Via::Leader);
    }
}

/// 読み書き分離デプロイ case 1: 「強整合性読み取りステートメントで、かつSQLがテーブル名を指定して
/// いる場合、そのテーブルに関連するパーティションのリーダーを保持するOBServerノードに直接ルーティング
/// されます。」 Read/write-separated, strong read naming a table → the leader.
#[test]
fn seed_rw_split_strong_read_with_table_goes_to_leader() {
    let list = ["ANRPF", "ANWPF", "BNWPL", "ANRT"];
    for d in decide_all(strong_select, &list) {
        assert_eq!(d.chosen.code.unwrap().to_string(), "BNWPL");
        assert_eq!(d.chosen.via, Via::Leader);
    }
}

/// 読み書き分離デプロイ case 2: 「強整合性読み取りステートメントで、SQLが「select テーブル名未指定 /
/// use database / set session セッションレベルのシステム変数」の場合、Zone属性は無視され、この時点
/// では通常デプロイのプライマリ/スタンバイ均等ルーティング（デフォルト）と同等です。」
/// Zone type ignored: the balanced order over tenant servers (ANT BNT AMT BMT CNT CMT).
#[test]
fn seed_rw_split_select_without_table_use_set_ignore_zone_type() {
    let list = ["ANRT", "BNWT", "AMRT", "BMWT", "CNRT", "CMWT"];
    for kind in [RequestKind::Select, RequestKind::SessionStatement] {
        let make = |c, s| {
            let mut r = strong_select(c, s);
            r.kind = kind;
            r.names_table = false;
            r.partition = PartitionState::NoLocation;
            r.consistency.is_select = kind == RequestKind::Select;
            r
        };
        assert_order(&decide_all(make, &list), &list, RoutePolicy::MergeIdcOrder);
    }
}

/// 読み書き分離デプロイ case 3 (other strong requests):
/// 1. 同一Region、同一IDC、メジャーコンパクション中でない読み書きZone内のノード。
/// 2. 同一Region、異なるIDC、メジャーコンパクション中でない読み書きZone内のノード。
/// 3. 同一Region、同一IDC、メジャーコンパクション中の読み書きZone内のノード。
/// 4. 同一Region、異なるIDC、メジャーコンパクション中の読み書きZone内のノード。
/// 5. 異なるRegion、メジャーコンパクション中でない読み書きZone内のノード。
/// 6. 異なるRegion、メジャーコンパクション中の読み書きZone内のノード。
///
/// A DML whose leader is not in the location (so the order shows): read-write zones only.
#[test]
fn seed_rw_split_other_strong_requests_read_write_zones_only() {
    let list = ["ANWPF", "BNWPF", "AMWPF", "BMWPF", "CNWPF", "CMWPF"];
    let with_readonly = [&list[..], &["ANRPF", "BNRPF", "ANRT"]].concat();
    let make = |c, s| {
        let mut r = strong_select(c, s);
        r.kind = RequestKind::OtherStatement;
        r.consistency.is_select = false;
        r
    };
    for d in decide_all(make, &with_readonly) {
        assert_eq!(d.policy, RoutePolicy::OnlyReadwriteZone);
        assert_eq!(codes(&d), list);
    }
}

/// 読み書き分離デプロイ, weak reads: routing depends on `ob_route_policy`, default
/// READONLY_ZONE_FIRST (docs/routing.md §4, last row).
#[test]
fn seed_rw_split_weak_read_uses_ob_route_policy() {
    let list = ["ANRPF", "BNRPF", "ANWPL", "BNWPF", "CNRPF", "CNWPF"];
    let ds = decide_all(weak_select, &list);
    assert_order(&ds, &list, RoutePolicy::ReadonlyZoneFirst);
    let make = |c, s| {
        let mut r = weak_select(c, s);
        r.ob_route_policy = Some(2);
        r
    };
    for d in decide_all(make, &list) {
        assert_eq!(d.policy, RoutePolicy::OnlyReadonlyZone);
        assert_eq!(without_role(&codes(&d)), ["ANRP", "BNRP", "CNRP"]);
    }
    let session_weak = |c, s| {
        let mut r = strong_select(c, s);
        r.kind = RequestKind::SessionStatement;
        r.consistency.is_select = false;
        r.consistency.session = Some(ReadConsistency::Weak);
        r.partition = PartitionState::NoLocation;
        r
    };
    assert_eq!(decide_all(session_weak, &list)[0].policy, RoutePolicy::ReadonlyZoneFirst);
}
