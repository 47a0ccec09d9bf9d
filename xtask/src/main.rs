//! Developer tasks: `cargo xtask demo` (the embedded default, end to end) and `cargo xtask bench`
//! (sysbench direct vs haproxy vs gateway, side by side), `cargo xtask bench-dataplane` (bulk
//! throughput and round-trip latency: direct, haproxy, gateway userspace / spliced / direct route).

mod bench;
mod bench_cgroup;
mod bench_dataplane;
mod bench_memory;
mod dataplane_client;
mod demo;
mod dist;
mod fuzz;
mod fuzz_seeds;
mod gen_collation;
mod haproxy;
mod mariadb_cli;
mod process;
mod relay;
mod relay_ring;
mod relay_tokio;
mod relay_uring;
mod report;
mod sysbench;
mod workspace;

use clap::{Parser, Subcommand};

/// Developer tasks for the gateway workspace.
#[derive(Parser, Debug)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build the gateway, start a three-zone cluster of local MariaDB servers (s1–s3) and the
    /// gateway routing over it, run a scripted session showing where each statement ran, then
    /// wait for Ctrl-C.
    Demo(demo::DemoArgs),
    /// sysbench against one MariaDB: direct, through haproxy (TCP mode) and through the gateway,
    /// interleaved, for point_select and read_write in both prepared-statement modes.
    Bench(bench::BenchArgs),
    /// Data-plane benchmark (root): 1 GiB result-set throughput and COM_PING latency for direct,
    /// haproxy, gateway in userspace, gateway spliced and direct route. Writes
    /// target/bench/dataplane.md.
    BenchDataplane(bench_dataplane::DataplaneArgs),
    /// The gateway's resident memory per idle 1:1 session, for each `[listen] session_io`
    /// (epoll, io_uring): one MariaDB, `--sessions` idle clients. Writes target/bench/memory.md.
    BenchMemory(bench_memory::MemoryArgs),
    /// The measuring client of bench-dataplane (run as a child process).
    #[command(hide = true)]
    DataplaneClient(dataplane_client::ClientArgs),
    /// Derive the utf8mb4_general_ci sort table from a real MariaDB and write it under
    /// gateway/src/partition/.
    GenCollation(gen_collation::GenCollationArgs),
    /// Build the release tarball target/dist/gateway-<version>-<arch>.tar.gz: the binary, the
    /// documented example configuration and the systemd unit.
    Dist(dist::DistArgs),
    /// Build the libFuzzer targets of fuzz/ with the pinned nightly, seed their corpora from the
    /// repository, run each for `--time` seconds; fails naming the input of any crash.
    Fuzz(fuzz::FuzzArgs),
    /// The least a userspace TCP relay can do (a thread per direction, blocking read and write):
    /// the `relay` target of `bench --cpu`.
    Relay(relay::RelayArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::BenchDataplane(args) => bench_dataplane::run(&args),
        Command::BenchMemory(args) => bench_memory::run(&args),
        Command::DataplaneClient(args) => dataplane_client::run(&args),
        Command::GenCollation(args) => gen_collation::run(&args),
        Command::Dist(args) => dist::run(&args),
        Command::Fuzz(args) => fuzz::run(&args),
        Command::Relay(args) => relay::run(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` prints the context chain on one line, without the backtrace that
            // `RUST_BACKTRACE=1` would add to a returned error.
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
