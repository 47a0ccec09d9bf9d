//! The statement shape cache (`sql::shape`) against the parser: a statement, then the same
//! statement with every literal replaced by another of its kind (the same shape), are analysed
//! through one cache; the second must be analysed exactly as `sql::analyze` analyses it, whether
//! the cache kept the shape's template or not. A third statement of the shape is served from a
//! session's memo (`ShapeMemo`), the template the second was lent given back.
#![no_main]

use gateway::sql::analyze;
use gateway::sql::lexer::{Kind, Lexer, Mode};
use gateway::sql::shape::{ShapeCache, ShapeMemo};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let first = String::from_utf8_lossy(data);
    let (cache, mut memo) = (ShapeCache::default(), ShapeMemo::default());
    assert_eq!(cache.analyze(&first, &mut None, &mut memo), analyze(&first), "first statement {first:?}");
    let second = relit(&first);
    let mut holder = None;
    assert_eq!(cache.analyze(&second, &mut holder, &mut memo), analyze(&second), "{second:?} after {first:?}");
    if let Some(t) = holder {
        memo.give_back(t);
    }
    let third = relit(&second);
    assert_eq!(cache.analyze(&third, &mut None, &mut memo), analyze(&third), "{third:?} after {second:?}");
});

/// `sql` with each number, string and hex literal replaced by another of the same kind.
fn relit(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut copied = 0;
    for (i, t) in Lexer::new(sql.as_bytes(), Mode::default()).enumerate() {
        let other = match t.kind {
            Kind::Number => ["7", "18446744073709551616", "0.25", "2e5"][i % 4],
            Kind::Str => ["'z'", "'a\\'b'", "''", "\"q\""][i % 4],
            Kind::Hex => ["0x7f", "X'00ff'"][i % 2],
            _ => continue,
        };
        let (Some(before), true) = (sql.get(copied..t.start as usize), t.end as usize <= sql.len()) else { continue };
        out.push_str(before);
        out.push_str(other);
        copied = t.end as usize;
    }
    out.push_str(sql.get(copied..).unwrap_or(""));
    out
}
