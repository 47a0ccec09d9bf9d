//! Failover during a run (issue #5 "Tests"): server s4 (zone1; leader of t_hash p2 and p6, the
//! zone1 replica of p2, p3, p6, p7) is SIGKILLed while clients work.
//!
//! * A client whose transaction was on s4 gets an error for its next statement (never a silent
//!   replay elsewhere); a client whose transaction was on s1 commits normally.
//! * Clients that never touch s4 (partitions led by s1/s2 whose local replica is s1, the
//!   non-partitioned table led by s2) see no error before, during or after the outage.
//! * New statements route around s4 to their partition's next candidate (docs/routing.md §4): strong
//!   ones on s4-led partitions go to s2 (ONLY_READWRITE_ZONE: ANWP is s4 itself, then BNWP = the
//!   zone2 follower), weak ones whose local replica is s4 go to s2 (READONLY_ZONE_FIRST: ANWP s4,
//!   then BNWP s2), statements without a table to a live server.
//! * s4 restarted on its data directory and port is used again: a strong read of p2 lands on it
//!   (route log and s4's general log), after the congestion retry interval at most.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gateway_tests::cluster::{Cluster, ClusterOptions, Topology};
use gateway_tests::mysql::connect;
use gateway_tests::workload::check::{self, Report};
use gateway_tests::workload::run::run_item;
use gateway_tests::workload::{Expect, Item, Outcome, Rng, Stmt};
use tokio::sync::watch;

const VICTIM: &str = "s4";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Before,
    Down,
    Back,
    Stop,
}

fn text(marker: u64, body: &str, expect: Expect) -> Item {
    Item { marker, stmt: Stmt::Text(format!("/* q:{marker} */ {body}")), expect, compare: false, hot: None }
}

fn only(s: &'static str) -> Expect {
    Expect::OneOf(BTreeSet::from([s]))
}

/// The next request of a steady client: only partitions whose leader and local replica are not
/// the victim (t_hash p0, p1, p4, p5; t_plain), keys private to the client.
fn steady_items(t: &Topology, rng: &mut Rng, id: u64, n: &mut u64) -> Vec<Item> {
    let mut m = || {
        *n += 1;
        (id + 1) * 10_000_000 + *n
    };
    let part = *rng.pick(&[0i64, 1, 4, 5]);
    let k = 8 * (100 * id as i64 + rng.below(100) as i64) + part;
    let p = part as usize;
    let leader = Expect::Leader(t.leader("t_hash", p));
    match rng.below(6) {
        0 => vec![text(m(), &format!("SELECT c2, c3 FROM t_hash WHERE c1 = {k}"), leader)],
        1 => vec![text(m(), &format!("UPDATE t_hash SET c3 = c3 + 1 WHERE c1 = {k}"), leader)],
        2 => {
            let body = format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM t_hash WHERE c1 = {k}");
            vec![text(m(), &body, Expect::Weak(t.weak_target("t_hash", p)))]
        }
        3 => {
            let (b, f) = (m(), m());
            vec![
                text(b, "BEGIN", Expect::Begin { first: f }),
                text(f, &format!("UPDATE t_hash SET c3 = c3 + 1 WHERE c1 = {k}"), leader),
                text(m(), &format!("SELECT c3 FROM t_hash WHERE c1 = {k}"), Expect::SameAs(f)),
                text(m(), "COMMIT", Expect::SameAs(f)),
            ]
        }
        4 => vec![text(
            m(),
            &format!("UPDATE t_plain SET c3 = c3 + 1 WHERE c1 = {k}"),
            Expect::Leader(t.leader("t_plain", 0)),
        )],
        _ => {
            let marker = m();
            let sql = format!("/* q:{marker} */ SELECT c2 FROM t_hash WHERE c1 = ?");
            vec![Item {
                marker,
                stmt: Stmt::Prepared { sql, params: vec![k] },
                expect: leader,
                compare: false,
                hot: None,
            }]
        }
    }
}

type Log = Vec<(Phase, Item, Outcome)>;

/// Works until told to stop; every request with the phase it was sent in and its outcome.
async fn steady(url: String, t: Topology, id: u64, phase: watch::Receiver<Phase>, done: Arc<AtomicUsize>) -> Log {
    let mut log = Vec::new();
    let mut conn = match connect(&url).await {
        Ok(c) => c,
        Err(e) => panic!("steady client {id}: connect: {e}"),
    };
    let mut rng = Rng::new(id);
    let mut n = 0;
    loop {
        let now = *phase.borrow();
        if now == Phase::Stop {
            break;
        }
        for item in steady_items(&t, &mut rng, id, &mut n) {
            let o = run_item(&mut conn, &item).await;
            log.push((now, item, o));
        }
        done.fetch_add(1, Ordering::Relaxed);
        // Pacing only (a steady trickle, not a flood that the checks must then wade through).
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    log
}

/// Polls `cond` every 20 ms until it holds; panics with `what` after `limit`.
async fn until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Requests sent by a fresh client while s4 is down, with where they must go.
fn outage_probe(t: &Topology) -> Vec<Item> {
    let mut n = 50_000_000;
    let mut m = || {
        n += 1;
        n
    };
    let (kp2, kp3, kp6) = (2002i64, 2003i64, 2006i64);
    assert_eq!([t.leader("t_hash", 2), t.weak_target("t_hash", 3), t.leader("t_hash", 6)], [VICTIM; 3]);
    let mut live: BTreeSet<&'static str> = t.server_names().into_iter().collect();
    live.remove(VICTIM);
    let (b, f) = (m(), m());
    let pm = m();
    vec![
        text(m(), &format!("SELECT c2, c3 FROM t_hash WHERE c1 = {kp2}"), only("s2")),
        text(m(), &format!("UPDATE t_hash SET c3 = c3 + 1 WHERE c1 = {kp6}"), only("s2")),
        text(m(), &format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM t_hash WHERE c1 = {kp3}"), only("s2")),
        text(m(), &format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM t_hash WHERE c1 = {kp2}"), only("s2")),
        text(m(), "SELECT 1", Expect::OneOf(live)),
        text(m(), "SELECT c2 FROM t_key WHERE c1 = 17", Expect::OneOf(BTreeSet::from(["s1", "s2"]))),
        text(b, "BEGIN", Expect::Begin { first: f }),
        text(f, &format!("UPDATE t_hash SET c3 = c3 + 1 WHERE c1 = {kp2}"), only("s2")),
        text(m(), "COMMIT", Expect::SameAs(f)),
        Item {
            marker: pm,
            stmt: Stmt::Prepared { sql: format!("/* q:{pm} */ SELECT c2 FROM t_hash WHERE c1 = ?"), params: vec![kp6] },
            expect: only("s2"),
            compare: false,
            hot: None,
        },
    ]
}

async fn run_list(url: &str, items: &[Item]) -> Vec<(Item, Outcome)> {
    let mut conn = connect(url).await.expect("connect through the gateway while a server is down");
    let mut out = Vec::new();
    for i in items {
        out.push((i.clone(), run_item(&mut conn, i).await));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_server_fails_only_its_transactions_is_routed_around_and_used_again() {
    let mut c = Cluster::start(ClusterOptions::new("failover")).unwrap();
    let url = c.gw_url(Some("test"));
    let (phase_tx, phase_rx) = watch::channel(Phase::Before);
    let done = Arc::new(AtomicUsize::new(0));
    let steady_tasks: Vec<_> = (0..3)
        .map(|id| tokio::spawn(steady(url.clone(), c.topology().clone(), id, phase_rx.clone(), done.clone())))
        .collect();
    until("steady clients to get going", Duration::from_secs(30), || done.load(Ordering::Relaxed) >= 60).await;

    // Two open transactions: one on the victim (t_hash p2, led by s4), one on s1 (p0).
    let mut on_victim = connect(&url).await.unwrap();
    let mut on_s1 = connect(&url).await.unwrap();
    let tx = |m: u64, body: &str| text(m, body, Expect::Any);
    for (conn, k, base) in [(&mut on_victim, 1002i64, 60_000_000u64), (&mut on_s1, 1000, 61_000_000)] {
        for (i, body) in
            ["BEGIN".to_string(), format!("UPDATE t_hash SET c3 = c3 + 1 WHERE c1 = {k}")].iter().enumerate()
        {
            let o = run_item(conn, &tx(base + i as u64, body)).await;
            assert!(!o.is_err(), "{body} (key {k}) before the kill: {o:?}\n{}", c.gw_log());
        }
    }

    // The transactions really are where the test thinks (the route log is written asynchronously).
    for (m, server) in [(60_000_001u64, VICTIM), (61_000_001, "s1")] {
        let (tag, addr) = (format!("q:{m} "), c.server(server).addr());
        until(&format!("q:{m} on {server} in the route log"), Duration::from_secs(10), || {
            c.route_log().iter().any(|r| r.sql.contains(&tag) && r.target == Some(addr))
        })
        .await;
    }

    c.kill(VICTIM).unwrap();
    phase_tx.send_replace(Phase::Down);
    let o = run_item(&mut on_victim, &tx(60_000_010, "UPDATE t_hash SET c3 = c3 + 1 WHERE c1 = 1002")).await;
    assert!(o.is_err(), "the transaction on the killed server went on as if nothing happened: {o:?}");
    for (i, body) in ["SELECT c3 FROM t_hash WHERE c1 = 1000", "COMMIT"].iter().enumerate() {
        let o = run_item(&mut on_s1, &tx(61_000_010 + i as u64, body)).await;
        assert!(!o.is_err(), "transaction on s1 after s4 died: {body}: {o:?}\n{}", c.gw_log());
    }

    // A fresh client during the outage: logs in, every request succeeds, routed around s4.
    let probe = outage_probe(c.topology());
    let probed = run_list(&url, &probe).await;
    let failed: Vec<_> = probed.iter().filter(|(_, o)| o.is_err()).collect();
    assert!(failed.is_empty(), "requests failed while s4 was down: {failed:#?}\n{}", c.gw_log());
    let before_restart = done.load(Ordering::Relaxed);
    until("steady clients to work through the outage", Duration::from_secs(30), || {
        done.load(Ordering::Relaxed) >= before_restart + 30
    })
    .await;

    c.restart(VICTIM).unwrap();
    phase_tx.send_replace(Phase::Back);
    let back = used_again(&c, &url).await;

    phase_tx.send_replace(Phase::Stop);
    let mut steady_log = Vec::new();
    for t in steady_tasks {
        steady_log.extend(t.await.unwrap());
    }
    let errors: Vec<_> = steady_log.iter().filter(|(_, _, o)| o.is_err()).collect();
    assert!(
        errors.is_empty(),
        "{} steady requests failed, e.g. {:#?}\n{}",
        errors.len(),
        &errors[..errors.len().min(5)],
        c.gw_log()
    );
    for p in [Phase::Before, Phase::Down, Phase::Back] {
        assert!(steady_log.iter().any(|(q, _, _)| *q == p), "no steady request in phase {p:?}");
    }

    let lists = vec![probe, steady_log.into_iter().map(|(_, i, _)| i).collect()];
    let ev = c.evidence(&lists);
    let mut placement = Report::default();
    check::check_marked(&lists, &ev, &mut placement);
    eprintln!("failover placement: {} checked; s4 used again: {back:?}", placement.checked);
    placement.assert_clean("placement around the killed server");
    if let Err(e) = back {
        panic!("{e}\n{}", c.gw_log());
    }
}

/// After the restart, strong reads of p2 (led by s4) until one runs on s4 again, confirmed by the
/// route log and s4's general log; how long it took, or why it did not happen within 75 s.
async fn used_again(c: &Cluster, url: &str) -> Result<Duration, String> {
    let start = Instant::now();
    let mut conn = connect(url).await.map_err(|e| format!("connect after the restart: {e}"))?;
    for i in 0.. {
        let m = 70_000_000 + i;
        let o = run_item(&mut conn, &text(m, "SELECT c2 FROM t_hash WHERE c1 = 2002", Expect::Any)).await;
        if o.is_err() {
            return Err(format!("read of p2 after s4 came back: {o:?}"));
        }
        let tag = format!("q:{m} ");
        let on_victim = c.route_log().iter().any(|r| r.sql.contains(&tag) && r.target == Some(c.server(VICTIM).addr()));
        if on_victim {
            let logged = gateway_tests::general_log::read(&c.server(VICTIM).general_log_path())
                .iter()
                .any(|e| e.command == "Query" && e.text.contains(&tag));
            if !logged {
                return Err(format!("route log says q:{m} went to s4, s4's general log does not have it"));
            }
            return Ok(start.elapsed());
        }
        if start.elapsed() > Duration::from_secs(75) {
            return Err(format!("s4 not used again within 75 s of its restart ({i} reads of p2 went elsewhere)"));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    unreachable!()
}
