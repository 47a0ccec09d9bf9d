//! Criterion benchmarks of SQL analysis: the fast path (`sql::analyze`) against `sqlparser` alone.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use gateway::sql;

fn insert_10_rows() -> String {
    let rows: Vec<String> = (0..10).map(|r| format!("({r}, {}, 'c{r}', 'pad{r}', {r}.5)", r * 7)).collect();
    format!("INSERT INTO t5 (a, b, c, d, e) VALUES {}", rows.join(", "))
}

fn statements() -> Vec<(&'static str, String)> {
    vec![
        ("point_select_literal", "SELECT c FROM sbtest1 WHERE id=5017".to_owned()),
        ("point_select_placeholder", "SELECT c FROM sbtest1 WHERE id=?".to_owned()),
        ("update_index", "UPDATE sbtest1 SET k=k+1 WHERE id=5".to_owned()),
        (
            "insert_sysbench",
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5017, 4992, '68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-28203206787-41238978918-19503783441', '22195207048-70116052123-74140395089-76317954521-98694025897')".to_owned(),
        ),
        ("begin", "BEGIN".to_owned()),
        ("commit", "COMMIT".to_owned()),
        ("insert_5col_10rows", insert_10_rows()),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, sql_text) in statements() {
        c.bench_function(&format!("fast/{name}"), |b| b.iter(|| black_box(sql::analyze(black_box(&sql_text)))));
        c.bench_function(&format!("sqlparser/{name}"), |b| {
            b.iter(|| black_box(sql::reference::analyze(black_box(&sql_text))))
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
