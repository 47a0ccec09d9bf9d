//! Congestion state machines driven by an injected clock (docs/routing.md §6).

use std::time::{Duration, Instant};

use super::addr;
use crate::route::congestion::{CongestionConfig, CongestionKind, CongestionManager, CongestionState, ServerStatus};

const ALIVE_CONGESTED: CongestionState = CongestionState::Congested(CongestionKind::Alive);

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn five_failures_within_the_window_congest() {
    let t0 = Instant::now();
    let mut m = CongestionManager::new(CongestionConfig::default());
    let a = addr(1);
    for i in 0..4 {
        m.on_failure(a, t0 + secs(i * 10));
        assert_eq!(m.state(a, t0 + secs(i * 10)), CongestionState::Alive, "failure {}", i + 1);
    }
    m.on_failure(a, t0 + secs(40));
    assert_eq!(m.state(a, t0 + secs(40)), ALIVE_CONGESTED);
}

#[test]
fn failures_outside_the_window_do_not_count() {
    let t0 = Instant::now();
    let mut m = CongestionManager::new(CongestionConfig::default());
    let a = addr(1);
    for i in 0..5 {
        m.on_failure(a, t0 + secs(i * 40)); // 0, 40, 80, 120, 160: never 5 within 120 s
    }
    assert_eq!(m.state(a, t0 + secs(160)), CongestionState::Alive);
    m.on_failure(a, t0 + secs(161)); // 80, 120, 160, 161 (40 is 121 s old)
    assert_eq!(m.state(a, t0 + secs(161)), CongestionState::Alive);
    m.on_failure(a, t0 + secs(162)); // 80, 120, 160, 161, 162
    assert_eq!(m.state(a, t0 + secs(162)), ALIVE_CONGESTED);
}

fn congested_at(t0: Instant) -> CongestionManager {
    let mut m = CongestionManager::new(CongestionConfig::default());
    for _ in 0..5 {
        m.on_failure(addr(1), t0);
    }
    m
}

#[test]
fn one_retry_after_the_retry_interval() {
    let t0 = Instant::now();
    let mut m = congested_at(t0);
    let a = addr(1);
    assert_eq!(m.state(a, t0 + secs(19)), ALIVE_CONGESTED);
    assert!(!m.claim_retry(a, t0 + secs(19)));
    assert_eq!(m.state(a, t0 + secs(20)), CongestionState::RetryDue);
    assert!(m.claim_retry(a, t0 + secs(20)), "first connection gets the retry");
    assert_eq!(m.state(a, t0 + secs(21)), ALIVE_CONGESTED, "others keep skipping it");
    assert!(!m.claim_retry(a, t0 + secs(21)));
    assert_eq!(m.state(a, t0 + secs(40)), CongestionState::RetryDue, "next retry 20 s later");
}

#[test]
fn success_clears_only_after_the_minimum_keep_interval() {
    let t0 = Instant::now();
    let mut m = congested_at(t0);
    let a = addr(1);
    m.on_success(a, t0 + secs(10));
    assert_eq!(m.state(a, t0 + secs(10)), ALIVE_CONGESTED);
    m.on_success(a, t0 + secs(20));
    assert_eq!(m.state(a, t0 + secs(20)), CongestionState::Alive);
    m.on_failure(a, t0 + secs(21));
    assert_eq!(m.state(a, t0 + secs(21)), CongestionState::Alive, "failure history was reset");
}

#[test]
fn failed_retry_keeps_it_congested() {
    let t0 = Instant::now();
    let mut m = congested_at(t0);
    let a = addr(1);
    assert!(m.claim_retry(a, t0 + secs(25)));
    m.on_failure(a, t0 + secs(26));
    assert_eq!(m.state(a, t0 + secs(30)), ALIVE_CONGESTED);
    assert_eq!(m.state(a, t0 + secs(46)), CongestionState::RetryDue);
}

#[test]
fn server_status_transitions() {
    let t0 = Instant::now();
    let mut m = CongestionManager::new(CongestionConfig::default());
    let a = addr(1);
    let dead = CongestionState::Congested(CongestionKind::Dead);
    let upgrade = CongestionState::Congested(CongestionKind::ForceAlive);
    // (status, expected state afterwards)
    let steps = [
        (ServerStatus::Inactive, dead),
        (ServerStatus::Deleting, dead),
        (ServerStatus::Active, CongestionState::Alive),
        (ServerStatus::Replay, dead),
        (ServerStatus::Upgrade, dead),
        (ServerStatus::Active, CongestionState::Alive),
        (ServerStatus::Upgrade, upgrade),
        (ServerStatus::Active, CongestionState::Alive),
    ];
    for (i, (status, want)) in steps.into_iter().enumerate() {
        m.on_server_status(a, status, t0);
        assert_eq!(m.state(a, t0), want, "step {i}: {status:?}");
    }
}

#[test]
fn priority_dead_over_force_alive_over_alive_over_detect() {
    let t0 = Instant::now();
    let mut m = congested_at(t0);
    let a = addr(1);
    for _ in 0..3 {
        m.on_detect(a, false);
    }
    assert_eq!(m.state(a, t0), ALIVE_CONGESTED);
    m.on_server_status(a, ServerStatus::Upgrade, t0);
    assert_eq!(m.state(a, t0), CongestionState::Congested(CongestionKind::ForceAlive));
    m.on_server_status(a, ServerStatus::Inactive, t0);
    assert_eq!(m.state(a, t0), CongestionState::Congested(CongestionKind::Dead));
    // ACTIVE 20 s later clears dead, force-alive and (kept long enough) alive: detect remains.
    m.on_server_status(a, ServerStatus::Active, t0 + secs(20));
    assert_eq!(m.state(a, t0 + secs(20)), CongestionState::Congested(CongestionKind::Detect));
}

#[test]
fn detect_needs_three_consecutive_failures() {
    let mut m = CongestionManager::new(CongestionConfig::default());
    let a = addr(1);
    let now = Instant::now();
    m.on_detect(a, false);
    m.on_detect(a, false);
    m.on_detect(a, true);
    m.on_detect(a, false);
    m.on_detect(a, false);
    assert_eq!(m.state(a, now), CongestionState::Alive);
    m.on_detect(a, false);
    assert_eq!(m.state(a, now), CongestionState::Congested(CongestionKind::Detect));
    m.on_detect(a, true);
    assert_eq!(m.state(a, now), CongestionState::Alive);
}

#[test]
fn disabled_congestion() {
    let t0 = Instant::now();
    let mut off = CongestionManager::new(CongestionConfig { enabled: false, ..CongestionConfig::default() });
    off.on_server_status(addr(1), ServerStatus::Inactive, t0);
    assert_eq!(off.state(addr(1), t0), CongestionState::Alive);
    let mut zero = CongestionManager::new(CongestionConfig { failure_threshold: 0, ..CongestionConfig::default() });
    for _ in 0..10 {
        zero.on_failure(addr(1), t0);
    }
    assert_eq!(zero.state(addr(1), t0), CongestionState::Alive);
    assert_eq!(zero.state(addr(2), t0), CongestionState::Alive, "unknown servers are alive");
}

/// The calm flag holds exactly while every known server's state is `Alive`, whatever the time.
#[test]
fn the_calm_flag_follows_every_kind_of_congestion() {
    let t0 = Instant::now();
    let mut m = CongestionManager::new(CongestionConfig::default());
    let calm = m.calm();
    let (a, b) = (addr(1), addr(2));
    let agrees = |m: &CongestionManager, at: Instant| {
        let all_alive = [a, b].iter().all(|s| m.state(*s, at) == CongestionState::Alive);
        assert_eq!(m.calm().is_calm(), all_alive, "at +{:?}", at - t0);
        m.calm().is_calm()
    };
    assert!(calm.is_calm(), "no server known");
    for i in 0..4 {
        m.on_failure(a, t0 + secs(i));
    }
    assert!(agrees(&m, t0 + secs(4)), "four failures congest nothing");
    m.on_failure(a, t0 + secs(4));
    assert!(!agrees(&m, t0 + secs(4)), "alive congestion");
    assert!(!agrees(&m, t0 + secs(30)), "retry due is not alive either");
    m.on_success(a, t0 + secs(30));
    assert!(agrees(&m, t0 + secs(30)), "kept past min_keep_interval, then a success");
    m.on_server_status(b, ServerStatus::Inactive, t0 + secs(31));
    assert!(!agrees(&m, t0 + secs(31)), "dead");
    m.on_server_status(b, ServerStatus::Upgrade, t0 + secs(32));
    m.on_server_status(b, ServerStatus::Active, t0 + secs(33));
    assert!(agrees(&m, t0 + secs(33)), "active again");
    for _ in 0..3 {
        m.on_detect(b, false);
    }
    assert!(!agrees(&m, t0 + secs(34)), "detect congestion");
    m.on_detect(b, true);
    assert!(agrees(&m, t0 + secs(34)));
    assert!(calm.is_calm(), "the handle taken first follows the manager");
    let copy = m.clone();
    m.on_server_status(a, ServerStatus::Inactive, t0 + secs(35));
    assert!(copy.calm().is_calm() && !calm.is_calm(), "a copy has a flag of its own");
    let mut off = CongestionManager::new(CongestionConfig { enabled: false, ..CongestionConfig::default() });
    off.on_server_status(a, ServerStatus::Inactive, t0);
    assert!(off.calm().is_calm(), "congestion control off: every server counts as alive");
}
