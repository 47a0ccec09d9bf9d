//! `cargo xtask demo`: a multi-zone cluster end to end — three MariaDB servers playing the servers
//! of the embedded demo topology (s1 zone1/idc1 and s2 zone2/idc2 in region sh, s3 in the
//! read-only zone3/idc3 in region hz), the sample schema on each, the gateway routing with that
//! topology, and a scripted session printing, per statement, the EXPLAIN ROUTE summary and where
//! the statement actually ran; then wait for Ctrl-C and stop everything by PID.

mod general_log;
mod route_summary;
mod schema;
mod session;

use std::time::Duration;

use anyhow::{bail, Context};
use gateway_tests::{Gateway, MariaDb};

use crate::mariadb_cli::Login;
use crate::process::{self, interrupted};
use crate::workspace;
use general_log::LogServer;

/// Options of `cargo xtask demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Exit right after the scripted session instead of waiting for Ctrl-C (for CI); the exit
    /// status is non-zero if a statement of the session failed.
    #[arg(long)]
    once: bool,
    /// Also fail if a statement ran anywhere else than where EXPLAIN ROUTE (or its transaction)
    /// put it.
    #[arg(long)]
    strict: bool,
    /// Gateway listen port on 127.0.0.1; a free port is used if this one is taken.
    #[arg(long, default_value_t = 2883)]
    port: u16,
}

/// Zone, IDC and region of s1, s2, s3 in the embedded demo topology.
const PLACES: [&str; 3] = ["zone1 idc1 sh", "zone2 idc2 sh", "zone3 idc3 hz, read-only"];

/// Runs the demo.
pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    workspace::use_release_gateway()?;
    process::trap_interrupts();

    println!("==> starting 3 MariaDB servers with the sample schema (HASH t0, t1, KEY t_key, RANGE t_range)");
    let mut servers = Vec::new();
    for (i, place) in PLACES.iter().enumerate() {
        let name = format!("s{}", i + 1);
        let db = MariaDb::start(&format!("demo-{name}")).with_context(|| format!("starting MariaDB {name}"))?;
        schema::load(&db).with_context(|| format!("loading the sample schema on {name}"))?;
        println!("    {name} ({place}): 127.0.0.1:{} (pid {})", db.port(), db.pid());
        servers.push(db);
        check_interrupt()?;
    }

    let port = process::port_or_free(args.port)?;
    if port != args.port {
        println!("    port {} is taken, the gateway listens on {port} instead", args.port);
    }
    println!("==> starting the gateway on 127.0.0.1:{port} (topology \"demo\", idc1)");
    let mut gateway = Gateway::start(&gateway_config(port, &servers)?)?;
    print_endpoints(&servers, &gateway, port);

    println!(
        "==> scripted session through the gateway (\"ran on\": the servers whose general log holds the statement)"
    );
    let logs: Vec<LogServer> = servers
        .iter()
        .enumerate()
        .map(|(i, db)| LogServer {
            name: format!("s{}", i + 1),
            addr: db.addr().to_string(),
            path: db.general_log_path(),
        })
        .collect();
    let outcome = session::run(port, &logs)
        .with_context(|| format!("the demo session; gateway log:\n{}", gateway.log_tail(2000)))?;
    let verdict = summarize(&outcome);

    if args.once {
        println!("==> --once: stopping gateway (pid {}) and servers", gateway.pid());
        return verdict.check(args.strict);
    }
    println!("Press Ctrl-C to stop the gateway and the servers.");
    while !interrupted() {
        if !gateway.is_alive() {
            bail!("the gateway exited; log:\n{}", gateway.log_tail(2000));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("\n==> stopping gateway (pid {}) and servers", gateway.pid());
    drop(gateway);
    drop(servers);
    verdict.check(args.strict)
}

/// The demo's gateway configuration: `[backend]` s1, routing on the embedded topology with the
/// servers' real addresses, the gateway in idc1, a fixed tie-breaking seed.
fn gateway_config(port: u16, servers: &[MariaDb]) -> anyhow::Result<String> {
    let mut config = workspace::gateway_config(port, servers[0].addr())?.to_toml();
    let addrs: Vec<String> =
        servers.iter().enumerate().map(|(i, d)| format!("s{} = \"{}\"", i + 1, d.addr())).collect();
    config.push_str(&format!(
        "\n[routing]\ntopology = \"demo\"\nidc = \"idc1\"\nseed = 1\nserver_addresses = {{ {} }}\n",
        addrs.join(", ")
    ));
    Ok(config)
}

fn print_endpoints(servers: &[MariaDb], gateway: &Gateway, port: u16) {
    println!();
    for (i, db) in servers.iter().enumerate() {
        let backend = if i == 0 { "   <- [backend]" } else { "" };
        println!("  MariaDB s{}      127.0.0.1:{}  pid {}{backend}", i + 1, db.port(), db.pid());
        println!("                  general log {}", db.general_log_path().display());
    }
    println!("  gateway         127.0.0.1:{port}  pid {}", gateway.pid());
    println!("                  config {}", gateway.dir().join("gateway.toml").display());
    println!("                  log    {}", gateway.log_path().display());
    let login =
        Login { user: "demo".into(), password: "demo".into(), database: Some("test".into()), ..Login::root(port) };
    println!("  connect         {}   (root with an empty password works too)", login.shell_command());
    println!();
}

/// The session's verdict: failed statements, and statements that ran elsewhere than routed.
struct Verdict {
    errors: usize,
    misrouted: usize,
}

impl Verdict {
    fn check(&self, strict: bool) -> anyhow::Result<()> {
        if self.errors > 0 {
            bail!("{} statement(s) of the demo session failed", self.errors);
        }
        if strict && self.misrouted > 0 {
            bail!("--strict: {} statement(s) ran elsewhere than EXPLAIN ROUTE said", self.misrouted);
        }
        Ok(())
    }
}

fn summarize(o: &session::Outcome) -> Verdict {
    println!();
    println!(
        "{} statements, {} failed; {}/{} ran exactly where EXPLAIN ROUTE (or their transaction) put them.",
        o.statements, o.errors, o.matched, o.judged
    );
    if o.ran_on == ["s1"] && o.matched < o.judged {
        println!("Everything ran on s1, the [backend]: this gateway build forwards every statement there;");
        println!("the routes above are what per-statement routing will follow.");
    }
    Verdict { errors: o.errors, misrouted: o.judged - o.matched }
}

fn check_interrupt() -> anyhow::Result<()> {
    if interrupted() {
        bail!("interrupted");
    }
    Ok(())
}
