//! Memory comes back after a connection storm (issue #13 item 7): a routed gateway over three real
//! MariaDB servers (demo topology) takes 10,000 idle client sessions (real mysql_async logins),
//! they all close, and the gateway's resident set (`VmRSS` of /proc/<pid>/status) falls back to
//! within 2× of its pre-storm figure within 30 s — three storms in a row, so repeated storms do
//! not grow it. Prints KiB per idle session and RSS before / peak / after of each storm.
//!
//! Needs 10,000 client sockets in this process and as many in the gateway: the soft
//! `RLIMIT_NOFILE` is raised to the hard one (the gateway inherits it); below that it prints
//! `SKIP`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gateway_tests::cluster::{ClusterOptions, Servers};
use mysql_async::{Conn, Opts, OptsBuilder};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

const SESSIONS: usize = 10_000;
const STORMS: usize = 3;
/// Logins in flight at once.
const CONCURRENCY: usize = 200;
/// How long the resident set may take to come back.
const SETTLE: Duration = Duration::from_secs(30);

/// `VmRSS` of process `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_else(|e| panic!("/proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/{pid}/status"))
}

/// `n` logged-in sessions through `url`, `CONCURRENCY` logins at a time.
async fn storm(opts: Opts, n: usize) -> Vec<Conn> {
    let gate = Arc::new(Semaphore::new(CONCURRENCY));
    let mut set = JoinSet::new();
    for _ in 0..n {
        let (gate, opts) = (gate.clone(), opts.clone());
        set.spawn(async move {
            let _p = gate.acquire_owned().await.expect("semaphore");
            Conn::new(opts).await
        });
    }
    let mut conns = Vec::with_capacity(n);
    while let Some(r) = set.join_next().await {
        conns.push(r.expect("login task").unwrap_or_else(|e| panic!("login {} of {n}: {e:?}", conns.len())));
    }
    conns
}

/// Closes every session (COM_QUIT, socket closed).
async fn close_all(conns: Vec<Conn>) {
    let gate = Arc::new(Semaphore::new(CONCURRENCY));
    let mut set = JoinSet::new();
    for c in conns {
        let gate = gate.clone();
        set.spawn(async move {
            let _p = gate.acquire_owned().await.expect("semaphore");
            let _ = c.disconnect().await;
        });
    }
    while set.join_next().await.is_some() {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rss_comes_back_after_ten_thousand_idle_sessions_close() {
    let nofile = gateway_tests::raise_nofile();
    if nofile < (SESSIONS + 2_000) as u64 {
        gateway_tests::skip::skip(
            "memory_storm",
            &format!(
                "RLIMIT_NOFILE hard limit {nofile} is below {} (10,000 sessions need that many sockets)",
                SESSIONS + 2_000
            ),
        );
        return;
    }
    let servers = Servers::start(&ClusterOptions::demo("storm")).unwrap_or_else(|e| panic!("servers: {e}"));
    let mut cfg = servers.gateway_config().unwrap_or_else(|e| panic!("{e}"));
    cfg.log_level = "warn".into();
    let cluster = servers.route(&cfg.to_toml()).unwrap_or_else(|e| panic!("gateway: {e}"));
    let gw = &cluster.gw;
    let pid = gw.pid();
    // Known values: mysql_async does not ask the server for them after the login.
    let opts: Opts = OptsBuilder::from_opts(Opts::from_url(&gw.url("root", "", Some("test"))).expect("url"))
        .prefer_socket(false)
        .max_allowed_packet(Some(16 << 20))
        .wait_timeout(Some(28_800))
        .into();

    // Warm-up: the runtime's threads, the pool's connections and the first session's buffers
    // exist before the reference figure is taken.
    close_all(storm(opts.clone(), CONCURRENCY).await).await;
    let before = rss_kib(pid);
    let limit = 2 * before;
    for round in 1..=STORMS {
        let t0 = Instant::now();
        let conns = storm(opts.clone(), SESSIONS).await;
        let login_time = t0.elapsed();
        let peak = rss_kib(pid);
        let per_session = (peak.saturating_sub(before)) as f64 / SESSIONS as f64;
        close_all(conns).await;
        let closed = Instant::now();
        let mut after = rss_kib(pid);
        while after > limit && closed.elapsed() < SETTLE {
            tokio::time::sleep(Duration::from_millis(200)).await;
            after = rss_kib(pid);
        }
        println!(
            "storm {round}: {SESSIONS} logins in {login_time:.1?}; RSS before {before} KiB, peak {peak} KiB ({per_session:.1} KiB per idle session), after {after} KiB ({:.1?} after the last close)",
            closed.elapsed()
        );
        assert!(
            after <= limit,
            "storm {round}: RSS {after} KiB {SETTLE:?} after 10,000 sessions closed, more than 2 × {before} KiB before the first storm"
        );
        assert!(gw.is_running(), "gateway died; log:\n{}", gw.log_tail(3000));
    }
}
