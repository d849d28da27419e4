//! Embeds the kernels' PTX in the library.
//!
//! The PTX built from `kernels-gpu` ships in `kernels/`, stamped with the hash of the kernel
//! sources it was built from. When the stamp matches the sources beside it (always, for a
//! checkout of a commit: CI checks that the shipped PTX is what the sources build), the library
//! embeds it and needs neither a nightly toolchain nor a `cargo xtask` step: a dependent crate
//! builds on stable Rust.
//!
//! When the kernel sources were edited, this script rebuilds the PTX with the pinned nightly
//! (as Rust-CUDA's `cuda_builder` does from `build.rs`): `rustc --target nvptx64-nvidia-cuda`,
//! in `OUT_DIR`. If that toolchain is missing, the library still builds and runs on the
//! simulator; the GPU backend then says why it has no kernels.

#[path = "build_support/source_hash.rs"]
mod source_hash;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shipped PTX and its stamp, relative to this crate.
const SHIPPED_PTX: &str = "kernels/kernels_gpu.ptx";
const SHIPPED_STAMP: &str = "kernels/kernels_gpu.source-hash";
/// The architecture the PTX targets: Volta and every later GPU (the driver compiles it for the
/// GPU it runs on).
const PTX_ARCH: &str = "sm_70";

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let kernels = manifest.join("../kernels-gpu");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    println!("cargo::rerun-if-changed={SHIPPED_PTX}");
    println!("cargo::rerun-if-changed={SHIPPED_STAMP}");
    println!("cargo::rerun-if-env-changed=REDUCE_NIGHTLY");
    let stamp = std::fs::read_to_string(manifest.join(SHIPPED_STAMP)).unwrap_or_default();

    // A published package (crates.io, `cargo package`) has no kernel sources beside it: the PTX
    // it ships was checked against them when the package was made (CI fails on stale PTX).
    if !kernels.join("Cargo.toml").is_file() {
        println!(
            "cargo::rustc-env=REDUCE_KERNEL_SOURCE_HASH={}",
            stamp.trim()
        );
        println!(
            "cargo::rustc-env=REDUCE_PTX_PATH={}",
            manifest.join(SHIPPED_PTX).display()
        );
        println!("cargo::rustc-env=REDUCE_PTX_STATUS=shipped");
        return;
    }
    println!("cargo::rerun-if-changed=../kernels-gpu/src");
    println!("cargo::rerun-if-changed=../kernels-gpu/Cargo.toml");

    let hash = source_hash::kernel_source_hash(&kernels).expect("hashing the kernel sources");
    println!("cargo::rustc-env=REDUCE_KERNEL_SOURCE_HASH={hash}");
    let (ptx, status) = if stamp.trim() == hash {
        (manifest.join(SHIPPED_PTX), "shipped".to_string())
    } else {
        match build_with_nightly(&manifest, &kernels, &out_dir) {
            Ok(ptx) => (ptx, "rebuilt".to_string()),
            Err(why) => {
                println!(
                    "cargo::warning=the kernel sources changed since {SHIPPED_PTX} was built, and rebuilding it failed: {why}; the GPU backend will have no kernels until `cargo xtask build-ptx` runs"
                );
                let empty = out_dir.join("no_kernels.ptx");
                std::fs::write(&empty, "").expect("writing to OUT_DIR");
                (empty, format!("missing: {why}"))
            }
        }
    };
    println!("cargo::rustc-env=REDUCE_PTX_PATH={}", ptx.display());
    println!("cargo::rustc-env=REDUCE_PTX_STATUS={status}");
}

/// The nightly toolchain named in the workspace's `rust-toolchain.toml` (or `$REDUCE_NIGHTLY`).
fn pinned_nightly(manifest: &Path) -> Result<String, String> {
    if let Ok(toolchain) = std::env::var("REDUCE_NIGHTLY") {
        return Ok(toolchain);
    }
    let file = manifest.join("../rust-toolchain.toml");
    let text =
        std::fs::read_to_string(&file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    text.lines()
        .find_map(|line| {
            let value = line
                .trim()
                .strip_prefix("channel")?
                .trim()
                .strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_string())
        })
        .ok_or_else(|| format!("no `channel` in {}", file.display()))
}

/// Compiles `kernels-gpu` for `nvptx64-nvidia-cuda` and returns the PTX it wrote.
fn build_with_nightly(manifest: &Path, kernels: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let toolchain = pinned_nightly(manifest)?;
    let target_dir = out_dir.join("nvptx");
    let mut command = Command::new("rustup");
    command
        .args([
            "run",
            &toolchain,
            "cargo",
            "rustc",
            "--release",
            "--lib",
            "--crate-type",
            "rlib",
        ])
        .arg("--manifest-path")
        .arg(kernels.join("Cargo.toml"))
        .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .arg("--target-dir")
        .arg(&target_dir)
        .args([
            "--",
            "-C",
            &format!("target-cpu={PTX_ARCH}"),
            "-C",
            "debuginfo=0",
            "--emit=asm",
        ]);
    // The outer build's settings are for the host: none of them may leak into the nvptx build.
    for variable in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTUP_TOOLCHAIN",
        "CARGO_MAKEFLAGS",
    ] {
        command.env_remove(variable);
    }
    let output = command
        .output()
        .map_err(|e| format!("running rustup run {toolchain} cargo: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Err(format!(
            "the nightly build of kernels-gpu failed (install it with `rustup toolchain install {toolchain} --component rust-src`): {}",
            last.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    let deps = target_dir.join("nvptx64-nvidia-cuda/release/deps");
    let newest = std::fs::read_dir(&deps)
        .map_err(|e| format!("listing {}: {e}", deps.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("kernels_gpu-") && n.ends_with(".s"))
        })
        .max_by_key(|path| path.metadata().and_then(|m| m.modified()).ok())
        .ok_or_else(|| format!("no kernels_gpu-*.s in {}", deps.display()))?;
    Ok(newest)
}
