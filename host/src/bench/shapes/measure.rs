//! `bench --shapes`' own measurements: one case on the GPU, the library's kernels and the
//! read-only kernel, over input copies rotated out of L2.

use super::cases::ShapeCase;
use super::table::{ShapeRow, dimensions};
use crate::bench::probe::read_probe;
use crate::element::{HostElement, OpKind};
use crate::input::{Pattern, generate};
use crate::reference::Checked;
use crate::shapes::time_plan;
use crate::timing::{Timer, Timing, rotation_copies};
use anyhow::{Context, Result};
use reduce_rs::backend::gpu::{DeviceBuffer, Gpu};
use reduce_rs::plan;
use reduce_rs::plan::shapes::{ShapeKernel, ShapePlan};
use reduce_rs::{Reducer, Shape, Version};

/// Copies of `input` on the GPU, enough that no run finds its copy in L2.
fn copies<T: HostElement>(gpu: &Gpu, input: &[T]) -> Result<Vec<DeviceBuffer>> {
    let (free, _) = gpu.memory()?;
    (0..rotation_copies(size_of_val(input), Some(free)))
        .map(|_| gpu.copy_to_device(input).map_err(anyhow::Error::from))
        .collect()
}

/// Times `case` on the GPU: the read-only kernel over the same bytes, then the library's
/// choice of kernel and every other kernel that could reduce the shape, each checked; where
/// the reproducible mode covers the reduction, its twins of the shape kernels too; and the
/// chosen kernel (and chosen twin) with each of `splits` where its split is free
/// ([`Reducer::plan_each_split`]).
pub fn run_case<T: HostElement, O: Checked<T> + Default>(
    reducer: &mut Reducer,
    case: &ShapeCase,
    splits: &[usize],
    timing: Timing,
) -> Result<Vec<ShapeRow>> {
    // Where the reproducible mode covers the reduction, its twins of the shape kernels as it
    // would launch each (the one it chooses marked), and its choice with each of `splits`,
    // timed beside the plain kernels.
    let repro_plans = case
        .spec()
        .filter(|_| reduce_rs::plan::reproducible::kernel_for(case.dtype, case.op).is_some())
        .map(|spec| {
            reducer.set_reproducible(true);
            let plans = launches::<T, O>(reducer, &spec.shape(), splits);
            reducer.set_reproducible(false);
            plans
        })
        .unwrap_or_default();
    let gpu = reducer.gpu_backend().context("a GPU")?;
    let pattern = if O::KIND == OpKind::Sum {
        Pattern::SmallIntegers
    } else {
        Pattern::Random
    };
    let input: Vec<T> = generate(pattern, case.elements(), 1);
    let device_copies = copies(gpu, &input)?;
    let pointers: Vec<u64> = device_copies.iter().map(DeviceBuffer::ptr).collect();
    let bytes = size_of_val(&input[..]) as f64;
    let (rows, cols) = dimensions(&case.shape);
    let row = |implementation: &str, kernel: String, chosen: bool, ms: f64, check: &str| ShapeRow {
        implementation: implementation.into(),
        kernel,
        chosen,
        case: case.shape.kind().into(),
        op: case.op.name().into(),
        dtype: case.dtype.name().into(),
        rows,
        cols,
        n: input.len(),
        us: ms * 1e3,
        gbps: bytes / (ms * 1e-3) / 1e9,
        check: check.into(),
    };
    let timer = Timer::new(gpu)?;
    let mut out = vec![row(
        "read-only",
        format!("read_probe_{}_b256", T::DTYPE),
        false,
        read_probe::<T>(&timer, &pointers, input.len(), timing)?,
        "-",
    )];
    // The CPU reference of a whole array, computed once for all its timings.
    let mut reference = None;
    match case.spec() {
        None => {
            let reference = reference.get_or_insert_with(|| O::reference(&input));
            let version = Version::fastest();
            let block = gpu.tuned_block::<T, O>(version, input.len())?;
            let name = plan::entry_name::<T, O>(version, block);
            // As the library launches it, then with at most each of `splits` blocks: v8's
            // grid is its free split.
            for cap in grid_caps(splits) {
                let run =
                    timer.reduce::<T, O>(version, block, cap, &pointers, input.len(), timing)?;
                let additions = plan::additions_per_element(version, &run.passes);
                let verdict = O::check(O::output(run.value), reference, additions);
                out.push(capped_row(&row, &name, cap, run.to_result_ms, verdict.pass));
            }
        }
        Some(spec) => {
            let shape = spec.shape();
            let plans = launches::<T, O>(reducer, &shape, splits);
            // Times one launch, checks it, and adds its row.
            let mut time_row = |launch: Launch| -> Result<()> {
                let Launch {
                    plan,
                    name,
                    note,
                    chosen,
                } = launch;
                let run = time_plan::<T, O>(
                    reducer,
                    &input,
                    &pointers,
                    &spec,
                    plan,
                    name.clone(),
                    timing,
                )?;
                if !run.verdict.pass() {
                    eprintln!(
                        "error: {name}: {}",
                        run.verdict.first_failure.clone().unwrap_or_default()
                    );
                }
                out.push(row(
                    "reduce-rs",
                    format!("{name}{note}"),
                    chosen,
                    run.gpu_ms.unwrap_or(f64::NAN),
                    check_word(run.verdict.pass()),
                ));
                Ok(())
            };
            for launch in plans.into_iter().chain(repro_plans) {
                time_row(launch)?;
            }
        }
    }
    drop(timer);
    if let Some(reference) = reference {
        out.extend(whole_reproducible::<T, O>(
            reducer, &input, &reference, &pointers, splits, timing, row,
        )?);
    }
    Ok(out)
}

/// The reproducible sum (or mean) of the whole of `input` (at `pointers`; its CPU reference
/// `reference`), where the mode covers `T` × `O`: as the library launches it, then with at most
/// each of `splits` blocks. The reducer's own grid limit is restored after.
fn whole_reproducible<T: HostElement, O: Checked<T>>(
    reducer: &mut Reducer,
    input: &[T],
    reference: &O::Expected,
    pointers: &[u64],
    splits: &[usize],
    timing: Timing,
    row: impl Fn(&str, String, bool, f64, &str) -> ShapeRow,
) -> Result<Vec<ShapeRow>> {
    let Some(name) = plan::reproducible::kernel_for(T::DTYPE, O::KIND) else {
        return Ok(Vec::new());
    };
    let own_limit = reducer.max_blocks();
    let mut out = Vec::new();
    // Every cap timed in turn; the reducer gets its own limit back however that ends.
    let mut time_caps = || -> Result<()> {
        for cap in grid_caps(splits) {
            reducer.set_max_blocks(cap.or(own_limit));
            let timer = Timer::new(reducer.gpu_backend().context("a GPU")?)?;
            let run = timer.reduce_reproducible::<T, O>(reducer, pointers, input.len(), timing)?;
            // The binned sum's error bound counts as a tree of height 3 (as the versions'
            // bench).
            let verdict = O::check(O::output(run.value), reference, 3);
            out.push(capped_row(&row, &name, cap, run.to_result_ms, verdict.pass));
        }
        Ok(())
    };
    let timed = time_caps();
    reducer.set_max_blocks(own_limit);
    timed.map(|()| out)
}

/// The grid limits a whole array is timed with: the planner's (`None`), then each of `splits`.
fn grid_caps(splits: &[usize]) -> impl Iterator<Item = Option<u32>> + '_ {
    let caps = splits
        .iter()
        .map(|&s| Some(u32::try_from(s).unwrap_or(u32::MAX)));
    std::iter::once(None).chain(caps)
}

/// The row of one whole-array timing of kernel `name` with grid limit `cap`: the kernel column
/// names the limit when it is not the planner's (`None`, the chosen launch).
fn capped_row(
    row: &impl Fn(&str, String, bool, f64, &str) -> ShapeRow,
    name: &str,
    cap: Option<u32>,
    ms: f64,
    pass: bool,
) -> ShapeRow {
    let kernel = match cap {
        None => name.to_string(),
        Some(blocks) => format!("{name} max_blocks={blocks}"),
    };
    row("reduce-rs", kernel, cap.is_none(), ms, check_word(pass))
}

/// The check column of a run.
fn check_word(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// One launch `bench --shapes` times: a plan, its entry point, what its kernel column adds
/// to the name (` split=8`), and whether it is the reducer's choice.
struct Launch {
    plan: ShapePlan,
    name: String,
    note: String,
    chosen: bool,
}

/// Every shape kernel that can reduce `shape`, launched as `reducer` (in its mode) would launch
/// it (the one it chooses marked), then its choice with each of `splits` other than its own
/// where that kernel takes it ([`Reducer::plan_each_split`]).
fn launches<T: HostElement, O: Checked<T>>(
    reducer: &Reducer,
    shape: &Shape<'_>,
    splits: &[usize],
) -> Vec<Launch> {
    let (chosen, _) = reducer.plan_each::<T, O>(shape);
    let every_kernel = ShapeKernel::ALL.iter().filter_map(|&kernel| {
        let (plan, name) = reducer.plan_each_with::<T, O>(shape, kernel)?;
        let (note, chosen) = (String::new(), kernel == chosen.kernel);
        Some(Launch {
            plan,
            name,
            note,
            chosen,
        })
    });
    let other_splits = splits.iter().filter(|&&split| split != chosen.split);
    let chosen_split = other_splits.filter_map(|&split| {
        let (plan, name) = reducer.plan_each_split::<T, O>(shape, chosen.kernel, split)?;
        let (note, chosen) = (format!(" split={split}"), false);
        Some(Launch {
            plan,
            name,
            note,
            chosen,
        })
    });
    every_kernel.chain(chosen_split).collect()
}
