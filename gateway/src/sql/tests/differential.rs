//! Differential test: the fast path and the reference parser agree wherever the fast path answers.

use super::corpus::{corpus, DISAGREED, MULTI, NEAR_DISAGREED};
use crate::sql::{analysis::Analysis, analyze, command, fast, reference, Path, StmtKind};

/// The fields both paths must agree on (everything but `path`).
fn comparable(mut an: Analysis<'_>) -> Analysis<'_> {
    an.path = Path::Fast;
    an
}

/// The fields that differ, for the failure message.
fn diff(a: &Analysis<'_>, b: &Analysis<'_>) -> String {
    let mut out = String::new();
    let mut field = |name: &str, x: String, y: String| {
        if x != y {
            out.push_str(&format!("  {name}: fast {x} / ref {y}\n"));
        }
    };
    field("path", format!("{:?}", Path::Reference), format!("{:?}", b.path));
    field("kind", format!("{:?}", a.kind), format!("{:?}", b.kind));
    field("tables", format!("{:?}", a.tables), format!("{:?}", b.tables));
    field("keys", format!("{:?}", a.keys), format!("{:?}", b.keys));
    field("hints", format!("{:?}", a.hints), format!("{:?}", b.hints));
    field("lock", format!("{:?}", a.lock), format!("{:?}", b.lock));
    field("pins", format!("{:?}", a.pins), format!("{:?}", b.pins));
    field(
        "txn/set/ac/db",
        format!("{:?}", (a.txn, a.set, a.autocommit, &a.database)),
        format!("{:?}", (b.txn, b.set, b.autocommit, &b.database)),
    );
    field("placeholders", format!("{:?}", a.placeholders), format!("{:?}", b.placeholders));
    out
}

#[test]
fn fast_path_agrees_with_sqlparser() {
    let corpus = corpus();
    assert!(corpus.len() >= 2000, "corpus has {} statements", corpus.len());
    let (mut fast_n, mut shared_n, mut mismatches) = (0, 0, Vec::new());
    for sql in &corpus {
        let stmt = crate::sql::split::statements(sql).next().unwrap_or("");
        if command::recognize(stmt).is_some() {
            shared_n += 1;
            continue;
        }
        let reference = reference::analyze(stmt);
        let Some(fast) = fast::analyze(stmt) else {
            continue;
        };
        fast_n += 1;
        if reference.path != Path::Reference || comparable(fast.clone()) != comparable(reference.clone()) {
            mismatches.push(format!("{stmt}\n{}", diff(&fast, &reference)));
        }
    }
    eprintln!(
        "differential corpus: {} statements, fast path {fast_n}, shared commands {shared_n}, fell back {}",
        corpus.len(),
        corpus.len() - fast_n - shared_n
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(400)].join("\n")
    );
}

#[test]
fn fast_path_declines_what_it_once_guessed() {
    for stmt in DISAGREED {
        assert!(fast::analyze(stmt).is_none(), "the fast path answers {stmt:?}");
        assert!(analyze(stmt).path != Path::Fast, "{stmt:?}");
    }
    for stmt in NEAR_DISAGREED {
        assert!(fast::analyze(stmt).is_some(), "the fast path declines {stmt:?}");
    }
}

#[test]
fn multi_statements_route_by_documented_statement() {
    let an = analyze(MULTI[0]);
    assert_eq!((an.kind, an.statements), (StmtKind::Update, 4));
    assert_eq!(an.tables[0].name, "T0");
    let an = analyze(MULTI[1]);
    assert_eq!((an.kind, an.statements), (StmtKind::Insert, 2));
    assert_eq!(an.tables[0].name, "t1");
}

#[test]
fn range_comparisons_are_recorded_alike() {
    use crate::sql::RangeOp;
    let stmt =
        "SELECT * FROM t WHERE 5 < id AND id <= ? AND k BETWEEN 1 AND 2 + 1 AND c NOT BETWEEN 1 AND 2 AND id > k";
    let fast = fast::analyze(stmt).expect("fast path");
    let reference = reference::analyze(stmt);
    assert_eq!(reference.path, Path::Reference);
    let ops: Vec<(String, RangeOp)> = fast
        .ranges
        .iter()
        .map(|r| match &r.column {
            crate::sql::Column::Named { name, .. } => (name.to_string(), r.op),
            crate::sql::Column::Position(p) => (p.to_string(), r.op),
        })
        .collect();
    let want = [("id", RangeOp::Gt), ("id", RangeOp::Le), ("k", RangeOp::Ge), ("k", RangeOp::Le)];
    assert_eq!(ops, want.map(|(c, o)| (c.to_string(), o)));
    assert_eq!(fast.ranges[3].value, crate::sql::Value::Int(3));
    assert_eq!(comparable(fast), comparable(reference));
}
