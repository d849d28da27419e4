//! Project tasks. `cargo xtask test`: every test, the Python package's too (`test.rs`).
//!
//! `cargo xtask build-ptx`: compiles `kernels-gpu` with rustc's `nvptx64-nvidia-cuda` target
//! for `sm_70` (Volta and every later GPU), writes the PTX the library ships
//! (`reduce/kernels/kernels_gpu.ptx`, stamped with the hash of the kernel sources) and a copy in
//! `target/ptx/kernels_gpu.<arch>.ptx`, and — where `ptxas` is found — assembles it for `--arch`
//! into a cubin and prints each kernel's registers, spills, stack and the largest block its
//! registers allow, failing where a kernel built for one block size cannot launch with it.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

// The library's build script computes the same hash (it ships beside it in the package).
#[path = "../../reduce/build_support/source_hash.rs"]
mod source_hash;
mod test;

#[derive(Parser)]
#[command(about = "Project tasks for reduce-rs")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the kernels to PTX (and a cubin, where ptxas is found).
    BuildPtx {
        /// GPU architecture of the cubin and the resource report, sm_70 to sm_121 (a wrong one
        /// is answered with the list); the PTX itself targets sm_70 and runs on every GPU from
        /// Volta on.
        #[arg(long, default_value = "sm_90")]
        arch: String,
        /// Only build the PTX; do not look for ptxas.
        #[arg(long)]
        no_ptxas: bool,
        /// An experiment's `--cfg` (e.g. `reduce_exp_fence`): the PTX goes to
        /// `target/ptx-<cfg>/` only, never to the library's shipped PTX.
        #[arg(long = "cfg", value_name = "NAME")]
        cfgs: Vec<String>,
    },
    /// Run every test: `cargo test`, then the Python package built from python/ into a fresh
    /// virtual environment (target/python-venv) and its pytest suite.
    Test {
        /// Only `cargo test`.
        #[arg(long)]
        no_python: bool,
        /// Passed on to `cargo test` (e.g. `-- --release` is `cargo test --release`).
        #[arg(last = true)]
        cargo_args: Vec<String>,
    },
}

/// Errors are printed as one `error:` line with their causes, not as `main`'s `Debug`, which
/// adds a backtrace wherever RUST_BACKTRACE is set.
fn main() -> ExitCode {
    let result = match Cli::parse().task {
        Task::BuildPtx {
            arch,
            no_ptxas,
            cfgs,
        } => build_ptx(&arch, no_ptxas, &cfgs),
        Task::Test {
            no_python,
            cargo_args,
        } => test::test(&workspace_root(), !no_python, &cargo_args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// The architecture the shipped PTX targets (the library's `build.rs` uses the same).
const PTX_ARCH: &str = "sm_70";

/// What `--arch` may name: the targets ptxas assembles for from Volta on (the PTX is built for
/// sm_70, so nothing older can run it).
const ARCHS: [&str; 15] = [
    "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100",
    "sm_101", "sm_103", "sm_110", "sm_120", "sm_121",
];

/// `--arch` in any case, checked before anything is built: an unknown one would otherwise fail
/// late, inside ptxas, after a full build.
fn check_arch(arch: &str) -> Result<String> {
    let arch = arch.trim().to_ascii_lowercase();
    if ARCHS.contains(&arch.as_str()) {
        Ok(arch)
    } else {
        bail!(
            "--arch {arch} is not supported; supported: {}",
            ARCHS.join(" ")
        )
    }
}

fn build_ptx(arch: &str, no_ptxas: bool, cfgs: &[String]) -> Result<()> {
    let arch = &check_arch(arch)?;
    let root = workspace_root();
    let experiment = cfgs.join("+");
    let build_dir = if cfgs.is_empty() {
        root.join("target/nvptx")
    } else {
        root.join(format!("target/nvptx-{experiment}"))
    };
    let deps = build_dir.join("nvptx64-nvidia-cuda/release/deps");

    eprintln!("building kernels-gpu for nvptx64-nvidia-cuda ({PTX_ARCH})");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args([
            "rustc",
            "--package",
            "reduce-rs-kernels",
            "--release",
            "--lib",
            "--crate-type",
            "rlib",
        ])
        .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .arg("--target-dir")
        .arg(&build_dir)
        .args([
            "--",
            "-C",
            &format!("target-cpu={PTX_ARCH}"),
            "-C",
            "debuginfo=0",
            "--emit=asm",
        ])
        .args(cfgs.iter().flat_map(|cfg| ["--cfg", cfg.as_str()]))
        .status()
        .context("running cargo rustc for the nvptx64-nvidia-cuda target")?;
    if !status.success() {
        bail!("compiling kernels-gpu to PTX failed (see the errors above)");
    }

    let ptx_source = newest_assembly(&deps)?;
    let ptx = std::fs::read_to_string(&ptx_source)
        .with_context(|| format!("reading {}", ptx_source.display()))?;
    let unresolved: Vec<&str> = ptx
        .lines()
        .filter(|line| line.starts_with(".extern .func"))
        .collect();
    if !unresolved.is_empty() {
        bail!(
            "the PTX calls functions it does not define, so the driver could not load it:\n  {}\n\
             (a panicking path in a kernel pulls in `core`'s panic machinery: keep kernels free of them)",
            unresolved.join("\n  ")
        );
    }
    let kernels = ptx
        .lines()
        .filter(|line| line.starts_with(".visible .entry"))
        .count();

    let hash = source_hash::kernel_source_hash(&root.join("kernels-gpu"))
        .context("hashing the kernel sources")?;
    // What the library embeds (and a dependent crate builds from, on stable Rust).
    let shipped_dir = root.join("reduce/kernels");
    let shipped = shipped_dir.join("kernels_gpu.ptx");
    if cfgs.is_empty() {
        std::fs::create_dir_all(&shipped_dir)
            .with_context(|| format!("creating {}", shipped_dir.display()))?;
        write(&shipped, &ptx)?;
        write(&shipped_dir.join("kernels_gpu.source-hash"), &hash)?;
    }

    // What `--ptx-dir target/ptx` loads, with the cubin beside it.
    let out_dir = if cfgs.is_empty() {
        root.join("target/ptx")
    } else {
        root.join(format!("target/ptx-{experiment}"))
    };
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let ptx_path = out_dir.join(format!("kernels_gpu.{arch}.ptx"));
    let cubin_path = ptx_path.with_extension("cubin");
    // A stale cubin must never sit next to fresh PTX.
    let _ = std::fs::remove_file(&cubin_path);
    write(&ptx_path, &ptx)?;
    write(&out_dir.join("kernels_gpu.source-hash"), &hash)?;
    // An experiment leaves the shipped PTX alone: name only what was written.
    let written = if cfgs.is_empty() {
        format!("{} and {}", shipped.display(), ptx_path.display())
    } else {
        ptx_path.display().to_string()
    };
    println!(
        "wrote {written} ({kernels} kernels, {} KiB, sources {hash})",
        ptx.len() / 1024
    );

    if no_ptxas {
        return Ok(());
    }
    let Some(ptxas) = find_ptxas(&root) else {
        println!(
            "ptxas not found (PATH, $PTXAS, $CUDA_HOME/bin, .tools/): skipped the cubin and the resource report"
        );
        println!("  the driver will JIT-compile the PTX at the first run instead");
        return Ok(());
    };
    let output = Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(&ptx_path)
        .arg("-o")
        .arg(&cubin_path)
        .output()
        .with_context(|| format!("running {}", ptxas.display()))?;
    let report = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("ptxas rejected {}:\n{report}", ptx_path.display());
    }
    let mut resources = parse_ptxas_report(&report);
    resources.sort_by(|a, b| a.name.cmp(&b.name));
    print_resources(&resources);
    check_built_blocks(&resources)?;
    println!(
        "wrote {} (assembled by {})",
        cubin_path.display(),
        ptxas.display()
    );
    Ok(())
}

fn write(path: &Path, contents: &str) -> Result<()> {
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

/// The `.s` file the last build wrote (old builds may have left others with other hashes).
fn newest_assembly(deps: &Path) -> Result<PathBuf> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(deps).with_context(|| format!("listing {}", deps.display()))? {
        let path = entry?.path();
        let is_kernels = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("kernels_gpu-") && n.ends_with(".s"));
        if is_kernels {
            let modified = path.metadata()?.modified()?;
            if newest.as_ref().is_none_or(|(time, _)| modified > *time) {
                newest = Some((modified, path));
            }
        }
    }
    newest
        .map(|(_, path)| path)
        .with_context(|| format!("no kernels_gpu-*.s in {}", deps.display()))
}

fn find_ptxas(root: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(path) = std::env::var_os("PTXAS") {
        candidates.push(PathBuf::from(path));
    }
    if let Some(paths) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&paths).map(|dir| dir.join("ptxas")));
    }
    if let Some(cuda) = std::env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(cuda).join("bin/ptxas"));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/ptxas"));
    // Where .ci/run unpacks PyPI's nvidia-cuda-nvcc wheel.
    candidates.push(root.join(".tools/nvcc/nvidia/cu13/bin/ptxas"));
    candidates.into_iter().find(|path| path.is_file())
}

#[derive(Debug, Default)]
struct KernelResources {
    name: String,
    registers: u32,
    spill_stores: u32,
    spill_loads: u32,
    stack_bytes: u32,
    barriers: u32,
}

/// Reads ptxas's `-v` lines: "Compiling entry function 'X'", then "N bytes stack frame, N bytes
/// spill stores, N bytes spill loads", then "Used N registers, used N barriers, ...".
fn parse_ptxas_report(report: &str) -> Vec<KernelResources> {
    let number_before = |line: &str, word: &str| -> u32 {
        line.split(',')
            .find(|part| part.contains(word))
            .and_then(|part| part.split_whitespace().find_map(|token| token.parse().ok()))
            .unwrap_or(0)
    };
    let mut kernels: Vec<KernelResources> = Vec::new();
    for line in report.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            kernels.push(KernelResources {
                name,
                ..Default::default()
            });
        } else if let Some(kernel) = kernels.last_mut() {
            if line.contains("stack frame") {
                kernel.stack_bytes = number_before(line, "stack frame");
                kernel.spill_stores = number_before(line, "spill stores");
                kernel.spill_loads = number_before(line, "spill loads");
            } else if line.contains("Used") && line.contains("registers") {
                kernel.registers = number_before(line, "registers");
                kernel.barriers = number_before(line, "barriers");
            }
        }
    }
    kernels
}

/// 32-bit registers one multiprocessor holds, from Volta to Blackwell.
const REGISTERS_PER_SM: u32 = 65_536;
/// A warp's registers are allocated in units of this many.
const REGISTER_ALLOCATION_UNIT: u32 = 256;
/// CUDA's largest block.
const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// The most threads per block a kernel of `registers` registers per thread launches with:
/// whole warps whose registers fit in one multiprocessor. The driver says the same
/// (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`): 68 registers, 896 threads on the H100.
fn max_block(registers: u32) -> u32 {
    let per_warp =
        (registers.max(1) * 32).div_ceil(REGISTER_ALLOCATION_UNIT) * REGISTER_ALLOCATION_UNIT;
    (REGISTERS_PER_SM / per_warp * 32).min(MAX_THREADS_PER_BLOCK)
}

/// The block an entry point is built for, where its name says (`reduce_v5_f32_sum_b256`).
fn built_block(name: &str) -> Option<u32> {
    name.rsplit_once("_b")?.1.parse().ok()
}

/// Fails where a kernel built for one block size has too many registers to launch with it:
/// that entry point could never run (the library's fallback to a smaller block picks another
/// entry point, and a block the user chooses would be refused).
fn check_built_blocks(kernels: &[KernelResources]) -> Result<()> {
    let too_large: Vec<String> = kernels
        .iter()
        .filter_map(|k| {
            let block = built_block(&k.name)?;
            let max = max_block(k.registers);
            (block > max).then(|| {
                format!(
                    "{} ({} registers: at most {max} threads)",
                    k.name, k.registers
                )
            })
        })
        .collect();
    if !too_large.is_empty() {
        bail!(
            "kernels that cannot launch with the block they are built for (the PTX above is written; the kernels need fewer registers):\n  {}",
            too_large.join("\n  ")
        );
    }
    Ok(())
}

fn print_resources(kernels: &[KernelResources]) {
    println!(
        "{:<34} {:>5} {:>9} {:>7} {:>7} {:>6} {:>8}",
        "kernel", "regs", "max-block", "spill-st", "spill-ld", "stack", "barriers"
    );
    for k in kernels {
        println!(
            "{:<34} {:>5} {:>9} {:>7} {:>7} {:>6} {:>8}",
            k.name,
            k.registers,
            max_block(k.registers),
            k.spill_stores,
            k.spill_loads,
            k.stack_bytes,
            k.barriers
        );
    }
    let spilling = kernels
        .iter()
        .filter(|k| k.spill_stores + k.spill_loads > 0)
        .count();
    let max_regs = kernels.iter().map(|k| k.registers).max().unwrap_or(0);
    let below_largest = kernels
        .iter()
        .filter(|k| max_block(k.registers) < MAX_THREADS_PER_BLOCK)
        .count();
    println!(
        "{} kernels assembled: up to {max_regs} registers, {spilling} with spills, {below_largest} whose registers allow fewer than {MAX_THREADS_PER_BLOCK} threads a block (max-block); shared memory is dynamic (sized per launch by the host's version table)",
        kernels.len()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_bound_the_block_as_the_driver_says() {
        // The H100's driver: 56 and 64 registers launch 1024 threads, 68 launch 896.
        assert_eq!(max_block(56), 1024);
        assert_eq!(max_block(64), 1024);
        assert_eq!(max_block(65), 896);
        assert_eq!(max_block(68), 896);
        assert_eq!(max_block(128), 512);
        assert_eq!(max_block(167), 384);
        assert_eq!(max_block(255), 256);
        assert_eq!(max_block(0), 1024);
    }

    #[test]
    fn a_kernel_built_for_a_block_it_cannot_launch_fails_the_build() {
        let kernel = |name: &str, registers| KernelResources {
            name: name.into(),
            registers,
            ..Default::default()
        };
        assert_eq!(built_block("reduce_v5_f32_sum_b256"), Some(256));
        assert_eq!(built_block("reduce_v8_bf16_argmax"), None);
        assert_eq!(built_block("columns_bf16_sum"), None);
        let fits = [
            kernel("reduce_v5_f32_sum_b1024", 64),
            kernel("reduce_v5_f32_sum_b512", 128),
            // Read at run time: the library picks a block that fits.
            kernel("reduce_v8_bf16_argmax", 72),
        ];
        assert!(check_built_blocks(&fits).is_ok());
        let error = check_built_blocks(&[kernel("reduce_v5_f32_sum_b1024", 68)])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("reduce_v5_f32_sum_b1024 (68 registers: at most 896 threads)"),
            "{error}"
        );
    }

    #[test]
    fn arch_is_checked_against_the_ptxas_targets() {
        assert_eq!(check_arch("sm_90").unwrap(), "sm_90");
        assert_eq!(check_arch("SM_90a").unwrap(), "sm_90a");
        let error = check_arch("sm_12").unwrap_err().to_string();
        assert!(error.contains("sm_70 sm_72"), "{error}");
        assert!(error.contains("sm_121") && !error.contains('\n'), "{error}");
        assert!(check_arch("90").is_err());
    }
}
