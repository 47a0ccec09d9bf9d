//! Confronts three sources for every workload request: the gateway's route log (its decision),
//! the servers' general logs (where it really ran) and the request's [`Expect`] (where docs/routing.md
//! says it must run); and compares the outcomes of two runs of the same lists.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

use super::{Expect, Item, Outcome, Stmt};
use crate::cluster::RouteRecord;
use crate::general_log::{self, Entry, MarkerIndex};

/// What a check found.
#[derive(Debug, Default)]
pub struct Report {
    /// Requests whose placement was checked.
    pub checked: usize,
    /// Counters by kind (for the test's output).
    pub stats: BTreeMap<String, usize>,
    /// One line per violation.
    pub failures: Vec<String>,
}

impl Report {
    fn fail(&mut self, msg: String) {
        self.failures.push(msg);
    }

    fn count(&mut self, what: &str) {
        *self.stats.entry(what.to_string()).or_default() += 1;
    }

    /// Writes every violation to `target/test-servers/failures-<what>.txt` (when there are any).
    pub fn save(&self, what: &str) -> std::path::PathBuf {
        let slug: String = what.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).take(40).collect();
        let path = crate::servers_dir().join(format!("failures-{slug}.txt"));
        if !self.failures.is_empty() {
            let _ = std::fs::write(&path, self.failures.join("\n"));
        }
        path
    }

    /// Panics with the first violations unless there are none (all of them: [`Report::save`]).
    pub fn assert_clean(&self, what: &str) {
        if !self.failures.is_empty() {
            let path = self.save(what);
            let shown: Vec<&String> = self.failures.iter().take(25).collect();
            panic!(
                "{what}: {} of {} checks failed (all in {}); first ones:\n{}",
                self.failures.len(),
                self.checked,
                path.display(),
                shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
            );
        }
    }
}

/// The evidence of one run.
pub struct Evidence {
    /// Route log records.
    pub records: Vec<RouteRecord>,
    /// General logs by server name.
    pub logs: Vec<(String, Vec<Entry>)>,
    /// Server address → topology name.
    pub names: HashMap<SocketAddr, String>,
}

impl Evidence {
    fn name(&self, r: &RouteRecord) -> Option<String> {
        r.target.and_then(|a| self.names.get(&a).cloned())
    }
}

/// Route-log records of executions, by the markers in their text. An `execute` record whose
/// text carries no marker (the gateway may log the packet rather than the statement) is
/// attributed to the statement prepared by the record just before it on the same connection.
fn records_by_marker(records: &[RouteRecord]) -> HashMap<u64, Vec<&RouteRecord>> {
    let mut out: HashMap<u64, Vec<&RouteRecord>> = HashMap::new();
    let mut ordered: Vec<&RouteRecord> = records.iter().collect();
    ordered.sort_by_key(|r| (r.conn, r.seq));
    let mut prepared: Option<(Option<u64>, Vec<u64>)> = None;
    for r in ordered {
        let mut ms = general_log::markers(&r.sql);
        ms.dedup();
        let cmd = r.cmd.to_ascii_lowercase();
        if cmd.contains("prepare") {
            prepared = Some((r.conn, ms));
            continue;
        }
        if ms.is_empty() && cmd.contains("execute") {
            if let Some((_, pms)) = prepared.take().filter(|(c, _)| *c == r.conn) {
                ms = pms;
            }
        }
        if !cmd.contains("close") {
            prepared = None;
        }
        if r.is_execution() {
            for m in ms {
                out.entry(m).or_default().push(r);
            }
        }
    }
    out
}

/// The `ps:c:k` tag of a reused prepared statement's text.
fn hot_tag(sql: &str) -> Option<&str> {
    let start = sql.find("/* ps:")? + 3;
    let end = start + sql[start..].find(" */")?;
    Some(&sql[start..end])
}

/// Whether `actual` satisfies `expect`; `ran` gives the server of another marker.
fn satisfies(expect: &Expect, actual: &str, ran: &HashMap<u64, String>) -> Result<(), String> {
    let ok = match expect {
        Expect::Leader(s) | Expect::Weak(s) => actual == *s,
        Expect::OneOf(set) => set.contains(actual),
        Expect::SameAs(m) | Expect::Begin { first: m } => ran.get(m).is_some_and(|s| s == actual),
        Expect::Any | Expect::Session => true,
    };
    if ok {
        Ok(())
    } else {
        let detail = match expect {
            Expect::SameAs(m) | Expect::Begin { first: m } => format!("{expect:?} (q:{m} ran on {:?})", ran.get(m)),
            other => format!("{other:?}"),
        };
        Err(format!("ran on {actual}, expected {detail}"))
    }
}

fn short(sql: &str) -> &str {
    &sql[..sql.char_indices().nth(120).map_or(sql.len(), |(i, _)| i)]
}

/// Placement of every marked request: route log target == the one server whose general log
/// executed it, and that server satisfies the expectation. Returns marker → server as well.
pub fn check_marked(lists: &[Vec<Item>], ev: &Evidence, report: &mut Report) -> HashMap<u64, String> {
    let by_marker = records_by_marker(&ev.records);
    let index = MarkerIndex::build(ev.logs.iter().map(|(n, e)| (n.as_str(), e.as_slice())));
    let mut ran: HashMap<u64, String> = HashMap::new();
    let items = lists.iter().flatten().filter(|i| i.marker != 0);
    for item in items.clone() {
        let m = item.marker;
        let gl = index.servers(m);
        let rl: Vec<&RouteRecord> = by_marker.get(&m).cloned().unwrap_or_default();
        let targets: Vec<Option<String>> = rl.iter().filter(|r| r.target.is_some()).map(|r| ev.name(r)).collect();
        let sql = short(item.stmt.sql());
        match (&item.expect, targets.as_slice()) {
            (Expect::Session | Expect::Begin { .. }, []) => {}
            // A held BEGIN replayed without the client's text: `check_held_begin` below.
            (Expect::Begin { .. }, [Some(_)]) if gl.is_empty() => {}
            (_, [Some(t)]) => {
                if gl != [t.clone()] {
                    report.fail(format!("q:{m} route log says {t}, general logs show {gl:?}: {sql}"));
                }
                ran.insert(m, t.clone());
            }
            (_, other) => {
                report.fail(format!("q:{m}: {} route-log records with a target {other:?}: {sql}", other.len()))
            }
        }
        if let (Expect::Session | Expect::Begin { .. }, [only]) = (&item.expect, gl.as_slice()) {
            ran.entry(m).or_insert_with(|| only.clone());
        }
        if matches!(item.expect, Expect::Begin { .. }) && gl.len() > 1 {
            report.fail(format!("q:{m}: one transaction started on several servers {gl:?}: {sql}"));
        }
    }
    for item in items {
        report.checked += 1;
        report.count(expect_kind(&item.expect));
        match (&item.expect, ran.get(&item.marker)) {
            (Expect::Begin { first }, None) => check_held_begin(item.marker, *first, &ran, ev, report),
            (Expect::Session, _) => {}
            (e, Some(actual)) => {
                if let Err(msg) = satisfies(e, actual, &ran) {
                    report.fail(format!("q:{}: {msg}: {}", item.marker, short(item.stmt.sql())));
                }
            }
            (_, None) => {} // already reported above
        }
    }
    ran
}

fn expect_kind(e: &Expect) -> &'static str {
    match e {
        Expect::Leader(_) => "strong, leader computed",
        Expect::OneOf(_) => "one of a set",
        Expect::Weak(_) => "weak, replica computed",
        Expect::SameAs(_) => "in transaction",
        Expect::Begin { .. } => "transaction start",
        Expect::Any => "no table",
        Expect::Session => "session statement",
    }
}

/// A `BEGIN` whose text did not reach any server as such: the server of the transaction's first
/// statement must have started a transaction on that statement's thread just before it.
fn check_held_begin(begin: u64, first: u64, ran: &HashMap<u64, String>, ev: &Evidence, report: &mut Report) {
    let Some(server) = ran.get(&first) else {
        return report.fail(format!("q:{begin}: the transaction's first statement q:{first} ran nowhere"));
    };
    let Some((_, entries)) = ev.logs.iter().find(|(n, _)| n == server) else { return };
    let Some(pos) =
        entries.iter().position(|e| general_log::is_execution(e) && general_log::markers(&e.text).contains(&first))
    else {
        return report.fail(format!("q:{begin}: q:{first} not in {server}'s general log"));
    };
    let thread = entries[pos].thread;
    let started = entries[..pos]
        .iter()
        .rev()
        .filter(|e| e.thread == thread)
        .take_while(|e| e.command != "Connect" && (e.command == "Prepare" || general_log::markers(&e.text).is_empty()))
        .any(|e| {
            let t = e.text.trim_start().to_ascii_uppercase();
            t.starts_with("BEGIN") || t.starts_with("START TRANSACTION") || t.starts_with("XA ")
        });
    if !started {
        report.fail(format!(
            "q:{begin}: no BEGIN on {server} thread {thread} before the transaction's first statement q:{first}"
        ));
    }
}

/// Executions of reused prepared statements (`ps:c:k` tags), from the servers' general logs:
/// as many `Execute` entries as executions, each on a server the expectation of an execution
/// with that value allows. When the route log carries the statement text of `execute` records,
/// their targets must match the general logs too (same (server, text) multiset).
pub fn check_hot(lists: &[Vec<Item>], ev: &Evidence, ran: &HashMap<u64, String>, report: &mut Report) {
    let mut items: BTreeMap<&str, Vec<&Item>> = BTreeMap::new();
    for i in lists.iter().flatten() {
        if let Some(tag) = &i.hot {
            items.entry(tag.as_str()).or_default().push(i);
        }
    }
    for (tag, execs) in items {
        let prefix = format!("/* {tag} */");
        let mut got: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (server, entries) in &ev.logs {
            for e in entries.iter().filter(|e| e.command == "Execute" && e.text.starts_with(&prefix)) {
                *got.entry((server.clone(), e.text.clone())).or_default() += 1;
            }
        }
        let by_text: HashMap<String, &Item> = execs.iter().map(|i| (expanded(&i.stmt), *i)).collect();
        let total: usize = got.values().sum();
        report.checked += execs.len();
        *report.stats.entry("reused prepared execution".into()).or_default() += execs.len();
        if total != execs.len() {
            report.fail(format!("{tag}: {} executions, {total} Execute entries in the general logs", execs.len()));
        }
        for (server, text) in got.keys() {
            match by_text.get(text) {
                Some(item) => {
                    if let Err(msg) = satisfies(&item.expect, server, ran) {
                        report.fail(format!("{tag}: {msg}: {text}"));
                    }
                }
                None => report.fail(format!("{tag}: unexpected execution on {server}: {text}")),
            }
        }
        let mut recs: Vec<&RouteRecord> =
            ev.records.iter().filter(|r| r.is_execution() && hot_tag(&r.sql) == Some(tag)).collect();
        if recs.is_empty() {
            continue;
        }
        recs.sort_by_key(|r| (r.conn, r.seq));
        let mut want: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (item, rec) in execs.iter().zip(&recs) {
            let name = ev.name(rec).unwrap_or_else(|| "?".into());
            *want.entry((name, expanded(&item.stmt))).or_default() += 1;
        }
        if recs.len() != execs.len() || want != got {
            report.fail(format!("{tag}: route log ({} records) and general logs disagree", recs.len()));
        }
    }
}

/// A prepared statement's text as the general log shows an execution: `?` replaced in order.
fn expanded(stmt: &Stmt) -> String {
    match stmt {
        Stmt::Text(s) => s.clone(),
        Stmt::Prepared { sql, params } => {
            let mut out = String::new();
            let mut vals = params.iter();
            for ch in sql.chars() {
                match (ch, vals.clone().next()) {
                    ('?', Some(v)) => {
                        out += &v.to_string();
                        vals.next();
                    }
                    _ => out.push(ch),
                }
            }
            out
        }
    }
}

/// Requests that failed, as report lines.
pub fn failed(lists: &[Vec<Item>], outcomes: &[Vec<Outcome>], report: &mut Report) {
    for (items, outs) in lists.iter().zip(outcomes) {
        if outs.len() < items.len() {
            report.fail(format!("client stopped after {} of {} requests", outs.len(), items.len()));
        }
        for (i, o) in items.iter().zip(outs) {
            if let Outcome::Err(code, msg) = o {
                report.fail(format!("q:{} failed ({code}: {msg}): {}", i.marker, short(i.stmt.sql())));
            }
        }
    }
}

/// Comparable requests whose outcomes differ between two runs of the same lists.
pub fn compare(lists: &[Vec<Item>], a: &[Vec<Outcome>], b: &[Vec<Outcome>], report: &mut Report) {
    for (items, (oa, ob)) in lists.iter().zip(a.iter().zip(b)) {
        for (i, (x, y)) in items.iter().zip(oa.iter().zip(ob)) {
            if !i.compare {
                continue;
            }
            report.checked += 1;
            let same = match (x, y) {
                (Outcome::Err(c1, _), Outcome::Err(c2, _)) => c1 == c2,
                _ => x == y,
            };
            if !same {
                report.fail(format!("{:?}: gateway {x:?} vs single server {y:?}", short(i.stmt.sql())));
            }
        }
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
