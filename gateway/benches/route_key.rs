//! Criterion benchmarks of analysis + partition calculation (what each statement costs before a
//! server is chosen), for the fast path and for `sqlparser` alone, on sysbench's table partitioned
//! by HASH(id) and KEY(id), and a 5-column INSERT of 10 rows.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use gateway::partition::{locate_statement, parse_create_table, CastContext, TableScheme};
use gateway::sql::{self, Analysis, Value};

const SBTEST: &str =
    "CREATE TABLE sbtest1 (id INT NOT NULL, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', \
     pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id))";

fn scheme(ddl: &str) -> TableScheme {
    match parse_create_table(ddl) {
        Ok(s) => s,
        Err(e) => panic!("bench DDL: {e}"),
    }
}

fn place(scheme: &TableScheme, a: &Analysis<'_>) -> bool {
    match a.table() {
        Some(t) => locate_statement(scheme, a, t, &CastContext::default()).is_ok(),
        None => false,
    }
}

fn insert_10_rows() -> String {
    let rows: Vec<String> = (0..10).map(|r| format!("({}, {}, 'c{r}', 'pad{r}', {r}.5)", r * 8, r * 7)).collect();
    format!("INSERT INTO t5 (a, b, c, d, e) VALUES {}", rows.join(", "))
}

fn bench(c: &mut Criterion) {
    let hash = scheme(&format!("{SBTEST} PARTITION BY HASH(id) PARTITIONS 8"));
    let key = scheme(&format!("{SBTEST} PARTITION BY KEY(id) PARTITIONS 8"));
    let t5 = scheme(
        "CREATE TABLE t5 (a BIGINT, b INT, c VARCHAR(20), d VARCHAR(20), e DECIMAL(10,1)) PARTITION BY HASH(a) PARTITIONS 8",
    );
    let cases: Vec<(&str, String, &TableScheme)> = vec![
        ("point_select_hash", "SELECT c FROM sbtest1 WHERE id=5017".into(), &hash),
        ("point_select_key", "SELECT c FROM sbtest1 WHERE id=5017".into(), &key),
        ("update_index_hash", "UPDATE sbtest1 SET k=k+1 WHERE id=5".into(), &hash),
        ("delete_key", "DELETE FROM sbtest1 WHERE id=5017".into(), &key),
        ("insert_5col_10rows_hash", insert_10_rows(), &t5),
    ];
    for (name, text, scheme) in &cases {
        assert!(place(scheme, &sql::analyze(text)), "{name} must place");
        c.bench_function(&format!("fast+partition/{name}"), |b| {
            b.iter(|| black_box(place(scheme, &sql::analyze(black_box(text)))))
        });
        c.bench_function(&format!("sqlparser+partition/{name}"), |b| {
            b.iter(|| black_box(place(scheme, &sql::reference::analyze(black_box(text)))))
        });
    }
    let ps = "SELECT c FROM sbtest1 WHERE id=?";
    let params = [Value::Int(5017)];
    assert!(place(&hash, &sql::analyze_prepared(ps, &params)));
    c.bench_function("fast+partition/point_select_placeholder_hash", |b| {
        b.iter(|| black_box(place(&hash, &sql::analyze_prepared(black_box(ps), &params))))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
