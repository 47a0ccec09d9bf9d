//! Builds `gateway-ebpf` for `bpfel-unknown-none` with aya-build and leaves the object in OUT_DIR.
use anyhow::{anyhow, Context as _};
use aya_build::{Package, Toolchain};

/// Dated nightly with `rust-src` that scripts/setup.sh installs (docs/dataplane.md §1).
const DEFAULT_EBPF_TOOLCHAIN: &str = "nightly-2026-05-19";

fn main() -> anyhow::Result<()> {
    let meta = cargo_metadata::MetadataCommand::new().no_deps().exec().context("cargo metadata")?;
    let ebpf = meta
        .packages
        .into_iter()
        .find(|p| p.name.as_str() == "gateway-ebpf")
        .ok_or_else(|| anyhow!("gateway-ebpf not in workspace"))?;
    let root = ebpf.manifest_path.parent().ok_or_else(|| anyhow!("gateway-ebpf manifest has no parent directory"))?;
    println!("cargo:rerun-if-env-changed=GATEWAY_EBPF_TOOLCHAIN");
    let toolchain = std::env::var("GATEWAY_EBPF_TOOLCHAIN").unwrap_or_else(|_| DEFAULT_EBPF_TOOLCHAIN.to_owned());
    aya_build::build_ebpf(
        [Package { name: ebpf.name.as_str(), root_dir: root.as_str(), ..Default::default() }],
        Toolchain::Custom(&toolchain),
    )
    .with_context(|| format!("building gateway-ebpf with toolchain {toolchain}"))?;
    // With AYA_BUILD_SKIP set, aya-build wrote nothing: leave an empty placeholder so that
    // include_bytes_aligned! compiles; the dataplane refuses to load an empty object. The
    // placeholder also replaces an object left in OUT_DIR by an earlier build, so a skip build
    // never embeds a stale program that no longer matches the userspace side.
    let out_dir = std::env::var_os("OUT_DIR").ok_or_else(|| anyhow!("OUT_DIR not set"))?;
    let out = std::path::PathBuf::from(out_dir).join("gateway");
    if aya_build_skipped() || !out.exists() {
        std::fs::write(&out, []).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

/// Same test as aya-build 0.2.0: `AYA_BUILD_SKIP` is `1` or `true` (any case).
fn aya_build_skipped() -> bool {
    std::env::var_os("AYA_BUILD_SKIP").is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}
