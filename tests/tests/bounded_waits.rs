//! Bounded waits (issue #13 item 6): a routed gateway over the demo topology where s2 — the
//! leader of `t0` p3 (c1 = 123) — accepts TCP connections and never sends a greeting (a
//! listener in this test that holds every accepted socket). 50 clients send a strong read of
//! c1 = 123 at once; `max_connects_per_server` is 8, so most of them queue for a connect permit.
//! Every request gets its answer (failover to another candidate) or its error within
//! `acquire_timeout_ms` plus a small margin — measured per request — and the answers really came
//! from the other servers (general logs).

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use gateway_tests::cluster::{ClusterOptions, Servers};
use gateway_tests::general_log;
use gateway_tests::mysql::{connect, err_message, query_one};

const CLIENTS: usize = 50;
const ACQUIRE_MS: u64 = 2_000;
const CONNECT_MS: u64 = 1_500;
/// Scheduling, the failover's own connect and login on a loaded 2-core machine.
const MARGIN_MS: u64 = 1_000;

/// A listener that accepts and never writes; the sockets stay open while the process runs.
fn black_hole() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_routed_to_a_server_that_never_greets_end_within_the_acquire_timeout() {
    let mut servers = Servers::start(&ClusterOptions::demo("waits")).unwrap_or_else(|e| panic!("servers: {e}"));
    // s2 is the black hole; the real s2 is stopped.
    servers.stand_in("s2", black_hole());
    let mut toml = servers.gateway_config().unwrap_or_else(|e| panic!("{e}")).to_toml();
    toml.push_str(&format!(
        "\n[pool]\nacquire_timeout_ms = {ACQUIRE_MS}\nconnect_timeout_ms = {CONNECT_MS}\nmax_connects_per_server = 8\n"
    ));
    let cluster = servers.route(&toml).unwrap_or_else(|e| panic!("gateway: {e}"));
    let (gw, s1, s3) = (&cluster.gw, cluster.server("s1"), cluster.server("s3"));
    // Logins are validated on s1 (the tenant's first server), not on the black hole.
    let mut conns = Vec::new();
    for _ in 0..CLIENTS {
        conns.push(
            connect(&gw.url("root", "", Some("test")))
                .await
                .unwrap_or_else(|e| panic!("login: {e:?}\n{}", gw.log_tail(3000))),
        );
    }
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            tokio::spawn(async move {
                let sql = format!("SELECT /* waits:{i} */ c2 FROM t0 WHERE c1 = 123");
                let started = Instant::now();
                let r = query_one(&mut c, &sql).await;
                (i, started.elapsed(), r.map_err(|e| err_message(&e)))
            })
        })
        .collect();
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.expect("client task"));
    }
    results.sort_by_key(|r| r.1);
    let answered: Vec<usize> = results.iter().filter(|r| r.2.is_ok()).map(|r| r.0).collect();
    let errors: Vec<&String> = results.iter().filter_map(|r| r.2.as_ref().err()).collect();
    let times: Vec<u128> = results.iter().map(|r| r.1.as_millis()).collect();
    println!(
        "{} answered, {} errors; elapsed ms: {times:?}; first error: {:?}",
        answered.len(),
        errors.len(),
        errors.first()
    );
    let slowest = results.last().map(|r| r.1).unwrap_or_default();
    assert!(
        slowest <= Duration::from_millis(ACQUIRE_MS + MARGIN_MS),
        "a request took {slowest:?} (acquire_timeout_ms {ACQUIRE_MS}); elapsed ms {times:?}; errors {errors:?}"
    );
    for r in &results {
        if let Ok(v) = &r.2 {
            assert_eq!(v.as_deref(), Some("a"), "client {}: the row of c1 = 123", r.0);
        }
    }
    // The answers came from the live servers: each answered statement is in s1's or s3's log.
    let logs: Vec<Vec<general_log::Entry>> =
        [s1, s3].iter().map(|s| general_log::read(&s.general_log_path())).collect();
    for i in &answered {
        let marker = format!("/* waits:{i} */");
        assert!(
            logs.iter().flatten().any(|e| e.text.contains(&marker)),
            "client {i}'s answer is in no live server's log"
        );
    }
    assert!(gw.is_running(), "gateway died; log:\n{}", gw.log_tail(3000));
}
