//! The gateway side: `gateway locate --ddl-file F --batch [--time-zone=TZ] < rows`, one output
//! line per input row (`p3 3`, `p1sp2 1 2`, `p0ssa 0 0`, or `unknown: <reason>`), compared
//! with where the kernel put each row.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use anyhow::{bail, Context};

use super::kernel::KernelTable;

/// One answer of the locator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A partition: name, first-level index, sub-level index.
    Located { name: String, part_idx: Option<usize>, sub_idx: Option<usize> },
    /// `unknown: <reason>`.
    Unknown(String),
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::Located { name, part_idx, sub_idx } => {
                write!(f, "{name}")?;
                for i in [part_idx, sub_idx].into_iter().flatten() {
                    write!(f, " {i}")?;
                }
                Ok(())
            }
            Answer::Unknown(r) => write!(f, "unknown: {r}"),
        }
    }
}

/// Parses one output line.
pub fn parse_answer(line: &str) -> Answer {
    let line = line.trim();
    if let Some(r) = line.strip_prefix("unknown") {
        return Answer::Unknown(r.trim_start_matches(':').trim().to_string());
    }
    let mut it = line.split_whitespace();
    let name = it.next().unwrap_or("").to_string();
    let mut idx = it.map(|s| s.parse::<usize>().ok());
    Answer::Located { name, part_idx: idx.next().flatten(), sub_idx: idx.next().flatten() }
}

/// Whether `bin` has a `locate` subcommand (checked once per process): `Ok(())` or why not.
pub fn available(bin: &Path) -> Result<(), String> {
    static CHECK: OnceLock<Result<(), String>> = OnceLock::new();
    CHECK
        .get_or_init(|| match Command::new(bin).args(["locate", "--help"]).stdin(Stdio::null()).output() {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(format!(
                "`{} locate --help` failed ({}): {}",
                bin.display(),
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("cannot run {}: {e}", bin.display())),
        })
        .clone()
}

/// Runs the locator over `rows` (one line each) for the table in `ddl_file`.
pub fn run(bin: &Path, ddl_file: &Path, time_zone: Option<&str>, rows: &str) -> anyhow::Result<(Vec<Answer>, f64)> {
    run_with(bin, ddl_file, time_zone, rows, &[])
}

/// [`run`] with extra arguments (`--sql`: the rows are statements).
pub fn run_with(
    bin: &Path,
    ddl_file: &Path,
    time_zone: Option<&str>,
    rows: &str,
    extra: &[&str],
) -> anyhow::Result<(Vec<Answer>, f64)> {
    let t0 = Instant::now();
    let mut cmd = Command::new(bin);
    cmd.arg("locate").arg("--ddl-file").arg(ddl_file).arg("--batch").args(extra);
    if let Some(tz) = time_zone {
        // `=` form: a value such as `-03:30` must not look like a flag.
        cmd.arg(format!("--time-zone={tz}"));
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running {} locate", bin.display()))?;
    let mut stdin = child.stdin.take().context("locate stdin")?;
    let input = rows.as_bytes().to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().context("waiting for gateway locate")?;
    let _ = writer.join();
    let secs = t0.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!("gateway locate exited with {}; stderr:\n{}\nstdout (head):\n{}", out.status, tail(&err), head(&stdout));
    }
    let answers: Vec<Answer> = stdout.lines().map(parse_answer).collect();
    let expected = rows.lines().count();
    if answers.len() != expected {
        bail!(
            "gateway locate printed {} lines for {expected} input rows; stdout (head):\n{}",
            answers.len(),
            head(&stdout)
        );
    }
    Ok((answers, secs))
}

fn head(s: &str) -> String {
    s.lines().take(20).collect::<Vec<_>>().join("\n")
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// One disagreement.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// Row id.
    pub id: u64,
    /// The input line (key values as literals).
    pub line: String,
    /// Where the kernel put it, with its indexes.
    pub kernel: Answer,
    /// What the locator said.
    pub ours: Answer,
}

/// Comparison result of one table.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Rows compared.
    pub rows: usize,
    /// Rows whose partition name (and indexes) agree.
    pub agreed: usize,
    /// Rows the locator answered `unknown` for.
    pub unknown: usize,
    /// Rows with the right name but wrong indexes.
    pub index_only: usize,
    /// All disagreements, in row order.
    pub mismatches: Vec<Mismatch>,
}

/// Compares the kernel's placement with the locator's answers (same order as the rows).
pub fn compare(kernel: &KernelTable, answers: &[Answer]) -> Comparison {
    let mut c = Comparison { rows: kernel.rows.len(), ..Default::default() };
    for (row, ours) in kernel.rows.iter().zip(answers) {
        let leaf = &kernel.leaves[row.leaf];
        let expect = Answer::Located { name: leaf.name.clone(), part_idx: Some(leaf.part_idx), sub_idx: leaf.sub_idx };
        if *ours == expect {
            c.agreed += 1;
            continue;
        }
        match ours {
            Answer::Unknown(_) => c.unknown += 1,
            Answer::Located { name, .. } if *name == leaf.name => c.index_only += 1,
            Answer::Located { .. } => {}
        }
        c.mismatches.push(Mismatch { id: row.id, line: row.line.clone(), kernel: expect, ours: ours.clone() });
    }
    c
}
