//! Session isolation through pooled server connections (issue #5 "Tests"): 50 concurrent clients
//! through a pool of 8 connections per (server, tenant, user) — fewer than the clients, so every
//! server connection serves many clients in turn — each with its own `sql_mode`, `time_zone`,
//! user variable and current database. Every client checks many times, on servers chosen by
//! routing (partition leaders s1/s2/s4, local weak replicas, tenant servers), that it sees exactly
//! its own state, including after it changes it midway.

use std::collections::BTreeSet;

use gateway_tests::cluster::{Cluster, ClusterOptions};
use gateway_tests::mysql::{connect, query_values, value_string};
use mysql_async::prelude::*;

const CLIENTS: usize = 50;
const POOL_PER_KEY: usize = 8;
const ROUNDS: usize = 20;

/// sql_mode flags that change nothing in the statements below (no combination modes).
const FLAGS: [&str; 12] = [
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "NO_ZERO_IN_DATE",
    "HIGH_NOT_PRECEDENCE",
];

/// Client `k`'s sql_mode: a distinct non-empty subset of [`FLAGS`].
fn sql_mode(k: usize) -> BTreeSet<&'static str> {
    let bits = (k + 1) * 37 % (1 << FLAGS.len());
    FLAGS.iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, f)| *f).collect()
}

/// Client `k`'s time zone: a distinct offset in 30-minute steps from -12:30.
fn time_zone(k: usize) -> String {
    let minutes = (k as i64 - 25) * 30;
    let sign = if minutes < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", minutes.abs() / 60, minutes.abs() % 60)
}

/// What a client expects to see.
#[derive(Debug, Clone, PartialEq)]
struct State {
    mode: BTreeSet<String>,
    tz: String,
    user_var: String,
    db: String,
}

fn observed(row: &[Option<String>]) -> State {
    let s = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
    State {
        mode: s(0).split(',').filter(|f| !f.is_empty()).map(String::from).collect(),
        tz: s(1),
        user_var: s(2),
        db: s(3),
    }
}

/// Runs one client; returns its violations.
async fn client(url: String, k: usize) -> Vec<String> {
    let mut bad = Vec::new();
    let mut conn = match connect(&url).await {
        Ok(c) => c,
        Err(e) => return vec![format!("client {k}: connect: {e}")],
    };
    let mode: Vec<&str> = sql_mode(k).into_iter().collect();
    let mut want = State {
        mode: mode.iter().map(|s| s.to_string()).collect(),
        tz: time_zone(k),
        user_var: format!("client-{k}"),
        db: format!("iso_{k}"),
    };
    let setup = format!(
        "SET sql_mode = '{}', time_zone = '{}'; SET @u = '{}'; USE {}",
        mode.join(","),
        want.tz,
        want.user_var,
        want.db
    );
    if let Err(e) = conn.query_drop(&setup).await {
        return vec![format!("client {k}: setup: {e}")];
    }
    for round in 0..ROUNDS {
        if round == ROUNDS / 2 {
            want.user_var = format!("client-{k}-changed");
            if let Err(e) = conn.query_drop(format!("SET @u = '{}'", want.user_var)).await {
                bad.push(format!("client {k}: changing @u: {e}"));
            }
        }
        // A table of the client's own database (not in the topology: tenant routing), a strong
        // keyed read (the leader of the key's partition) and a weak one (a local replica).
        // Every key below 1000 exists in r_hash; leaders of its partitions are s1, s2 and s4.
        let key = (k * 7 + round * 13) % 1000;
        let probes = [
            "SELECT @@sql_mode, @@time_zone, @u, DATABASE(), v FROM marker".to_string(),
            format!("SELECT @@sql_mode, @@time_zone, @u, DATABASE(), c1 FROM test.r_hash WHERE c1 = {key}"),
            format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ @@sql_mode, @@time_zone, @u, DATABASE(), c1 FROM test.r_hash WHERE c1 = {}", 999 - key),
        ];
        for sql in &probes {
            match query_values(&mut conn, sql).await {
                Ok(rows) if rows.len() != 1 => {
                    bad.push(format!("client {k} round {round}: {} rows for {sql}", rows.len()))
                }
                Ok(rows) => {
                    let row: Vec<Option<String>> =
                        rows.into_iter().next().unwrap_or_default().into_iter().map(value_string).collect();
                    let got = observed(&row);
                    if got != want {
                        bad.push(format!("client {k} round {round}: saw {got:?}, expected {want:?} ({sql})"));
                    }
                    if sql.contains("FROM marker") && row.get(4).cloned().flatten() != Some(k.to_string()) {
                        bad.push(format!("client {k} round {round}: marker table says {:?}", row.get(4)));
                    }
                }
                Err(e) => bad.push(format!("client {k} round {round}: {sql}: {e}")),
            }
        }
    }
    conn.disconnect().await.ok();
    bad
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_clients_through_a_small_pool_each_see_only_their_own_session() {
    let mut opts = ClusterOptions::new("iso");
    opts.general_log = false;
    opts.extra_toml = format!("\n[pool]\nmax_per_key = {POOL_PER_KEY}\n");
    let c = Cluster::start(opts).unwrap();
    let ddl: Vec<String> = (0..CLIENTS)
        .map(|k| format!("CREATE DATABASE iso_{k}; CREATE TABLE iso_{k}.marker (v VARCHAR(16)); INSERT INTO iso_{k}.marker VALUES ('{k}')"))
        .collect();
    c.on_every_server(&ddl.join("; ")).unwrap();

    let url = c.gw_url(None);
    let tasks: Vec<_> = (0..CLIENTS).map(|k| tokio::spawn(client(url.clone(), k))).collect();
    let mut bad = Vec::new();
    for t in tasks {
        bad.extend(t.await.unwrap());
    }
    assert!(
        bad.is_empty(),
        "{} violations, first ones:\n{}\ngateway log:\n{}",
        bad.len(),
        bad.iter().take(20).cloned().collect::<Vec<_>>().join("\n"),
        c.gw_log()
    );
    // The pool really was smaller than the client count (no server ever had more app
    // connections than the pool allows, plus the root CLI of the setup and of this check), and
    // the probes really spread over the servers.
    for (name, db) in c.servers() {
        let out = db.sql("SHOW GLOBAL STATUS LIKE 'Max_used_connections'").unwrap();
        let max: usize = out.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
        assert!(max <= POOL_PER_KEY + 2, "{name} had {max} connections at once; pool max_per_key is {POOL_PER_KEY}");
    }
    let used: BTreeSet<&str> = c.route_log().iter().filter_map(|r| r.target.and_then(|a| c.name_of(a))).collect();
    assert!(used.len() >= 3, "probes reached only {used:?}");
}
