//! Routing an EXECUTE by its bound values, against the embedded demo topology (t0 is
//! HASH(c1) PARTITIONS 8; c1 = 123 is p3, whose leader is s2 = 127.0.0.1:3312).

use super::binary::values;
use super::execute::tests::packet;
use super::execute::Execute;
use super::text::{self, TextPs};
use super::LongData;
use crate::config::RoutingConfig;
use crate::planner::{Planned, Planner, StatementContext};
use crate::session::state::ClientState;
use crate::sql::Value;

async fn planner() -> Planner {
    let config: RoutingConfig = toml::from_str("topology = \"demo\"\nidc = \"idc1\"\nseed = 7").unwrap();
    Planner::from_config(&config).await.unwrap()
}

fn ctx() -> StatementContext {
    StatementContext { tenant: "sys".into(), database: Some("test".into()), autocommit: true, ..Default::default() }
}

fn where_to(p: &Planned) -> (String, String) {
    let server = p.decision.as_ref().unwrap().server().to_string();
    (server, p.location.as_ref().map(|l| l.name().to_string()).unwrap_or_default())
}

const PS: &str = "SELECT * FROM t0 WHERE c1 = ?";

#[tokio::test]
async fn bound_placeholder_routes_like_the_literal() {
    let pl = planner().await;
    let text = pl.plan("SELECT * FROM t0 WHERE c1 = 123", &ctx()).await;
    let bound = pl.plan_bound(PS, &[Value::Int(123)], &ctx()).await;
    assert_eq!(where_to(&text), ("127.0.0.1:3312".into(), "p3".into()));
    assert_eq!(where_to(&bound), where_to(&text));
    let unbound = pl.plan_bound(PS, &[], &ctx()).await;
    assert!(unbound.location.is_none(), "no value: the partition cannot be computed");
}

#[tokio::test]
async fn binary_execute_values_route_to_the_partition_leader() {
    let p = packet(1, 0, 1, &[], Some(&[0x08, 0x00]), &123i64.to_le_bytes());
    let ex = Execute::parse(&p, 1).unwrap();
    let long = LongData::default();
    let vals = values(&ex, None, &long).unwrap();
    let planned = planner().await.plan_bound(PS, &vals, &ctx()).await;
    assert_eq!(where_to(&planned), ("127.0.0.1:3312".into(), "p3".into()));
    let trace = crate::planner::render_explain(PS, &planned);
    assert!(trace.contains("COM_STMT_EXECUTE"), "{trace}");
}

#[tokio::test]
async fn text_execute_using_user_variables_routes_the_same() {
    let mut st = ClientState::new(Some("test"), 45);
    assert!(st.observe_statement(b"SET @k = 123", None));
    let Some(TextPs::Execute { using, .. }) = text::parse("EXECUTE s USING @k") else { panic!() };
    let vals = text::bound_values(&using, &st);
    let planned = planner().await.plan_bound(PS, &vals, &ctx()).await;
    assert_eq!(where_to(&planned), ("127.0.0.1:3312".into(), "p3".into()));
}
