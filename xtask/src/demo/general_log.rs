//! Where a statement actually ran: the servers whose MariaDB general log holds its marker comment.

use std::path::PathBuf;

/// One server of the demo cluster as the general-log reader sees it.
#[derive(Debug, Clone)]
pub struct LogServer {
    /// Topology server name (`s1` …).
    pub name: String,
    /// Its SQL address as EXPLAIN ROUTE prints it (`127.0.0.1:port`).
    pub addr: String,
    /// Its general query log.
    pub path: PathBuf,
}

/// One general-log entry carrying a marker: which server, and the command (`Query`, `Execute`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// Topology server name.
    pub server: String,
    /// General-log command word.
    pub command: String,
}

/// The entries of every server's general log whose argument contains `marker`, excluding
/// `Prepare` (a prepared statement runs where it is executed) and `EXPLAIN ROUTE` (answered by the
/// gateway; if it ever reached a server it would not be the statement itself).
pub fn find(servers: &[LogServer], marker: &str) -> Vec<Ran> {
    let mut out = Vec::new();
    for s in servers {
        let text = std::fs::read_to_string(&s.path).unwrap_or_default();
        for (command, argument) in text.lines().filter(|l| l.contains(marker)).filter_map(entry) {
            let explain = argument.trim_start().to_ascii_uppercase().starts_with("EXPLAIN ROUTE");
            if command != "Prepare" && !explain {
                out.push(Ran { server: s.name.clone(), command: command.to_string() });
            }
        }
    }
    out
}

/// Splits a general-log line (`[time]\t<spaces><thread id> <Command>\t<argument>`) into command
/// and argument; `None` for header and continuation lines.
fn entry(line: &str) -> Option<(&str, &str)> {
    let mut rest = line;
    loop {
        let (field, tail) = rest.split_once('\t')?;
        let mut words = field.split_whitespace();
        if let (Some(id), Some(command), None) = (words.next(), words.next(), words.next()) {
            if id.bytes().all(|b| b.is_ascii_digit()) && command.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Some((command, tail));
            }
        }
        rest = tail;
    }
}

/// The servers of `ran`, deduplicated, in order, joined by `,`: `s2` or `s1,s2`; `-` if none.
pub fn servers_text(ran: &[Ran]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in ran {
        if !names.contains(&r.server.as_str()) {
            names.push(&r.server);
        }
    }
    if names.is_empty() {
        "-".to_string()
    } else {
        names.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_mariadb_lines() {
        assert_eq!(entry("250101 10:00:00\t     5 Query\tSELECT 1 /* m */"), Some(("Query", "SELECT 1 /* m */")));
        assert_eq!(
            entry("\t\t     12 Execute\tSELECT c2 FROM t WHERE c1=2 /* m */"),
            Some(("Execute", "SELECT c2 FROM t WHERE c1=2 /* m */"))
        );
        assert_eq!(entry("\t\t     12 Query\tSELECT 'a\tb'"), Some(("Query", "SELECT 'a\tb'")));
        assert_eq!(entry("Time\t\t    Id Command\tArgument"), None);
        assert_eq!(entry("  AND x = 1 /* m */"), None);
    }

    #[test]
    fn find_skips_prepare_and_explain() {
        let dir = std::env::temp_dir().join(format!("xtask-general-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.log"), dir.join("b.log"));
        std::fs::write(&a, "\t\t 3 Prepare\tSELECT ? /* m1 */\n\t\t 3 Execute\tSELECT 1 /* m1 */\n").unwrap();
        std::fs::write(&b, "\t\t 4 Query\tEXPLAIN ROUTE SELECT 1 /* m1 */\n\t\t 4 Query\tSELECT 2 /* m2 */\n").unwrap();
        let servers = [
            LogServer { name: "s1".into(), addr: String::new(), path: a },
            LogServer { name: "s2".into(), addr: String::new(), path: b },
        ];
        let m1 = find(&servers, "/* m1 */");
        assert_eq!(m1, [Ran { server: "s1".into(), command: "Execute".into() }]);
        assert_eq!(servers_text(&find(&servers, "/* m2 */")), "s2");
        assert_eq!(servers_text(&find(&servers, "/* m3 */")), "-");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
