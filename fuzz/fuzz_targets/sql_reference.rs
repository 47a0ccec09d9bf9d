//! The reference SQL analysis (`sql::reference::analyze`, sqlparser) on one statement.
#![no_main]

use gateway::sql::reference;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = reference::analyze(&text);
});
