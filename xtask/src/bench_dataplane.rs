//! `cargo xtask bench-dataplane`: the data-plane benchmark of docs/dataplane.md §6 with a real MariaDB
//! and a MySQL client: bulk result throughput (a 1 GiB result set, `SELECT REPEAT('x', 1048576)
//! FROM seq_1_to_1024`, read and discarded) and COM_PING round-trip latency, for
//!
//! * `direct` — client to MariaDB;
//! * `haproxy` — haproxy TCP mode;
//! * `gateway` — the gateway relaying in userspace;
//! * `spliced` — the gateway with `[dataplane] splice = true, passthrough_users = ["root"]`;
//! * `direct-route` — the client in an application cgroup dials an intercepted address on which
//!   nothing listens (127.0.0.2:<server port>); the gateway (mode `cgroup`, `direct_route = true`,
//!   `direct_route_targets`) has connect4 send it straight to MariaDB.
//!
//! The measuring client is this binary re-executed (`dataplane-client`), so it can join the cgroup
//! before opening its socket. Needs root (cgroups, BPF). Writes `target/bench/dataplane.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use gateway_tests::{Gateway, MariaDb, MariaDbOptions};

use crate::bench_cgroup::{self, BenchCgroups};
use crate::process::{self, Proc};
use crate::{haproxy, workspace};

/// Options of `cargo xtask bench-dataplane`.
#[derive(clap::Args, Debug)]
pub struct DataplaneArgs {
    /// Rows of 1 MiB in the bulk result set (1024 = 1 GiB).
    #[arg(long, default_value_t = 1024)]
    bulk_rows: u32,
    /// Timed COM_PING round trips per run.
    #[arg(long, default_value_t = 20000)]
    pings: u32,
    /// Rounds (each runs every column once); medians are reported.
    #[arg(long, default_value_t = 1)]
    rounds: u32,
}

const COLUMNS: [&str; 5] = ["direct", "haproxy", "gateway", "spliced", "direct-route"];

/// One client run: its `key=value` output, or why it failed; plus a note on the path.
#[derive(Debug, Default, Clone)]
struct Run {
    values: BTreeMap<String, String>,
    failure: Option<String>,
    note: String,
}

impl Run {
    fn num(&self, key: &str) -> Option<f64> {
        self.values.get(key).and_then(|v| v.parse().ok())
    }
}

/// Everything started for the benchmark; dropped in reverse order (gateways, haproxy, MariaDB,
/// then the cgroups).
struct Rig {
    _cgroups: BenchCgroups,
    db: MariaDb,
    _haproxy: Proc,
    haproxy_port: u16,
    userspace: Gateway,
    spliced: Gateway,
    steering: Option<Gateway>,
    steering_note: String,
    app_cgroup: PathBuf,
    vip: SocketAddr,
}

/// Runs the benchmark.
pub fn run(args: &DataplaneArgs) -> anyhow::Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        bail!("bench-dataplane needs root (cgroups and BPF for the spliced and direct-route columns); run it as root");
    }
    process::trap_interrupts();
    let bin = workspace::use_release_gateway()?;
    let dir = workspace::scratch_dir("bench")?;
    let rig = start_rig(&dir, &bin)?;
    let rounds = args.rounds.max(1);
    let mut runs: BTreeMap<&str, Vec<Run>> = BTreeMap::new();
    for round in 1..=rounds {
        for col in COLUMNS {
            if process::interrupted() {
                bail!("interrupted");
            }
            let run = run_column(&rig, col, args);
            match &run.failure {
                Some(f) => println!("[round {round}] {col:<12} FAILED: {f}"),
                None => println!(
                    "[round {round}] {col:<12} bulk {:>8.1} MB/s  ping p50 {:>6.1} µs  p99 {:>6.1} µs  {:>6.0} req/s  {}",
                    run.num("bulk_mb_s").unwrap_or(f64::NAN),
                    run.num("ping_p50_us").unwrap_or(f64::NAN),
                    run.num("ping_p99_us").unwrap_or(f64::NAN),
                    run.num("ping_rps").unwrap_or(f64::NAN),
                    run.note
                ),
            }
            runs.entry(col).or_default().push(run);
        }
    }
    let md = markdown(args, &rig, &runs);
    println!("\n{}", table(&runs));
    let path = dir.join("dataplane.md");
    std::fs::write(&path, md).with_context(|| format!("writing {}", path.display()))?;
    println!("written to {}", path.display());
    let failed: Vec<&str> =
        runs.iter().filter(|(_, r)| r.iter().any(|r| r.failure.is_some())).map(|(c, _)| *c).collect();
    if !failed.is_empty() {
        bail!("failed columns: {}", failed.join(", "));
    }
    Ok(())
}

fn start_rig(dir: &Path, bin: &Path) -> anyhow::Result<Rig> {
    let cgroups = BenchCgroups::create()?;
    println!("==> starting MariaDB");
    let opts = MariaDbOptions { general_log: false, ..MariaDbOptions::default() };
    let db = MariaDb::start_with("bench-dp", opts).context("starting MariaDB")?;
    println!("    {} (pid {})", db.addr(), db.pid());
    let haproxy_port = process::free_port()?;
    let haproxy = haproxy::start(dir, haproxy_port, db.port())?;
    let base = |port: u16, level: &str| {
        format!(
            "[listen]\naddress = \"127.0.0.1:{port}\"\n\n[backend]\naddress = \"{}\"\n\n\
             [[users]]\nname = \"root\"\npassword = \"\"\n\n[log]\nlevel = \"{level}\"\n",
            db.addr()
        )
    };
    let userspace = Gateway::start(&base(process::free_port()?, "warn"))?;
    let spliced_toml = format!(
        "{}\n[dataplane]\nsplice = true\npassthrough_users = [\"root\"]\n",
        base(process::free_port()?, "info")
    );
    let spliced = Gateway::start(&spliced_toml)?;
    // The direct-route column: an intercepted address where nothing listens, routed to MariaDB.
    let vip: SocketAddr = format!("127.0.0.2:{}", db.port()).parse()?;
    let steering_toml = format!(
        "{}\n[dataplane]\nmode = \"cgroup\"\napp_cgroups = [\"{}\"]\nintercept = [\"{vip}\"]\n\
         direct_route = true\ndirect_route_targets = {{ \"{vip}\" = \"{}\" }}\n",
        base(process::free_port()?, "info"),
        cgroups.app.display(),
        db.addr()
    );
    let wrapper = bench_cgroup::wrapper(dir, &cgroups.gateway, bin)?;
    let (steering, steering_note) = match Gateway::start_with_bin(&wrapper, &steering_toml) {
        Ok(gw) => {
            let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
            if log.contains("direct routes") {
                (Some(gw), String::new())
            } else {
                (None, format!("direct routes not installed; gateway log:\n{}", gw.log_tail(1500)))
            }
        }
        Err(e) => (None, format!("starting the steering gateway: {e:#}")),
    };
    let app_cgroup = cgroups.app.clone();
    Ok(Rig {
        _cgroups: cgroups,
        db,
        _haproxy: haproxy,
        haproxy_port,
        userspace,
        spliced,
        steering,
        steering_note,
        app_cgroup,
        vip,
    })
}

fn run_column(rig: &Rig, col: &str, args: &DataplaneArgs) -> Run {
    let (addr, cgroup) = match col {
        "direct" => (rig.db.addr(), None),
        "haproxy" => (SocketAddr::from(([127, 0, 0, 1], rig.haproxy_port)), None),
        "gateway" => (rig.userspace.addr(), None),
        "spliced" => (rig.spliced.addr(), None),
        _ => {
            if rig.steering.is_none() {
                return Run { failure: Some(rig.steering_note.clone()), ..Run::default() };
            }
            (rig.vip, Some(rig.app_cgroup.as_path()))
        }
    };
    let splice_log_before = splice_reports(&rig.spliced).len();
    let mut run = client(addr, cgroup, args);
    if run.failure.is_some() {
        return run;
    }
    let proxied = run.values.get("no_proxy").map(String::as_str) != Some("true");
    run.note = match col {
        "direct" | "direct-route" if proxied => {
            run.failure = Some(format!("the server saw a proxy, not the client: {:?}", run.values));
            return run;
        }
        "direct-route" => format!("peer={} (dialled), server saw the client itself", run.values["peer"]),
        "spliced" => splice_note(rig, splice_log_before, &mut run),
        _ => String::new(),
    };
    run
}

/// The splice report of the session that just ended (the gateway logs it at close).
fn splice_note(rig: &Rig, before: usize, run: &mut Run) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let reports = splice_reports(&rig.spliced);
        if let Some(r) = reports.get(before) {
            let field = |k: &str| {
                r.split_whitespace().find_map(|w| w.strip_prefix(&format!("{k}="))).unwrap_or("?").to_string()
            };
            let kernel = field("bytes_redirected_to_client");
            if kernel == "0" || kernel == "?" {
                run.failure = Some(format!("not spliced: {r}"));
            }
            return format!("kernel bytes to client {kernel}, userspace bytes {}", field("bytes_userspace"));
        }
        let log = std::fs::read_to_string(rig.spliced.log_path()).unwrap_or_default();
        if let Some(line) = log.lines().find(|l| l.contains("splice disabled") || l.contains("cannot splice")) {
            run.failure = Some(format!("relayed in userspace: {line}"));
            return String::new();
        }
        if Instant::now() > deadline {
            run.failure = Some("the spliced gateway logged no `splice ended` for the session".into());
            return String::new();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn splice_reports(gw: &Gateway) -> Vec<String> {
    let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    log.lines().filter(|l| l.contains("splice ended")).map(str::to_string).collect()
}

/// Runs the measuring client as a child process (in `cgroup` when given).
fn client(addr: SocketAddr, cgroup: Option<&Path>, args: &DataplaneArgs) -> Run {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return Run { failure: Some(format!("current_exe: {e}")), ..Run::default() },
    };
    let mut cmd = Command::new(exe);
    cmd.arg("dataplane-client")
        .arg("--addr")
        .arg(addr.to_string())
        .arg("--bulk-rows")
        .arg(args.bulk_rows.to_string())
        .arg("--pings")
        .arg(args.pings.to_string());
    if let Some(cg) = cgroup {
        cmd.arg("--cgroup").arg(cg);
    }
    match cmd.output() {
        Ok(out) => {
            let values = gateway_tests::clients::parse_kv(&String::from_utf8_lossy(&out.stdout));
            let failure = (!out.status.success())
                .then(|| format!("client failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
            Run { values, failure, note: String::new() }
        }
        Err(e) => Run { failure: Some(format!("running the client: {e}")), ..Run::default() },
    }
}

fn median(runs: &[Run], key: &str) -> Option<f64> {
    let mut v: Vec<f64> = runs.iter().filter(|r| r.failure.is_none()).filter_map(|r| r.num(key)).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

fn table(runs: &BTreeMap<&str, Vec<Run>>) -> String {
    let mut t = String::from(
        "| column | bulk MB/s | vs direct | ping p50 µs | ping p99 µs | req/s | notes |\n|---|---|---|---|---|---|---|\n",
    );
    let direct_bulk = runs.get("direct").and_then(|r| median(r, "bulk_mb_s"));
    for col in COLUMNS {
        let rs = runs.get(col).map(Vec::as_slice).unwrap_or(&[]);
        let f = |k: &str, prec: usize| median(rs, k).map_or("—".into(), |v| format!("{v:.prec$}"));
        let ratio = median(rs, "bulk_mb_s").zip(direct_bulk).map_or("—".into(), |(v, d)| format!("{:.2}", v / d));
        let notes = match rs.iter().find_map(|r| r.failure.clone()) {
            Some(fail) => format!("FAILED: {}", fail.replace('\n', " ").replace('|', "/")),
            None => rs.last().map(|r| r.note.clone()).unwrap_or_default(),
        };
        let _ = writeln!(
            t,
            "| {col} | {} | {ratio} | {} | {} | {} | {notes} |",
            f("bulk_mb_s", 1),
            f("ping_p50_us", 1),
            f("ping_p99_us", 1),
            f("ping_rps", 0)
        );
    }
    t
}

fn markdown(args: &DataplaneArgs, rig: &Rig, runs: &BTreeMap<&str, Vec<Run>>) -> String {
    let mut md =
        String::from("# Data-plane benchmark: direct vs haproxy vs gateway (userspace, spliced, direct route)\n\n");
    let _ = writeln!(
        md,
        "One MariaDB ({}), haproxy TCP mode (:{}), release gateway. Bulk: `SELECT REPEAT('x', 1048576) \
         FROM seq_1_to_{}` ({} MiB) read and discarded by a raw client, MB = 10^6 bytes of MySQL \
         packets. Latency: {} COM_PING round trips (after 500 untimed), one connection. Direct route: \
         the client runs in cgroup {} and dials {} (nothing listens there), which connect4 sends \
         straight to MariaDB. {} round(s), medians. Loopback on a 2-vCPU VM: read as ratios.\n",
        rig.db.addr(),
        rig.haproxy_port,
        args.bulk_rows,
        args.bulk_rows,
        args.pings,
        rig.app_cgroup.display(),
        rig.vip,
        args.rounds.max(1)
    );
    md.push_str(&table(runs));
    md
}
