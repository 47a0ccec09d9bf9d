//! The SQL fast path (`sql::fast::analyze`) on every statement of a COM_QUERY text, with the
//! `target_db_server` list of its hints parsed as the planner parses it (at most 64 distinct
//! addresses), and the SQL mode normaliser: a text rewritten for the default mode must lex there
//! into the same tokens it has in the client's mode.
#![no_main]

use gateway::route::{TargetDbServer, TargetSource, MAX_TARGETS};
use gateway::sql::lexer::{Kind, Lexer, Mode};
use gateway::sql::{fast, in_default_mode, split};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for stmt in split::statements(&text).take(8) {
        let Some(a) = fast::analyze(stmt) else { continue };
        if let Some(text) = a.hints.target_db_server.as_deref() {
            if let Ok(t) = TargetDbServer::parse(text, TargetSource::Comment) {
                assert!(!t.addrs.is_empty() && t.addrs.len() <= MAX_TARGETS, "{text:?}: {:?}", t.addrs);
                assert!(t.addrs.iter().enumerate().all(|(i, a)| !t.addrs[..i].contains(a)), "{text:?}: repeated");
            }
        }
    }
    // Every mode but the default one, which needs no rewriting.
    for mode in Mode::ALL.into_iter().skip(1) {
        let kinds = |sql: &str, mode: Mode| Lexer::new(sql.as_bytes(), mode).map(|t| t.kind).collect::<Vec<Kind>>();
        let read = in_default_mode(&text, mode);
        assert_eq!(kinds(&text, mode), kinds(&read, Mode::default()), "{text:?} read as {read:?}");
    }
});
