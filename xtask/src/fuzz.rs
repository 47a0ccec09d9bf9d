//! `cargo xtask fuzz`: builds the libFuzzer targets of fuzz/ with the pinned nightly, seeds their
//! corpora from the repository, runs each for a while and reports executions and crashes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};

use crate::fuzz_seeds;

/// Options of `cargo xtask fuzz`.
#[derive(clap::Args, Debug)]
pub struct FuzzArgs {
    /// Seconds each target runs.
    #[arg(long, default_value_t = 20)]
    pub time: u64,
    /// Run only this target (default: every target).
    pub target: Option<String>,
}

/// A fuzz target and the libFuzzer options it runs with.
pub struct Target {
    /// Name of the binary in fuzz/Cargo.toml (and of its corpus, seeds and artifact folders).
    pub name: &'static str,
    /// Dictionary under fuzz/dict/, if any.
    dict: Option<&'static str>,
    /// Longest input tried. The SQL, SET and DDL parsers recurse per nesting level until their
    /// depth bounds land (issue #13 item 1): 4 KiB stays well inside the fuzzer's 8 MiB stack.
    max_len: usize,
    /// Whether a failure fails the run. Every target gates: `sql_agree` too, since the fast
    /// analysis path declines the statements it used to guess at (`SELECT x * FROM t`,
    /// `SELECT a@v`, `?2`; gateway/src/sql/tests/corpus.rs `DISAGREED`). A target with known
    /// failures still being worked on may be set to report them without failing the run.
    gating: bool,
}

/// Every target, in the order they run.
pub const TARGETS: &[Target] = &[
    target("frame_client", None, 4096, true),
    target("frame_server", None, 4096, true),
    target("handshake", Some("handshake.dict"), 1024, true),
    target("stmt_execute", None, 4096, true),
    target("sql_fast", Some("sql.dict"), 4096, true),
    target("sql_reference", Some("sql.dict"), 4096, true),
    target("sql_agree", Some("sql.dict"), 4096, true),
    target("sql_shape", Some("sql.dict"), 4096, true),
    target("session_state", Some("sql.dict"), 4096, true),
    target("ddl", Some("sql.dict"), 4096, true),
    target("partition_locate", None, 4096, true),
    target("login_name", None, 1024, true),
    target("config", Some("config.dict"), 8192, true),
    target("bulk_execute", None, 4096, true),
    target("server_accounts", None, 4096, true),
];

const fn target(name: &'static str, dict: Option<&'static str>, max_len: usize, gating: bool) -> Target {
    Target { name, dict, max_len, gating }
}

/// How one target's run ended.
struct Outcome {
    name: &'static str,
    execs: u64,
    secs: f64,
    corpus: usize,
    /// The input that made it fail, with the first lines of the failure.
    crash: Option<(PathBuf, String)>,
    /// Copied from the target.
    gating: bool,
}

/// Builds, seeds and runs the targets; fails when any target found a crash.
pub fn run(args: &FuzzArgs) -> anyhow::Result<()> {
    let targets: Vec<&Target> = match &args.target {
        Some(t) => vec![TARGETS
            .iter()
            .find(|x| x.name == t)
            .with_context(|| format!("no fuzz target {t}; targets: {}", names()))?],
        None => TARGETS.iter().collect(),
    };
    let root = gateway_tests::workspace_root();
    let fuzz = root.join("fuzz");
    let toolchain = pinned_nightly(&root)?;
    let started = Instant::now();
    build(&fuzz, &toolchain, &targets)?;
    let built = started.elapsed().as_secs_f64();
    println!("==> seeding corpora from the repository");
    for t in &targets {
        let n = fuzz_seeds::write(t.name, &root, &fuzz.join("corpus").join(t.name))?;
        println!("    {:<17} {n} seeds", t.name);
    }
    let mut outcomes = Vec::new();
    for t in &targets {
        outcomes.push(run_target(&fuzz, t, args.time)?);
    }
    report(&outcomes, built, started.elapsed().as_secs_f64());
    let crashed: Vec<&Outcome> = outcomes.iter().filter(|o| o.crash.is_some() && o.gating).collect();
    if !crashed.is_empty() {
        bail!("{} target(s) crashed: {}", crashed.len(), crashed.iter().map(|o| o.name).collect::<Vec<_>>().join(", "));
    }
    Ok(())
}

fn names() -> String {
    TARGETS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}

/// The nightly that scripts/setup.sh installs (`GATEWAY_EBPF_TOOLCHAIN` overrides it there and
/// here): read from setup.sh, so the date lives in one place for the scripts.
pub fn pinned_nightly(root: &Path) -> anyhow::Result<String> {
    if let Ok(t) = std::env::var("GATEWAY_EBPF_TOOLCHAIN") {
        return Ok(t);
    }
    let setup = root.join("scripts/setup.sh");
    let text = std::fs::read_to_string(&setup).with_context(|| format!("reading {}", setup.display()))?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("EBPF_NIGHTLY="))
        .find_map(|v| v.split(":-").nth(1).map(|d| d.trim_end_matches(['}', '"']).to_string()))
        .filter(|d| d.starts_with("nightly-"))
        .with_context(|| {
            format!("no EBPF_NIGHTLY=\"${{GATEWAY_EBPF_TOOLCHAIN:-nightly-…}}\" line in {}", setup.display())
        })
}

fn build(fuzz: &Path, toolchain: &str, targets: &[&Target]) -> anyhow::Result<()> {
    let mut cmd = cargo_fuzz(fuzz, toolchain);
    // No sanitizer: the parsers are safe Rust (`unsafe` lives only in the data plane), so ASan
    // would find nothing and halve the executions; overflow checks and debug assertions stay on.
    cmd.args(["build", "--sanitizer", "none", "--debug-assertions"]);
    if let [one] = targets {
        cmd.arg(one.name);
    }
    println!(
        "==> cargo +{toolchain} fuzz build --sanitizer none --debug-assertions{}",
        if targets.len() == 1 { " (one target)" } else { "" }
    );
    let status = cmd.status().context("running cargo fuzz (scripts/setup.sh installs it)")?;
    if !status.success() {
        bail!("cargo fuzz build failed ({status})");
    }
    Ok(())
}

/// `cargo +<nightly> fuzz …` in fuzz/. No eBPF object is built for the fuzz binaries
/// (`AYA_BUILD_SKIP`): they never load the data plane.
fn cargo_fuzz(fuzz: &Path, toolchain: &str) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.arg(format!("+{toolchain}")).arg("fuzz").current_dir(fuzz).env("AYA_BUILD_SKIP", "1");
    // Started by `cargo xtask`, so cargo's variables for the stable toolchain are set; the
    // nightly cargo must pick its own.
    for var in ["RUSTC", "RUSTDOC", "CARGO", "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs one target's binary directly (cargo fuzz run would only add a rebuild check).
fn run_target(fuzz: &Path, t: &Target, secs: u64) -> anyhow::Result<Outcome> {
    let bin = fuzz.join("target/x86_64-unknown-linux-gnu/release").join(t.name);
    let corpus = fuzz.join("corpus").join(t.name);
    let seeds = fuzz.join("seeds").join(t.name);
    let artifacts = fuzz.join("artifacts").join(t.name);
    std::fs::create_dir_all(&artifacts).with_context(|| format!("creating {}", artifacts.display()))?;
    let log = artifacts.join("fuzz.log");
    let mut cmd = Command::new(&bin);
    cmd.arg(format!("-max_total_time={secs}"))
        .arg(format!("-max_len={}", t.max_len))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .args(["-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1"])
        .arg(&corpus);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    if let Some(d) = t.dict {
        cmd.arg(format!("-dict={}", fuzz.join("dict").join(d).display()));
    }
    let out = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    println!("==> {} for {secs} s (log {})", t.name, log.display());
    let started = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .status()
        .with_context(|| format!("running {} (built?)", bin.display()))?;
    let secs = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let execs = stat(&text, "stat::number_of_executed_units:").unwrap_or(0);
    let corpus_n = std::fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0);
    let crash = if status.success() { None } else { Some(crash_of(&text, &log)) };
    Ok(Outcome { name: t.name, execs, secs, corpus: corpus_n, crash, gating: t.gating })
}

fn stat(text: &str, key: &str) -> Option<u64> {
    text.lines().rev().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse().ok())
}

/// The artifact libFuzzer wrote (`Test unit written to …`) and the failure's first lines.
fn crash_of(text: &str, log: &Path) -> (PathBuf, String) {
    let artifact = text
        .lines()
        .find_map(|l| l.split("Test unit written to ").nth(1))
        .map_or_else(|| log.to_path_buf(), |p| PathBuf::from(p.trim()));
    let lines: Vec<&str> = text.lines().collect();
    let mut why = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.contains("panicked at") {
            why.push(short(l));
            // The panic's message (for sql_agree, the statement the paths disagree on): a clean
            // clone's CI keeps no artifact, so the log has to carry the input.
            if let Some(msg) = lines.get(i + 1) {
                why.push(short(msg));
            }
        } else if l.contains("ERROR: libFuzzer") || l.contains("overflowed its stack") || l.starts_with("Base64: ") {
            why.push(short(l));
        }
    }
    why.truncate(6);
    (artifact, why.join("\n"))
}

/// A log line cut to a length a CI summary can show.
fn short(line: &str) -> String {
    const MAX: usize = 600;
    match line.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

fn report(outcomes: &[Outcome], built: f64, total: f64) {
    println!("\n{:<17} {:>12} {:>10} {:>8}  result", "target", "executions", "exec/s", "corpus");
    for o in outcomes {
        let rate = o.execs as f64 / o.secs.max(0.001);
        let result = match &o.crash {
            None => "ok".to_string(),
            Some((artifact, _)) if o.gating => format!("CRASH {}", artifact.display()),
            Some((artifact, _)) => format!("FAILED, report only: {}", artifact.display()),
        };
        println!("{:<17} {:>12} {:>10.0} {:>8}  {result}", o.name, o.execs, rate, o.corpus);
    }
    for o in outcomes {
        if let Some((artifact, why)) = &o.crash {
            println!(
                "\n{}: {}\n{why}\nreproduce: fuzz/target/x86_64-unknown-linux-gnu/release/{} {}",
                o.name,
                artifact.display(),
                o.name,
                artifact.display()
            );
        }
    }
    println!("\nbuild {built:.0} s, build and runs {total:.0} s");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_report_carries_the_panic_message_and_the_input() {
        let log = "INFO: Seed: 1\n\
            thread '<unnamed>' (7) panicked at fuzz_targets/sql_agree.rs:29:5:\n\
            assertion `left == right` failed: the two paths disagree on \"SELECT 1\"\n  left: A\n\
            ==7== ERROR: libFuzzer: deadly signal\n\
            Test unit written to fuzz/artifacts/sql_agree/crash-ab\n\
            Base64: U0VMRUNUIDE=\n";
        let (artifact, why) = crash_of(log, Path::new("fuzz.log"));
        assert_eq!(artifact, PathBuf::from("fuzz/artifacts/sql_agree/crash-ab"));
        let lines: Vec<&str> = why.lines().collect();
        assert_eq!(lines.len(), 4, "{why}");
        assert!(lines[1].contains("disagree on \"SELECT 1\""), "{why}");
        assert_eq!(lines[3], "Base64: U0VMRUNUIDE=");
    }

    #[test]
    fn a_long_line_is_cut() {
        let long = "x".repeat(2000);
        assert_eq!(short(&long).chars().count(), 601);
        assert_eq!(short("abc"), "abc");
    }
}
