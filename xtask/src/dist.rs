//! `cargo xtask dist`: the release tarball (binary, documented example config, systemd unit).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// Options of `cargo xtask dist`.
#[derive(clap::Args, Debug)]
pub struct DistArgs {
    /// Package this gateway binary instead of building `target/release/gateway`.
    #[arg(long)]
    pub bin: Option<PathBuf>,
}

/// Files of `dist/` copied into the tarball: (source under dist/, path inside the tarball, mode).
const FILES: &[(&str, &str, u32)] = &[
    ("gateway.example.toml", "etc/gateway.example.toml", 0o644),
    ("gateway.service", "lib/systemd/system/gateway.service", 0o644),
    ("README.dist.md", "README.dist.md", 0o644),
];

/// Builds the release gateway, checks the example config with it, and writes
/// `target/dist/gateway-<version>-<arch>.tar.gz`.
pub fn run(args: &DistArgs) -> anyhow::Result<()> {
    if std::env::var_os("AYA_BUILD_SKIP").is_some() {
        bail!("AYA_BUILD_SKIP is set: the binary would carry no eBPF programs; unset it");
    }
    let bin = match &args.bin {
        Some(bin) => bin.clone(),
        None => crate::workspace::build_release_gateway()?,
    };
    let name = format!("gateway-{}-{}", env!("CARGO_PKG_VERSION"), std::env::consts::ARCH);
    let out = gateway_tests::target_dir().join("dist");
    let stage = out.join(&name);
    if stage.exists() {
        std::fs::remove_dir_all(&stage).with_context(|| format!("removing {}", stage.display()))?;
    }
    let src = gateway_tests::workspace_root().join("dist");
    copy(&bin, &stage.join("bin/gateway"), 0o755)?;
    for (from, to, mode) in FILES {
        copy(&src.join(from), &stage.join(to), *mode)?;
    }
    check_config(&stage)?;
    let tarball = out.join(format!("{name}.tar.gz"));
    tar(&out, &name, &tarball)?;
    println!("==> {}", tarball.display());
    Ok(())
}

fn copy(from: &Path, to: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::copy(from, to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("chmod {}", to.display()))
}

/// The packaged binary must accept the packaged example configuration.
fn check_config(stage: &Path) -> anyhow::Result<()> {
    println!("==> bin/gateway check-config --config etc/gateway.example.toml");
    let status = Command::new(stage.join("bin/gateway"))
        .args(["check-config", "--config", "etc/gateway.example.toml"])
        .current_dir(stage)
        .status()
        .context("running bin/gateway check-config")?;
    if !status.success() {
        bail!("the example configuration does not validate ({status})");
    }
    Ok(())
}

/// `tar -czf`, with root ownership and sorted names so that the listing is stable.
fn tar(dir: &Path, name: &str, tarball: &Path) -> anyhow::Result<()> {
    let status = Command::new("tar")
        .args(["--sort=name", "--owner=0", "--group=0", "--numeric-owner", "-czf"])
        .arg(tarball)
        .arg(name)
        .current_dir(dir)
        .status()
        .context("running tar")?;
    if !status.success() {
        bail!("tar failed ({status})");
    }
    Ok(())
}
