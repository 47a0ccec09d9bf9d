//! The SQL fast path (`sql::fast::analyze`) on every statement of a COM_QUERY text.
#![no_main]

use gateway::sql::{fast, split};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for stmt in split::statements(&text).take(8) {
        let _ = fast::analyze(stmt);
    }
});
