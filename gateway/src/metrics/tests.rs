use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::config::{testing, Config};
use crate::dataplane::status::{DataplaneStatus, SpliceStatus};
use crate::session::Shared;

/// Besides [`testing::BASE`]: a user and the metrics endpoint.
const REST: &str = "[[users]]\nname = \"app\"\npassword = \"pw\"\n[metrics]\naddress = \"127.0.0.1:9100\"\n";

fn shared() -> Shared {
    Shared::new(testing::config(REST), None)
}

/// `name → (type, samples as (name{labels}, value))` of a page.
type Parsed = BTreeMap<String, (String, Vec<(String, f64)>)>;

fn parse(text: &str) -> Parsed {
    let mut out = Parsed::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            out.insert(name.to_owned(), (kind.to_owned(), Vec::new()));
        } else if !line.starts_with('#') && !line.is_empty() {
            let (head, value) = line.rsplit_once(' ').unwrap();
            let (name, labels) = head.split_once('{').map_or((head, ""), |(n, l)| (n, l.trim_end_matches('}')));
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s).filter(|f| out.get(*f).is_some_and(|(k, _)| k == "histogram")))
                .unwrap_or(name);
            let entry = out.get_mut(family).unwrap_or_else(|| panic!("sample before its TYPE: {line}"));
            entry.1.push((format!("{name}{{{labels}}}"), value.parse().unwrap()));
        }
    }
    out
}

fn value(page: &Parsed, family: &str, sample: &str) -> f64 {
    let (_, samples) = &page[family];
    samples.iter().find(|(s, _)| s == sample).unwrap_or_else(|| panic!("no {sample} in {samples:?}")).1
}

#[test]
fn every_stmt_kind_has_its_own_label() {
    use StmtKind::*;
    let all = [
        Select,
        Insert,
        Replace,
        Update,
        Delete,
        Begin,
        Commit,
        Rollback,
        Set,
        Use,
        Show,
        Ddl,
        Call,
        LockTables,
        UnlockTables,
        Xa,
        Explain,
        ExplainRoute,
        Prepare,
        Execute,
        Deallocate,
        Other,
    ];
    let slots: std::collections::BTreeSet<usize> = all.iter().map(|k| kind_slot(*k)).collect();
    assert_eq!(slots.len(), STMT_KINDS.len(), "two kinds share a slot");
    assert_eq!(kind_slot(ExplainRoute), 17);
    assert_eq!(STMT_KINDS[kind_slot(LockTables)], "lock_tables");
}

#[test]
fn recording_shows_in_the_page() {
    let sh = shared();
    sh.metrics.statement(
        StmtKind::Select,
        RouteOutcome::Follower,
        Some(Duration::from_micros(30)),
        Duration::from_millis(3),
    );
    sh.metrics.statement(
        StmtKind::Insert,
        RouteOutcome::Leader,
        Some(Duration::from_millis(2)),
        Duration::from_secs(20),
    );
    sh.metrics.statement(StmtKind::Set, RouteOutcome::Local, None, Duration::from_micros(50));
    sh.metrics.partition_calc(true);
    sh.metrics.partition_calc(false);
    sh.metrics.partition_calc(true);
    sh.metrics.cache_lookup(CacheLookup::Miss);
    let page = parse(&page::render(&sh, None));
    assert_eq!(value(&page, "gateway_statements_total", "gateway_statements_total{kind=\"select\"}"), 1.0);
    assert_eq!(value(&page, "gateway_statements_total", "gateway_statements_total{kind=\"other\"}"), 0.0);
    assert_eq!(value(&page, "gateway_routes_total", "gateway_routes_total{outcome=\"leader\"}"), 1.0);
    assert_eq!(value(&page, "gateway_routes_total", "gateway_routes_total{outcome=\"local\"}"), 1.0);
    let calc = "gateway_partition_calculations_total";
    assert_eq!(value(&page, calc, &format!("{calc}{{result=\"ok\"}}")), 2.0);
    assert_eq!(value(&page, calc, &format!("{calc}{{result=\"failed\"}}")), 1.0);
    let lookups = "gateway_location_cache_lookups_total";
    assert_eq!(value(&page, lookups, &format!("{lookups}{{result=\"miss\"}}")), 1.0);
    // Route decisions: only the two statements that had one; 30 µs ≤ 50 µs < 2 ms ≤ 2.5 ms.
    let rd = "gateway_route_decision_seconds";
    assert_eq!(page[rd].0, "histogram");
    assert_eq!(value(&page, rd, &format!("{rd}_bucket{{le=\"0.00005\"}}")), 1.0);
    assert_eq!(value(&page, rd, &format!("{rd}_bucket{{le=\"0.0025\"}}")), 2.0);
    assert_eq!(value(&page, rd, &format!("{rd}_count{{}}")), 2.0);
    assert!((value(&page, rd, &format!("{rd}_sum{{}}")) - 0.00203).abs() < 1e-9);
    // End to end: 20 s is past the last bound, counted in +Inf only.
    let st = "gateway_statement_seconds";
    assert_eq!(value(&page, st, &format!("{st}_bucket{{le=\"10\"}}")), 2.0);
    assert_eq!(value(&page, st, &format!("{st}_bucket{{le=\"+Inf\"}}")), 3.0);
    assert_eq!(value(&page, st, &format!("{st}_count{{}}")), 3.0);
}

#[test]
fn client_gauge_follows_the_guards() {
    let sh = shared();
    let a = sh.metrics.client_connected();
    let b = sh.metrics.client_connected();
    drop(a);
    let page = parse(&page::render(&sh, None));
    assert_eq!(value(&page, "gateway_client_connections", "gateway_client_connections{}"), 1.0);
    assert_eq!(value(&page, "gateway_client_connections_total", "gateway_client_connections_total{}"), 2.0);
    drop(b);
    let page = parse(&page::render(&sh, None));
    assert_eq!(value(&page, "gateway_client_connections", "gateway_client_connections{}"), 0.0);
}

#[test]
fn every_family_has_a_type_and_a_bounded_label_set() {
    let sh = shared();
    let text = page::render(&sh, Some(&DataplaneStatus { pid: 1, mode: "off".into(), ..Default::default() }));
    let page = parse(&text);
    let expected = [
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
    for (family, kind) in expected {
        assert_eq!(page.get(family).map(|(k, _)| k.as_str()), Some(kind), "{family}\n{text}");
    }
    assert_eq!(page["gateway_statements_total"].1.len(), STMT_KINDS.len());
    assert_eq!(page["gateway_routes_total"].1.len(), RouteOutcome::ALL.len());
    // No topology: no servers; the cache family is all zeros over kinds × states.
    assert!(page["gateway_pool_connections"].1.is_empty());
    assert_eq!(page["gateway_location_cache_entries"].1.len(), 18);
    // The data-plane page still decodes from the combined one ("splice: not reported").
    let st = DataplaneStatus::from_prometheus(&text).unwrap();
    assert_eq!((st.pid, st.splice), (1, None));
}

#[test]
fn splice_family_names_match_the_data_plane_status() {
    let st = DataplaneStatus { splice: Some(SpliceStatus::default()), ..Default::default() };
    let text = st.to_prometheus();
    for (name, kind, help) in page::SPLICE_FAMILIES {
        assert!(text.contains(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n")), "{name}: {text}");
    }
}

#[test]
fn label_values_are_escaped() {
    let mut p = text::Page::default();
    p.sample("m", &[("a", "x\"y\\z\nw")], 1);
    assert_eq!(p.finish(), "m{a=\"x\\\"y\\\\z\\nw\"} 1\n");
}

#[test]
fn one_address_cannot_serve_both_endpoints() {
    let both = format!("{}{REST}[dataplane]\nmetrics_address = \"127.0.0.1:9100\"\n", testing::BASE);
    let err = Config::parse(&both, "test").unwrap_err().to_string();
    assert!(err.contains("[metrics] address and [dataplane] metrics_address are the same"), "{err}");
    let apart = format!("{}{REST}[dataplane]\nmetrics_address = \"127.0.0.1:9101\"\n", testing::BASE);
    assert!(Config::parse(&apart, "test").is_ok());
}
