use super::*;
use crate::sql::analyze;

/// Statements with `{}` where literals go, and the literals to fill them with: the statements of
/// one line whose literals are of the same kinds have one shape.
const SHAPES: [&str; 16] = [
    "SELECT c FROM sbtest1 WHERE id = {}",
    "select c from sbtest1 where id={}",
    "/*+ READ_CONSISTENCY(WEAK) */ SELECT c FROM sbtest1 WHERE id = {}",
    "SELECT * FROM db1.`t 1` AS x WHERE x.a IN ({}, {}) AND b = {}",
    "SELECT c FROM t PARTITION (p0) WHERE k BETWEEN {} AND {} ORDER BY c LIMIT 10",
    "SELECT c FROM t WHERE id = {} FOR UPDATE",
    "INSERT INTO sbtest1 (id, k, c, pad) VALUES ({}, {}, {}, {})",
    "INSERT INTO t VALUES ({}, {}), ({}, {})",
    "REPLACE INTO t SET id = {}, c = {}",
    "UPDATE sbtest1 SET k=k+1 WHERE id={}",
    "UPDATE t SET c = {} WHERE id = {} AND s = {}",
    "DELETE FROM sbtest1 WHERE id = {}",
    "SELECT c FROM t WHERE id = -{}",
    "SELECT c FROM t WHERE id = {} / {}",
    "SELECT c FROM t WHERE id = ({})",
    "SELECT c FROM t WHERE id = {} + 0 AND @v := {}",
];

const LITERALS: [&str; 12] =
    ["17", "0", "18446744073709551615", "1.50", "1e3", "'a'", "'it''s'", "'x\\ny'", "0x41", "X'42'", "7", "'17'"];

/// `shape` with its `{}` filled from `LITERALS`, starting at `from`.
fn fill(shape: &str, from: usize) -> String {
    let mut out = String::new();
    for (i, part) in shape.split("{}").enumerate() {
        if i > 0 {
            out.push_str(LITERALS[(from + i) % LITERALS.len()]);
        }
        out.push_str(part);
    }
    out
}

fn kept(cache: &ShapeCache) -> usize {
    cache.shapes.lock().unwrap().values().filter(|t| t.is_some()).count()
}

#[test]
fn every_statement_of_a_shape_is_analysed_as_the_parser_analyses_it() {
    let cache = ShapeCache::default();
    // One session's memo across all of them, each template given back: later statements of a
    // shape are served from the memo.
    let mut memo = ShapeMemo::default();
    for shape in SHAPES {
        for from in 0..LITERALS.len() {
            let sql = fill(shape, from);
            let mut holder = None;
            assert_eq!(cache.analyze(&sql, &mut holder, &mut memo), analyze(&sql), "{sql}");
            if let Some(t) = holder {
                memo.give_back(t);
            }
        }
    }
    // A literal's kind is part of the shape (`LIMIT 5` parses, `LIMIT '5'` does not).
    assert!(cache.len() < SHAPES.len() * LITERALS.len(), "{} shapes", cache.len());
    assert!(kept(&cache) >= 20, "{} shapes kept", kept(&cache));
}

#[test]
fn a_kept_shape_binds_each_statements_own_literals_and_hints() {
    let cache = ShapeCache::default();
    for (first, second) in [
        ("SELECT c FROM sbtest1 WHERE id = 5", "SELECT c FROM sbtest1 WHERE id = 77"),
        (
            "/*+ READ_CONSISTENCY(WEAK) */ SELECT c FROM t WHERE id = 1",
            "/*+ READ_CONSISTENCY(WEAK) */ SELECT c FROM t WHERE id = 2",
        ),
        ("UPDATE t SET c = 'a' WHERE id = 0x41", "UPDATE t SET c = 'it''s' WHERE id = X'42'"),
        // Parentheses change nothing, so the template gives the value inside them.
        ("SELECT c FROM t WHERE (id) = (5)", "SELECT c FROM t WHERE (id) = (6)"),
    ] {
        let (mut holder, mut memo) = (None, ShapeMemo::default());
        assert_eq!(cache.analyze(first, &mut holder, &mut memo), analyze(first));
        assert!(holder.is_none(), "the first statement of a shape is parsed");
        let an = cache.analyze(second, &mut holder, &mut memo);
        assert_eq!(an, analyze(second), "{second}");
        drop(an);
        assert!(holder.is_some(), "{second}: bound to the template");
    }
    assert_eq!(kept(&cache), 4);
    let st = cache.stats();
    assert_eq!((st.kept, st.not_kept), (4, 0));
    assert_eq!(st.lookups, [4, 0, 4], "bound, parsed, new");
    // Spaces and comments are part of the shape: another spelling is parsed, and kept apart.
    let (mut holder, mut memo) = (None, ShapeMemo::default());
    let spaced = "SELECT c FROM sbtest1 WHERE id =  5 /* sf1 */";
    assert_eq!(cache.analyze(spaced, &mut holder, &mut memo), analyze(spaced));
    assert!(holder.is_none());
    assert_eq!(kept(&cache), 5);
    let weak = "/*+ READ_CONSISTENCY(WEAK) */ SELECT c FROM t WHERE id = 3";
    assert_eq!(
        cache.analyze(weak, &mut None, &mut ShapeMemo::default()).hints.consistency,
        Some(crate::sql::Consistency::Weak)
    );
}

#[test]
fn shapes_whose_values_a_template_cannot_give_are_not_kept() {
    for sql in [
        "SELECT c FROM t WHERE id = -5",
        "SELECT c FROM t WHERE id = 10 / 2",
        "SELECT c FROM t WHERE id = _utf8mb4 'x'",
        "SELECT c FROM t WHERE id = ?",
        "SELECT c FROM t WHERE id = NOW()",
        "SELECT c FROM t WHERE id = 1 FOR UPDATE WAIT 5",
        "SET autocommit = 0",
        "BEGIN",
        "SELECT 1; SELECT 2",
    ] {
        let cache = ShapeCache::default();
        for _ in 0..2 {
            assert_eq!(cache.analyze(sql, &mut None, &mut ShapeMemo::default()), analyze(sql), "{sql}");
        }
        assert_eq!(kept(&cache), 0, "{sql}");
        let st = cache.stats();
        // Shared commands and multi-statements are not looked up at all.
        assert!(st.lookups == [0, 1, 1] || st.lookups == [0, 0, 0], "{sql}: {st:?}");
        assert_eq!(st.kept, 0);
    }
    // The same shape with other values: each gets its own value, not the first one's.
    let cache = ShapeCache::default();
    for sql in ["SELECT c FROM t WHERE id = 10 / 2", "SELECT c FROM t WHERE id = 12 / 3"] {
        assert_eq!(cache.analyze(sql, &mut None, &mut ShapeMemo::default()), analyze(sql), "{sql}");
    }
}

#[test]
fn the_cache_is_bounded() {
    let cache = ShapeCache::default();
    for i in 0..MAX_SHAPES + 10 {
        let sql = format!("SELECT c{i} FROM t WHERE id = 1");
        assert_eq!(cache.analyze(&sql, &mut None, &mut ShapeMemo::default()), analyze(&sql));
    }
    assert!(cache.len() <= MAX_SHAPES, "{} shapes", cache.len());
    let long = format!("SELECT c FROM t WHERE id = 1 AND s = '{}'", "x".repeat(MAX_TEXT));
    let before = cache.len();
    assert_eq!(cache.analyze(&long, &mut None, &mut ShapeMemo::default()), analyze(&long));
    assert_eq!(cache.len(), before, "a text longer than MAX_TEXT is not kept");
}

#[test]
fn a_sessions_memo_serves_the_shapes_it_saw_after_the_shared_map_forgot_them() {
    let cache = ShapeCache::default();
    let mut memo = ShapeMemo::default();
    let kept = |n: usize| format!("SELECT c FROM sbtest1 WHERE id = {n}");
    let not_kept = |n: usize| format!("SELECT c FROM t WHERE id = {n} / 2");
    for from in 0..2 {
        for sql in [kept(from), not_kept(from)] {
            let mut holder = None;
            assert_eq!(cache.analyze(&sql, &mut holder, &mut memo), analyze(&sql), "{sql}");
            if let Some(t) = holder {
                memo.give_back(t);
            }
        }
    }
    assert_eq!(cache.stats().lookups, [1, 1, 2], "bound, parsed, new");
    cache.shapes.lock().unwrap().clear();
    for from in 2..5 {
        let (sql, mut holder) = (kept(from), None);
        assert_eq!(cache.analyze(&sql, &mut holder, &mut memo), analyze(&sql), "{sql}");
        assert!(holder.is_some(), "{sql}: bound to the template the memo lent");
        memo.give_back(holder.take().unwrap());
        let sql = not_kept(from);
        assert_eq!(cache.analyze(&sql, &mut None, &mut memo), analyze(&sql), "{sql}");
    }
    assert_eq!(cache.stats().lookups, [4, 4, 2], "no shape was new again");
    assert!(cache.is_empty(), "the shared map was not asked");
}
