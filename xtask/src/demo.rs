//! `cargo xtask demo`: the embedded default end to end — three MariaDB servers playing the three
//! zones of the embedded demo topology, the gateway in front (backend: the first), a smoke query
//! and an EXPLAIN ROUTE through it, then wait for Ctrl-C and stop everything by PID.

use std::time::Duration;

use anyhow::{bail, Context};
use gateway_tests::{Gateway, MariaDb};

use crate::mariadb_cli::{self, Format, Login};
use crate::process::{self, interrupted};
use crate::workspace;

/// Options of `cargo xtask demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Exit right after the smoke query instead of waiting for Ctrl-C (for CI).
    #[arg(long)]
    once: bool,
    /// Gateway listen port on 127.0.0.1; a free port is used if this one is taken.
    #[arg(long, default_value_t = 2883)]
    port: u16,
}

/// Database, table and rows; idempotent.
const SEED_DATA: &str = "
CREATE DATABASE IF NOT EXISTS demo;
CREATE TABLE IF NOT EXISTS demo.items (
    id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, price DECIMAL(10,2) NOT NULL);
REPLACE INTO demo.items VALUES
    (1, 'apple', 1.20), (2, 'banana', 0.50), (3, 'cherry', 4.75), (4, 'durian', 12.00), (5, 'elderberry', 3.30);
CREATE DATABASE IF NOT EXISTS test;
CREATE TABLE IF NOT EXISTS test.t0 (c1 INT NOT NULL, c2 VARCHAR(64)) PARTITION BY HASH(c1) PARTITIONS 8;
";
/// The route the demo explains: the ODP documentation's strong-read example on the demo topology.
const EXPLAIN_SQL: &str = "EXPLAIN ROUTE SELECT /*+READ_CONSISTENCY(STRONG)*/ * FROM test.t0 WHERE c1=123\\G";
/// What the smoke query shows: which server answered, as whom, and the table.
const SMOKE_SQL: &str = "SELECT @@port AS backend_port, CURRENT_USER() AS user, DATABASE() AS db, VERSION() AS version; \
                         SELECT id, name, price FROM items ORDER BY id;";

/// Runs the demo.
pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    workspace::use_release_gateway()?;
    process::trap_interrupts();

    println!("==> starting 3 MariaDB servers (s1 zone1/idc1, s2 zone2/idc2, s3 read-only zone3/idc3)");
    let mut servers = Vec::new();
    for i in 1..=3 {
        let name = format!("demo-s{i}");
        let db = MariaDb::start(&name).with_context(|| format!("starting MariaDB {name}"))?;
        seed(&db).with_context(|| format!("seeding MariaDB {name}"))?;
        println!("    {name}: 127.0.0.1:{} (pid {})", db.port(), db.pid());
        servers.push(db);
        check_interrupt()?;
    }

    let backend = servers[0].addr();
    let port = process::port_or_free(args.port)?;
    if port != args.port {
        println!("    port {} is taken, the gateway listens on {port} instead", args.port);
    }
    println!("==> starting the gateway on 127.0.0.1:{port} (backend {backend})");
    let mut config = workspace::gateway_config(port, backend)?.to_toml();
    let addrs: Vec<String> = servers.iter().enumerate().map(|(i, d)| format!("s{} = \"{}\"", i + 1, d.addr())).collect();
    config.push_str(&format!(
        "\n[routing]\ntopology = \"demo\"\nidc = \"idc1\"\nserver_addresses = {{ {} }}\n",
        addrs.join(", ")
    ));
    let mut gateway = Gateway::start(&config)?;

    let login = Login { port, user: "demo".into(), password: "demo".into(), database: Some("demo".into()) };
    println!();
    println!("Demo is up:");
    for (i, db) in servers.iter().enumerate() {
        let role = if i == 0 { "   <- gateway backend" } else { "" };
        println!("  MariaDB s{}      127.0.0.1:{}  pid {}{role}", i + 1, db.port(), db.pid());
        println!("                  general log {}", db.general_log_path().display());
    }
    println!("  gateway         127.0.0.1:{port}  pid {}", gateway.pid());
    println!("                  config {}", gateway.dir().join("gateway.toml").display());
    println!("                  log    {}", gateway.log_path().display());
    println!();
    println!("Connect through the gateway (root with an empty password works too):");
    println!("  {}", login.shell_command());
    println!();

    println!("==> smoke query through the gateway");
    let result = mariadb_cli::run(&login, SMOKE_SQL, Format::Table)
        .with_context(|| format!("smoke query through the gateway; gateway log:\n{}", gateway.log_tail(2000)))?;
    print!("{result}");
    println!("==> {EXPLAIN_SQL}");
    let route = mariadb_cli::run(&login, EXPLAIN_SQL, Format::Table)
        .with_context(|| format!("EXPLAIN ROUTE through the gateway; gateway log:\n{}", gateway.log_tail(2000)))?;
    print!("{route}");

    if args.once {
        println!("==> --once: stopping gateway (pid {}) and servers", gateway.pid());
        return Ok(());
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
    Ok(())
}

/// Creates the demo data and the `demo`/`demo` account (root already logs in with an empty
/// password), then checks that `demo` can log in directly.
fn seed(db: &MariaDb) -> anyhow::Result<()> {
    db.cli().sql(SEED_DATA)?;
    db.create_user("demo", "demo")?;
    db.cli().user("demo").password("demo").database("demo").sql("SELECT COUNT(*) FROM items")
        .context("logging in directly as demo/demo")?;
    Ok(())
}

fn check_interrupt() -> anyhow::Result<()> {
    if interrupted() {
        bail!("interrupted");
    }
    Ok(())
}
