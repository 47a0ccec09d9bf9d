//! The CREATE TABLE / partition DDL parser (`partition::parse_create_table`), then rows of key
//! values (`KeyValue::parse_row`) located in the table it describes. Input: the DDL, a 0xFF
//! byte, then rows one per line.
#![no_main]

use gateway::partition::{locate, locate_by_name, parse_create_table, CastContext, KeyValue};
use gateway_fuzz::{lines, split_ff};
use libfuzzer_sys::fuzz_target;

/// MySQL's and OceanBase's limit on the partitions (sub-partitions included) of a table.
const MAX_PARTITIONS: u64 = 8192;

/// The product of the numbers after the words `PARTITIONS` / `SUBPARTITIONS` in `ddl`.
fn partition_count(ddl: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(ddl).to_ascii_uppercase();
    let mut total = 1u64;
    for (i, _) in text.match_indices("PARTITIONS") {
        let digits: String = text[i + "PARTITIONS".len()..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .take(12)
            .collect();
        total = total.saturating_mul(digits.parse().unwrap_or(1).max(1));
    }
    total
}

fuzz_target!(|data: &[u8]| {
    let (ddl, rows) = split_ff(data);
    if partition_count(ddl) > MAX_PARTITIONS {
        // The parser does not bound `PARTITIONS n` yet: `PARTITIONS 89551737` builds 89 million
        // partitions and runs out of memory (reported with issue #13 item 1, whose rework of
        // partition/ddl owns the fix). Servers refuse more than 8192, so only those are tried.
        return;
    }
    let Ok(scheme) = parse_create_table(&String::from_utf8_lossy(ddl)) else {
        return;
    };
    let _ = scheme.key_columns();
    for p in &scheme.partitions {
        let _ = locate_by_name(&scheme, &p.name);
    }
    for row in lines(rows, 8) {
        if let Ok(values) = KeyValue::parse_row(&row) {
            let _ = locate(&scheme, &values, &CastContext::default());
            let _ = locate(
                &scheme,
                &values,
                &CastContext {
                    tz_offset_secs: -36_000,
                },
            );
        }
    }
});
