//! The Prometheus scrape of a routed gateway over three real MariaDB servers playing the demo
//! topology: the `[metrics] address` page is parsed (`# HELP` / `# TYPE` headers, samples with
//! labels) and checked for every family of the README's "Metrics" section, their types, bounded
//! label values, the client-connection gauge moving with connections, and pool gauges naming the
//! servers the statements went to. `test.t0` is HASH(c1) PARTITIONS 8: c1 = 0 → p0 on s1,
//! c1 = 123 → p3 on s2.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::mysql::connect;
use gateway_tests::{Gateway, GatewayConfig, UserEntry};
use mysql_async::prelude::*;

/// One sample: labels (sorted) and value.
type Sample = (BTreeMap<String, String>, f64);

/// A parsed family: its TYPE and its samples by sample name (`x_bucket`, `x_sum` … for histograms).
#[derive(Debug, Default)]
struct Family {
    kind: String,
    help: bool,
    samples: Vec<(String, Sample)>,
}

type Page = BTreeMap<String, Family>;

struct Stack {
    c: Cluster,
    metrics: SocketAddr,
}

impl Stack {
    fn start() -> Stack {
        let servers = Servers::start(&ClusterOptions::demo("metrics").account("alice", "alice-pw"))
            .unwrap_or_else(|e| panic!("servers: {e}"));
        let port = gateway_tests::free_port().unwrap_or_else(|e| panic!("{e}"));
        let metrics: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap_or_else(|e| panic!("{e}"));
        let mut toml = servers
            .gateway_config()
            .unwrap_or_else(|e| panic!("{e}"))
            .user(UserEntry::native("alice", "alice-pw"))
            .to_toml();
        toml.push_str(&format!("\n[metrics]\naddress = \"{metrics}\"\n"));
        Stack { c: servers.route(&toml).unwrap_or_else(|e| panic!("gateway: {e}")), metrics }
    }

    fn scrape(&self) -> Page {
        let text = http_get(self.metrics).unwrap_or_else(|e| panic!("scrape: {e}\n{}", self.c.gw.log_tail(3000)));
        parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// Scrapes until `pred` holds (the gateway notices a closed client asynchronously).
    fn scrape_until(&self, what: &str, pred: impl Fn(&Page) -> bool) -> Page {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let page = self.scrape();
            if pred(&page) {
                return page;
            }
            assert!(Instant::now() < deadline, "{what} never held: {page:#?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `GET /metrics` over plain HTTP/1.0; the body of a 200 answer.
fn http_get(addr: SocketAddr) -> Result<String, String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").map_err(|e| e.to_string())?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).map_err(|e| e.to_string())?;
    let (head, body) = raw.split_once("\r\n\r\n").ok_or("not HTTP")?;
    if !head.starts_with("HTTP/1.1 200") || !head.contains("Content-Type: text/plain; version=0.0.4") {
        return Err(format!("unexpected answer head: {head}"));
    }
    Ok(body.to_owned())
}

/// Parses the Prometheus text format: every sample must follow the `# TYPE` of its family.
fn parse(text: &str) -> Result<Page, String> {
    let mut page = Page::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap_or_default();
            page.entry(name.to_owned()).or_default().help = true;
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or(format!("bad TYPE line: {line}"))?;
            let f = page.entry(name.to_owned()).or_default();
            if !f.kind.is_empty() {
                return Err(format!("{name} typed twice"));
            }
            f.kind = kind.to_owned();
        } else if line.starts_with('#') {
            continue;
        } else {
            let (name, sample) = parse_sample(line)?;
            let family = family_of(&page, &name).ok_or(format!("sample without a TYPE: {line}"))?;
            page.get_mut(&family).ok_or("unreachable")?.samples.push((name, sample));
        }
    }
    Ok(page)
}

fn family_of(page: &Page, sample: &str) -> Option<String> {
    if page.get(sample).is_some_and(|f| !f.kind.is_empty()) {
        return Some(sample.to_owned());
    }
    ["_bucket", "_sum", "_count"]
        .iter()
        .filter_map(|s| sample.strip_suffix(s))
        .find(|f| page.get(*f).is_some_and(|f| f.kind == "histogram"))
        .map(str::to_owned)
}

/// `name{k="v",…} value`, with `\\`, `\"` and `\n` escapes in label values.
fn parse_sample(line: &str) -> Result<(String, Sample), String> {
    let (head, value) = line.rsplit_once(' ').ok_or(format!("no value: {line}"))?;
    let value: f64 = match value {
        "+Inf" => f64::INFINITY,
        v => v.parse().map_err(|_| format!("bad value: {line}"))?,
    };
    let Some((name, rest)) = head.split_once('{') else {
        return Ok((head.to_owned(), (BTreeMap::new(), value)));
    };
    let mut labels = BTreeMap::new();
    let mut chars = rest.strip_suffix('}').ok_or(format!("unterminated labels: {line}"))?.chars().peekable();
    while chars.peek().is_some() {
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if chars.next() != Some('"') {
            return Err(format!("unquoted label value: {line}"));
        }
        let mut v = String::new();
        loop {
            match chars.next().ok_or(format!("unterminated label value: {line}"))? {
                '\\' => match chars.next() {
                    Some('n') => v.push('\n'),
                    Some(c) => v.push(c),
                    None => return Err(format!("dangling escape: {line}")),
                },
                '"' => break,
                c => v.push(c),
            }
        }
        labels.insert(key, v);
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    Ok((name.to_owned(), (labels, value)))
}

/// Value of the sample `name` whose labels include `labels`; summed when several match.
fn value(page: &Page, family: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let f = page.get(family).unwrap_or_else(|| panic!("no family {family}"));
    f.samples
        .iter()
        .filter(|(n, (l, _))| n == name && labels.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v)))
        .map(|(_, (_, v))| v)
        .sum()
}

fn label_values(page: &Page, family: &str, label: &str) -> BTreeSet<String> {
    page[family].samples.iter().filter_map(|(_, (l, _))| l.get(label).cloned()).collect()
}

const FAMILIES: &[(&str, &str)] = &[
    ("gateway_statements_total", "counter"),
    ("gateway_routes_total", "counter"),
    ("gateway_partition_calculations_total", "counter"),
    ("gateway_location_cache_lookups_total", "counter"),
    ("gateway_route_decision_seconds", "histogram"),
    ("gateway_statement_seconds", "histogram"),
    ("gateway_client_connections", "gauge"),
    ("gateway_client_connections_total", "counter"),
    ("gateway_pool_connections", "gauge"),
    ("gateway_pool_connects_total", "counter"),
    ("gateway_pool_connect_failures_total", "counter"),
    ("gateway_pool_reuses_total", "counter"),
    ("gateway_pool_resets_total", "counter"),
    ("gateway_pool_discarded_total", "counter"),
    ("gateway_pool_acquire_timeouts_total", "counter"),
    ("gateway_server_congestion", "gauge"),
    ("gateway_location_cache_entries", "gauge"),
    ("gateway_statement_shapes", "gauge"),
    ("gateway_statement_shape_lookups_total", "counter"),
    ("gateway_dataplane_info", "gauge"),
    ("gateway_splice_active_connections", "gauge"),
    ("gateway_splice_connections_total", "counter"),
    ("gateway_splice_kernel_bytes_total", "counter"),
    ("gateway_splice_budget_fallbacks_total", "counter"),
    ("gateway_splice_wakeups_total", "counter"),
    ("gateway_splice_wakeups_lost_total", "counter"),
];

const KINDS: &[&str] = &[
    "select",
    "insert",
    "replace",
    "update",
    "delete",
    "begin",
    "commit",
    "rollback",
    "set",
    "use",
    "show",
    "ddl",
    "call",
    "lock_tables",
    "unlock_tables",
    "xa",
    "explain",
    "explain_route",
    "prepare",
    "execute",
    "deallocate",
    "other",
];
const OUTCOMES: &[&str] = &["leader", "follower", "readonly", "tenant_server", "sticky", "fallback", "local", "error"];
const CONGESTION: &[&str] =
    &["alive", "retry_due", "alive_congested", "force_alive_congested", "dead_congested", "detect_congested"];

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn assert_families_and_bounded_labels(page: &Page, servers: &BTreeSet<String>) {
    for (family, kind) in FAMILIES {
        let f = page.get(*family).unwrap_or_else(|| panic!("family {family} missing"));
        assert_eq!((f.kind.as_str(), f.help), (*kind, true), "{family}");
    }
    assert_eq!(label_values(page, "gateway_statements_total", "kind"), set(KINDS));
    assert_eq!(label_values(page, "gateway_routes_total", "outcome"), set(OUTCOMES));
    assert_eq!(label_values(page, "gateway_partition_calculations_total", "result"), set(&["ok", "failed"]));
    assert_eq!(label_values(page, "gateway_location_cache_lookups_total", "result"), set(&["hit", "miss", "stale"]));
    assert_eq!(label_values(page, "gateway_pool_connections", "state"), set(&["idle", "in_use", "connecting"]));
    assert_eq!(label_values(page, "gateway_server_congestion", "state"), set(CONGESTION));
    assert_eq!(label_values(page, "gateway_location_cache_entries", "kind"), set(&["table", "tablet", "tenant"]));
    assert_eq!(
        label_values(page, "gateway_location_cache_entries", "state"),
        set(&["born", "building", "avail", "dirty", "updating", "deleted"])
    );
    assert_eq!(label_values(page, "gateway_statement_shapes", "state"), set(&["kept", "not_kept"]));
    assert_eq!(label_values(page, "gateway_statement_shape_lookups_total", "result"), set(&["bound", "parsed", "new"]));
    // Servers: exactly the topology's (the backend is s1).
    assert_eq!(&label_values(page, "gateway_pool_connections", "server"), servers);
    assert_eq!(&label_values(page, "gateway_server_congestion", "server"), servers);
    for h in ["gateway_route_decision_seconds", "gateway_statement_seconds"] {
        let inf = value(page, h, &format!("{h}_bucket"), &[("le", "+Inf")]);
        assert_eq!(inf, value(page, h, &format!("{h}_count"), &[]), "{h}: +Inf bucket is the count");
    }
}

/// The recording families move as the routed session records into them (`Metrics::statement`,
/// `partition_calc`, `cache_lookup` in `session/routed/dispatch.rs`).
fn assert_statement_families_move(before: &Page, after: &Page) {
    let delta = |family: &str, name: &str, labels: &[(&str, &str)]| {
        value(after, family, name, labels) - value(before, family, name, labels)
    };
    let st = "gateway_statements_total";
    assert!(delta(st, st, &[("kind", "select")]) >= 4.0, "4 SELECTs ran");
    assert!(delta(st, st, &[("kind", "update")]) >= 1.0, "1 UPDATE ran");
    let routes = "gateway_routes_total";
    assert!(delta(routes, routes, &[("outcome", "leader")]) >= 3.0, "strong SELECTs and the UPDATE went to leaders");
    assert!(delta(routes, routes, &[("outcome", "follower")]) >= 1.0, "the weak read went to a follower");
    let calc = "gateway_partition_calculations_total";
    assert!(delta(calc, calc, &[("result", "ok")]) >= 4.0, "t0 statements with c1 = k computed their partition");
    let lookups = "gateway_location_cache_lookups_total";
    assert!(delta(lookups, lookups, &[]) >= 4.0, "location lookups are counted");
    let shapes = "gateway_statement_shape_lookups_total";
    assert!(
        delta(shapes, shapes, &[("result", "bound")]) >= 2.0,
        "the SELECTs of c1 = 123 and b's c1 = 0 were bound to the shape of a's first SELECT"
    );
    assert!(delta(shapes, shapes, &[("result", "new")]) >= 1.0, "the UPDATE's shape was new");
    let kept = "gateway_statement_shapes";
    assert!(value(after, kept, kept, &[("state", "kept")]) >= 2.0, "the SELECT and UPDATE shapes are kept");
    for h in ["gateway_route_decision_seconds", "gateway_statement_seconds"] {
        assert!(delta(h, &format!("{h}_count"), &[]) >= 5.0, "{h} observed the statements");
        assert!(delta(h, &format!("{h}_sum"), &[]) > 0.0, "{h} sum grows");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn scrape_of_a_routed_gateway() {
    let stack = Stack::start();
    let servers: BTreeSet<String> = stack.c.servers().map(|(_, s)| s.addr().to_string()).collect();
    // The harness's readiness probe was a client too: its session may still be closing.
    let before = stack.scrape_until("client gauge at 0 before the test's clients", |p| {
        value(p, "gateway_client_connections", "gateway_client_connections", &[]) == 0.0
    });
    assert_families_and_bounded_labels(&before, &servers);
    let data_plane = value(&before, "gateway_dataplane_info", "gateway_dataplane_info", &[("mode", "off")]);
    assert_eq!(data_plane, 1.0, "the data-plane info is on the page");
    for s in &servers {
        let alive = value(&before, "gateway_server_congestion", "gateway_server_congestion", &[("server", s)]);
        assert_eq!(alive, 1.0, "{s}: exactly one congestion state is set");
    }

    let url = stack.c.gw.url("alice", "alice-pw", Some("test"));
    let mut a = connect(&url).await.unwrap_or_else(|e| panic!("{e:?}\n{}", stack.c.gw.log_tail(3000)));
    let mut b = connect(&url).await.unwrap_or_else(|e| panic!("{e:?}"));
    for sql in [
        "SELECT c2 FROM t0 WHERE c1 = 0",
        "SELECT c2 FROM t0 WHERE c1 = 123",
        "UPDATE t0 SET c2 = 'u' WHERE c1 = 123",
        "SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM t0 WHERE c1 = 123",
    ] {
        a.query_drop(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
    b.query_drop("SELECT c2 FROM t0 WHERE c1 = 0").await.unwrap_or_else(|e| panic!("{e:?}"));

    let during = stack.scrape();
    assert_families_and_bounded_labels(&during, &servers);
    assert_eq!(value(&during, "gateway_client_connections", "gateway_client_connections", &[]), 2.0);
    let total = "gateway_client_connections_total";
    assert!(value(&during, total, total, &[]) >= 2.0);
    // s1 (c1 = 0) and s2 (c1 = 123) served statements: their pooled connections show.
    let pool = "gateway_pool_connections";
    for s in [stack.c.server("s1"), stack.c.server("s2")] {
        let addr = s.addr().to_string();
        let held = value(&during, pool, pool, &[("server", &addr), ("state", "idle")])
            + value(&during, pool, pool, &[("server", &addr), ("state", "in_use")]);
        assert!(held >= 1.0, "{addr} has pooled connections: {:?}", during[pool].samples);
    }
    let connects = "gateway_pool_connects_total";
    assert!(value(&during, connects, connects, &[]) >= 2.0);
    let cache = "gateway_location_cache_entries";
    assert!(value(&during, cache, cache, &[("kind", "table"), ("state", "avail")]) >= 1.0, "t0's entry is cached");
    assert_statement_families_move(&before, &during);

    drop(a.disconnect().await);
    drop(b.disconnect().await);
    let after = stack.scrape_until("client gauge back to 0", |p| {
        value(p, "gateway_client_connections", "gateway_client_connections", &[]) == 0.0
    });
    assert!(value(&after, total, total, &[]) >= 2.0, "the total does not go down");
}

#[test]
fn dataplane_status_reads_the_combined_page() {
    let (gw, metrics) = plain_gateway();
    let bin = gateway_tests::gateway::gateway_bin().unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new(&bin)
        .args(["dataplane", "status", "--address", &metrics.to_string()])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!("mode:             off (eBPF off; daemon pid {})", gw.pid())), "{text}");
    assert!(text.contains("splice:           not reported"), "{text}");
}

/// A plain (unrouted) gateway with a metrics endpoint; its backend is never contacted.
fn plain_gateway() -> (Gateway, SocketAddr) {
    let port = gateway_tests::free_port().unwrap_or_else(|e| panic!("{e}"));
    let metrics: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap_or_else(|e| panic!("{e}"));
    let cfg =
        GatewayConfig::new("127.0.0.1:9".parse().unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"));
    let toml = format!("{}\n[metrics]\naddress = \"{metrics}\"\n", cfg.to_toml());
    (Gateway::start(&toml).unwrap_or_else(|e| panic!("gateway: {e}")), metrics)
}
