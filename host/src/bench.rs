//! `host bench`: sweeps versions × sizes × element types on the GPU, with the read-only
//! bandwidth probe as the ceiling and (where `nvcc` is installed) CUB's `DeviceReduce::Sum` and
//! the CUDA C++ originals from `bench/cuda/reduce_ref.cu` beside them. Prints one table per
//! type and writes `bench.csv`, `bench.json` and one SVG chart per type.
//!
//! Small inputs fit in the 50 MB L2 cache: timed back to back on one buffer they would measure
//! the cache, not DRAM. So every run reads another copy of the input (the rotation continues
//! across versions and the probe, so no version re-reads what the previous one left in L2), and
//! a copy is only read again after at least [`ROTATION_BYTES`] of other copies; where that would
//! need more copies than there are runs, there is one copy per run and 256 MiB are written
//! after the upload so that the upload itself leaves nothing in L2.

use crate::chart::{self, Series};
use crate::element::{DType, HostElement, OpKind};
use crate::input::{Pattern, generate};
use crate::reference::Checked;
use crate::run::BackendChoice;
use crate::size::parse_len;
use crate::timing::{Timer, Timing};
use anyhow::{Context, Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use kernels_gpu::launch::{BLOCK_SIZES, DEFAULT_BLOCK_SIZE};
use reduce_rs::internals::{DeviceBuffer, Gpu};
use reduce_rs::ops::Sum;
use reduce_rs::plan::{self, LaunchShape, Sizes};
use reduce_rs::{Operation, Reducer, Version};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// A copy of the input is read again only after this many bytes of other copies (over 5× the
/// 50 MB L2 of an H100/H200), and this much is written to flush L2 after small uploads.
pub const ROTATION_BYTES: usize = 256 << 20;
/// GPU memory left free: the driver, the loaded module, the second process that times CUB.
pub const MEMORY_MARGIN: usize = 1 << 30;
pub const SIZES_DEFAULT: &str = "2^10..2^28";
/// A range's exponent step when none is given: every power of 4.
pub const DEFAULT_EXPONENT_STEP: u32 = 2;
pub const OUT_DEFAULT: &str = "bench-out";
/// The input every case reduces: random, seed 1 (the same as `host v5`'s default).
const SEED: u64 = 1;
/// The CUDA C++ reference program (relative to the workspace root).
pub const REDUCE_REF: &str = "bench/cuda/reduce_ref.cu";
/// The versions reduce_ref has a CUDA C++ twin of.
const CUDA_TWINS: [&str; 8] = ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"];
/// CUB takes an `int` count, and reduce_ref refuses larger sizes.
const REDUCE_REF_MAX_N: usize = i32::MAX as usize;

/// The options only `bench` reads; `check_flags` rejects them on other commands.
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Bench options (host bench)")]
pub struct BenchArgs {
    /// Element types: a comma list or `all` (= f32,f64,i32,u32) [default: all, or --dtype when given]
    #[arg(long, value_parser = parse_dtypes)]
    pub dtypes: Option<DTypeList>,
    /// Element counts: a comma list (2^20,1e6,32M) and/or ranges a..b[:s] of powers of two with
    /// exponent step s (default 2: 2^10..2^28 is every power of 4)
    #[arg(long, default_value = SIZES_DEFAULT, value_parser = parse_sizes)]
    pub sizes: SizeList,
    /// Versions in the order of the table (the speedup column compares each with the previous):
    /// a comma list (v0,v5,multi-add) or `all`
    #[arg(long, value_parser = parse_versions)]
    pub versions: Option<VersionList>,
    /// Directory for bench.csv, bench.json and bench_<dtype>.svg
    #[arg(long, default_value = OUT_DEFAULT)]
    pub out: PathBuf,
    /// Do not build and time CUB and the CUDA C++ versions (bench/cuda/reduce_ref.cu), even where nvcc is installed
    #[arg(long)]
    pub no_cub: bool,
}

/// clap ids of the flags only `bench` reads.
const BENCH_ONLY: [(&str, &str); 5] = [
    ("dtypes", "--dtypes"),
    ("sizes", "--sizes"),
    ("versions", "--versions"),
    ("out", "--out"),
    ("no_cub", "--no-cub"),
];

/// clap ids of the single-run flags that mean nothing to `bench`, and why.
const NOT_FOR_BENCH: [(&str, &str, &str); 4] = [
    ("n", "--n", "bench sweeps --sizes"),
    (
        "pattern",
        "--pattern",
        "bench reduces random input (seed 1)",
    ),
    ("seed", "--seed", "bench reduces random input (seed 1)"),
    (
        "schedule_seed",
        "--schedule-seed",
        "it shuffles the simulator, and bench runs on the GPU",
    ),
];

/// Refuses flags that the command would silently ignore: bench's own flags on other commands,
/// and single-run flags on bench. `given(id)` says whether the flag with that clap id was on
/// the command line.
pub fn check_flags(
    what: &str,
    given: impl Fn(&str) -> bool,
    op: OpKind,
    backend: BackendChoice,
) -> Result<(), String> {
    if what != "bench" {
        return match BENCH_ONLY.iter().find(|(id, _)| given(id)) {
            Some((_, flag)) => Err(format!("{flag} is a `bench` option (host bench {flag} …)")),
            None => Ok(()),
        };
    }
    if let Some((_, flag, why)) = NOT_FOR_BENCH.iter().find(|(id, _, _)| given(id)) {
        return Err(format!("{flag} does not apply to `bench`: {why}"));
    }
    if op != OpKind::Sum {
        return Err(format!(
            "bench times the sum only (its comparison, CUB's DeviceReduce::Sum, is a sum), not {op}"
        ));
    }
    if backend == BackendChoice::Sim {
        return Err("bench times the GPU; the simulator has no timing (`host all --backend sim` checks every version)".into());
    }
    if given("dtype") && given("dtypes") {
        return Err("give --dtype (one type) or --dtypes (a list), not both".into());
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DTypeList(pub Vec<DType>);

/// `all` or a comma list of f32, f64, i32, u32 (repeats dropped, order kept).
pub fn parse_dtypes(text: &str) -> Result<DTypeList, String> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(DTypeList(DType::ALL.to_vec()));
    }
    let mut dtypes = Vec::new();
    for item in text.split(',') {
        let dtype = DType::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(item.trim()))
            .ok_or_else(|| {
                format!(
                    "`{}` is not an element type (f32, f64, i32, u32, i64, u64, f16, bf16 or all)",
                    item.trim()
                )
            })?;
        if !dtypes.contains(&dtype) {
            dtypes.push(dtype);
        }
    }
    Ok(DTypeList(dtypes))
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<usize>);

/// A comma list of element counts (anything `parse_len` reads) and ranges `a..b[:s]`: the powers
/// of two from `a` to `b` (both powers of two), exponent step `s` (default 2). Sorted, repeats
/// dropped.
pub fn parse_sizes(text: &str) -> Result<SizeList, String> {
    let mut sizes = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!(
                "`{text}` has an empty entry (write e.g. 2^10..2^28 or 2^20,1e6)"
            ));
        }
        let Some((from, rest)) = item.split_once("..") else {
            let n = parse_len(item)?;
            if n == 0 {
                return Err("sizes must be at least 1".into());
            }
            sizes.push(n);
            continue;
        };
        let (to, step) = match rest.split_once(':') {
            Some((to, step)) => {
                let step: u32 = step
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&s| s >= 1)
                    .ok_or_else(|| {
                        format!("`{step}` in `{item}` is not an exponent step (a whole number ≥ 1)")
                    })?;
                (to, step)
            }
            None => (rest, DEFAULT_EXPONENT_STEP),
        };
        let exponent = |end: &str| -> Result<u32, String> {
            let n = parse_len(end)?;
            if n.is_power_of_two() {
                Ok(n.trailing_zeros())
            } else {
                Err(format!(
                    "`{end}` in `{item}`: a range runs over powers of two, so both ends must be powers of two (e.g. 2^10..2^28:2)"
                ))
            }
        };
        let (low, high) = (exponent(from)?, exponent(to)?);
        if low > high {
            return Err(format!("`{item}` is empty: its start is above its end"));
        }
        sizes.extend((low..=high).step_by(step as usize).map(|k| 1usize << k));
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(SizeList(sizes))
}

#[derive(Clone, Debug)]
pub struct VersionList(pub Vec<Version>);

/// `all` or a comma list of anything `Version::find` reads (repeats dropped, order kept).
pub fn parse_versions(text: &str) -> Result<VersionList, String> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(VersionList(Version::all().collect()));
    }
    let mut list: Vec<Version> = Vec::new();
    for item in text.split(',') {
        let version = Version::find(item).map_err(|e| e.to_string())?;
        if !list.contains(&version) {
            list.push(version);
        }
    }
    Ok(VersionList(list))
}

/// Everything a sweep needs, with the defaults applied.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub dtypes: Vec<DType>,
    pub sizes: Vec<usize>,
    pub versions: Vec<Version>,
    /// `None`: each version's tuned block size.
    pub block: Option<u32>,
    pub timing: Timing,
    pub out: PathBuf,
    pub cub: bool,
    pub ptx_dir: Option<PathBuf>,
}

impl BenchOptions {
    /// `dtype`: the common `--dtype`, when it was given on the command line.
    pub fn new(
        args: &BenchArgs,
        dtype: Option<DType>,
        block: Option<u32>,
        timing: Timing,
        ptx_dir: Option<PathBuf>,
    ) -> BenchOptions {
        let dtypes = match (&args.dtypes, dtype) {
            (Some(list), _) => list.0.clone(),
            (None, Some(one)) => vec![one],
            (None, None) => DType::ALL.to_vec(),
        };
        BenchOptions {
            dtypes,
            sizes: args.sizes.0.clone(),
            versions: args
                .versions
                .as_ref()
                .map_or_else(|| Version::all().collect(), |v| v.0.clone()),
            block,
            timing,
            out: args.out.clone(),
            cub: !args.no_cub,
            ptx_dir,
        }
    }

    /// Runs of one case: every version and the read probe, warm-up included.
    fn runs_per_case(&self) -> usize {
        (self.versions.len() + 1) * (self.timing.warmup + self.timing.repeat) as usize
    }
}

/// One (type, size) of the sweep and the input copies it rotates over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    pub dtype: DType,
    pub n: usize,
    pub copies: usize,
    /// No run reads data an earlier run of this case may have left in L2.
    pub l2_cold: bool,
}

impl Planned {
    fn bytes(&self) -> usize {
        self.n * self.dtype.size()
    }

    /// Fewer than `ROTATION_BYTES` of copies: the upload may still sit in L2, so flush it.
    fn needs_flush(&self) -> bool {
        self.copies * self.bytes() < ROTATION_BYTES
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub cases: Vec<Planned>,
    pub skipped: Vec<String>,
}

/// Which cases fit in `free_memory` and how many copies each gets: ⌈`ROTATION_BYTES` / input⌉,
/// at most one per run (`runs`), at least one, as many as fit beside the partials, the L2
/// flush buffer and `MEMORY_MARGIN`. Cases where not even one copy fits are skipped.
pub fn plan(
    dtypes: &[DType],
    sizes: &[usize],
    runs: usize,
    block: u32,
    free_memory: usize,
) -> Plan {
    let mut plan = Plan::default();
    for &dtype in dtypes {
        for &n in sizes {
            let Some(bytes) = n.checked_mul(dtype.size()) else {
                plan.skipped
                    .push(format!("{dtype} {}: too large to address", size_label(n)));
                continue;
            };
            // v0–v2's first pass writes one partial per `block` elements, into two buffers.
            let partials = 2 * (n.div_ceil(block as usize) + 1) * dtype.size();
            let reserved = MEMORY_MARGIN + ROTATION_BYTES + partials;
            let fit = free_memory.saturating_sub(reserved) / bytes.max(1);
            if fit == 0 {
                plan.skipped.push(format!(
                    "{dtype} {}: needs {} MiB (input, partials, {} MiB margin and L2 flush) but {} MiB are free",
                    size_label(n),
                    (bytes + reserved) >> 20,
                    (MEMORY_MARGIN + ROTATION_BYTES) >> 20,
                    free_memory >> 20
                ));
                continue;
            }
            let wanted = ROTATION_BYTES.div_ceil(bytes.max(1)).min(runs).max(1);
            let copies = wanted.min(fit);
            plan.cases.push(Planned {
                dtype,
                n,
                copies,
                l2_cold: copies >= runs || copies * bytes >= ROTATION_BYTES,
            });
        }
    }
    plan
}

/// What produced a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Impl {
    /// A Rust kernel from kernels-gpu.
    #[serde(rename = "rust")]
    Rust,
    /// The Rust read-only probe: the bandwidth ceiling.
    #[serde(rename = "read-only")]
    ReadOnly,
    /// CUB's DeviceReduce::Sum, timed by reduce_ref.
    #[serde(rename = "cub")]
    Cub,
    /// A CUDA C++ version (or reduce_ref's own read kernel), timed by reduce_ref.
    #[serde(rename = "cuda")]
    Cuda,
}

/// One line of the table, the CSV and the JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub dtype: String,
    pub n: usize,
    /// `v5`, `read-only`, `cub`, `cuda-v5`, `cuda-read`.
    pub version: String,
    #[serde(rename = "impl")]
    pub implementation: Impl,
    /// First pass.
    pub grid: Option<u32>,
    pub block: Option<u32>,
    pub passes: Option<usize>,
    /// Input copies rotated over (Rust rows).
    pub copies: Option<usize>,
    pub l2_cold: Option<bool>,
    pub first_pass_ms: Option<f64>,
    /// n · element size / first-pass time, in 10⁹ bytes per second.
    pub first_pass_gbps: Option<f64>,
    /// Of the read-only probe's GB/s at the same type and size.
    pub pct_of_read_only: Option<f64>,
    pub to_scalar_us: Option<f64>,
    /// v0's time to the scalar over this row's.
    pub speedup_vs_v0: Option<f64>,
    /// The previous version's (in --versions order; for cub, the last one) over this row's.
    pub speedup_vs_prev: Option<f64>,
    /// PASS, FAIL, ERROR, or - (nothing to check).
    pub check: String,
    /// Every run gave the same bits (Rust rows).
    pub deterministic: Option<bool>,
    pub error: Option<String>,
}

impl Row {
    fn new(dtype: DType, n: usize, version: String, implementation: Impl) -> Row {
        Row {
            dtype: dtype.name().to_string(),
            n,
            version,
            implementation,
            grid: None,
            block: None,
            passes: None,
            copies: None,
            l2_cold: None,
            first_pass_ms: None,
            first_pass_gbps: None,
            pct_of_read_only: None,
            to_scalar_us: None,
            speedup_vs_v0: None,
            speedup_vs_prev: None,
            check: "-".into(),
            deterministic: None,
            error: None,
        }
    }

    fn failed(mut self, error: String) -> Row {
        self.check = "ERROR".into();
        self.error = Some(error);
        self
    }

    fn is_failure(&self) -> bool {
        self.check == "FAIL"
            || (self.check == "ERROR" && matches!(self.implementation, Impl::Rust | Impl::ReadOnly))
    }
}

fn gbps(bytes: usize, ms: f64) -> Option<f64> {
    (ms > 0.0 && ms.is_finite()).then(|| bytes as f64 / (ms * 1e-3) / 1e9)
}

/// `2^k` for powers of two, else the number.
pub fn size_label(n: usize) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// The header of `bench.json`: what was measured, where and how.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    pub device: String,
    pub multiprocessors: u32,
    pub compute_capability: String,
    pub total_memory_bytes: usize,
    pub free_memory_bytes: usize,
    /// The cubin or PTX the kernels were loaded from.
    pub kernels: String,
    pub kernels_cubin: bool,
    pub date_unix_seconds: u64,
    pub op: String,
    pub input: String,
    pub block: String,
    pub repeat: u32,
    pub warmup: u32,
    pub timing: String,
    pub rotation: String,
    pub cub: String,
    pub dtypes: Vec<String>,
    pub sizes: Vec<usize>,
    pub versions: Vec<String>,
    pub skipped: Vec<String>,
}

fn rotation_text() -> String {
    format!(
        "inputs rotated over K copies (≥{} MiB in all) so the 50 MB L2 cache holds none of them between runs: \
         each run reads the next copy, continuing across versions; where that would be more copies than runs, \
         one copy per run and {} MiB written after the upload to flush L2. K per size in column `copies`",
        ROTATION_BYTES >> 20,
        ROTATION_BYTES >> 20
    )
}

const CUB_TEXT: &str = "CUB (and the CUDA C++ versions, cuda-v*) timed by bench/cuda/reduce_ref.cu on its own input of \
     the same size and type (not the same bytes), by the same method: CUDA events behind the same pre-roll, median, its own rotation of inputs under 64 MiB";

/// Runs the sweep; `Ok(false)` when a result failed its check or a run failed.
pub fn run(options: &BenchOptions) -> Result<bool> {
    let mut reducer = Reducer::gpu(0).context("bench times the kernels on the GPU")?;
    if let Some(dir) = &options.ptx_dir {
        reducer = reducer.with_kernels_from(dir)?;
    }
    let gpu = reducer
        .gpu_backend()
        .context("bench times the kernels on the GPU")?;
    let info = gpu.info().clone();
    let (free_memory, _) = gpu.memory()?;
    let plan = plan(
        &options.dtypes,
        &options.sizes,
        options.runs_per_case(),
        // The smallest block has the most partials: enough memory for any version's.
        options.block.unwrap_or(BLOCK_SIZES[0]),
        free_memory,
    );
    std::fs::create_dir_all(&options.out)
        .with_context(|| format!("creating {}", options.out.display()))?;
    for note in &plan.skipped {
        eprintln!("note: skipped {note}");
    }
    if plan.cases.is_empty() {
        bail!(
            "no size fits in the GPU's free memory ({} MiB)",
            free_memory >> 20
        );
    }
    let reduce_ref = if options.cub {
        build_reduce_ref(&options.out, info.compute_capability)
    } else {
        Err("--no-cub".to_string())
    };
    let cub_text = match &reduce_ref {
        Ok(_) => CUB_TEXT.to_string(),
        Err(why) => {
            if options.cub {
                eprintln!("note: CUB not timed: {why}");
            }
            format!("not timed: {why}")
        }
    };
    let header = Header {
        device: info.name.clone(),
        multiprocessors: info.multiprocessors,
        compute_capability: info.arch(),
        total_memory_bytes: info.total_memory,
        free_memory_bytes: free_memory,
        kernels: gpu.kernel_source().to_string(),
        kernels_cubin: matches!(
            gpu.kernel_source(),
            reduce_rs::internals::KernelSource::File { cubin: true, .. }
        ),
        date_unix_seconds: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        op: "sum".into(),
        input: format!("random (seed {SEED}): floats uniform in [-1, 1), integers over their whole range"),
        block: options
            .block
            .map_or_else(|| "tuned per version (see `host list`)".to_string(), |b| b.to_string()),
        repeat: options.timing.repeat,
        warmup: options.timing.warmup,
        timing: "CUDA events behind a 50 µs GPU pre-roll (so the CPU launch path is not timed); median of `repeat` runs after `warmup` untimed ones; single-launch work between exactly two events, multi-pass versions with a third after the first pass".into(),
        rotation: rotation_text(),
        cub: cub_text,
        dtypes: options.dtypes.iter().map(|d| d.name().to_string()).collect(),
        sizes: options.sizes.clone(),
        versions: options.versions.iter().map(|v| v.name().to_string()).collect(),
        skipped: plan.skipped.clone(),
    };

    let steps = plan.cases.len() * (options.versions.len() + 1)
        + if reduce_ref.is_ok() {
            options.dtypes.len()
        } else {
            0
        };
    let bar = ProgressBar::new(steps as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed}, ~{eta} left]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    let mut flush: Option<DeviceBuffer> = None;
    for &dtype in &options.dtypes {
        for case in plan.cases.iter().filter(|c| c.dtype == dtype) {
            let result = crate::with_dtype!(dtype, run_case(gpu, options, case, &mut flush, &bar));
            match result {
                Ok(case_rows) => rows.extend(case_rows),
                Err(error) => {
                    let error = format!("{error:#}");
                    bar.suspend(|| eprintln!("error: {dtype} {}: {error}", size_label(case.n)));
                    rows.push(
                        Row::new(dtype, case.n, "read-only".into(), Impl::ReadOnly)
                            .failed(error.clone()),
                    );
                    for v in &options.versions {
                        rows.push(
                            Row::new(dtype, case.n, v.name().into(), Impl::Rust).failed(error.clone()),
                        );
                    }
                    bar.inc(options.versions.len() as u64 + 1);
                }
            }
        }
        if let Ok(exe) = &reduce_ref {
            let sizes: Vec<usize> = plan
                .cases
                .iter()
                .filter(|c| c.dtype == dtype)
                .map(|c| c.n)
                .collect();
            bar.set_message(format!("{dtype}: CUB and CUDA C++ (reduce_ref)"));
            match run_reduce_ref(exe, dtype, &sizes, options) {
                Ok((ref_rows, notes)) => {
                    for note in notes {
                        bar.suspend(|| eprintln!("note: reduce_ref {dtype}: {note}"));
                    }
                    rows.extend(ref_rows);
                }
                Err(error) => bar.suspend(|| eprintln!("error: reduce_ref {dtype}: {error:#}")),
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    fill_derived(&mut rows, &options.versions);
    sort_rows(&mut rows, &options.dtypes, &options.versions);
    print!("{}", format_report(&header, &plan, &rows));
    let written = write_results(&options.out, &header, &rows)?;
    println!();
    for path in written {
        println!("wrote {}", path.display());
    }
    let failures = rows.iter().filter(|r| r.is_failure()).count();
    if failures > 0 {
        eprintln!(
            "error: {failures} run(s) failed their check or did not run (see the check column)"
        );
    }
    Ok(failures == 0)
}

/// Times every version and the read probe on one (type, size). The error is for the input
/// itself (generation, upload); a version's own failure is its row.
fn run_case<T: HostElement>(
    gpu: &Gpu,
    options: &BenchOptions,
    case: &Planned,
    flush: &mut Option<DeviceBuffer>,
    bar: &ProgressBar,
) -> Result<Vec<Row>> {
    let (dtype, n) = (case.dtype, case.n);
    bar.set_message(format!("{dtype} {}: input and reference", size_label(n)));
    let input: Vec<T> = generate(Pattern::Random, n, SEED);
    let expected = <Sum as Checked<T>>::reference(&input);
    let copies = (0..case.copies)
        .map(|_| gpu.copy_to_device(&input))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("uploading {} copies of the input", case.copies))?;
    let mut pointers: Vec<u64> = copies.iter().map(DeviceBuffer::ptr).collect();
    drop(input);
    if case.needs_flush() && flush.is_none() {
        *flush = Some(gpu.copy_to_device(&vec![0u32; ROTATION_BYTES / size_of::<u32>()])?);
    } else if case.needs_flush() {
        // Rewriting the flush buffer evicts the copies' upload from L2.
        let zeros = vec![0u32; ROTATION_BYTES / size_of::<u32>()];
        *flush = Some(gpu.copy_to_device(&zeros).context("writing 256 MiB to flush L2")?);
    }
    let timer = Timer::new(gpu)?;
    let runs = (options.timing.warmup + options.timing.repeat) as usize;
    let bytes = n * dtype.size();
    let base = |version: String, implementation| {
        let mut row = Row::new(dtype, n, version, implementation);
        row.copies = Some(case.copies);
        row.l2_cold = Some(case.l2_cold);
        row
    };
    let mut rows = Vec::new();

    bar.set_message(format!("{dtype} {}: read-only probe", size_label(n)));
    let row = base("read-only".into(), Impl::ReadOnly);
    rows.push(match read_probe::<T>(&timer, &pointers, n, options.timing) {
        Ok(ms) => Row {
            first_pass_ms: Some(ms),
            first_pass_gbps: gbps(bytes, ms),
            to_scalar_us: Some(ms * 1e3),
            passes: Some(1),
            ..row
        },
        Err(e) => row.failed(format!("{e:#}")),
    });
    // The next run reads the copy after the last one read.
    pointers.rotate_left(runs % case.copies);
    bar.inc(1);

    for &version in &options.versions {
        bar.set_message(format!("{dtype} {}: {}", size_label(n), version.name()));
        let row = base(version.name().into(), Impl::Rust);
        let block = options.block.unwrap_or_else(|| version.tuned_block(n));
        rows.push(
            match timer.reduce::<T, Sum>(version, block, None, &pointers, n, options.timing) {
                Ok(run) => {
                    let additions = plan::additions_per_element(version, &run.passes);
                    let got = <Sum as Operation<T>>::output(run.value);
                    let verdict = <Sum as Checked<T>>::check(got, &expected, additions);
                    let first = run.passes[0].shape;
                    Row {
                        grid: Some(first.grid),
                        block: Some(first.block),
                        passes: Some(run.passes.len()),
                        first_pass_ms: Some(run.first_pass_ms),
                        first_pass_gbps: gbps(bytes, run.first_pass_ms),
                        to_scalar_us: Some(run.to_result_ms * 1e3),
                        check: if verdict.pass { "PASS" } else { "FAIL" }.into(),
                        deterministic: Some(run.deterministic),
                        error: (!verdict.pass).then(|| {
                            format!(
                                "got {}, rel. error {:.2e} above the bound {:.2e}",
                                verdict.got, verdict.rel_error, verdict.tolerance
                            )
                        }),
                        ..row
                    }
                }
                Err(e) => {
                    let error = format!("{e:#}");
                    bar.suspend(|| {
                        eprintln!(
                            "error: {dtype} {} {}: {error}",
                            size_label(n),
                            version.name()
                        )
                    });
                    row.failed(error)
                }
            },
        );
        pointers.rotate_left(runs % case.copies);
        bar.inc(1);
    }
    Ok(rows)
}

/// Median time (ms) of the read-only kernel over `inputs` (rotated as the versions are), with
/// v8's grid: the bandwidth ceiling every version is compared with.
fn read_probe<T: HostElement>(timer: &Timer, inputs: &[u64], len: usize, timing: Timing) -> Result<f64> {
    let gpu = timer.gpu();
    let block = 256;
    let name = format!("read_probe_{}_b{block}", T::DTYPE);
    let (function, resident) = gpu.kernel(&name, block, 0)?;
    let sizes = Sizes::of::<T, Sum>();
    let shape = LaunchShape {
        shared_bytes: 0,
        ..plan::shape(Version::fastest(), len, block, sizes, resident)?
    };
    let sink = gpu.copy_to_device(&[0u64; 2])?;
    timer.time(timing, |run| {
        let pointers = reduce_rs::internals::Pointers {
            input: inputs[run % inputs.len()],
            output: sink.ptr(),
            ..Default::default()
        };
        let sizes = kernels_gpu::params::Params {
            len: len as u64,
            output_len: 1,
            ..Default::default()
        };
        Ok(gpu.launch(&name, &function, shape, pointers, sizes)?)
    })
}

/// Fills the columns that compare rows of one (type, size): % of the read-only GB/s and the
/// speedups of the time to the scalar.
pub fn fill_derived(rows: &mut [Row], order: &[Version]) {
    let keys: Vec<(String, usize)> = rows.iter().map(|r| (r.dtype.clone(), r.n)).collect();
    for (dtype, n) in keys {
        let group: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].dtype == dtype && rows[i].n == n)
            .collect();
        let find = |version: &str, implementation: Impl| {
            group.iter().map(|&i| &rows[i]).find(|r| {
                r.version == version && r.implementation == implementation && r.check != "ERROR"
            })
        };
        let read = find("read-only", Impl::ReadOnly).and_then(|r| r.first_pass_gbps);
        let v0 = find("v0", Impl::Rust).and_then(|r| r.to_scalar_us);
        let rust_us: Vec<Option<f64>> = order
            .iter()
            .map(|v| find(&v.name(), Impl::Rust).and_then(|r| r.to_scalar_us))
            .collect();
        for &i in &group {
            let row = &mut rows[i];
            row.pct_of_read_only = match (row.first_pass_gbps, read) {
                (Some(g), Some(r)) if r > 0.0 => Some(100.0 * g / r),
                _ => None,
            };
            let ratio = |base: Option<f64>, us: Option<f64>| match (base, us) {
                (Some(b), Some(t)) if t > 0.0 => Some(b / t),
                _ => None,
            };
            let prev = match row.implementation {
                Impl::Rust => order
                    .iter()
                    .position(|v| v.name() == row.version)
                    .and_then(|p| p.checked_sub(1))
                    .and_then(|p| rust_us[p]),
                Impl::Cub => rust_us.last().copied().flatten(),
                Impl::ReadOnly | Impl::Cuda => None,
            };
            if row.implementation != Impl::ReadOnly {
                row.speedup_vs_v0 = ratio(v0, row.to_scalar_us);
            }
            row.speedup_vs_prev = ratio(prev, row.to_scalar_us);
        }
    }
}

/// Type (in --dtypes order), size, then the versions in --versions order, read-only, cub, and
/// the CUDA C++ rows.
pub fn sort_rows(rows: &mut [Row], dtypes: &[DType], order: &[Version]) {
    let rank = |r: &Row| {
        let dtype = dtypes
            .iter()
            .position(|d| d.name() == r.dtype)
            .unwrap_or(usize::MAX);
        let within = match r.implementation {
            Impl::Rust => order
                .iter()
                .position(|v| v.name() == r.version)
                .unwrap_or(99),
            Impl::ReadOnly => 100,
            Impl::Cub => 101,
            Impl::Cuda => 200,
        };
        (dtype, r.n, within, r.version.clone())
    };
    rows.sort_by_key(rank);
}

/// The header and one table per type, as printed.
pub fn format_report(header: &Header, plan: &Plan, rows: &[Row]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "bench    gpu: {} ({} SMs, {}), kernels from {}",
        header.device, header.multiprocessors, header.compute_capability, header.kernels
    );
    let _ = writeln!(
        out,
        "input    sum of {}; block {}; {}",
        header.input,
        header.block,
        format_args!(
            "CUDA events behind a GPU pre-roll, median of {} runs after {} untimed",
            header.repeat, header.warmup
        )
    );
    let _ = writeln!(out, "rotation {}", header.rotation);
    let _ = writeln!(out, "cub      {}", header.cub);
    let mut largest: Vec<String> = Vec::new();
    for dtype in &header.dtypes {
        if let Some(n) = plan
            .cases
            .iter()
            .filter(|c| c.dtype.name() == dtype)
            .map(|c| c.n)
            .max()
        {
            largest.push(format!("{dtype} {}", size_label(n)));
        }
    }
    let _ = writeln!(out, "largest  {}", largest.join(", "));
    for note in &header.skipped {
        let _ = writeln!(out, "skipped  {note}");
    }
    if plan.cases.iter().any(|c| !c.l2_cold) {
        let _ = writeln!(
            out,
            "note     sizes marked `~` had too little memory for the full rotation: L2 may hold part of their input"
        );
    }
    for dtype in &header.dtypes {
        let _ = writeln!(out);
        let _ = writeln!(out, "{dtype}");
        let _ = writeln!(
            out,
            "{:>8} {:<9} {:>14} {:>6} {:>11} {:>8} {:>7} {:>8} {:>11} {:>7} {:>7}  check",
            "n",
            "version",
            "grid × block",
            "copies",
            "1st-pass ms",
            "GB/s",
            "% read",
            "C++ GB/s",
            "scalar µs",
            "× v0",
            "× prev"
        );
        let mut last_n = None;
        for row in rows
            .iter()
            .filter(|r| &r.dtype == dtype && r.implementation != Impl::Cuda)
        {
            if last_n.is_some_and(|n| n != row.n) {
                let _ = writeln!(out);
            }
            last_n = Some(row.n);
            // The CUDA C++ twin of a Rust version (or of the read probe), from reduce_ref.
            let twin = match row.implementation {
                Impl::Rust => Some(format!("cuda-{}", row.version)),
                Impl::ReadOnly => Some("cuda-read".to_string()),
                _ => None,
            };
            let cpp = twin.and_then(|name| {
                rows.iter()
                    .find(|r| {
                        r.dtype == row.dtype
                            && r.n == row.n
                            && r.implementation == Impl::Cuda
                            && r.version == name
                    })
                    .and_then(|r| r.first_pass_gbps)
            });
            let shape = match (row.grid, row.block) {
                (Some(g), Some(b)) => format!("{g} × {b}"),
                _ => "-".into(),
            };
            let copies = match (row.copies, row.l2_cold) {
                (Some(k), Some(false)) => format!("{k}~"),
                (Some(k), _) => k.to_string(),
                _ => "-".into(),
            };
            let num = |v: Option<f64>, digits: usize| {
                v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
            };
            let mut verdict = row.check.clone();
            if row.deterministic == Some(false) {
                verdict.push_str(" (runs differ in bits)");
            }
            if let (Some(error), false) = (&row.error, row.check == "FAIL") {
                verdict.push_str(&format!(": {error}"));
            }
            let _ = writeln!(
                out,
                "{:>8} {:<9} {:>14} {:>6} {:>11} {:>8} {:>7} {:>8} {:>11} {:>7} {:>7}  {}",
                size_label(row.n),
                row.version,
                shape,
                copies,
                num(row.first_pass_ms, 4),
                num(row.first_pass_gbps, 1),
                num(row.pct_of_read_only, 1),
                num(cpp, 1),
                num(row.to_scalar_us, 1),
                num(row.speedup_vs_v0, 2),
                num(row.speedup_vs_prev, 2),
                verdict
            );
        }
    }
    out
}

/// Writes `bench.csv`, `bench.json` and `bench_<dtype>.svg` into `out`; returns their paths.
pub fn write_results(out: &Path, header: &Header, rows: &[Row]) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let csv_path = out.join("bench.csv");
    let write_csv = || -> Result<()> {
        let mut writer = csv::Writer::from_path(&csv_path)?;
        for row in rows {
            writer.serialize(row)?;
        }
        writer.flush()?;
        Ok(())
    };
    write_csv().with_context(|| format!("writing {}", csv_path.display()))?;
    written.push(csv_path);

    let json_path = out.join("bench.json");
    /// The file's layout: the header first, fields in the order declared.
    #[derive(Serialize)]
    struct Results<'a> {
        header: &'a Header,
        rows: &'a [Row],
    }
    let json = serde_json::to_string_pretty(&Results { header, rows })
        .context("encoding the results as JSON")?;
    std::fs::write(&json_path, json + "\n")
        .with_context(|| format!("writing {}", json_path.display()))?;
    written.push(json_path);

    for dtype in &header.dtypes {
        let svg_path = out.join(format!("bench_{dtype}.svg"));
        let title = format!(
            "{dtype} sum: first-pass bandwidth against N — {}",
            header.device
        );
        chart::write_svg(&svg_path, &title, &chart_series(rows, dtype))?;
        written.push(svg_path);
    }
    Ok(written)
}

/// The chart's lines for one type: every Rust version, CUB, and the read-only ceiling (the
/// CUDA C++ rows stay in the table and files, or the chart would have twice the lines).
pub fn chart_series(rows: &[Row], dtype: &str) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for row in rows
        .iter()
        .filter(|r| r.dtype == dtype && r.implementation != Impl::Cuda)
    {
        let Some(gbps) = row.first_pass_gbps else {
            continue;
        };
        let name = match row.implementation {
            Impl::ReadOnly => "read-only (ceiling)".to_string(),
            Impl::Cub => "CUB DeviceReduce::Sum".to_string(),
            _ => row.version.clone(),
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((row.n, gbps)),
            None => series.push(Series {
                name,
                points: vec![(row.n, gbps)],
                ceiling: row.implementation == Impl::ReadOnly,
            }),
        }
    }
    series
}

/// `nvcc` on the PATH, else in `$CUDA_HOME/bin`, `$CUDA_PATH/bin` or `/usr/local/cuda/bin` (where
/// the CUDA toolkit installs it without putting it on the PATH, as on the device machine).
fn find_nvcc() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let toolkits = ["CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(|root| PathBuf::from(root).join("bin"))
        .chain([PathBuf::from("/usr/local/cuda/bin")]);
    std::env::split_paths(&path)
        .chain(toolkits)
        .map(|dir| dir.join("nvcc"))
        .find(|nvcc| nvcc.is_file())
}

/// `bench/cuda/reduce_ref.cu` under the current directory, else under the workspace this host
/// was built in.
fn reduce_ref_source() -> Option<PathBuf> {
    [
        PathBuf::from(REDUCE_REF),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(REDUCE_REF),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Builds reduce_ref into `<out>/reduce_ref` for this GPU; the error says why CUB is not timed.
fn build_reduce_ref(out: &Path, compute_capability: (u32, u32)) -> Result<PathBuf, String> {
    let nvcc = find_nvcc()
        .ok_or("nvcc is not on the PATH (nor in $CUDA_HOME/bin or /usr/local/cuda/bin)")?;
    let source = reduce_ref_source().ok_or_else(|| format!("{REDUCE_REF} not found"))?;
    let exe = out.join("reduce_ref");
    let arch = format!("-arch=sm_{}{}", compute_capability.0, compute_capability.1);
    eprintln!(
        "note: building {} with {} {arch} (CUB and the CUDA C++ versions)",
        source.display(),
        nvcc.display()
    );
    let output = Command::new(&nvcc)
        .args(["-O3", &arch, "-std=c++17", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .map_err(|e| format!("running {}: {e}", nvcc.display()))?;
    if !output.status.success() {
        return Err(format!(
            "nvcc failed ({}): {}",
            output.status,
            tail(&output.stderr, 20)
        ));
    }
    Ok(exe)
}

/// The last `lines` lines of a program's output, on one line.
fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// Times CUB, the CUDA C++ versions that match the selected ones (v0–v7) and reduce_ref's read
/// kernel on `sizes`; returns their rows and notes. Its stdout is kept in
/// `<out>/reduce_ref_<dtype>.txt`.
fn run_reduce_ref(
    exe: &Path,
    dtype: DType,
    sizes: &[usize],
    options: &BenchOptions,
) -> Result<(Vec<Row>, Vec<String>)> {
    let mut notes = Vec::new();
    let (sizes, too_large): (Vec<usize>, Vec<usize>) =
        sizes.iter().partition(|&&n| n <= REDUCE_REF_MAX_N);
    if !too_large.is_empty() {
        notes.push(format!(
            "sizes above 2^31-1 left out (CUB takes an int count): {too_large:?}"
        ));
    }
    if sizes.is_empty() {
        return Ok((Vec::new(), notes));
    }
    let mut names: Vec<String> = vec!["cub".into(), "read".into()];
    names.extend(
        options
            .versions
            .iter()
            .filter(|v| CUDA_TWINS.contains(&v.name()))
            .map(|v| v.name().to_string()),
    );
    let csv_path = options.out.join(format!("reduce_ref_{dtype}.csv"));
    let sizes_arg: Vec<String> = sizes.iter().map(usize::to_string).collect();
    let output = Command::new(exe)
        .args(["--dtype", dtype.name(), "--sizes", &sizes_arg.join(",")])
        .args([
            "--repeat",
            &options.timing.repeat.to_string(),
            "--warmup",
            &options.timing.warmup.to_string(),
        ])
        .args([
            "--block",
            &options.block.unwrap_or(DEFAULT_BLOCK_SIZE).to_string(),
            "--versions",
            &names.join(","),
        ])
        .arg("--csv")
        .arg(&csv_path)
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    let log_path = options.out.join(format!("reduce_ref_{dtype}.txt"));
    std::fs::write(&log_path, &output.stdout)
        .with_context(|| format!("writing {}", log_path.display()))?;
    // Exit status 2 means a check failed: the CSV is complete and says which.
    if !output.status.success() {
        notes.push(format!(
            "exited with {}: {}",
            output.status,
            tail(&output.stderr, 8)
        ));
    }
    let text = match std::fs::read_to_string(&csv_path) {
        Ok(text) => text,
        Err(e) if !output.status.success() => {
            bail!("{} (and no CSV: {e})", notes.pop().unwrap_or_default())
        }
        Err(e) => return Err(anyhow!(e).context(format!("reading {}", csv_path.display()))),
    };
    let rows = parse_reduce_ref_csv(&text, dtype)
        .with_context(|| format!("reading {}", csv_path.display()))?;
    Ok((rows, notes))
}

/// Rows from reduce_ref's CSV (`impl,version,dtype,n,block,grid,first_pass_ms,first_pass_gbps,
/// scalar_ms,check`): `cub` becomes the CUB row, `v5` the row `cuda-v5`, `read` `cuda-read`.
pub fn parse_reduce_ref_csv(text: &str, dtype: DType) -> Result<Vec<Row>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| {
                anyhow!(
                    "no `{name}` column in its header `{}`",
                    headers.iter().collect::<Vec<_>>().join(",")
                )
            })
    };
    let [version, n, first_ms, first_gbps, scalar_ms, verdict] = [
        "version",
        "n",
        "first_pass_ms",
        "first_pass_gbps",
        "scalar_ms",
        "check",
    ]
    .map(column);
    let (version, n, first_ms, first_gbps, scalar_ms, verdict) =
        (version?, n?, first_ms?, first_gbps?, scalar_ms?, verdict?);
    let (block, grid) = (column("block").ok(), column("grid").ok());
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record?;
        let field = |i: usize| record.get(i).unwrap_or("").trim();
        let number = |i: Option<usize>| {
            i.and_then(|i| field(i).parse::<f64>().ok())
                .filter(|x| x.is_finite())
        };
        let whole = |i: Option<usize>| {
            i.and_then(|i| field(i).parse::<u32>().ok())
                .filter(|&x| x > 0)
        };
        let count: usize = field(n)
            .parse()
            .map_err(|_| anyhow!("line {}: `{}` is not a size", line + 2, field(n)))?;
        let (label, implementation) = match field(version) {
            "cub" => ("cub".to_string(), Impl::Cub),
            other => (format!("cuda-{other}"), Impl::Cuda),
        };
        let mut row = Row::new(dtype, count, label, implementation);
        row.grid = whole(grid);
        row.block = whole(block);
        row.first_pass_ms = number(Some(first_ms));
        row.first_pass_gbps = number(Some(first_gbps));
        row.to_scalar_us = number(Some(scalar_ms)).map(|ms| ms * 1e3);
        row.check = match field(verdict) {
            "PASS" => "PASS".into(),
            "FAIL" => "FAIL".into(),
            _ => "-".into(),
        };
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("reduce-rs-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn default_sizes_are_every_power_of_four_from_2_10_to_2_28() {
        let sizes = parse_sizes(SIZES_DEFAULT).unwrap().0;
        assert_eq!(
            sizes,
            (10..=28)
                .step_by(2)
                .map(|k| 1usize << k)
                .collect::<Vec<_>>()
        );
        assert_eq!(sizes.len(), 10);
    }

    #[test]
    fn sizes_take_lists_ranges_and_steps() {
        assert_eq!(
            parse_sizes("2^20..2^23:1").unwrap().0,
            [1 << 20, 1 << 21, 1 << 22, 1 << 23]
        );
        assert_eq!(
            parse_sizes("1e6, 2^20,32M,2^20").unwrap().0,
            [1_000_000, 1 << 20, 1 << 25]
        );
        assert_eq!(
            parse_sizes("2^10..2^16:3,1000").unwrap().0,
            [1000, 1 << 10, 1 << 13, 1 << 16]
        );
        assert_eq!(parse_sizes("4Ki..4Ki").unwrap().0, [4096]);
        for (bad, says) in [
            ("", "empty entry"),
            ("2^10,,2^12", "empty entry"),
            ("1000..2^20", "powers of two"),
            ("2^20..2^10", "start is above its end"),
            ("2^10..2^20:0", "exponent step"),
            ("2^10..2^20:x", "exponent step"),
            ("0", "at least 1"),
            ("lots", "not an element count"),
        ] {
            let error = parse_sizes(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn dtypes_and_versions_parse_as_lists_or_all() {
        assert_eq!(parse_dtypes("all").unwrap().0, DType::ALL);
        assert_eq!(
            parse_dtypes("f64, I32,f64").unwrap().0,
            [DType::F64, DType::I32]
        );
        assert!(parse_dtypes("f8").unwrap_err().contains("f32, f64, i32, u32"));
        let names = |l: VersionList| l.0.iter().map(|v| v.name()).collect::<Vec<_>>();
        assert_eq!(
            names(parse_versions("all").unwrap()),
            ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"]
        );
        assert_eq!(
            names(parse_versions("v8,3,multi-add,v8").unwrap()),
            ["v8", "v3", "v6"]
        );
        assert!(
            parse_versions("v0,v9")
                .unwrap_err()
                .contains("unknown version `v9`")
        );
    }

    fn args() -> BenchArgs {
        BenchArgs {
            dtypes: None,
            sizes: parse_sizes(SIZES_DEFAULT).unwrap(),
            versions: None,
            out: OUT_DEFAULT.into(),
            no_cub: false,
        }
    }

    #[test]
    fn options_default_to_every_type_and_version_and_honour_dtype() {
        let timing = Timing {
            warmup: 3,
            repeat: 20,
        };
        let all = BenchOptions::new(&args(), None, Some(256), timing, None);
        assert_eq!(all.dtypes, DType::ALL);
        assert_eq!(all.versions.len(), 9);
        assert!(all.cub);
        assert_eq!(all.runs_per_case(), 10 * 23);
        let one = BenchOptions::new(&args(), Some(DType::U32), Some(256), timing, None);
        assert_eq!(one.dtypes, [DType::U32]);
        let listed = BenchArgs {
            dtypes: Some(DTypeList(vec![DType::F64])),
            no_cub: true,
            ..args()
        };
        let listed = BenchOptions::new(&listed, None, Some(128), timing, None);
        assert_eq!(
            (listed.dtypes.as_slice(), listed.cub),
            ([DType::F64].as_slice(), false)
        );
    }

    #[test]
    fn flags_are_refused_where_they_would_be_ignored() {
        let only = |ids: &'static [&'static str]| move |id: &str| ids.contains(&id);
        let ok = |what, given| check_flags(what, given, OpKind::Sum, BackendChoice::Auto);
        assert!(ok("bench", only(&["sizes", "dtypes", "block", "repeat"])).is_ok());
        assert!(ok("bench", only(&["dtype", "op"])).is_ok());
        assert!(ok("v5", only(&["n", "dtype"])).is_ok());
        assert!(
            ok("v5", only(&["sizes"]))
                .unwrap_err()
                .contains("--sizes is a `bench` option")
        );
        assert!(
            ok("all", only(&["no_cub"]))
                .unwrap_err()
                .contains("--no-cub")
        );
        assert!(ok("bench", only(&["n"])).unwrap_err().contains("--sizes"));
        assert!(
            ok("bench", only(&["schedule_seed"]))
                .unwrap_err()
                .contains("--schedule-seed")
        );
        assert!(
            ok("bench", only(&["dtype", "dtypes"]))
                .unwrap_err()
                .contains("not both")
        );
        let max = check_flags("bench", only(&["op"]), OpKind::Max, BackendChoice::Auto);
        assert!(max.unwrap_err().contains("sum only"));
        let sim = check_flags("bench", only(&["backend"]), OpKind::Sum, BackendChoice::Sim);
        assert!(sim.unwrap_err().contains("simulator"));
    }

    #[test]
    fn plan_rotates_small_inputs_and_skips_what_does_not_fit() {
        let sizes = parse_sizes(SIZES_DEFAULT).unwrap().0;
        let runs = 230;
        let plan = plan(&[DType::F32, DType::F64], &sizes, runs, 256, 80 << 30);
        assert!(plan.skipped.is_empty());
        let copies = |dtype, n| {
            plan.cases
                .iter()
                .find(|c| c.dtype == dtype && c.n == n)
                .unwrap()
                .copies
        };
        // 4 KiB: 65536 copies would make 256 MiB; one per run is enough (then L2 is flushed).
        assert_eq!(copies(DType::F32, 1 << 10), runs);
        // 4 MiB: 64 copies, 256 MiB.
        assert_eq!(copies(DType::F32, 1 << 20), 64);
        assert_eq!(copies(DType::F64, 1 << 20), 32);
        // 64 MiB: 4 copies; 1 GiB: one.
        assert_eq!(copies(DType::F32, 1 << 24), 4);
        assert_eq!(copies(DType::F32, 1 << 28), 1);
        for case in &plan.cases {
            assert!(case.l2_cold, "{case:?}");
            assert!(
                case.copies * case.bytes() >= ROTATION_BYTES || case.copies >= runs,
                "{case:?}"
            );
            assert_eq!(
                case.needs_flush(),
                case.copies * case.bytes() < ROTATION_BYTES
            );
        }

        // 3 GiB free: 2^28 f64 (2 GiB) does not fit beside the margin and the flush buffer;
        // 2^28 f32 (1 GiB) and both 2^26 do, with the one copy that 256 MiB and more need.
        let tight = super::plan(
            &[DType::F32, DType::F64],
            &[1 << 26, 1 << 28],
            runs,
            256,
            3 << 30,
        );
        assert_eq!(tight.cases.len(), 3, "{tight:?}");
        assert_eq!(tight.skipped.len(), 1);
        assert!(
            tight.skipped[0].contains("f64 2^28") && tight.skipped[0].contains("are free"),
            "{}",
            tight.skipped[0]
        );

        // Room for fewer copies than wanted: marked as not L2-cold.
        let small = super::plan(
            &[DType::F32],
            &[1 << 22],
            runs,
            256,
            MEMORY_MARGIN + ROTATION_BYTES + (40 << 20),
        );
        assert_eq!(small.cases[0].copies, 2);
        assert!(!small.cases[0].l2_cold);
    }

    fn synthetic_rows() -> Vec<Row> {
        let mut rows = Vec::new();
        for n in [1usize << 20, 1 << 22] {
            let mut read = Row::new(DType::F32, n, "read-only".into(), Impl::ReadOnly);
            read.first_pass_gbps = Some(3000.0);
            read.first_pass_ms = Some(1.0);
            rows.push(read);
            for (version, us, gbps) in [
                ("v0", 400.0, 600.0),
                ("v3", 200.0, 1500.0),
                ("v8", 100.0, 2700.0),
            ] {
                let mut row = Row::new(DType::F32, n, version.into(), Impl::Rust);
                row.to_scalar_us = Some(us);
                row.first_pass_gbps = Some(gbps);
                row.first_pass_ms = Some(0.5);
                row.grid = Some(1024);
                row.block = Some(256);
                row.copies = Some(64);
                row.l2_cold = Some(true);
                row.check = "PASS".into();
                row.deterministic = Some(true);
                rows.push(row);
            }
        }
        rows.push(
            Row::new(DType::F32, 1 << 22, "v5".into(), Impl::Rust)
                .failed("kernel `reduce_v5_f32_sum_b256` is not in x.ptx".into()),
        );
        let csv = "impl,version,dtype,n,block,grid,first_pass_ms,first_pass_gbps,scalar_ms,check\n\
                   cuda,cub,f32,1048576,0,0,0.002000,2100.000,0.002500,PASS\n\
                   cuda,v3,f32,1048576,256,2048,0.003000,1400.000,0.004000,PASS\n\
                   cuda,read,f32,1048576,256,1056,0.001500,2900.000,0.001500,n/a\n";
        rows.extend(parse_reduce_ref_csv(csv, DType::F32).unwrap());
        rows
    }

    #[test]
    fn reduce_ref_csv_becomes_cub_and_cuda_rows() {
        let rows = parse_reduce_ref_csv(
            "impl,version,dtype,n,block,grid,first_pass_ms,first_pass_gbps,scalar_ms,check\n\
             cuda,cub,f64,1024,0,0,0.004000,2.048,0.004000,PASS\n\
             cuda,v5,f64,1024,256,2,0.003000,2.730,0.006000,FAIL\n\
             cuda,read,f64,1024,256,1,0.002000,4.096,0.002000,n/a\n",
            DType::F64,
        )
        .unwrap();
        let labels: Vec<(&str, Impl, &str)> = rows
            .iter()
            .map(|r| (r.version.as_str(), r.implementation, r.check.as_str()))
            .collect();
        assert_eq!(
            labels,
            [
                ("cub", Impl::Cub, "PASS"),
                ("cuda-v5", Impl::Cuda, "FAIL"),
                ("cuda-read", Impl::Cuda, "-")
            ]
        );
        assert_eq!((rows[0].grid, rows[0].block), (None, None));
        assert_eq!((rows[1].grid, rows[1].block), (Some(2), Some(256)));
        assert_eq!(rows[1].to_scalar_us, Some(6.0));
        assert!(rows[1].is_failure() && !rows[0].is_failure());
        assert_eq!(rows[0].dtype, "f64");
        let error = parse_reduce_ref_csv("impl,version\ncuda,cub\n", DType::F32).unwrap_err();
        assert!(format!("{error:#}").contains("no `n` column"), "{error:#}");
        assert!(
            parse_reduce_ref_csv(
                "version,n,first_pass_ms,first_pass_gbps,scalar_ms,check\ncub,x,1,1,1,PASS\n",
                DType::F32
            )
            .is_err()
        );
    }

    #[test]
    fn derived_columns_compare_with_read_only_v0_and_the_previous_version() {
        let order: Vec<Version> = ["v0", "v3", "v5", "v8"]
            .map(|v| Version::find(v).unwrap())
            .to_vec();
        let mut rows = synthetic_rows();
        fill_derived(&mut rows, &order);
        sort_rows(&mut rows, &[DType::F32], &order);
        let get = |n: usize, version: &str| {
            rows.iter()
                .find(|r| r.n == n && r.version == version)
                .unwrap()
        };
        let v3 = get(1 << 20, "v3");
        assert_eq!(v3.pct_of_read_only, Some(50.0));
        assert_eq!(v3.speedup_vs_v0, Some(2.0));
        assert_eq!(v3.speedup_vs_prev, Some(2.0));
        assert_eq!(get(1 << 20, "v0").speedup_vs_v0, Some(1.0));
        assert_eq!(get(1 << 20, "v0").speedup_vs_prev, None);
        // v5 is missing at 2^20 and failed at 2^22: v8 has no previous time there.
        assert_eq!(get(1 << 22, "v8").speedup_vs_prev, None);
        assert_eq!(get(1 << 22, "v8").speedup_vs_v0, Some(4.0));
        // CUB against v0 and against the last version listed (v8); read-only has no speedups.
        let cub = get(1 << 20, "cub");
        assert_eq!(cub.pct_of_read_only, Some(70.0));
        assert_eq!(cub.speedup_vs_v0, Some(160.0));
        assert_eq!(cub.speedup_vs_prev, Some(40.0));
        assert_eq!(get(1 << 20, "read-only").speedup_vs_v0, None);
        assert_eq!(get(1 << 20, "read-only").pct_of_read_only, Some(100.0));
        assert_eq!(get(1 << 20, "cuda-v3").speedup_vs_prev, None);
        // Order: size, versions in --versions order, read-only, cub, the CUDA C++ rows.
        let first: Vec<&str> = rows
            .iter()
            .filter(|r| r.n == 1 << 20)
            .map(|r| r.version.as_str())
            .collect();
        assert_eq!(
            first,
            ["v0", "v3", "v8", "read-only", "cub", "cuda-read", "cuda-v3"]
        );
    }

    fn header() -> Header {
        Header {
            device: "Test GPU".into(),
            multiprocessors: 132,
            compute_capability: "sm_90".into(),
            total_memory_bytes: 80 << 30,
            free_memory_bytes: 79 << 30,
            kernels: "target/ptx/kernels_gpu.sm_90.cubin".into(),
            kernels_cubin: true,
            date_unix_seconds: 1_700_000_000,
            op: "sum".into(),
            input: "random (seed 1)".into(),
            block: "256".into(),
            repeat: 20,
            warmup: 3,
            timing: "CUDA events".into(),
            rotation: rotation_text(),
            cub: CUB_TEXT.into(),
            dtypes: vec!["f32".into()],
            sizes: vec![1 << 20, 1 << 22],
            versions: vec!["v0".into(), "v3".into(), "v5".into(), "v8".into()],
            skipped: vec!["f64 2^30: needs 9000 MiB".into()],
        }
    }

    #[test]
    fn report_has_one_table_per_type_with_every_column() {
        let order: Vec<Version> = ["v0", "v3", "v5", "v8"]
            .map(|v| Version::find(v).unwrap())
            .to_vec();
        let mut rows = synthetic_rows();
        fill_derived(&mut rows, &order);
        sort_rows(&mut rows, &[DType::F32], &order);
        let plan = Plan {
            cases: vec![Planned {
                dtype: DType::F32,
                n: 1 << 22,
                copies: 64,
                l2_cold: true,
            }],
            skipped: vec![],
        };
        let text = format_report(&header(), &plan, &rows);
        for expected in [
            "Test GPU",
            "rotation inputs rotated over K copies (≥256 MiB",
            "on its own input of the same size and type",
            "largest  f32 2^22",
            "skipped  f64 2^30",
            "1st-pass ms",
            "% read",
            "C++ GB/s",
            "scalar µs",
            "× v0",
            "× prev",
        ] {
            assert!(text.contains(expected), "`{expected}` missing from\n{text}");
        }
        let v3 = text
            .lines()
            .find(|l| l.contains(" v3 ") && l.contains("2^20"))
            .unwrap();
        // grid × block, copies, ms, GB/s, % read, C++ GB/s, µs, × v0, × prev, check.
        for cell in [
            "1024 × 256",
            "64",
            "0.5000",
            "1500.0",
            "50.0",
            "1400.0",
            "200.0",
            "2.00",
            "PASS",
        ] {
            assert!(v3.contains(cell), "`{cell}` missing from `{v3}`");
        }
        assert!(
            text.contains("ERROR: kernel `reduce_v5_f32_sum_b256`"),
            "{text}"
        );
        // The CUDA C++ rows are a column, not lines of their own.
        assert!(!text.contains("cuda-v3"));
    }

    #[test]
    fn results_are_written_as_csv_json_and_svg() {
        let dir = temp_dir("write");
        let order: Vec<Version> = ["v0", "v3", "v5", "v8"]
            .map(|v| Version::find(v).unwrap())
            .to_vec();
        let mut rows = synthetic_rows();
        fill_derived(&mut rows, &order);
        let written = write_results(&dir, &header(), &rows).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["bench.csv", "bench.json", "bench_f32.svg"]);

        let mut reader = csv::Reader::from_path(dir.join("bench.csv")).unwrap();
        let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        for column in [
            "dtype",
            "n",
            "version",
            "impl",
            "first_pass_gbps",
            "pct_of_read_only",
            "to_scalar_us",
            "speedup_vs_v0",
            "speedup_vs_prev",
            "check",
        ] {
            assert!(
                headers.iter().any(|h| h == column),
                "no {column} in {headers:?}"
            );
        }
        assert_eq!(reader.records().count(), rows.len());

        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("bench.json")).unwrap())
                .unwrap();
        assert_eq!(json["header"]["device"], "Test GPU");
        assert_eq!(json["header"]["repeat"], 20);
        assert!(json["header"]["rotation"].as_str().unwrap().contains("L2"));
        assert!(
            json["header"]["cub"]
                .as_str()
                .unwrap()
                .contains("own input")
        );
        assert_eq!(json["rows"].as_array().unwrap().len(), rows.len());
        assert!(
            json["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["impl"] == "cub")
        );

        let svg = std::fs::read_to_string(dir.join("bench_f32.svg")).unwrap();
        for name in [
            "v0",
            "v3",
            "v8",
            "CUB DeviceReduce::Sum",
            "read-only (ceiling)",
            "Test GPU",
        ] {
            assert!(svg.contains(name), "{name} not in the chart");
        }
        assert!(!svg.contains("cuda-v3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_output_names_the_file() {
        let dir = temp_dir("unwritable");
        let blocker = dir.join("file");
        std::fs::write(&blocker, "").unwrap();
        let error = write_results(&blocker, &header(), &synthetic_rows()).unwrap_err();
        let text = format!("{error:#}");
        assert!(
            text.starts_with("writing ") && text.contains("bench.csv"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn chart_series_are_versions_cub_and_the_ceiling() {
        let series = chart_series(&synthetic_rows(), "f32");
        let names: Vec<(&str, bool, usize)> = series
            .iter()
            .map(|s| (s.name.as_str(), s.ceiling, s.points.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("read-only (ceiling)", true, 2),
                ("v0", false, 2),
                ("v3", false, 2),
                ("v8", false, 2),
                ("CUB DeviceReduce::Sum", false, 1)
            ]
        );
        assert!(chart_series(&synthetic_rows(), "f64").is_empty());
    }

    #[test]
    fn gbps_and_labels() {
        assert_eq!(gbps(4_000_000, 1.0), Some(4.0));
        assert_eq!(gbps(4, 0.0), None);
        assert_eq!(size_label(1 << 20), "2^20");
        assert_eq!(size_label(1000), "1000");
    }
}
