//! Reductions of every row, column or segment, as the CLI, the tests and the benchmark run them:
//! the shapes made from command-line words, ragged segments drawn from a seed, and the check of
//! every result against the CPU reference of its own row.

use crate::element::HostElement;
use crate::reference::{Checked, Verdict};
use crate::timing::{Timer, Timing};
use anyhow::{Context, Result, bail};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::plan::SegmentOffsets;
use reduce_rs::plan::shapes::{ShapeKernel, ShapePlan};
use reduce_rs::{Reducer, Shape};

/// What to reduce each of, independent of the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShapeSpec {
    Rows {
        rows: usize,
        cols: usize,
    },
    Columns {
        rows: usize,
        cols: usize,
    },
    /// `offsets` (`segments + 1` of them) over `len` elements.
    Segments {
        offsets: Vec<usize>,
    },
}

impl ShapeSpec {
    pub fn shape(&self) -> Shape<'_> {
        match self {
            ShapeSpec::Rows { rows, cols } => Shape::rows(*rows, *cols),
            ShapeSpec::Columns { rows, cols } => Shape::columns(*rows, *cols),
            ShapeSpec::Segments { offsets } => Shape::segments(offsets),
        }
    }

    /// Elements of the input.
    pub fn len(&self) -> usize {
        match self {
            ShapeSpec::Rows { rows, cols } | ShapeSpec::Columns { rows, cols } => rows * cols,
            ShapeSpec::Segments { offsets } => offsets.last().copied().unwrap_or(0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `8192×8192 rows`, `segments (1000, mean 300)`.
    pub fn describe(&self) -> String {
        match self {
            ShapeSpec::Rows { rows, cols } => format!("each row of {rows} × {cols}"),
            ShapeSpec::Columns { rows, cols } => format!("each column of {rows} × {cols}"),
            ShapeSpec::Segments { offsets } => format!(
                "{} segments of {} elements",
                offsets.len().saturating_sub(1),
                self.len()
            ),
        }
    }

    /// `len` elements as `rows` rows (columns when `by_column`); `len` must divide evenly.
    pub fn matrix(len: usize, rows: usize, by_column: bool) -> Result<ShapeSpec> {
        if rows == 0 {
            if len == 0 {
                return Ok(ShapeSpec::Rows { rows: 0, cols: 0 });
            }
            bail!("--rows 0 cannot hold {len} elements");
        }
        if !len.is_multiple_of(rows) {
            bail!(
                "{len} elements do not make {rows} rows of equal length ({len} / {rows} is not whole)"
            );
        }
        let cols = len / rows;
        Ok(if by_column {
            ShapeSpec::Columns { rows, cols }
        } else {
            ShapeSpec::Rows { rows, cols }
        })
    }

    /// `segments` segments of random lengths averaging `mean_len` (about one in eight empty),
    /// reproducible from `seed`.
    pub fn ragged(segments: usize, mean_len: usize, seed: u64) -> ShapeSpec {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut offsets = Vec::with_capacity(segments + 1);
        offsets.push(0);
        for _ in 0..segments {
            let len = if rng.random_range(0..8) == 0 {
                0
            } else {
                rng.random_range(0..=2 * mean_len)
            };
            offsets.push(offsets.last().copied().unwrap_or(0) + len);
        }
        ShapeSpec::Segments { offsets }
    }
}

/// What `plan`'s split is, as the line naming its launch says it (", 8 lanes per row"): the
/// split counts lanes, blocks or bands by kernel ([`ShapePlan::split`]); nothing where it is 1,
/// or where it is the grid already printed (`ColumnsNarrow`).
pub fn split_label(plan: &ShapePlan) -> String {
    let split = plan.split;
    match plan.kernel {
        _ if split <= 1 => String::new(),
        ShapeKernel::RowsWarp => format!(", {split} lanes per row"),
        ShapeKernel::RowsSplit => format!(", {split} blocks per row"),
        ShapeKernel::Columns => format!(", rows in {split} bands"),
        ShapeKernel::RowsBlock | ShapeKernel::ColumnsNarrow => String::new(),
    }
}

/// Upper bound on the additions any element of a result goes through in `plan`'s kernel, for
/// the float error bound (see `reduce_rs::plan::additions_per_element`).
pub fn additions(plan: &ShapePlan, len: usize) -> u64 {
    let (len, block) = (len as u64, u64::from(plan.launch.block));
    let split = plan.split as u64;
    let tree = u64::from(plan.launch.block.ilog2());
    match plan.kernel {
        // `split` lanes per row: each adds its share, then log2(split) shuffle steps.
        ShapeKernel::RowsWarp => len.div_ceil(split.max(1)) + u64::from(split.max(1).ilog2()) + 2,
        ShapeKernel::RowsBlock => len.div_ceil(block) + tree + 2,
        ShapeKernel::RowsSplit => len.div_ceil(block * split) + 2 * tree + split + 2,
        // A thread walks its band's rows `rows_per_step` apart, and the largest band (whole
        // runs of `rows_per_step × LOADS_IN_FLIGHT` rows, the last with the rows past them)
        // holds at most two runs more than an even share; then the row offsets' tree and the
        // bands.
        ShapeKernel::Columns => {
            let runs = 2 * kernels_gpu::shapes::columns::LOADS_IN_FLIGHT as u64;
            len.div_ceil(split.max(1)) + runs + tree + split
        }
        // `split` blocks: a thread adds its share of a column's `len` rows (at most 16 times an
        // even share: 32 columns of 2-lane f64 put a column in every 16th thread; 32 covers
        // it), its vector's lanes of that column (3 halvings at most), the warp's shuffles, the
        // block's warps (up to one value per lane of a column a warp: 8 of bf16's 3 columns),
        // the blocks' partials, the last block's shuffles and warps (one value each), and the
        // scalars before the first vector and after the last (7 each at most).
        ShapeKernel::ColumnsNarrow => {
            let widest = kernels_gpu::shapes::columns_narrow::MAX_NARROW_COLUMNS as u64;
            let lanes = kernels_gpu::launch::MAX_LANES as u64;
            let warp = u64::from(kernels_gpu::launch::WARP_SIZE);
            let (shuffles, warps) = (u64::from(warp.ilog2()), block / warp);
            let meet = 2 * shuffles + warps * lanes + warps;
            len.div_ceil(block * split.max(1)) * widest + 3 + meet + split + 14
        }
    }
}

/// The check of every result of one shape reduction.
#[derive(Clone, Debug)]
pub struct ShapeVerdict {
    pub results: usize,
    pub failed: usize,
    /// The first failure, described.
    pub first_failure: Option<String>,
    /// The largest relative error among the results.
    pub worst_rel_error: f64,
}

impl ShapeVerdict {
    pub fn pass(&self) -> bool {
        self.failed == 0
    }
}

/// The elements of row, column or segment `i` of `input` laid out as `spec` (a column
/// gathered: fine for checking; the kernels read it in place).
pub fn elements_of<T: Copy>(input: &[T], spec: &ShapeSpec, i: usize) -> Vec<T> {
    match spec {
        ShapeSpec::Rows { cols, .. } => input[i * cols..(i + 1) * cols].to_vec(),
        ShapeSpec::Columns { rows, cols } => (0..*rows).map(|r| input[r * cols + i]).collect(),
        ShapeSpec::Segments { offsets } => input[offsets[i]..offsets[i + 1]].to_vec(),
    }
}

/// Whether `kernel` (an entry point) is a reproducible shape kernel, whose results are checked
/// with the binned sum's error bound.
pub fn is_reproducible(kernel: &str) -> bool {
    kernel.starts_with("reproducible_")
}

/// Checks every result of `got` (one per row, column or segment of `input`, by `kernel` planned
/// as `plan`) against the CPU reference of its own elements, with the error bound of the
/// kernel's order of additions (the binned sum's for a reproducible kernel).
pub fn check_each<T: HostElement, O: Checked<T>>(
    input: &[T],
    spec: &ShapeSpec,
    plan: &ShapePlan,
    kernel: &str,
    got: &[O::Output],
) -> ShapeVerdict {
    let shape = spec.shape();
    let mut verdict = ShapeVerdict {
        results: got.len(),
        failed: 0,
        first_failure: None,
        worst_rel_error: 0.0,
    };
    if got.len() != shape.results() {
        verdict.failed = 1;
        verdict.first_failure = Some(format!(
            "{} results for {} rows",
            got.len(),
            shape.results()
        ));
        return verdict;
    }
    for (i, &result) in got.iter().enumerate() {
        let elements = elements_of(input, spec, i);
        let additions = if is_reproducible(kernel) {
            crate::run::reproducible_additions(&elements, T::DTYPE)
        } else {
            additions(plan, elements.len())
        };
        let check: Verdict = O::check(result, &O::reference(&elements), additions);
        record(&mut verdict, i, &check);
    }
    verdict
}

fn record(verdict: &mut ShapeVerdict, i: usize, check: &Verdict) {
    if check.rel_error.is_finite() {
        verdict.worst_rel_error = verdict.worst_rel_error.max(check.rel_error);
    }
    if !check.pass {
        verdict.failed += 1;
        if verdict.first_failure.is_none() {
            verdict.first_failure = Some(format!(
                "result {i}: got {}, expected {} (tolerance {:.3e})",
                check.got, check.expected, check.tolerance
            ));
        }
    }
}

/// Runs `O` over every row, column or segment of `input` on `reducer` and checks each result.
pub fn run_and_check<T: HostElement, O: Checked<T> + Default>(
    reducer: &Reducer,
    input: &[T],
    spec: &ShapeSpec,
) -> Result<(ShapePlan, String, ShapeVerdict)> {
    let (plan, name) = reducer.plan_each::<T, O>(&spec.shape());
    let got = reducer.reduce_each(O::default(), input, spec.shape())?;
    let verdict = check_each::<T, O>(input, spec, &plan, &name, &got);
    Ok((plan, name, verdict))
}

/// One shape reduction run, checked (and timed on the GPU).
#[derive(Clone, Debug)]
pub struct ShapeRun {
    pub plan: ShapePlan,
    /// The kernel's entry point (`rows_split_bf16_argmax`).
    pub kernel: String,
    pub verdict: ShapeVerdict,
    /// GPU time, median (ms), or `None` on the simulator.
    pub gpu_ms: Option<f64>,
    /// Simulator: CPU seconds.
    pub sim_seconds: Option<f64>,
}

/// Runs `O` over every row, column or segment of `input` on `reducer`, checks every result,
/// and on the GPU times the kernel (pre-roll, two events, median).
pub fn run_timed<T: HostElement, O: Checked<T> + Default>(
    reducer: &Reducer,
    input: &[T],
    spec: &ShapeSpec,
    timing: Timing,
) -> Result<ShapeRun> {
    match reducer.gpu_backend() {
        Some(_) => {
            let (plan, kernel) = reducer.plan_each::<T, O>(&spec.shape());
            let device_input = GpuInput::new(reducer, input)?;
            time_plan::<T, O>(
                reducer,
                input,
                &[device_input.ptr()],
                spec,
                plan,
                kernel,
                timing,
            )
        }
        None => {
            let (plan, kernel, verdict) = run_and_check::<T, O>(reducer, input, spec)?;
            Ok(ShapeRun {
                plan,
                kernel,
                verdict,
                gpu_ms: None,
                sim_seconds: reducer
                    .last_simulation()
                    .map(|report| report.wall_time.as_secs_f64()),
            })
        }
    }
}

/// A device copy of the input, for timing.
pub struct GpuInput(reduce_rs::backend::gpu::DeviceBuffer);

impl GpuInput {
    pub fn new<T: HostElement>(reducer: &Reducer, input: &[T]) -> Result<GpuInput> {
        let gpu = reducer.gpu_backend().context("timing needs the GPU")?;
        Ok(GpuInput(gpu.copy_to_device(input)?))
    }

    pub fn ptr(&self) -> u64 {
        self.0.ptr()
    }
}

/// Times `plan` (kernel `kernel`) on the GPU over the device copies `inputs` of `input` (run
/// `r` reads copy `r % inputs.len()`), then reads the last run's results back and checks them.
pub fn time_plan<T: HostElement, O: Checked<T>>(
    reducer: &Reducer,
    input: &[T],
    inputs: &[u64],
    spec: &ShapeSpec,
    plan: ShapePlan,
    kernel: String,
    timing: Timing,
) -> Result<ShapeRun> {
    let gpu = reducer.gpu_backend().context("timing needs the GPU")?;
    let timer = Timer::new(gpu)?;
    let shape = spec.shape();
    let results = shape.results();
    let bytes = results * size_of::<O::Device>();
    let output = gpu.results_buffer(bytes)?;
    // Segment offsets go up once, before the timing, as PyTorch's and CUB's calls take them
    // (the library's `Shape::segments` copies them up at every call).
    let device_offsets = match spec {
        ShapeSpec::Segments { offsets } => {
            let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
            Some(gpu.copy_to_device(&wide)?)
        }
        _ => None,
    };
    let offsets = match &device_offsets {
        Some(buffer) => SegmentOffsets::Device(buffer.ptr()),
        None => SegmentOffsets::None,
    };
    let job = reducer.job_each::<T, O>(&shape, plan, offsets, input.len());
    let ms = timer
        .time(timing, |run| {
            Ok(gpu.run(&job, inputs[run % inputs.len()], output)?)
        })
        .with_context(|| format!("timing {kernel}"))?;
    let raw = gpu.read_back_many(output, bytes)?;
    let got = shape.outputs_of::<T, O>(&raw);
    let verdict = check_each::<T, O>(input, spec, &plan, &kernel, &got);
    Ok(ShapeRun {
        plan,
        kernel,
        verdict,
        gpu_ms: Some(ms),
        sim_seconds: None,
    })
}

/// The CLI's `--rows`: makes or loads the input of `case`, runs `case.op` over every row (or
/// column) of `spec`, prints what ran, how fast and whether every result is right; `Ok(false)`
/// when a result is wrong.
pub fn run_case(
    reducer: &Reducer,
    case: &crate::run::RunCase,
    loaded: Option<&crate::file::Loaded>,
    spec: &ShapeSpec,
    timing: Timing,
) -> Result<bool> {
    crate::with_dtype_and_op!(
        case.dtype,
        case.op,
        run_case_typed(reducer, case, loaded, spec, timing)
    )
}

fn run_case_typed<T: HostElement, O: Checked<T> + Default>(
    reducer: &Reducer,
    case: &crate::run::RunCase,
    loaded: Option<&crate::file::Loaded>,
    spec: &ShapeSpec,
    timing: Timing,
) -> Result<bool> {
    let input: Vec<T> = match (&case.source, loaded) {
        (crate::run::InputSource::Generated { pattern, seed }, _) => {
            crate::input::generate(*pattern, case.len, *seed)
        }
        (crate::run::InputSource::File { .. }, Some(loaded)) => loaded.elements(),
        (crate::run::InputSource::File { path }, None) => bail!("{path} was not loaded"),
    };
    let run = run_timed::<T, O>(reducer, &input, spec, timing)?;
    let launch = run.plan.launch;
    println!();
    println!(
        "{} of {} — kernel {} ({} × {}{})",
        case.op,
        spec.describe(),
        run.kernel,
        launch.grid,
        launch.block,
        split_label(&run.plan)
    );
    if let Some(ms) = run.gpu_ms {
        let bytes = (input.len() * size_of::<T>()) as f64;
        println!(
            "  gpu time  {ms:.4} ms = {:.0} GB/s (median of {}, CUDA events behind a GPU pre-roll)",
            bytes / (ms * 1e-3) / 1e9,
            timing.repeat
        );
    }
    if let Some(seconds) = run.sim_seconds {
        println!("  simulated in {seconds:.2} s (CPU time, not GPU time), every access checked");
    }
    let verdict = &run.verdict;
    println!(
        "  results   {} of {} right against the CPU reference of each {} (worst rel. error {:.2e}){}",
        verdict.results - verdict.failed,
        verdict.results,
        match spec {
            ShapeSpec::Rows { .. } => "row",
            ShapeSpec::Columns { .. } => "column",
            ShapeSpec::Segments { .. } => "segment",
        },
        verdict.worst_rel_error,
        verdict
            .first_failure
            .as_ref()
            .map_or(String::new(), |f| format!("; first wrong: {f}"))
    );
    println!("  {}", if verdict.pass() { "PASS" } else { "FAIL" });
    Ok(verdict.pass())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_and_ragged_segments() {
        assert_eq!(
            ShapeSpec::matrix(12, 3, false).unwrap(),
            ShapeSpec::Rows { rows: 3, cols: 4 }
        );
        assert!(
            ShapeSpec::matrix(13, 3, false)
                .unwrap_err()
                .to_string()
                .contains("not whole")
        );
        let spec = ShapeSpec::ragged(1000, 50, 7);
        let ShapeSpec::Segments { offsets } = &spec else {
            panic!()
        };
        assert_eq!(offsets.len(), 1001);
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
        assert!(
            offsets.windows(2).any(|w| w[0] == w[1]),
            "some empty segments"
        );
        assert_eq!(spec, ShapeSpec::ragged(1000, 50, 7));
    }
}
