//! A network fuzzer for the gateway: seeded, reproducible cases of mutated handshake responses
//! and commands sent over raw TCP ([`case`]), run by a few worker threads while a canary session
//! with a real driver checks that every answer it gets is its own ([`canary`]).
//!
//! Settings come from the environment: `NET_FUZZ_CASES` (cases per gateway), `NET_FUZZ_SEED`
//! (default: from the clock, printed), `NET_FUZZ_CASE` (run only that case, to reproduce one),
//! `NET_FUZZ_WORKERS` (concurrent cases, default 3), `NET_FUZZ_DEADLINE_SECS` (per case, 15).

pub mod answers;
pub mod canary;
pub mod case;
pub mod commands;
pub mod frames;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

pub use case::{CaseOutcome, End, Target};

/// How many cases, which seed, how many at once.
#[derive(Debug, Clone)]
pub struct Settings {
    pub seed: u64,
    pub cases: u64,
    /// Only this case (reproducing a failure).
    pub only: Option<u64>,
    pub workers: u64,
    pub deadline: Duration,
}

impl Settings {
    /// From the environment (module docs), `default_cases` unless `NET_FUZZ_CASES` is set.
    pub fn from_env(default_cases: u64) -> Settings {
        let num = |k: &str| std::env::var(k).ok().and_then(|v| parse_u64(v.trim()));
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Settings {
            seed: num("NET_FUZZ_SEED").unwrap_or(clock),
            cases: num("NET_FUZZ_CASES").unwrap_or(default_cases),
            only: num("NET_FUZZ_CASE"),
            workers: num("NET_FUZZ_WORKERS").unwrap_or(3).max(1),
            deadline: Duration::from_secs(num("NET_FUZZ_DEADLINE_SECS").unwrap_or(15)),
        }
    }

    /// The environment that reruns case `case` alone.
    pub fn repro(&self, case: u64) -> String {
        format!("NET_FUZZ_SEED={:#x} NET_FUZZ_CASE={case}", self.seed)
    }
}

fn parse_u64(v: &str) -> Option<u64> {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// What the cases got back, counted.
#[derive(Debug, Default)]
pub struct Tally {
    pub cases: u64,
    /// Kind of the first answer packet → cases.
    pub first: BTreeMap<&'static str, u64>,
    /// ERR code → packets.
    pub errors: BTreeMap<u16, u64>,
    /// How the connection ended → cases.
    pub ends: BTreeMap<End, u64>,
    /// What the cases sent ([`SENT`]) → cases.
    pub sent: BTreeMap<&'static str, u64>,
}

/// What a case sent, by a piece of its label: counted so a run shows what it covered.
const SENT: &[(&str, &str)] = &[
    ("handshake", "handshake"),
    ("SSLRequest", "SSLRequest"),
    ("plugin ", "auth switch"),
    ("bitflip", "bit flips"),
    ("shorten", "short frame"),
    ("stream cut", "cut stream"),
    ("length lie", "length lie"),
    ("seq ", "wrong seq"),
    ("16 MiB", "16 MiB frames"),
    ("execute", "COM_STMT_EXECUTE"),
    ("execute bogus id", "bogus statement id"),
    ("null bitmap", "null bitmap"),
    ("execute type", "param type"),
    ("long data", "long data"),
    ("odd command", "odd command"),
    ("process kill short", "COM_PROCESS_KILL short of its id"),
    ("[after COM_QUIT]", "after COM_QUIT"),
    ("change user", "COM_CHANGE_USER"),
    ("-byte writes", "piecewise writes"),
    ("sentinel", "sentinel statement"),
];

impl Tally {
    fn add(&mut self, o: &CaseOutcome) {
        self.cases += 1;
        *self.first.entry(o.first).or_default() += 1;
        for e in &o.errors {
            *self.errors.entry(*e).or_default() += 1;
        }
        *self.ends.entry(o.end).or_default() += 1;
        for (piece, what) in SENT {
            if o.label.contains(piece) {
                *self.sent.entry(what).or_default() += 1;
            }
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "cases run: {}", self.cases)?;
        writeln!(f, "cases that sent: {:?}", self.sent)?;
        writeln!(f, "first answer: {:?}", self.first)?;
        writeln!(f, "ERR codes: {:?}", self.errors)?;
        write!(f, "connection end: {:?}", self.ends)
    }
}

/// The fuzz run's shared flags: `stop` ends it early (a failure anywhere), `started` counts
/// cases begun (the canary names it in its failures).
#[derive(Debug, Default)]
pub struct Progress {
    pub stop: AtomicBool,
    pub started: AtomicU64,
}

/// Runs the cases on `settings.workers` threads; after each case `alive` must hold (the gateway
/// process is running). The first failure stops the run and is returned with its reproduction;
/// a gateway found gone names every case in flight at that moment (any of them may be the cause).
pub fn run(
    settings: &Settings,
    target: &Target,
    progress: &Progress,
    alive: &(dyn Fn() -> bool + Sync),
) -> Result<Tally, String> {
    let tally = Mutex::new(Tally::default());
    let failure: Mutex<Option<String>> = Mutex::new(None);
    let in_flight: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());
    let next = AtomicU64::new(0);
    let cases: Vec<u64> = match settings.only {
        Some(c) => vec![c],
        None => (0..settings.cases).collect(),
    };
    let fail = |msg: String| {
        progress.stop.store(true, Ordering::SeqCst);
        let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(msg);
    };
    let gone = |case: u64| {
        let flying = in_flight.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let repro: Vec<String> = flying.iter().map(|c| settings.repro(*c)).collect();
        format!(
            "the gateway process is gone during case {case}; cases in flight: {flying:?} \
             (rerun each alone: {})",
            repro.join(" | ")
        )
    };
    std::thread::scope(|s| {
        for _ in 0..settings.workers.min(cases.len() as u64) {
            s.spawn(|| loop {
                if progress.stop.load(Ordering::SeqCst) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst) as usize;
                let Some(&case) = cases.get(i) else { return };
                progress.started.fetch_add(1, Ordering::SeqCst);
                in_flight.lock().unwrap_or_else(|p| p.into_inner()).insert(case);
                let outcome = case::run(target, settings.seed, case, settings.deadline);
                if !alive() || (outcome.is_err() && dies_soon(alive)) {
                    let what = match &outcome {
                        Ok(o) => o.label.clone(),
                        Err(e) => e.clone(),
                    };
                    return fail(format!("{}; case {case}: {what}", gone(case)));
                }
                in_flight.lock().unwrap_or_else(|p| p.into_inner()).remove(&case);
                match outcome {
                    Ok(o) => tally.lock().unwrap_or_else(|p| p.into_inner()).add(&o),
                    Err(e) => {
                        return fail(format!("case {case} ({}): {e}", settings.repro(case)));
                    }
                }
            });
        }
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(f) => Err(f),
        None => Ok(tally.into_inner().unwrap_or_else(|p| p.into_inner())),
    }
}

/// After a failed case: whether the gateway process is found gone within two seconds (an
/// aborting process may still be writing its core when its sockets are already closed).
fn dies_soon(alive: &(dyn Fn() -> bool + Sync)) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while std::time::Instant::now() < deadline {
        if !alive() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}
