//! The schema and the initial data every server of the cluster (and the reference server) holds:
//! the same rows everywhere, so that each MariaDB can play any replica of any partition.

use super::topology::Topology;

/// Keys of the written tables are `0 .. KEY_SPACE`; initially the even ones exist.
pub const KEY_SPACE: i64 = 4000;

/// Keys of the never-written table `r_hash`: `0 .. READONLY_KEYS`, all present.
pub const READONLY_KEYS: i64 = 1000;

/// Tables the workload never writes (reads of them are comparable whatever replica serves them).
pub const READONLY_TABLES: [&str; 1] = ["r_hash"];

/// Whether `table` has a row for `key` before the workload runs.
pub fn initially_present(table: &str, key: i64) -> bool {
    if READONLY_TABLES.contains(&table) {
        (0..READONLY_KEYS).contains(&key)
    } else {
        (0..KEY_SPACE).contains(&key) && key % 2 == 0
    }
}

/// `c2` and `c3` of the initial row for `key`.
pub fn initial_row(key: i64) -> (String, i64) {
    (format!("v{key}"), (key * 7) % 1000)
}

/// Statements creating the workload tables of `topology` (database `test`) with their initial
/// rows. sysbench tables are left to `sysbench prepare`.
pub fn statements(topology: &Topology) -> Vec<String> {
    let mut out = vec!["CREATE DATABASE IF NOT EXISTS test".to_string()];
    for t in topology.tables.iter().filter(|t| t.database == "test") {
        out.push(format!("DROP TABLE IF EXISTS test.{}", t.name));
        out.push(t.ddl.replacen("CREATE TABLE ", "CREATE TABLE test.", 1));
        let limit = if READONLY_TABLES.contains(&t.name.as_str()) { READONLY_KEYS } else { KEY_SPACE };
        let rows: Vec<String> = (0..limit)
            .filter(|k| initially_present(&t.name, *k))
            .map(|k| {
                let (c2, c3) = initial_row(k);
                format!("({k},'{c2}',{c3})")
            })
            .collect();
        for chunk in rows.chunks(500) {
            out.push(format!("INSERT INTO test.{} (c1, c2, c3) VALUES {}", t.name, chunk.join(",")));
        }
    }
    out
}

/// `statements` joined into scripts small enough for one `mariadb -e` argument each.
pub fn scripts(statements: &[String]) -> Vec<String> {
    let mut out = vec![String::new()];
    for s in statements {
        if out.last().is_some_and(|b| b.len() + s.len() > 64 * 1024) {
            out.push(String::new());
        }
        if let Some(b) = out.last_mut() {
            b.push_str(s);
            b.push_str(";\n");
        }
    }
    out
}
