//! The SQL fast path (`sql::fast::analyze`) on every statement of a COM_QUERY text, and the SQL
//! mode normaliser: a text rewritten for the default mode must lex there into the same tokens it
//! has in the client's mode.
#![no_main]

use gateway::sql::lexer::{Kind, Lexer, Mode};
use gateway::sql::{fast, in_default_mode, split};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for stmt in split::statements(&text).take(8) {
        let _ = fast::analyze(stmt);
    }
    // Every mode but the default one, which needs no rewriting.
    for mode in Mode::ALL.into_iter().skip(1) {
        let kinds = |sql: &str, mode: Mode| Lexer::new(sql.as_bytes(), mode).map(|t| t.kind).collect::<Vec<Kind>>();
        let read = in_default_mode(&text, mode);
        assert_eq!(kinds(&text, mode), kinds(&read, Mode::default()), "{text:?} read as {read:?}");
    }
});
