//! `sql::analyze` as the gateway calls it, and the agreement of its two paths: wherever both
//! answer, they find the same kind, tables, key values,
//! hints, locks, pins, transaction/SET flags and placeholders (everything but the path), as the
//! differential test in gateway/src/sql/tests/differential.rs requires of its corpus.
#![no_main]

use gateway::sql::{analyze, analyze_statement, fast, reference, split, Analysis, Path, StmtKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let an = analyze(&text);
    let Some(stmt) = split::statements(&text).next() else {
        return;
    };
    if is_shared_command(&analyze_statement(stmt)) {
        // Recognised by their leading words the same way on both paths (sql/command.rs).
        return;
    }
    let Some(fast) = fast::analyze(stmt) else {
        return;
    };
    let reference = reference::analyze(stmt);
    if reference.path != Path::Reference {
        // Only where both answer: the fast path also takes statements the server refuses
        // (`SELECT` alone), which go to the server either way.
        return;
    }
    assert_eq!(comparable(fast), comparable(reference), "the two paths disagree on {stmt:?}");
    drop(an);
});

/// The kinds `sql::command` recognises before either path runs.
fn is_shared_command(an: &Analysis<'_>) -> bool {
    matches!(
        an.kind,
        StmtKind::ExplainRoute
            | StmtKind::Prepare
            | StmtKind::Execute
            | StmtKind::Deallocate
            | StmtKind::Xa
            | StmtKind::LockTables
            | StmtKind::UnlockTables
    )
}

/// Everything both paths must agree on (the path itself differs by design).
fn comparable(mut an: Analysis<'_>) -> Analysis<'_> {
    an.path = Path::Fast;
    an
}
