//! A prepared statement with tens of thousands of placeholders (the shape of mariadb-client-test's
//! `test_bug5194`) through the routed gateway over three MariaDB servers: the statement analysis
//! is linear in its length, so the statement is prepared and executed promptly and another
//! client is served meanwhile (a quadratic count once held the gateway's only thread for minutes).

use std::time::Duration;

use gateway_tests::cluster::{ClusterOptions, Servers};
use gateway_tests::mysql::{connect, query_one};
use mysql_async::prelude::*;

/// Rows of the INSERT, one placeholder each (MariaDB allows up to 65,535).
const ROWS: usize = 60_000;

#[tokio::test]
async fn sixty_thousand_placeholders_are_prepared_promptly() {
    let servers = Servers::start(&ClusterOptions::demo("placeholders")).expect("servers");
    servers.on_every_server("CREATE TABLE t1 (v INT)").expect("table");
    let c = servers.route_default().expect("gateway");
    let gw = &c.gw;
    let url = gw.url("root", "", Some("test"));
    let mut big = connect(&url).await.expect("client");
    let mut bystander = connect(&url).await.expect("bystander");
    let sql = format!("INSERT INTO t1 (v) VALUES {}", vec!["(?)"; ROWS].join(","));
    let params: Vec<mysql_async::Value> = (0..ROWS as i64).map(mysql_async::Value::Int).collect();
    let insert = async {
        let stmt = big.prep(sql.as_str()).await?;
        big.exec_drop(&stmt, params).await?;
        query_one(&mut big, "SELECT COUNT(*) FROM t1").await
    };
    let other = async {
        // Asked while the big statement is on its way: answered all the same.
        query_one(&mut bystander, "SELECT 1").await
    };
    let both = tokio::time::timeout(Duration::from_secs(60), async { tokio::join!(insert, other) }).await;
    let (count, one) = both.unwrap_or_else(|_| panic!("no answer within 60 s\n{}", gw.log_tail(2000)));
    assert_eq!(count.expect("big insert").as_deref(), Some(ROWS.to_string().as_str()));
    assert_eq!(one.expect("bystander").as_deref(), Some("1"));
}
