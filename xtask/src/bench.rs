//! `cargo xtask bench`: sysbench against one MariaDB directly, through haproxy (TCP mode) and
//! through the gateway, interleaved round by round, reported as a table with gateway ratios.
//! Beside the 1:1 `gateway`, two more gateways in front of the same server: `routed` (routing mode,
//! a topology declaring the sbtest tables partitioned, every partition led by that server: the cost
//! of routing, not of a different layout) and, as root, `spliced` (1:1 with the sockmap splice).
//! `--cpu`: each proxy's CPU per statement, and the machine's (see [`cpu`]). `--cluster`: the gateway routes over three
//! servers instead (see [`cluster`]). `--tls`: every target over TLS, plus the plain gateway as a
//! fourth target (see [`tls`]).

mod cluster;
mod cpu;
mod page;
mod profile;
mod relays;
mod segments;
mod syscalls;
mod tls;

use anyhow::{bail, Context};
use gateway_tests::tls::ServerTlsFiles;
use gateway_tests::{Gateway, MariaDb, MariaDbOptions};
use relays::start_relay;
use tls::Certificates;

use crate::mariadb_cli::{self, Format, Login};
use crate::process::{self, interrupted, Proc};
use crate::relay::RelayKind;
use crate::report::{self, Sample};
use crate::sysbench::{self, Endpoint, Outcome, RunSpec};
use crate::{haproxy, workspace};

/// Options of `cargo xtask bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Seconds per sysbench run.
    #[arg(long, default_value_t = 10)]
    time: u64,
    /// sysbench client threads.
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Rounds; each round runs direct, haproxy and gateway back to back. Medians are reported.
    #[arg(long, default_value_t = 1)]
    rounds: u32,
    /// sysbench tests to run.
    #[arg(long, value_delimiter = ',', default_value = "oltp_point_select,oltp_read_write")]
    tests: Vec<String>,
    /// `--db-ps-mode` values to run.
    #[arg(long, value_delimiter = ',', default_value = "auto,disable")]
    ps_modes: Vec<String>,
    /// Three servers with the same sbtest data and the gateway in routing mode over them (static
    /// topology written at bench time, sbtest tables HASH(id) with leaders on s1 and s2). direct
    /// and haproxy stay on s1: haproxy is an L4 proxy, it cannot split a session's statements
    /// across servers, so one server is the honest baseline of a 1:1 proxy.
    #[arg(long)]
    cluster: bool,
    /// Samples each gateway with `perf record` (when installed) during its runs (the whole machine
    /// for `direct` and `spliced`, whose work is the kernel's), into
    /// `target/bench/perf-<target>-<test>-<ps mode>-r<round>.data` (read with `perf report -i <file>`).
    #[arg(long)]
    profile: bool,
    /// TLS everywhere: the servers get a certificate made at bench time (CA and certificate under
    /// `target/bench/tls/`), sysbench runs with `--mysql-ssl=on` as a `REQUIRE SSL` account;
    /// direct is TLS to MariaDB, haproxy passes the TLS bytes through, and the gateway
    /// terminates TLS from sysbench and opens TLS (`verify_ca`) to the server. A fourth target,
    /// `gateway-plain`, is a second gateway without TLS (root over plain TCP, as without
    /// `--tls`) in the same rounds; `gw/plain` is the TLS gateway's QPS over it.
    #[arg(long)]
    tls: bool,
    /// Reports each proxy process's CPU time per statement (user + system time from
    /// `/proc/<pid>/stat` over the run, divided by the statements sysbench sent), and its ratio to
    /// haproxy's, next to QPS; the whole machine's busy time per statement (`/proc/stat`), with
    /// what each proxy adds to direct's, split into the servers' CPU, sysbench's and the rest (with
    /// one server and perf, also the server's system calls and context switches); the TCP
    /// segments the machine sent per statement (`/proc/net/snmp`); and, on one server without TLS,
    /// the relays that read no MySQL (`cargo xtask relay`): `relay` (the least a userspace relay
    /// can do, blocking threads), `relay-tokio` (one tokio thread on epoll, as the gateway),
    /// `relay-hybrid` (the same with its socket calls on io_uring) and `relay-uring` (one thread
    /// on io_uring alone).
    #[arg(long)]
    cpu: bool,
    /// A second gateway binary (say, a build of an earlier commit) to compare against in the same
    /// run: targets `gateway-base` and `routed-base` are the 1:1 and routed gateways on that
    /// binary with the default session threads (io_uring), each run right after its counterpart
    /// (`gateway-uring`, `routed-uring`) in every round, and the `qps/base`,
    /// `cpu/base` and `user/base` columns are the median per-round ratios of the current build's
    /// figures to the baseline's. Not with `--cluster` or `--tls`.
    #[arg(long, value_name = "PATH")]
    baseline_bin: Option<std::path::PathBuf>,
    /// Runs only these targets (say `routed-uring,haproxy` for a longer profile of one gateway);
    /// every target of the rig when empty. Ratios to a target left out stay empty.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// Targets with `--cluster`.
const CLUSTER_TARGETS: [&str; 3] = ["direct", "haproxy", "gateway"];
/// With `--tls`: [`TARGETS`] over TLS, then the plain gateway.
const TLS_TARGETS: [&str; 4] = ["direct", "haproxy", "gateway", "gateway-plain"];

/// A gateway of the rig and its configuration (to restart it with).
struct RigGateway {
    gateway: Gateway,
    config: String,
    /// The binary when it is not `GATEWAY_BIN` (`--baseline-bin`).
    bin: Option<std::path::PathBuf>,
}

impl RigGateway {
    fn start(config: String, bin: Option<&std::path::Path>) -> anyhow::Result<RigGateway> {
        let gateway = match bin {
            Some(b) => Gateway::start_with_bin(b, &config)?,
            None => Gateway::start(&config)?,
        };
        Ok(RigGateway { gateway, config, bin: bin.map(std::path::Path::to_path_buf) })
    }

    /// Restarts the gateway if an earlier run made it exit; returns a note if it did.
    fn revive(&mut self, name: &str) -> anyhow::Result<Option<String>> {
        if self.gateway.is_alive() {
            return Ok(None);
        }
        let tail = self.gateway.log_tail(1500);
        let tail = if tail.trim().is_empty() { "(log empty)".to_string() } else { format!("log tail:\n{tail}") };
        let note = format!("{name} (pid {}) had exited, restarting it; {tail}", self.gateway.pid());
        self.gateway = RigGateway::start(self.config.clone(), self.bin.as_deref())?.gateway;
        Ok(Some(note))
    }
}

/// The gateways of `--baseline-bin`.
struct Baseline {
    gateway: RigGateway,
    routed: RigGateway,
}

/// Everything the benchmark started, stopped (by PID) when dropped: gateways, haproxy, then MariaDB.
struct Rig {
    gateway: RigGateway,
    /// With `--tls`: the gateway without TLS, target `gateway-plain`.
    plain_gateway: Option<RigGateway>,
    /// Without `--cluster` and `--tls`: the gateway routing over the one server, its sessions on
    /// tokio's epoll reactor (`[listen] session_io = "epoll"`), target `routed`.
    routed: Option<RigGateway>,
    /// The same on io_uring session threads (the default), target `routed-uring`.
    routed_uring: Option<RigGateway>,
    /// Without `--cluster` and `--tls`, as root: the 1:1 gateway splicing sessions, target `spliced`.
    spliced: Option<RigGateway>,
    /// Without `--cluster` and `--tls`: the 1:1 gateway on io_uring session threads
    /// (`[listen] session_io = "io_uring"`), target `gateway-uring`.
    uring: Option<RigGateway>,
    /// With `--baseline-bin`: the 1:1 and routed gateways on that binary (`gateway-base`,
    /// `routed-base`).
    base: Option<Baseline>,
    haproxy: Proc,
    haproxy_port: u16,
    /// With `--cpu`, without `--cluster` and `--tls`: the relays that read no MySQL, in front of
    /// the one server, each with its port (targets `relay`, `relay-tokio`, `relay-hybrid`,
    /// `relay-uring`; see [`RelayKind`]).
    relays: Vec<(RelayKind, Proc, u16)>,
    /// The servers: one, or s1–s3 with `--cluster`. direct and haproxy use the first.
    dbs: Vec<MariaDb>,
    /// With `--tls`: the certificate files.
    tls: Option<Certificates>,
}

impl Rig {
    fn targets(&self) -> Vec<&'static str> {
        if self.tls.is_some() {
            return TLS_TARGETS.to_vec();
        }
        let mut t = CLUSTER_TARGETS.to_vec();
        // Right after haproxy: the relays that do not read MySQL.
        let after_haproxy = t.iter().position(|&x| x == "haproxy").map_or(t.len(), |i| i + 1);
        for (i, (kind, ..)) in self.relays.iter().enumerate() {
            t.insert(after_haproxy + i, kind.target());
        }
        t.extend(self.uring.as_ref().map(|_| "gateway-uring"));
        t.extend(self.base.as_ref().map(|_| "gateway-base"));
        t.extend(self.routed.as_ref().map(|_| "routed"));
        t.extend(self.routed_uring.as_ref().map(|_| "routed-uring"));
        t.extend(self.base.as_ref().map(|_| "routed-base"));
        t.extend(self.spliced.as_ref().map(|_| "spliced"));
        t
    }

    /// Where sysbench connects for `target`: root over plain TCP, or the TLS account with `--tls`.
    fn endpoint(&mut self, target: &str) -> Endpoint<'_> {
        let port = match target {
            "direct" => self.dbs[0].port(),
            "haproxy" => self.haproxy_port,
            t if t.starts_with("relay") => return Endpoint::root(self.relay(t).map_or(0, |r| r.2)),
            // Every gateway but the one under test with `--tls` takes root over plain TCP.
            "gateway-plain" | "gateway-uring" | "routed" | "routed-uring" | "spliced" | "gateway-base"
            | "routed-base" => return Endpoint::root(self.gateway_of(target).map_or(0, |g| g.gateway.port())),
            _ => self.gateway.gateway.port(),
        };
        match &self.tls {
            Some(certs) => tls::endpoint(port, certs),
            None => Endpoint::root(port),
        }
    }

    /// The gateway process behind `target`, if it is one.
    fn gateway_of(&mut self, target: &str) -> Option<&mut RigGateway> {
        match target {
            "gateway" => Some(&mut self.gateway),
            "gateway-plain" => self.plain_gateway.as_mut(),
            "routed" => self.routed.as_mut(),
            "routed-uring" => self.routed_uring.as_mut(),
            "spliced" => self.spliced.as_mut(),
            "gateway-uring" => self.uring.as_mut(),
            "gateway-base" => self.base.as_mut().map(|b| &mut b.gateway),
            "routed-base" => self.base.as_mut().map(|b| &mut b.routed),
            _ => None,
        }
    }

    /// The relay behind `target`, if it is one.
    fn relay(&self, target: &str) -> Option<&(RelayKind, Proc, u16)> {
        self.relays.iter().find(|r| r.0.target() == target)
    }

    /// The process whose CPU time `target` measures: the proxy, or none for `direct`.
    fn proxy_pid(&mut self, target: &str) -> Option<u32> {
        if target == "haproxy" {
            return Some(self.haproxy.pid());
        }
        if let Some((_, relay, _)) = self.relay(target) {
            return Some(relay.pid());
        }
        self.gateway_of(target).map(|g| g.gateway.pid())
    }
}

/// Runs the benchmark.
pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    process::trap_interrupts();
    let tests =
        known_names(&args.tests, &["oltp_point_select", "oltp_read_write", "oltp_read_only", "oltp_write_only"])?;
    let ps_modes = known_names(&args.ps_modes, &["auto", "disable"])?;
    let rounds = args.rounds.max(1);
    workspace::use_release_gateway()?;
    let dir = workspace::scratch_dir("bench")?;
    if args.baseline_bin.is_some() && (args.cluster || args.tls) {
        bail!("--baseline-bin compares the 1:1 and routed gateways on one server: not with --cluster or --tls");
    }
    let mut rig = start_rig(&dir, args.cluster, args.tls)?;
    if args.cpu && !args.cluster && !args.tls {
        for kind in RelayKind::ALL {
            match start_relay(&dir, &rig.dbs[0], kind) {
                Ok((relay, port)) => rig.relays.push((kind, relay, port)),
                // Where io_uring is off, the relays on it are left out.
                Err(e) if kind.uses_io_uring() => println!("SKIP: target {}: {e:#}", kind.target()),
                Err(e) => return Err(e),
            }
        }
    }
    if let Some(bin) = &args.baseline_bin {
        rig.base = Some(start_baseline(&dir, bin, &rig.dbs[0])?);
    }
    let targets: Vec<&str> =
        rig.targets().into_iter().filter(|t| args.only.is_empty() || args.only.iter().any(|o| o == t)).collect();
    if targets.is_empty() {
        bail!("--only {:?} names none of the rig's targets {:?}", args.only, rig.targets());
    }
    let targets = targets.as_slice();
    let width = targets.iter().map(|t| t.len()).max().unwrap_or(0);

    let total = tests.len() * ps_modes.len() * rounds as usize * targets.len();
    let mut samples = Vec::with_capacity(total);
    'outer: for &test in &tests {
        for &ps_mode in &ps_modes {
            let spec = RunSpec { test, ps_mode, threads: args.threads, time: args.time };
            for round in 1..=rounds {
                for &target in targets {
                    if interrupted() {
                        println!("==> interrupted: reporting what has run");
                        break 'outer;
                    }
                    if let Some(gw) = rig.gateway_of(target) {
                        if let Some(note) = gw.revive(target)? {
                            println!("    {note}");
                        }
                    }
                    let before = (innodb_deadlocks(&rig.dbs), cluster::questions(&rig.dbs));
                    let pid = rig.proxy_pid(target);
                    let perf = profile::Scope::of(target, pid)
                        .filter(|_| args.profile)
                        .map(|scope| profile::start(&dir, &spec, (target, round), scope));
                    let counting = pid.filter(|_| args.cpu).and_then(|pid| {
                        syscalls::start(&dir, &format!("{target}-{}-{}-r{round}", spec.test, spec.ps_mode), pid)
                    });
                    // One server: count its calls too (what a proxy's round trip costs it, docs/performance.md §4).
                    let server_counting = (args.cpu && rig.dbs.len() == 1).then(|| {
                        let name = format!("server-{target}-{}-{}-r{round}", spec.test, spec.ps_mode);
                        syscalls::start(&dir, &name, rig.dbs[0].pid())
                    });
                    let cpu_before = pid.filter(|_| args.cpu).and_then(cpu::read);
                    let host_before = args.cpu.then(cpu::host).flatten();
                    let db_pids: Vec<u32> = rig.dbs.iter().map(MariaDb::pid).collect();
                    let server_before = args.cpu.then(|| cpu::read_all(&db_pids)).flatten();
                    let client_before = args.cpu.then(cpu::children).flatten();
                    let segs_before = args.cpu.then(segments::read).flatten();
                    let mut outcome = sysbench::run(&spec, &rig.endpoint(target));
                    let client_after = args.cpu.then(cpu::children).flatten();
                    let server_after = args.cpu.then(|| cpu::read_all(&db_pids)).flatten();
                    let segs_after = args.cpu.then(segments::read).flatten();
                    let host_after = args.cpu.then(cpu::host).flatten();
                    let cpu_after = pid.filter(|_| args.cpu).and_then(cpu::read);
                    let counts =
                        counting.and_then(syscalls::finish).and_then(|c| syscalls::per_statement(c, outcome.queries));
                    (outcome.syscalls, outcome.switches) = (counts.map(|c| c.0), counts.map(|c| c.1));
                    let server_counts = server_counting
                        .flatten()
                        .and_then(syscalls::finish)
                        .and_then(|c| syscalls::per_statement(c, outcome.queries));
                    (outcome.server_syscalls, outcome.server_switches) =
                        (server_counts.map(|c| c.0), server_counts.map(|c| c.1));
                    if let Some(p) = perf {
                        println!("    {}", profile::finish(p));
                    }
                    let cpu = cpu_before.zip(cpu_after).and_then(|(b, a)| cpu::per_statement_us(b, a, outcome.queries));
                    (outcome.cpu_us, outcome.cpu_user_us) = (cpu.map(|c| c.0), cpu.map(|c| c.1));
                    let per = |b: Option<cpu::CpuTime>, a: Option<cpu::CpuTime>| {
                        b.zip(a).and_then(|(b, a)| cpu::per_statement_us(b, a, outcome.queries)).map(|c| c.0)
                    };
                    (outcome.server_us, outcome.client_us) =
                        (per(server_before, server_after), per(client_before, client_after));
                    outcome.host_us = host_before
                        .zip(host_after)
                        .and_then(|(b, a)| cpu::host_per_statement_us(b, a, outcome.queries));
                    outcome.segments =
                        segs_before.zip(segs_after).and_then(|(b, a)| segments::per_statement(b, a, outcome.queries));
                    outcome.deadlocks = before.0.zip(innodb_deadlocks(&rig.dbs)).map(|(b, a)| a.saturating_sub(b));
                    let questions = cluster::questions(&rig.dbs);
                    if rig.dbs.len() > 1 {
                        outcome.spread = cluster::spread(&before.1, &questions);
                    } else if args.cpu {
                        outcome.server_questions = cluster::per_statement(&before.1, &questions, outcome.queries);
                    }
                    println!(
                        "[{:>2}/{total}] {}",
                        samples.len() + 1,
                        progress_line(&spec, round, (target, width), &outcome)
                    );
                    samples.push(Sample { test, ps_mode, target, round, outcome });
                }
            }
        }
    }

    let table = report::summarize(&samples);
    println!();
    print!("{}", table.to_text());
    let md_path = dir.join("result.md");
    std::fs::write(&md_path, page::result_markdown(args, &rig, &table, &samples))
        .with_context(|| format!("writing {}", md_path.display()))?;
    println!("\nwritten to {}", md_path.display());
    // The harness deletes the gateway's directory when it stops it; keep its log for post-mortem.
    let _ = std::fs::copy(rig.gateway.gateway.log_path(), dir.join("gateway.log"));
    for name in ["gateway-plain", "gateway-uring", "routed", "routed-uring", "spliced", "gateway-base", "routed-base"] {
        if let Some(gw) = rig.gateway_of(name) {
            let _ = std::fs::copy(gw.gateway.log_path(), dir.join(format!("{name}.log")));
        }
    }
    drop(rig);

    let bad = samples.iter().filter(|s| s.outcome.is_bad()).count();
    if bad > 0 {
        bail!("{bad} of {} sysbench runs failed or reported errors", samples.len());
    }
    if samples.len() < total {
        bail!("interrupted after {} of {total} runs", samples.len());
    }
    Ok(())
}

/// Starts MariaDB (one, or three with `cluster`; fresh `sbtest` prepared on each), haproxy (in
/// front of the first) and the gateway (1:1 in front of the first, or routing over all three);
/// with `tls`, certificates first, TLS on every server, and the plain gateway too.
fn start_rig(dir: &std::path::Path, cluster: bool, tls: bool) -> anyhow::Result<Rig> {
    let certs = if tls { Some(tls::certificates(dir)?) } else { None };
    let files = certs.as_ref().map(|c| &c.server);
    let count = if cluster { cluster::SERVERS } else { 1 };
    let mut dbs = Vec::with_capacity(count);
    for i in 1..=count {
        let name = if cluster { format!("bench-s{i}") } else { "bench".to_string() };
        dbs.push(start_server(&name, files)?);
    }

    let haproxy_port = process::free_port()?;
    let haproxy = haproxy::start(dir, haproxy_port, dbs[0].port())?;
    println!(
        "==> haproxy on 127.0.0.1:{haproxy_port} (pid {}), config {}, log {}",
        haproxy.pid(),
        dir.join("haproxy.cfg").display(),
        haproxy.log().display()
    );

    let (gateway, plain_gateway) = match files {
        None => (start_gateway(dir, "gateway", &dbs, cluster, None)?, None),
        Some(f) => {
            let gw = start_gateway(dir, "gateway", &dbs, cluster, Some(f))?;
            (gw, Some(start_gateway(dir, "gateway-plain", &dbs, cluster, None)?))
        }
    };

    let (routed, routed_uring, spliced, uring) = if cluster || files.is_some() {
        (None, None, None, None)
    } else {
        let db = &dbs[0];
        (
            Some(start_named(dir, "routed", routed_config(dir, db, "epoll")?, None)?),
            Some(start_named(dir, "routed-uring", routed_config(dir, db, "io_uring")?, None)?),
            start_spliced_gateway(dir, db)?,
            Some(start_uring_gateway(dir, db)?),
        )
    };

    let mut checks = vec![("haproxy", haproxy_port), ("gateway", gateway.gateway.port())];
    if let Some(plain) = &plain_gateway {
        checks.push(("gateway-plain", plain.gateway.port()));
    }
    for (name, gw) in
        [("routed", &routed), ("routed-uring", &routed_uring), ("spliced", &spliced), ("gateway-uring", &uring)]
    {
        if let Some(gw) = gw {
            checks.push((name, gw.gateway.port()));
        }
    }
    for (name, port) in checks {
        if files.is_some() && name != "gateway-plain" {
            tls::check(name, port);
        } else if let Err(e) = mariadb_cli::run(&Login::root(port), "SELECT 1", Format::Batch) {
            println!("    warning: SELECT 1 through {name} failed: {e:#}");
        }
    }
    Ok(Rig {
        gateway,
        plain_gateway,
        routed,
        routed_uring,
        spliced,
        uring,
        base: None,
        haproxy,
        haproxy_port,
        relays: Vec::new(),
        dbs,
        tls: certs,
    })
}

/// The `routed` and `routed-uring` targets' configuration: routing mode over the one server (see
/// [`cluster::single_server_routing`]), its sessions on `session_io`.
fn routed_config(dir: &std::path::Path, db: &MariaDb, session_io: &str) -> anyhow::Result<String> {
    let port = process::free_port()?;
    let mut config = workspace::gateway_config(port, db.addr())?;
    config.listen_extra.retain(|l| !l.starts_with("session_io"));
    config.listen_extra.push(format!("session_io = \"{session_io}\""));
    let mut toml = config.to_toml();
    toml.push_str(&cluster::single_server_routing(dir, db)?);
    Ok(toml)
}

/// The `gateway-uring` target: 1:1 with its sessions on io_uring session threads (the default).
fn start_uring_gateway(dir: &std::path::Path, db: &MariaDb) -> anyhow::Result<RigGateway> {
    let mut config = workspace::gateway_config(process::free_port()?, db.addr())?;
    config.listen_extra.retain(|l| !l.starts_with("session_io"));
    config.listen_extra.push("session_io = \"io_uring\"".into());
    start_named(dir, "gateway-uring", config.to_toml(), None)
}

/// `--baseline-bin`: the 1:1 and routed gateways again, on `bin`, with the same settings.
fn start_baseline(dir: &std::path::Path, bin: &std::path::Path, db: &MariaDb) -> anyhow::Result<Baseline> {
    anyhow::ensure!(bin.is_file(), "--baseline-bin {}: no such file", bin.display());
    let port = process::free_port()?;
    let one = workspace::gateway_config(port, db.addr())?.to_toml();
    let gateway = start_named(dir, "gateway-base", one, Some(bin))?;
    let routed = start_named(dir, "routed-base", routed_config(dir, db, "io_uring")?, Some(bin))?;
    for (name, gw) in [("gateway-base", &gateway), ("routed-base", &routed)] {
        if let Err(e) = mariadb_cli::run(&Login::root(gw.gateway.port()), "SELECT 1", Format::Batch) {
            println!("    warning: SELECT 1 through {name} failed: {e:#}");
        }
    }
    Ok(Baseline { gateway, routed })
}

/// The `spliced` target: 1:1 with `[dataplane] splice = true` for root (sysbench's account), so
/// every sysbench session is spliced after login. Needs root and BPF; `None` (with a printed
/// SKIP) otherwise.
fn start_spliced_gateway(dir: &std::path::Path, db: &MariaDb) -> anyhow::Result<Option<RigGateway>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("    SKIP: target spliced: the sockmap splice needs root");
        return Ok(None);
    }
    let port = process::free_port()?;
    let mut toml = workspace::gateway_config(port, db.addr())?.to_toml();
    toml.push_str("\n[dataplane]\nsplice = true\npassthrough_users = [\"root\"]\n");
    start_named(dir, "spliced", toml, None).map(Some)
}

/// Writes `<dir>/<name>.toml` and starts a gateway on it (`bin`, or `GATEWAY_BIN`).
fn start_named(
    dir: &std::path::Path,
    name: &str,
    toml: String,
    bin: Option<&std::path::Path>,
) -> anyhow::Result<RigGateway> {
    std::fs::write(dir.join(format!("{name}.toml")), &toml)?;
    let gw = RigGateway::start(toml, bin)?;
    println!("==> {name} on {} (pid {}), log {}", gw.gateway.addr(), gw.gateway.pid(), gw.gateway.log_path().display());
    Ok(gw)
}

/// Writes `<dir>/<name>.toml` and starts a gateway on it: 1:1 in front of the first server, or
/// routing over all of them with `cluster`; TLS on both legs with `tls`.
fn start_gateway(
    dir: &std::path::Path,
    name: &str,
    dbs: &[MariaDb],
    cluster: bool,
    tls: Option<&ServerTlsFiles>,
) -> anyhow::Result<RigGateway> {
    let port = process::free_port()?;
    let mut config = workspace::gateway_config(port, dbs[0].addr())?;
    // `gateway` is the 1:1 gateway on tokio's epoll reactor; `gateway-uring`, beside it, is the
    // default (`session_io = "io_uring"`), as `routed` and `routed-uring` are. TLS sessions use
    // epoll either way.
    config.listen_extra.retain(|l| !l.starts_with("session_io"));
    config.listen_extra.push("session_io = \"epoll\"".into());
    if let Some(files) = tls {
        config = tls::gateway_config(config, files);
    }
    let mut toml = config.to_toml();
    if cluster {
        toml.push_str(&cluster::routing_section(dir, dbs)?);
    }
    start_named(dir, name, toml, None)
}

/// One MariaDB without general log, with `sbtest` freshly prepared (the same rows on every server:
/// sysbench's random seed is fixed); with `tls`, serving that certificate and with the TLS account.
fn start_server(name: &str, tls: Option<&ServerTlsFiles>) -> anyhow::Result<MariaDb> {
    println!("==> starting MariaDB {name}");
    // No general log: writing every statement to a file would dominate the measurement.
    let opts = MariaDbOptions { general_log: false, tls: tls.cloned(), ..MariaDbOptions::default() };
    let db = MariaDb::start_with(name, opts).with_context(|| format!("starting MariaDB {name}"))?;
    println!("    127.0.0.1:{} (pid {})", db.port(), db.pid());
    db.cli().sql("DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest")?;
    if tls.is_some() {
        tls::create_account(&db)?;
    }
    println!("==> sysbench prepare on {name}: {} tables x {} rows", sysbench::TABLES, sysbench::TABLE_SIZE);
    sysbench::prepare(db.port())?;
    Ok(db)
}

/// The sum of the servers' `Innodb_deadlocks` counters, read directly (not through a proxy).
fn innodb_deadlocks(dbs: &[MariaDb]) -> Option<u64> {
    dbs.iter()
        .map(|db| {
            let out = db.cli().sql("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'").ok()?;
            out.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .sum()
}

/// One run's line; `width` pads the target name (the longest of the run's targets).
fn progress_line(spec: &RunSpec, round: u32, (target, width): (&str, usize), o: &Outcome) -> String {
    let head = format!("{:<17} ps={:<7} round {round} {target:<width$}", spec.test, spec.ps_mode);
    match &o.failure {
        Some(f) => format!("{head} FAILED: {f}"),
        None => {
            let deadlocks = match o.deadlocks {
                Some(d) if d > 0 => format!(" (server counted {d} deadlock{})", if d == 1 { "" } else { "s" }),
                _ => String::new(),
            };
            let spread = o.spread.as_ref().map(|s| format!("  [{s}]")).unwrap_or_default();
            format!("{head} {:>9.0} QPS  p95 {:>6.2} ms  errors {}{deadlocks}{spread}", o.qps, o.p95_ms, o.errors)
        }
    }
}

/// Checks names against `allowed` and returns the matching `'static` strings.
fn known_names(given: &[String], allowed: &[&'static str]) -> anyhow::Result<Vec<&'static str>> {
    given
        .iter()
        .map(|g| {
            allowed
                .iter()
                .copied()
                .find(|a| a == g)
                .with_context(|| format!("unknown value {g:?}; expected one of {}", allowed.join(", ")))
        })
        .collect()
}
