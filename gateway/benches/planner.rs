//! Criterion benchmarks of the per-statement planner over the embedded demo topology (t0 is
//! HASH(c1) PARTITIONS 8 over three servers): a sysbench-style point select and a statement
//! without a table, traced (EXPLAIN ROUTE) and as the routed session plans them.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use gateway::config::RoutingConfig;
use gateway::planner::{Planner, RouteMemo, StatementContext};
use gateway::sql;

fn planner(rt: &tokio::runtime::Runtime) -> Planner {
    let config = RoutingConfig::demo(None);
    match rt.block_on(Planner::from_config(&config)) {
        Ok(p) => p,
        Err(e) => panic!("demo topology: {e}"),
    }
}

fn bench(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => panic!("runtime: {e}"),
    };
    let planner = planner(&rt);
    let ctx = StatementContext {
        tenant: "sys".into(),
        database: Some("test".into()),
        autocommit: true,
        ..Default::default()
    };
    for (name, text) in [("point_select", "SELECT c FROM t0 WHERE c1=5017"), ("no_table", "SELECT 1")] {
        let a = sql::analyze(text);
        c.bench_function(&format!("planner/traced/{name}"), |b| {
            b.iter(|| black_box(rt.block_on(planner.plan_analysis(black_box(&a), "COM_QUERY", &ctx))))
        });
        // A session's first statement on a table: nothing remembered yet.
        c.bench_function(&format!("planner/route/{name}"), |b| {
            b.iter(|| {
                black_box(rt.block_on(planner.route(
                    black_box(&a),
                    &ctx,
                    &mut RouteMemo::default(),
                    tokio::time::Instant::now(),
                )))
            })
        });
        // The next ones: the session's memory of the table (RouteMemo) stands in for the lookups.
        let mut memo = RouteMemo::default();
        c.bench_function(&format!("planner/route_remembered/{name}"), |b| {
            b.iter(|| {
                black_box(rt.block_on(planner.route(black_box(&a), &ctx, &mut memo, tokio::time::Instant::now())))
            })
        });
        c.bench_function(&format!("planner/analyze+traced/{name}"), |b| {
            b.iter(|| black_box(rt.block_on(planner.plan(black_box(text), &ctx))))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
