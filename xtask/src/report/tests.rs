//! Tests of the summary table and the raw rows.

use super::*;

fn sample(target: &'static str, round: u32, qps: f64) -> Sample {
    Sample {
        test: "oltp_point_select",
        ps_mode: "disable",
        target,
        round,
        outcome: Outcome { qps, p95_ms: 0.5, ..Outcome::default() },
    }
}

#[test]
fn median_odd_even_empty() {
    assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    assert_eq!(median(vec![]), None);
}

#[test]
fn ratios_pair_rounds() {
    let s = vec![
        sample("direct", 1, 100.0),
        sample("haproxy", 1, 50.0),
        sample("gateway", 1, 40.0),
        sample("direct", 2, 200.0),
        sample("haproxy", 2, 100.0),
        sample("gateway", 2, 100.0),
    ];
    let t = summarize(&s);
    let gw = &t.rows[2];
    assert_eq!(gw[2], "gateway");
    assert_eq!(gw[4], "40-100");
    assert_eq!(gw[7], "0.45"); // median(0.4, 0.5)
    assert_eq!(gw[8], "0.90"); // median(0.8, 1.0)
    assert!(t.to_markdown().contains("| ---: |"));
    assert!(t.to_markdown().contains("| point_select | disable | gateway |"));
    assert!(!t.header.contains(&"gw/plain".to_string()));
}

#[test]
fn cpu_per_statement_and_its_ratio_to_haproxy() {
    let with_cpu = |target, round, qps, cpu| {
        let mut s = sample(target, round, qps);
        s.outcome.cpu_us = Some(cpu);
        s.outcome.cpu_user_us = Some(cpu / 10.0);
        s
    };
    let s = vec![
        sample("direct", 1, 100.0),
        with_cpu("haproxy", 1, 60.0, 30.0),
        with_cpu("routed", 1, 50.0, 45.0),
        sample("direct", 2, 100.0),
        with_cpu("haproxy", 2, 60.0, 32.0),
        with_cpu("routed", 2, 70.0, 40.0),
    ];
    let t = summarize(&s);
    let col = |title: &str| t.header.iter().position(|h| h == title).unwrap();
    let routed = &t.rows[2];
    assert_eq!(routed[col("target")], "routed");
    assert_eq!(routed[col("CPU us/stmt")], "42.5");
    assert_eq!(routed[col("user us/stmt")], "4.2"); // median(4.5, 4.0), rounded to even
    assert_eq!(routed[col("cpu/haproxy")], "1.38"); // median(1.5, 1.25)
    assert_eq!(routed[col("gw/haproxy")], "1.00"); // median(0.833, 1.167)
    assert_eq!(t.rows[1][col("CPU us/stmt")], "31.0");
    assert_eq!(t.rows[1][col("cpu/haproxy")], "");
    assert_eq!(t.rows[0][col("CPU us/stmt")], "-");
    assert!(!t.header.contains(&"host us/stmt".to_string()), "no host column without host readings");
}

#[test]
fn rest_is_host_time_no_process_of_the_run_was_charged_with() {
    let with = |target, round, proxy: Option<f64>, host, server, client| {
        let mut s = sample(target, round, 100.0);
        (s.outcome.cpu_us, s.outcome.host_us) = (proxy, Some(host));
        (s.outcome.server_us, s.outcome.client_us) = (Some(server), Some(client));
        s
    };
    let s = vec![
        with("direct", 1, None, 40.0, 25.0, 12.0),
        with("haproxy", 1, Some(18.0), 70.0, 27.0, 14.0),
        with("direct", 2, None, 42.0, 26.0, 12.5),
        with("haproxy", 2, Some(20.0), 74.0, 28.0, 14.0),
    ];
    let t = summarize(&s);
    let col = |title: &str| t.header.iter().position(|h| h == title).unwrap();
    assert_eq!(t.rows[0][col("rest us/stmt")], "3.2"); // median(40-25-12, 42-26-12.5) = median(3, 3.5)
    assert_eq!(t.rows[1][col("rest us/stmt")], "11.5"); // median(70-18-27-14, 74-20-28-14)
    assert_eq!(t.rows[1][col("server us/stmt")], "27.5");
    assert_eq!(t.rows[1][col("client us/stmt")], "14.0");
    assert!(!t.header.contains(&"server sc/stmt".to_string()), "no server counts without perf");
    let mut counted = s.clone();
    counted[1].outcome.server_syscalls = Some(5.1);
    counted[1].outcome.server_switches = Some(1.2);
    counted[3].outcome.server_syscalls = Some(5.3);
    counted[3].outcome.server_switches = Some(1.2);
    let t = summarize(&counted);
    let col = |title: &str| t.header.iter().position(|h| h == title).unwrap();
    assert_eq!(t.rows[1][col("server sc/stmt")], "5.20");
    assert_eq!(t.rows[1][col("server cs/stmt")], "1.20");
    assert_eq!(t.rows[0][col("server sc/stmt")], "");
    assert!(!t.header.contains(&"server q/stmt".to_string()), "no statement counts read");
    counted[1].outcome.server_questions = Some(1.002);
    counted[3].outcome.server_questions = Some(1.5);
    let t = summarize(&counted);
    let col = |title: &str| t.header.iter().position(|h| h == title).unwrap();
    assert_eq!(t.rows[1][col("server q/stmt")], "1.251");
    let mut without = s.clone();
    without.iter_mut().for_each(|s| s.outcome.server_us = None);
    assert!(!summarize(&without).header.contains(&"rest us/stmt".to_string()));
}

#[test]
fn host_cpu_per_statement_and_what_a_proxy_adds_to_direct() {
    let with_host = |target, round, host| {
        let mut s = sample(target, round, 100.0);
        s.outcome.host_us = Some(host);
        s
    };
    let s = vec![
        with_host("direct", 1, 40.0),
        with_host("spliced", 1, 52.0),
        with_host("direct", 2, 44.0),
        with_host("spliced", 2, 60.0),
        with_host("direct", 3, 42.0),
        with_host("spliced", 3, 51.0),
    ];
    let t = summarize(&s);
    let col = |title: &str| t.header.iter().position(|h| h == title).unwrap();
    assert_eq!(t.rows[0][col("host us/stmt")], "42.0");
    assert_eq!(t.rows[0][col("added us/stmt")], "", "direct adds nothing to itself");
    assert_eq!(t.rows[1][col("host us/stmt")], "52.0");
    assert_eq!(t.rows[1][col("added us/stmt")], "12.0"); // median(12, 16, 9)
    assert!(
        raw_markdown(&s).contains("| 1 | point_select | disable | spliced | 100 | 0.50 | 0 |  |  |  |  |  | 52.0 |")
    );
}

#[test]
fn system_calls_and_the_baseline_binary_side_by_side() {
    let run = |target, round, qps, cpu, user, syscalls| {
        let mut s = sample(target, round, qps);
        (s.outcome.cpu_us, s.outcome.cpu_user_us, s.outcome.syscalls) = (Some(cpu), Some(user), Some(syscalls));
        s.outcome.switches = Some(syscalls / 4.0);
        s.outcome.segments = Some(syscalls - 0.9);
        s
    };
    let s = vec![
        sample("direct", 1, 100.0),
        run("haproxy", 1, 60.0, 20.0, 2.0, 4.0),
        run("routed-uring", 1, 50.0, 24.0, 8.0, 4.9),
        run("routed-base", 1, 40.0, 30.0, 10.0, 5.1),
        sample("direct", 2, 100.0),
        run("haproxy", 2, 60.0, 20.0, 2.0, 4.2),
        run("routed-uring", 2, 45.0, 27.0, 9.0, 4.7),
        run("routed-base", 2, 50.0, 30.0, 10.0, 5.3),
    ];
    let t = summarize(&s);
    let col = |title: &str| t.header.iter().position(|h| h == title).unwrap();
    let (haproxy, routed, base) = (&t.rows[1], &t.rows[2], &t.rows[3]);
    assert_eq!(routed[col("target")], "routed-uring");
    assert_eq!(haproxy[col("syscalls/stmt")], "4.10");
    assert_eq!(routed[col("syscalls/stmt")], "4.80");
    assert_eq!(routed[col("cs/stmt")], "1.20");
    assert_eq!(routed[col("segs/stmt")], "3.90"); // median(4.0, 3.8)
    assert_eq!(routed[col("qps/base")], "1.07"); // median(1.25, 0.9)
    assert_eq!(routed[col("cpu/base")], "0.85"); // median(0.8, 0.9)
    assert_eq!(routed[col("user/base")], "0.85");
    assert_eq!(base[col("target")], "routed-base");
    assert_eq!((base[col("qps/base")].as_str(), haproxy[col("cpu/base")].as_str()), ("", ""));
    assert_eq!(base[col("cpu/haproxy")], "1.50", "the baseline gets its ratio to haproxy too");

    let without = summarize(&[sample("direct", 1, 100.0), sample("routed", 1, 50.0)]);
    for gone in ["syscalls/stmt", "cs/stmt", "segs/stmt", "qps/base", "cpu/base", "user/base"] {
        assert!(!without.header.contains(&gone.to_string()), "{gone} without figures");
    }
}

#[test]
fn the_floor_relay_is_compared_like_a_gateway() {
    let run = |target, qps, cpu| {
        let mut s = sample(target, 1, qps);
        s.outcome.cpu_us = Some(cpu);
        s
    };
    let s = vec![sample("direct", 1, 100.0), run("haproxy", 60.0, 20.0), run("relay", 66.0, 16.0)];
    let t = summarize(&s);
    let col = |title: &str| t.header.iter().position(|h| h == title).unwrap();
    let relay = &t.rows[2];
    assert_eq!(relay[col("target")], "relay");
    assert_eq!(relay[col("gw/direct")], "0.66");
    assert_eq!(relay[col("gw/haproxy")], "1.10");
    assert_eq!(relay[col("cpu/haproxy")], "0.80");
    // A proxy that used no CPU tick in the run is compared as 0, not left out.
    let idle = summarize(&[run("haproxy", 60.0, 20.0), run("spliced", 90.0, 0.0)]);
    let col = |title: &str| idle.header.iter().position(|h| h == title).unwrap();
    assert_eq!(idle.rows[1][col("cpu/haproxy")], "0.00");
    assert_eq!(t.rows[1][col("cpu/haproxy")], "", "haproxy is not compared with itself");
}

#[test]
fn plain_gateway_ratio_with_tls() {
    let s = vec![
        sample("direct", 1, 100.0),
        sample("haproxy", 1, 80.0),
        sample("gateway", 1, 60.0),
        sample("gateway-plain", 1, 75.0),
    ];
    let t = summarize(&s);
    assert_eq!(
        t.header,
        ["test", "ps mode", "target", "QPS", "p95 ms", "errors", "gw/direct", "gw/haproxy", "gw/plain", "failures"]
    );
    assert_eq!(t.rows[2][8], "0.80");
    assert_eq!((t.rows[3][2].as_str(), t.rows[3][8].as_str()), ("gateway-plain", ""));
}
