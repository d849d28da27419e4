//! One input, several versions: make or load the input, compute the reference, run each version
//! through the library on the chosen backend (timed on the GPU), and check each result.

use crate::element::{DType, HostElement, OpKind};
use crate::file::Loaded;
use crate::input::{Pattern, generate};
use crate::reference::{Checked, Verdict};
use crate::timing::{Timer, Timing};
use crate::with_dtype_and_op;
use anyhow::{Context, Result, bail};
use reduce_rs::backend::gpu::Gpu;
use reduce_rs::plan::{self, Pass, Sizes};
use reduce_rs::{
    BackendInfo, GpuUnavailable, Reducer, SIM_MULTIPROCESSORS, Schedule, SimReport, Version,
    gpu_available,
};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The GPU when a driver and a device are there, otherwise the simulator.
    Auto,
    /// GPU 0: timed with CUDA events.
    Gpu,
    /// The CPU simulator: every access checked, no timing.
    Sim,
}

/// The backend to use, and for `auto` why the GPU was not (no driver, no device): the caller
/// says so, together with anything else the fallback changes.
pub fn open_backend(
    choice: BackendChoice,
    ptx_dir: Option<&Path>,
    schedule: Schedule,
) -> Result<(Reducer, Option<String>)> {
    let gpu = |ptx_dir: Option<&Path>| -> Result<Reducer> {
        let reducer = Reducer::gpu(0)?;
        Ok(match ptx_dir {
            Some(dir) => reducer.with_kernels_from(dir)?,
            None => reducer,
        })
    };
    match choice {
        BackendChoice::Sim => Ok((Reducer::simulator_with(schedule), None)),
        BackendChoice::Gpu => Ok((gpu(ptx_dir)?, None)),
        BackendChoice::Auto => match gpu_available() {
            Ok(_) => Ok((gpu(ptx_dir)?, None)),
            Err(why @ (GpuUnavailable::NoDriver | GpuUnavailable::NoDevice)) => {
                Ok((Reducer::simulator_with(schedule), Some(why.to_string())))
            }
            Err(other) => Err(reduce_rs::Error::from(other).into()),
        },
    }
}

/// Where a run's input comes from: generated from a pattern and a seed, or read from
/// a file (`--input`).
#[derive(Clone, Debug)]
pub enum InputSource {
    Generated { pattern: Pattern, seed: u64 },
    File { path: String },
}

/// What a run reduces with each of its versions: one input and operation, and the launch
/// limits.
#[derive(Clone, Debug)]
pub struct RunCase {
    pub dtype: DType,
    pub op: OpKind,
    pub len: usize,
    /// `None`: each version's tuned block size.
    pub block: Option<u32>,
    /// Grid-filling versions use at most this many blocks.
    pub max_blocks: Option<u32>,
    /// Generated inputs: elements made before the reduced ones, so that the input starts
    /// `offset` elements past a 16-byte boundary (v8's scalar head).
    pub offset: usize,
    pub source: InputSource,
}

/// How a run was measured.
#[derive(Clone, Debug)]
pub enum Measure {
    Gpu {
        first_pass_ms: f64,
        to_result_ms: f64,
        repeat: u32,
        deterministic: bool,
    },
    Sim(SimReport),
}

/// One version's result on one case.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub version: Version,
    pub passes: Vec<Pass>,
    pub additions: u64,
    pub verdict: Verdict,
    pub measure: Measure,
}

impl Outcome {
    /// Input bytes over the first pass's time: comparable with the tutorial's figures.
    pub fn first_pass_gbps(&self, case: &RunCase) -> Option<f64> {
        match self.measure {
            Measure::Gpu { first_pass_ms, .. } => {
                Some((case.len * case.dtype.size()) as f64 / (first_pass_ms * 1e-3) / 1e9)
            }
            Measure::Sim(_) => None,
        }
    }
}

/// What [`run_versions`] starts next, for a progress display: each step is one blocking call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Making (or converting) the input and computing the CPU reference.
    Input,
    Version(Version),
}

/// Runs every version in `versions` on the same input, calling `started` before each step and
/// `each` with each version's result as it finishes. The error is for the input itself (e.g.
/// too large); each version's own failure is its result.
pub fn run_versions(
    reducer: &mut Reducer,
    versions: &[Version],
    case: &RunCase,
    loaded: Option<&Loaded>,
    timing: Timing,
    mut started: impl FnMut(Step),
    mut each: impl FnMut(Version, Result<Outcome>),
) -> Result<()> {
    check_fits(reducer, case)?;
    with_dtype_and_op!(
        case.dtype,
        case.op,
        run_typed(
            reducer,
            versions,
            case,
            loaded,
            timing,
            &mut started,
            &mut each
        )
    )
}

/// Refuses, before any allocation, an input that cannot fit: on the GPU, or in host memory,
/// where it is made first.
pub fn check_fits(reducer: &Reducer, case: &RunCase) -> Result<()> {
    let gib = |bytes: usize| bytes as f64 / f64::from(1u32 << 30);
    let Some(bytes) = case.len.checked_mul(case.dtype.size()) else {
        bail!(
            "{} elements of {} do not fit in this machine's address space",
            case.len,
            case.dtype
        );
    };
    if let Some(gpu) = reducer.gpu_backend() {
        let (free, _) = gpu.memory()?;
        // The input, and partials (at most one per 64 elements, in two buffers).
        let needed = bytes + 2 * (case.len / 64 + 1) * case.dtype.size();
        if needed > free {
            bail!(
                "{} × {} needs {:.1} GiB of GPU memory but {:.1} GiB are free on {}",
                case.len,
                case.dtype,
                gib(needed),
                gib(free),
                gpu.info().name
            );
        }
    }
    if matches!(case.source, InputSource::Generated { .. })
        && let Some(available) = host_available_memory()
        && bytes > available
    {
        bail!(
            "{} × {} needs {:.1} GiB of host memory to generate the input but {:.1} GiB are available",
            case.len,
            case.dtype,
            gib(bytes),
            gib(available)
        );
    }
    Ok(())
}

/// `MemAvailable` from `/proc/meminfo`, where there is one.
pub fn host_available_memory() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn run_typed<T: HostElement, O: Checked<T> + Default>(
    reducer: &mut Reducer,
    versions: &[Version],
    case: &RunCase,
    loaded: Option<&Loaded>,
    timing: Timing,
    started: &mut dyn FnMut(Step),
    each: &mut dyn FnMut(Version, Result<Outcome>),
) -> Result<()> {
    started(Step::Input);
    let (buffer, offset): (Vec<T>, usize) = match (&case.source, loaded) {
        (InputSource::Generated { pattern, seed }, _) => {
            let mut all = generate(*pattern, case.offset + case.len, *seed);
            // The elements before the input are the largest the type has: a kernel that reads
            // them changes every result.
            all[..case.offset].fill(T::from_small(i32::from(i8::MAX)));
            (all, case.offset)
        }
        (InputSource::File { .. }, Some(loaded)) => (loaded.elements(), 0),
        (InputSource::File { path }, None) => bail!("{path} was not loaded"),
    };
    let input = &buffer[offset..];
    let expected = O::reference(input);
    let gpu_input = match reducer.gpu_backend() {
        Some(gpu) => Some(upload(gpu, &buffer)? + (offset * size_of::<T>()) as u64),
        None => None,
    };
    for &version in versions {
        started(Step::Version(version));
        let result = (|| -> Result<Outcome> {
            reducer.set_version(version);
            reducer.set_block_size(case.block)?;
            // The simulator plans its own launches: it must see the case's grid limit too (the
            // GPU path passes it to the timer below).
            reducer.set_max_blocks(case.max_blocks);
            let reproducible = reducer.reproducible_kernel::<T, O>().is_some();
            if reproducible {
                return run_reproducible::<T, O>(
                    reducer, version, case, input, &expected, gpu_input, timing,
                );
            }
            if !version.supports(case.dtype, case.op) {
                return Err(reduce_rs::Error::Unsupported {
                    version: version.name(),
                    dtype: case.dtype,
                    op: case.op,
                }
                .into());
            }
            let block = reducer.block_for::<T, O>(case.len)?;
            match (&gpu_input, reducer.gpu_backend()) {
                (Some(device), Some(gpu)) => {
                    let timer = Timer::new(gpu)?;
                    let run = timer.reduce::<T, O>(
                        version,
                        block,
                        case.max_blocks,
                        &[*device],
                        case.len,
                        timing,
                    )?;
                    let additions = plan::additions_per_element(version, &run.passes);
                    let got = if case.len == 0 {
                        O::empty()
                    } else {
                        O::output(run.value)
                    };
                    Ok(Outcome {
                        version,
                        additions,
                        verdict: O::check(got, &expected, additions),
                        passes: run.passes,
                        measure: Measure::Gpu {
                            first_pass_ms: run.first_pass_ms,
                            to_result_ms: run.to_result_ms,
                            repeat: run.repeat,
                            deterministic: run.deterministic,
                        },
                    })
                }
                _ => {
                    let got = reducer.reduce(O::default(), input)?;
                    let mut resident = plan::resident_blocks(SIM_MULTIPROCESSORS, block);
                    if let Some(max) = case.max_blocks {
                        resident = resident.min(u64::from(max));
                    }
                    let passes =
                        plan::passes(version, case.len, block, Sizes::of::<T, O>(), resident)?;
                    let additions = plan::additions_per_element(version, &passes);
                    Ok(Outcome {
                        version,
                        additions,
                        verdict: O::check(got, &expected, additions),
                        passes,
                        measure: Measure::Sim(reducer.last_simulation().unwrap_or_default()),
                    })
                }
            }
        })();
        each(version, result);
    }
    if let (Some(_), Some(gpu)) = (gpu_input, reducer.gpu_backend()) {
        gpu.free_staging();
    }
    Ok(())
}

/// One run of the reproducible kernel (the reducer's `with_reproducible` mode) in `version`'s
/// place: timed on the GPU, simulated otherwise, and checked against the reference with the
/// binned sum's error bound.
#[allow(clippy::too_many_arguments)]
fn run_reproducible<T: HostElement, O: Checked<T> + Default>(
    reducer: &Reducer,
    version: Version,
    case: &RunCase,
    input: &[T],
    expected: &O::Expected,
    gpu_input: Option<u64>,
    timing: Timing,
) -> Result<Outcome> {
    let additions = reproducible_additions(input, case.dtype);
    match (gpu_input, reducer.gpu_backend()) {
        (Some(device), Some(gpu)) => {
            let timer = Timer::new(gpu)?;
            let run = timer.reduce_reproducible::<T, O>(reducer, &[device], case.len, timing)?;
            let got = if case.len == 0 {
                O::empty()
            } else {
                O::output(run.value)
            };
            Ok(Outcome {
                version,
                additions,
                verdict: O::check(got, expected, additions),
                passes: run.passes,
                measure: Measure::Gpu {
                    first_pass_ms: run.first_pass_ms,
                    to_result_ms: run.to_result_ms,
                    repeat: run.repeat,
                    deterministic: run.deterministic,
                },
            })
        }
        _ => {
            let got = reducer.reduce(O::default(), input)?;
            let launch = reducer.reproducible_launch::<T, O>(case.len)?;
            Ok(Outcome {
                version,
                additions,
                verdict: O::check(got, expected, additions),
                passes: vec![Pass {
                    len: case.len,
                    launch,
                }],
                measure: Measure::Sim(reducer.last_simulation().unwrap_or_default()),
            })
        }
    }
}

/// The `h` of the reference check (`|error| ≤ γ_h·Σ|x|`, `γ_h ≈ h·u`) that covers the binned
/// sum's error: each element is rounded once to at most `2^-26·max|x|` (states in f32, whose
/// `u` is 2^-24) or `2^-80·max|x|` (states in f64, `u` = 2^-53), plus the final rounding: so
/// `h = n·max|x|·(2^-26 / u) / Σ|x| + 2`. For inputs of one magnitude (uniform in [-1, 1)) it
/// is 2 or 3; it grows only where a few large values sit among many small ones.
pub fn reproducible_additions<T: HostElement>(input: &[T], dtype: DType) -> u64 {
    let (largest, total) = input
        .iter()
        .map(|x| x.to_f64().abs())
        .filter(|x| x.is_finite())
        .fold((0.0f64, 0.0f64), |(m, s), x| (m.max(x), s + x));
    if total == 0.0 {
        return 2;
    }
    let per_element = match dtype {
        DType::F32 | DType::F16 | DType::Bf16 => 0.25, // 2^-26 / 2^-24
        _ => 2f64.powi(-27),                           // 2^-80 / 2^-53
    };
    (input.len() as f64 * largest * per_element / total).ceil() as u64 + 2
}

/// Copies `input` to the GPU (once for every version) and returns its device address.
fn upload<T: HostElement>(gpu: &Gpu, input: &[T]) -> Result<u64> {
    gpu.upload_elements(input).with_context(|| {
        format!(
            "copying the input ({} MiB) to the GPU",
            size_of_val(input) >> 20
        )
    })
}

/// The backend's description, as the first output line shows it.
pub fn describe(reducer: &Reducer) -> String {
    match reducer.backend() {
        BackendInfo::Gpu {
            name,
            multiprocessors,
            arch,
            kernels,
            ..
        } => format!("gpu: {name} ({multiprocessors} SMs, {arch}), kernels from {kernels}"),
        BackendInfo::Simulator { schedule } => format!(
            "sim: CPU SIMT simulator ({SIM_MULTIPROCESSORS} simulated SMs, {} schedule)",
            match schedule {
                Schedule::InOrder => "in-order".to_string(),
                Schedule::Shuffled { seed } => format!("shuffled, seed {seed}"),
            }
        ),
    }
}
