//! The CREATE TABLE / partition DDL parser (`partition::parse_create_table`), then rows of key
//! values (`KeyValue::parse_row`) located in the table it describes. Input: the DDL, a 0xFF
//! byte, then rows one per line.
#![no_main]

use gateway::partition::{locate, locate_by_name, parse_create_table, CastContext, KeyValue};
use gateway_fuzz::{lines, split_ff};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The parser bounds the partition count (`partition::ddl` MAX_PARTITIONS): `PARTITIONS
    // 89551737`, once found here to exhaust memory, is refused.
    let (ddl, rows) = split_ff(data);
    let Ok(scheme) = parse_create_table(&String::from_utf8_lossy(ddl)) else {
        return;
    };
    let _ = scheme.key_columns();
    for p in scheme.partitions.iter().take(64) {
        let _ = locate_by_name(&scheme, &p.name);
    }
    for row in lines(rows, 8) {
        if let Ok(values) = KeyValue::parse_row(&row) {
            let _ = locate(&scheme, &values, &CastContext::default());
            let _ = locate(&scheme, &values, &CastContext { tz_offset_secs: -36_000 });
        }
    }
});
