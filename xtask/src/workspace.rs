//! Scratch directories, the release gateway build (run by the harness's `Gateway::start` through
//! `GATEWAY_BIN`) and the gateway configuration shared by the demo and the benchmark.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context};
use gateway_tests::{GatewayConfig, UserEntry};

/// A scratch directory under the target directory (`target/<name>`), created if missing.
pub fn scratch_dir(name: &str) -> anyhow::Result<PathBuf> {
    let dir = gateway_tests::target_dir().join(name);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Runs `cargo build --release -p gateway` and returns the path of the built binary.
pub fn build_release_gateway() -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    println!("==> cargo build --release -p gateway");
    let status = Command::new(&cargo)
        .args(["build", "--release", "-p", "gateway"])
        .current_dir(gateway_tests::workspace_root())
        .status()
        .with_context(|| format!("running {} build", PathBuf::from(&cargo).display()))?;
    if !status.success() {
        bail!("cargo build --release -p gateway failed ({status})");
    }
    let bin = gateway_tests::target_dir().join("release").join("gateway");
    if !bin.is_file() {
        bail!("build succeeded but {} does not exist", bin.display());
    }
    Ok(bin)
}

/// Builds the release gateway and points the harness at it (`GATEWAY_BIN`), unless `GATEWAY_BIN`
/// is already set, in which case that binary is used as is. Returns the binary used.
pub fn use_release_gateway() -> anyhow::Result<PathBuf> {
    if let Some(bin) = std::env::var_os("GATEWAY_BIN") {
        let bin = PathBuf::from(bin);
        println!("==> using GATEWAY_BIN={}", bin.display());
        return Ok(bin);
    }
    let bin = build_release_gateway()?;
    // Set before any harness thread or child exists (set_var is not thread-safe).
    std::env::set_var("GATEWAY_BIN", &bin);
    Ok(bin)
}

/// The gateway configuration of the demo and the benchmark: listener, one backend, `root` (empty
/// password), `demo`/`demo` (default database `demo`), log level `warn`.
pub fn gateway_config(listen_port: u16, backend: SocketAddr) -> anyhow::Result<GatewayConfig> {
    let mut config = GatewayConfig::new(backend)?.user(UserEntry::native("demo", "demo").with_database("demo"));
    config.listen_port = listen_port;
    config.log_level = "warn".into();
    Ok(config)
}
