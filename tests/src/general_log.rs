//! MariaDB general query log files read back as (thread id, command, text) entries, and the
//! workload markers (`/* q:123 */`) found in them: where each marked statement actually ran.
//!
//! File format (MariaDB 10.11, `--general-log-file`): a three-line banner, then one entry per
//! line, `[YYMMDD HH:MM:SS]\t<spaces><thread id> <Command>\t<argument>`; the timestamp is printed
//! only when the second changes. A statement with newlines continues on the following lines
//! without a prefix. Prepared statements appear as `Prepare` (the text with `?`) and `Execute`
//! (the text with the bound values expanded); comments are kept verbatim.

use std::collections::HashMap;
use std::path::Path;

/// One general-log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The server's thread (connection) id.
    pub thread: u64,
    /// `Query`, `Prepare`, `Execute`, `Connect`, `Init DB`, `Quit`, `Close stmt`, …
    pub command: String,
    /// The argument: the statement text for `Query` / `Prepare` / `Execute`.
    pub text: String,
}

/// Parses the whole text of a general-log file.
pub fn parse(log: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for line in log.lines() {
        match entry_head(line) {
            Some(e) => out.push(e),
            None => {
                // Continuation of a multi-line statement (the banner lines come before any entry).
                if let Some(last) = out.last_mut() {
                    last.text.push('\n');
                    last.text.push_str(line);
                }
            }
        }
    }
    out
}

/// Reads and parses a general-log file (an absent file is an empty log).
pub fn read(path: &Path) -> Vec<Entry> {
    parse(&std::fs::read_to_string(path).unwrap_or_default())
}

/// `[timestamp]\t<spaces>id Command\targ` → the entry; anything else → `None`.
fn entry_head(line: &str) -> Option<Entry> {
    let (stamp, rest) = line.split_once('\t')?;
    if !(stamp.is_empty() || is_timestamp(stamp)) {
        return None;
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.as_bytes().get(digits) != Some(&b' ') {
        return None;
    }
    let thread = rest[..digits].parse().ok()?;
    let (command, text) = rest[digits + 1..].split_once('\t').unwrap_or((&rest[digits + 1..], ""));
    if command.is_empty() || !command.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ' || b == b'_') {
        return None;
    }
    Some(Entry { thread, command: command.to_string(), text: text.to_string() })
}

/// `YYMMDD HH:MM:SS` (MariaDB's general-log time stamp). The hour is space-padded, not
/// zero-padded: `261202  2:13:35` before 10 o'clock.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 15
        && b[6] == b' '
        && b[9] == b':'
        && b[12] == b':'
        && b.iter().enumerate().all(|(i, c)| matches!(i, 6 | 9 | 12) || c.is_ascii_digit() || (i == 7 && *c == b' '))
}

/// The workload marker numbers (`q:<digits>`) in `text`, in order.
pub fn markers(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("q:") {
        let after = &rest[i + 2..];
        let n = after.bytes().take_while(u8::is_ascii_digit).count();
        let preceded_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric();
        if n > 0 && preceded_ok {
            if let Ok(v) = after[..n].parse() {
                out.push(v);
            }
        }
        rest = &after[n..];
    }
    out
}

/// Whether an entry is a statement the server executed (not a `Prepare`, a login or a `Quit`).
pub fn is_execution(e: &Entry) -> bool {
    e.command == "Query" || e.command == "Execute"
}

/// Where each marker was executed: marker → [(server name, entry)], over several servers' logs.
#[derive(Debug, Default)]
pub struct MarkerIndex {
    hits: HashMap<u64, Vec<(String, Entry)>>,
}

impl MarkerIndex {
    /// Indexes the executed entries (`Query`, `Execute`) of every `(server name, log)` pair.
    pub fn build<'a>(logs: impl IntoIterator<Item = (&'a str, &'a [Entry])>) -> MarkerIndex {
        let mut hits: HashMap<u64, Vec<(String, Entry)>> = HashMap::new();
        for (server, entries) in logs {
            for e in entries.iter().filter(|e| is_execution(e)) {
                let mut ms = markers(&e.text);
                ms.dedup();
                for m in ms {
                    hits.entry(m).or_default().push((server.to_string(), e.clone()));
                }
            }
        }
        MarkerIndex { hits }
    }

    /// The executions of marker `m` (server name, entry).
    pub fn get(&self, m: u64) -> &[(String, Entry)] {
        self.hits.get(&m).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The distinct servers that executed marker `m`, sorted.
    pub fn servers(&self, m: u64) -> Vec<String> {
        let mut s: Vec<String> = self.get(m).iter().map(|(n, _)| n.clone()).collect();
        s.sort();
        s.dedup();
        s
    }

    /// Number of distinct markers seen.
    pub fn len(&self) -> usize {
        self.hits.len()
    }

    /// No marker seen.
    pub fn is_empty(&self) -> bool {
        self.hits.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n\
Tcp port: 34567  Unix socket: /tmp/s.sock\n\
Time\t\t    Id Command\tArgument\n\
261130 15:28:53\t     4 Connect\troot@127.0.0.1 on test using TCP/IP\n\
\t\t     4 Query\t/* q:1 */ select 1\n\
\t\t     4 Query\tselect /* q:2 */ 'a\n\
b'\n\
\t\t     4 Prepare\t/* q:4 */ select b from t where a = ?\n\
\t\t     4 Execute\t/* q:4 */ select b from t where a = 1\n\
\t\t    12 Query\t/* q:5 */ UPDATE t SET b = 'seq:7' WHERE a = 2; /* q:5 */ SELECT 1\n\
\t\t     4 Quit\t\n";

    #[test]
    fn parses_entries_and_continuations() {
        let e = parse(SAMPLE);
        assert_eq!(e.len(), 7, "{e:#?}");
        assert_eq!((e[0].thread, e[0].command.as_str()), (4, "Connect"));
        assert_eq!(e[2].text, "select /* q:2 */ 'a\nb'");
        assert_eq!((e[3].command.as_str(), e[4].command.as_str()), ("Prepare", "Execute"));
        assert_eq!((e[5].thread, e[6].command.as_str(), e[6].text.as_str()), (12, "Quit", ""));
    }

    /// Entries logged before 10 o'clock carry a space-padded hour; they are entries, not
    /// continuations of the previous statement (a test once failed only in the small hours).
    #[test]
    fn single_digit_hours_start_entries() {
        let log = "261202  9:59:59\t    11 Prepare\t/* q:1 */ SELECT ?\n\
                   261202  2:13:35\t    12 Query\t/* q:2 */ SELECT 2\n\
                   261202 10:00:00\t    12 Query\t/* q:3 */ SELECT 3\n";
        let e = parse(log);
        let got: Vec<(u64, &str)> = e.iter().map(|e| (e.thread, e.command.as_str())).collect();
        assert_eq!(got, vec![(11, "Prepare"), (12, "Query"), (12, "Query")], "{e:#?}");
        assert!(!is_timestamp("261202  :13:35") && !is_timestamp("261202 2 :13:35"));
    }

    #[test]
    fn finds_markers_where_they_ran() {
        assert_eq!(markers("/* q:12 */ x 'seq:7' q:3 /*q:9*/"), vec![12, 3, 9]);
        let e = parse(SAMPLE);
        let idx = MarkerIndex::build([("s1", e.as_slice())]);
        assert_eq!(idx.servers(4), vec!["s1".to_string()]);
        assert_eq!(idx.get(4).len(), 1, "Prepare is not an execution");
        assert_eq!(idx.get(5).len(), 1, "one entry per statement, however many markers");
        assert!(idx.get(7).is_empty(), "seq:7 is not a marker");
    }
}
