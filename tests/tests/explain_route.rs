//! EXPLAIN ROUTE and SHOW PROXYROUTE answered by the gateway, on the embedded demo topology with
//! its three servers played by three real MariaDB instances (the demo topology's `t0` is
//! HASH(c1) PARTITIONS 8; docs/partition.md §3: 123 % 8 = 3, and p3's leader in the topology is s2).

use gateway_tests::cluster::{ClusterOptions, Servers};
use gateway_tests::mysql::{connect, query_values, value_string};
use gateway_tests::{Gateway, GatewayConfig, MariaDb};

#[tokio::test(flavor = "multi_thread")]
async fn explain_route_names_the_hash_partition_leader() {
    let cluster = Servers::start(&ClusterOptions::demo("route")).unwrap().route_default().unwrap();
    let (gw, s1, s2) = (&cluster.gw, cluster.server("s1"), cluster.server("s2"));
    let mut c = connect(&gw.url("root", "", Some("test"))).await.unwrap();

    let rows = query_values(&mut c, "EXPLAIN ROUTE SELECT /*+READ_CONSISTENCY(STRONG)*/ * FROM t0 WHERE c1=123")
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let text = rows[0].clone().into_iter().next().and_then(value_string).unwrap();
    let leader = s2.addr().to_string();
    assert!(text.contains(&format!("PARTITION_ENTRY_LOOKUP_DONE:{{leader:\"{leader}\"")), "{text}");
    assert!(text.contains("partitions:\"(p3)\""), "{text}");
    assert!(text.contains(&format!("chosen_server:\"{leader}\"")), "{text}");
    assert!(text.contains("ROUTE_TYPE_LEADER"), "{text}");
    assert!(text.starts_with("Trans Current Query:\"EXPLAIN ROUTE SELECT"), "{text}");

    // The lookup above filled the location cache: SHOW PROXYROUTE lists t0 with ODP's columns.
    let rows = query_values(&mut c, "SHOW PROXYROUTE LIKE 't%'").await.unwrap();
    let t0: Vec<Option<String>> = rows
        .into_iter()
        .map(|r| r.into_iter().map(value_string).collect::<Vec<_>>())
        .find(|r| r.get(3).cloned().flatten().as_deref() == Some("t0"))
        .expect("t0 listed");
    assert_eq!(t0.len(), 18);
    assert_eq!(t0[4].as_deref(), Some("AVAIL"));
    assert_eq!(t0[5].as_deref(), Some("8"));
    assert_eq!(t0[7].as_deref(), Some("500084"));

    // Ordinary statements still reach the backend.
    let one = query_values(&mut c, "SELECT @@port").await.unwrap();
    assert_eq!(value_string(one[0][0].clone()).unwrap(), s1.port().to_string());
    drop(c);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_routing_config_explain_route_is_a_clear_error() {
    let s1 = MariaDb::start("route-none").unwrap();
    let gw = Gateway::start(&GatewayConfig::new(s1.addr()).unwrap().to_toml()).unwrap();
    let mut c = connect(&gw.url("root", "", None)).await.unwrap();
    let e = query_values(&mut c, "EXPLAIN ROUTE SELECT 1").await.unwrap_err();
    assert_eq!(gateway_tests::mysql::err_code(&e), Some(1235), "{e}");
    // The session keeps working after the error.
    assert_eq!(query_values(&mut c, "SELECT 2").await.unwrap().len(), 1);
}
