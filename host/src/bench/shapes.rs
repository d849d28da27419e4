//! `reduce-rs bench --shapes …`: reductions of a shape (every row, column or segment) and of
//! whole arrays with the library's operators, on the GPU, beside PyTorch and CUB timed in the
//! same run (`bench/torch/reduce_torch.py` where `python3` with torch is present,
//! `bench/cuda/reduce_shapes.cu` where `nvcc` is), and the read-only kernel over the same bytes.
//!
//! Two kinds of work:
//! - cases (`f32:sum:rows:8192x8192`, `bf16:argmax:rows:64x128256`, `f32:argmax:whole:2^28`,
//!   `f32:sum:segments:100000x300`): the library's choice of kernel, and every other kernel that
//!   could reduce the shape, each checked;
//! - the row sweep (`sweep`): f32 sums of 2^26 elements as rows of 32 … 2^24 elements, every
//!   row kernel and the peers: the chart of GB/s against row length.
//!
//! Every timing is the benchmark's: pre-roll, two CUDA events around the one launch, median,
//! input copies rotated so that L2 holds none of them.

use super::chart::{Series, write_svg};
use super::rows::size_label;
use crate::element::{DType, HostElement, OpKind};
use crate::input::{Pattern, generate};
use crate::reference::Checked;
use crate::shapes::{ShapeSpec, is_reproducible, time_plan};
use crate::timing::{Timer, Timing};
use crate::with_dtype_and_op;
use anyhow::{Context, Result, anyhow, bail};
use reduce_rs::backend::gpu::{DeviceBuffer, Gpu};
use reduce_rs::plan::shapes::{Family, ShapeKernel, plan_for, plan_reproducible};
use reduce_rs::plan::{self, Sizes};
use reduce_rs::{Reducer, Version};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cases of the issue that asked for these kernels, with PyTorch's figures to beat.
pub const TABLE: &str = "f32:sum:rows:8192x8192,f32:sum:rows:65536x512,f32:sum:rows:16x4194304,\
f32:sum:columns:8192x8192,bf16:argmax:rows:64x128256,f32:max:rows:32768x4096,\
f32:argmax:whole:2^28,f32:sum:whole:2^28,f32:sum:segments:100000x300";

/// Elements of the row sweep (rows × row length).
const SWEEP_ELEMENTS: usize = 1 << 26;

/// Input copies add up to at least this, so that no run finds its input in the 50 MB L2.
const ROTATION_BYTES: usize = 256 << 20;

/// What a case reduces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseShape {
    Whole(usize),
    Rows(usize, usize),
    Columns(usize, usize),
    /// Segments and their mean length (ragged, seeded).
    Segments(usize, usize),
}

/// One case: element type, operation, shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub dtype: DType,
    pub op: OpKind,
    pub shape: CaseShape,
}

impl Case {
    fn label(&self) -> String {
        let shape = match &self.shape {
            CaseShape::Whole(n) => format!("whole {}", size_label(*n)),
            CaseShape::Rows(r, c) => format!("rows {r}×{c}"),
            CaseShape::Columns(r, c) => format!("columns {r}×{c}"),
            CaseShape::Segments(s, m) => format!("segments {s}×~{m}"),
        };
        format!("{} {} {shape}", self.dtype, self.op)
    }

    fn spec(&self) -> Option<ShapeSpec> {
        match self.shape {
            CaseShape::Whole(_) => None,
            CaseShape::Rows(rows, cols) => Some(ShapeSpec::Rows { rows, cols }),
            CaseShape::Columns(rows, cols) => Some(ShapeSpec::Columns { rows, cols }),
            CaseShape::Segments(count, mean) => Some(ShapeSpec::ragged(count, mean, 1)),
        }
    }

    fn len(&self) -> usize {
        match self.shape {
            CaseShape::Whole(n) => n,
            CaseShape::Rows(r, c) | CaseShape::Columns(r, c) => r * c,
            CaseShape::Segments(..) => self.spec().map_or(0, |s| s.len()),
        }
    }
}

/// What `--shapes` asks for.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShapesArg {
    pub cases: Vec<Case>,
    pub sweep: bool,
}

/// `table`, `sweep` and cases `dtype:op:kind:RxC` (`kind` rows, columns, segments — RxC is then
/// segments × mean length — or `whole:N`), comma-separated.
pub fn parse_shapes(text: &str) -> Result<ShapesArg, String> {
    let mut arg = ShapesArg::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.to_ascii_lowercase().as_str() {
            "sweep" => arg.sweep = true,
            "table" => arg.cases.extend(parse_shapes(TABLE)?.cases),
            lower => arg.cases.push(parse_case(lower)?),
        }
    }
    if arg.cases.is_empty() && !arg.sweep {
        return Err(
            "--shapes needs `table`, `sweep` or cases such as f32:sum:rows:8192x8192".into(),
        );
    }
    Ok(arg)
}

fn parse_case(item: &str) -> Result<Case, String> {
    let parts: Vec<&str> = item.split(':').collect();
    let [dtype, op, kind, size] = parts[..] else {
        return Err(format!(
            "`{item}`: a case is dtype:op:kind:size, e.g. f32:sum:rows:8192x8192"
        ));
    };
    let dtype = DType::parse(dtype).ok_or_else(|| format!("`{dtype}` is not an element type"))?;
    let op = OpKind::parse(op).ok_or_else(|| format!("`{op}` is not an operation"))?;
    let pair = |size: &str| -> Result<(usize, usize), String> {
        let (a, b) = size
            .split_once('x')
            .ok_or_else(|| format!("`{size}`: write RxC, e.g. 8192x8192"))?;
        Ok((crate::size::parse_len(a)?, crate::size::parse_len(b)?))
    };
    let shape = match kind {
        "whole" => CaseShape::Whole(crate::size::parse_len(size)?),
        "rows" => pair(size).map(|(r, c)| CaseShape::Rows(r, c))?,
        "columns" => pair(size).map(|(r, c)| CaseShape::Columns(r, c))?,
        "segments" => pair(size).map(|(s, m)| CaseShape::Segments(s, m))?,
        other => {
            return Err(format!(
                "`{other}`: the kinds are whole, rows, columns, segments"
            ));
        }
    };
    Ok(Case { dtype, op, shape })
}

/// One measured line (ours, the read-only kernel, or a peer's).
#[derive(Clone, Debug, Serialize)]
pub struct ShapeRow {
    /// `reduce-rs`, `read-only`, `torch`, `cub` or `cuda`.
    #[serde(rename = "impl")]
    pub implementation: String,
    /// Our kernel's entry point (`rows_block_f32_sum`), `chosen` marks the library's choice.
    pub kernel: String,
    pub chosen: bool,
    pub case: String,
    pub op: String,
    pub dtype: String,
    pub rows: usize,
    pub cols: usize,
    pub n: usize,
    pub us: f64,
    pub gbps: f64,
    pub check: String,
}

/// Runs the cases and the sweep; `Ok(false)` when a result was wrong.
pub fn run(
    arg: &ShapesArg,
    timing: Timing,
    out: &Path,
    ptx_dir: Option<&Path>,
    peers: bool,
) -> Result<bool> {
    let mut reducer = Reducer::gpu(0).context("bench times the kernels on the GPU")?;
    if let Some(dir) = ptx_dir {
        reducer = reducer.with_kernels_from(dir)?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let gpu = reducer.gpu_backend().context("a GPU")?;
    let device = gpu.info().name.clone();
    let compute_capability = gpu.info().compute_capability;
    let mut rows: Vec<ShapeRow> = Vec::new();
    let mut ok = true;
    let mut cases = arg.cases.clone();
    if arg.sweep {
        let mut cols = 32usize;
        while cols <= 1 << 24 {
            cases.push(Case {
                dtype: DType::F32,
                op: OpKind::Sum,
                shape: CaseShape::Rows(SWEEP_ELEMENTS / cols, cols),
            });
            cols *= 4;
        }
    }
    for case in &cases {
        eprintln!("bench: {}", case.label());
        match with_dtype_and_op!(case.dtype, case.op, run_case(&mut reducer, case, timing)) {
            Ok(case_rows) => {
                ok &= case_rows.iter().all(|r| r.check != "FAIL");
                rows.extend(case_rows);
            }
            Err(error) => {
                ok = false;
                eprintln!("error: {}: {error:#}", case.label());
            }
        }
    }
    if peers {
        rows.extend(run_peers(&cases, timing, out, compute_capability));
    }
    print!("{}", format_table(&cases, &rows, &device));
    let csv_path = out.join("bench_shapes.csv");
    let mut writer = csv::Writer::from_path(&csv_path)
        .with_context(|| format!("writing {}", csv_path.display()))?;
    for row in &rows {
        writer.serialize(row)?;
    }
    writer.flush()?;
    let json_path = out.join("bench_shapes.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&rows)? + "\n")
        .with_context(|| format!("writing {}", json_path.display()))?;
    println!(
        "\nwrote {}\nwrote {}",
        csv_path.display(),
        json_path.display()
    );
    if arg.sweep {
        let svg = out.join("bench_rows.svg");
        let title =
            format!("f32 sum of each row, 2^26 elements: GB/s against row length — {device}");
        write_svg(&svg, &title, &sweep_series(&rows))?;
        println!("wrote {}", svg.display());
    }
    Ok(ok)
}

/// Copies of `input` on the GPU, enough that no run finds its copy in L2.
fn copies<T: HostElement>(gpu: &Gpu, input: &[T]) -> Result<Vec<DeviceBuffer>> {
    let bytes = size_of_val(input).max(1);
    let wanted = ROTATION_BYTES.div_ceil(bytes).clamp(1, 64);
    let (free, _) = gpu.memory()?;
    let fit = (free.saturating_sub(1 << 30) / bytes).max(1);
    (0..wanted.min(fit))
        .map(|_| gpu.copy_to_device(input).map_err(anyhow::Error::from))
        .collect()
}

fn run_case<T: HostElement, O: Checked<T> + Default>(
    reducer: &mut Reducer,
    case: &Case,
    timing: Timing,
) -> Result<Vec<ShapeRow>> {
    // The reproducible mode's choice, where the mode covers the reduction (its twins of the
    // shape kernels are timed beside them).
    let reproducible = case
        .spec()
        .filter(|_| reduce_rs::plan::reproducible::kernel_for(case.dtype, case.op).is_some());
    let repro_choice = reproducible.as_ref().map(|spec| {
        reducer.set_reproducible(true);
        let choice = reducer.plan_each::<T, O>(&spec.shape());
        reducer.set_reproducible(false);
        choice
    });
    let reducer = &*reducer;
    let gpu = reducer.gpu_backend().context("a GPU")?;
    let pattern = if O::KIND == OpKind::Sum {
        Pattern::SmallIntegers
    } else {
        Pattern::Random
    };
    let input: Vec<T> = generate(pattern, case.len(), 1);
    let device_copies = copies(gpu, &input)?;
    let pointers: Vec<u64> = device_copies.iter().map(DeviceBuffer::ptr).collect();
    let bytes = size_of_val(&input[..]) as f64;
    let (rows, cols) = match case.shape {
        CaseShape::Whole(n) => (1, n),
        CaseShape::Rows(r, c) | CaseShape::Columns(r, c) => (r, c),
        CaseShape::Segments(s, _) => (s, 0),
    };
    let row = |implementation: &str, kernel: String, chosen: bool, ms: f64, check: &str| ShapeRow {
        implementation: implementation.into(),
        kernel,
        chosen,
        case: kind_name(&case.shape).into(),
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
        super::read_probe::<T>(&timer, &pointers, input.len(), timing)?,
        "-",
    )];
    match case.spec() {
        None => {
            let version = Version::fastest();
            let block = version.tuned_block(input.len());
            let run = timer.reduce::<T, O>(version, block, None, &pointers, input.len(), timing)?;
            let additions = plan::additions_per_element(version, &run.passes);
            let verdict = O::check(O::output(run.value), &O::reference(&input), additions);
            let name = plan::entry_name::<T, O>(version, block);
            let check = if verdict.pass { "PASS" } else { "FAIL" };
            out.push(row("reduce-rs", name, true, run.to_result_ms, check));
        }
        Some(spec) => {
            let shape = spec.shape();
            let (chosen, _) = reducer.plan_each::<T, O>(&shape);
            let sizes = Sizes::of::<T, O>();
            let resident = |kernel: ShapeKernel| {
                plan::resident_blocks(gpu.info().multiprocessors, kernel.block())
            };
            for kernel in [
                ShapeKernel::RowsWarp,
                ShapeKernel::RowsBlock,
                ShapeKernel::RowsSplit,
                ShapeKernel::Columns,
            ] {
                let Some(plan) = plan_for(kernel, &shape, sizes, resident) else {
                    continue;
                };
                let name = format!("{}_{}_{}", kernel.name(), T::DTYPE, O::KIND);
                let run = time_plan::<T, O>(
                    reducer,
                    &input,
                    &pointers,
                    &spec,
                    plan,
                    name.clone(),
                    timing,
                )?;
                let check = if run.verdict.pass() { "PASS" } else { "FAIL" };
                if !run.verdict.pass() {
                    eprintln!(
                        "error: {name}: {}",
                        run.verdict.first_failure.unwrap_or_default()
                    );
                }
                out.push(row(
                    "reduce-rs",
                    name,
                    kernel == chosen.kernel,
                    run.gpu_ms.unwrap_or(f64::NAN),
                    check,
                ));
            }
            // The reproducible twins: the mode's choice as the library plans it, the others
            // forced, with its block.
            if let Some((repro_plan, repro_name)) = repro_choice {
                let sizes = reduce_rs::plan::reproducible::sizes(T::DTYPE);
                let block = repro_plan.launch.block;
                for kernel in ShapeKernel::ALL.iter().copied() {
                    let name = Family::Reproducible.entry(kernel, T::DTYPE, O::KIND);
                    let plan = if kernel == repro_plan.kernel {
                        Some(repro_plan)
                    } else {
                        let resident = |kernel: ShapeKernel| {
                            let name = Family::Reproducible.entry(kernel, T::DTYPE, O::KIND);
                            gpu.resident(&name, block, 0, None).unwrap_or_else(|_| {
                                plan::resident_blocks(gpu.info().multiprocessors, block)
                            })
                        };
                        plan_reproducible(&shape, sizes, |_| block, resident, Some(kernel))
                    };
                    let Some(plan) = plan else {
                        continue;
                    };
                    let run = time_plan::<T, O>(
                        reducer,
                        &input,
                        &pointers,
                        &spec,
                        plan,
                        name.clone(),
                        timing,
                    )?;
                    let check = if run.verdict.pass() { "PASS" } else { "FAIL" };
                    if !run.verdict.pass() {
                        eprintln!(
                            "error: {name}: {}",
                            run.verdict.first_failure.unwrap_or_default()
                        );
                    }
                    out.push(row(
                        "reduce-rs",
                        name.clone(),
                        name == repro_name,
                        run.gpu_ms.unwrap_or(f64::NAN),
                        check,
                    ));
                }
            }
        }
    }
    Ok(out)
}

fn kind_name(shape: &CaseShape) -> &'static str {
    match shape {
        CaseShape::Whole(_) => "whole",
        CaseShape::Rows(..) => "rows",
        CaseShape::Columns(..) => "columns",
        CaseShape::Segments(..) => "segments",
    }
}

/// The peers on the same cases: PyTorch (`python3` with torch) and CUB (`nvcc`), each writing
/// the CSV columns `impl,case,op,dtype,rows,cols,n,ms,gbps,check`. What cannot run says why.
fn run_peers(cases: &[Case], timing: Timing, out: &Path, cc: (u32, u32)) -> Vec<ShapeRow> {
    let csv = out.join("peers_shapes.csv");
    let _ = std::fs::remove_file(&csv);
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let torch = workspace.join("bench/torch/reduce_torch.py");
    let cub = super::cuda::build_program(out, cc, "bench/cuda/reduce_shapes.cu", "reduce_shapes");
    if let Err(why) = &cub {
        eprintln!("note: CUB not timed: {why}");
    }
    for case in cases {
        let (kind, shape_args): (&str, Vec<String>) = match &case.shape {
            CaseShape::Whole(n) => ("whole", vec!["--n".into(), n.to_string()]),
            CaseShape::Rows(r, c) => ("rows", vec!["--shapes".into(), format!("{r}x{c}")]),
            CaseShape::Columns(r, c) => ("columns", vec!["--shapes".into(), format!("{r}x{c}")]),
            CaseShape::Segments(s, m) => (
                "segments",
                vec![
                    "--segments".into(),
                    s.to_string(),
                    "--mean-len".into(),
                    m.to_string(),
                ],
            ),
        };
        let common = |cmd: &mut Command| {
            cmd.args([
                "--case",
                kind,
                "--op",
                case.op.name(),
                "--dtype",
                case.dtype.name(),
            ])
            .args(&shape_args)
            .args([
                "--repeat",
                &timing.repeat.to_string(),
                "--warmup",
                &timing.warmup.to_string(),
            ])
            .arg("--csv-append")
            .arg(&csv);
        };
        let mut python = Command::new("python3");
        python.arg(&torch);
        common(&mut python);
        report_peer("torch", python.output());
        if let Ok(exe) = &cub
            && cub_has(case)
        {
            let mut program = Command::new(exe);
            program.arg("--no-read");
            common(&mut program);
            report_peer("cub", program.output());
        }
    }
    read_peer_csv(&csv).unwrap_or_else(|e| {
        eprintln!("note: no peer results: {e:#}");
        Vec::new()
    })
}

/// What reduce_shapes times: sum/max/argmax/argmin of whole arrays, sum/max/argmax of rows and
/// segments, sums of columns.
fn cub_has(case: &Case) -> bool {
    match case.shape {
        CaseShape::Whole(_) => matches!(
            case.op,
            OpKind::Sum | OpKind::Max | OpKind::ArgMax | OpKind::ArgMin
        ),
        CaseShape::Rows(..) | CaseShape::Segments(..) => {
            matches!(case.op, OpKind::Sum | OpKind::Max | OpKind::ArgMax)
        }
        CaseShape::Columns(..) => case.op == OpKind::Sum,
    }
}

fn report_peer(name: &str, output: std::io::Result<std::process::Output>) {
    match output {
        Ok(output) if !output.status.success() && output.status.code() != Some(2) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            eprintln!(
                "note: {name} did not run: {}",
                stderr.lines().last().unwrap_or("")
            );
        }
        Err(e) => eprintln!("note: {name} did not run: {e}"),
        _ => {}
    }
}

fn read_peer_csv(path: &PathBuf) -> Result<Vec<ShapeRow>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    let headers = reader.headers()?.clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| anyhow!("no `{name}` column"))
    };
    let [imp, case, op, dtype, rows, cols, n, ms, gbps, check] = [
        "impl", "case", "op", "dtype", "rows", "cols", "n", "ms", "gbps", "check",
    ]
    .map(column);
    let (imp, case, op, dtype, rows, cols, n, ms, gbps, check) = (
        imp?, case?, op?, dtype?, rows?, cols?, n?, ms?, gbps?, check?,
    );
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record?;
        let field = |i: usize| record.get(i).unwrap_or("").to_string();
        let number = |i: usize| field(i).parse::<f64>().unwrap_or(f64::NAN);
        let count = |i: usize| field(i).parse::<usize>().unwrap_or(0);
        let implementation = field(imp);
        if implementation == "read" || implementation.ends_with("read") {
            continue;
        }
        out.push(ShapeRow {
            kernel: implementation.clone(),
            implementation,
            chosen: false,
            case: field(case),
            op: field(op),
            dtype: field(dtype),
            rows: count(rows),
            cols: count(cols),
            n: count(n),
            us: number(ms) * 1e3,
            gbps: number(gbps),
            check: field(check),
        });
    }
    if out.is_empty() {
        bail!("{} has no rows", path.display());
    }
    Ok(out)
}

/// The printed table: per case, every implementation, with its share of the read-only
/// kernel's bandwidth and PyTorch's time over ours.
fn format_table(cases: &[Case], rows: &[ShapeRow], device: &str) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nbench shapes on {device}: median of the timed runs, CUDA events around one launch behind a pre-roll, inputs rotated out of L2"
    );
    let _ = writeln!(
        out,
        "{:<34} {:<9} {:<36} {:>10} {:>8} {:>7} {:>9} {:>7}  check",
        "case", "impl", "kernel", "µs", "GB/s", "% read", "torch/us", "/plain"
    );
    for case in cases {
        let label = case.label();
        let same = |r: &&ShapeRow| {
            r.dtype == case.dtype.name()
                && r.op == case.op.name()
                && r.case == kind_name(&case.shape)
                && {
                    match case.shape {
                        CaseShape::Whole(n) => r.n == n,
                        CaseShape::Rows(a, b) | CaseShape::Columns(a, b) => {
                            r.rows == a && r.cols == b
                        }
                        CaseShape::Segments(s, _) => r.rows == s,
                    }
                }
        };
        let group: Vec<&ShapeRow> = rows.iter().filter(same).collect();
        let read = group
            .iter()
            .find(|r| r.implementation == "read-only")
            .map(|r| r.gbps);
        let torch = group
            .iter()
            .find(|r| r.implementation == "torch")
            .map(|r| r.us);
        // The library's choice of plain kernel: what a reproducible kernel is compared with.
        let plain = group
            .iter()
            .find(|r| r.implementation == "reduce-rs" && r.chosen && !is_reproducible(&r.kernel))
            .map(|r| r.us);
        for r in &group {
            let pct = read.map_or("-".to_string(), |g| format!("{:.1}", 100.0 * r.gbps / g));
            let ratio = match (torch, r.implementation.as_str()) {
                (Some(t), "reduce-rs") => format!("{:.2}", t / r.us),
                _ => "-".into(),
            };
            let repro = match plain {
                Some(p) if is_reproducible(&r.kernel) => format!("{:.2}", r.us / p),
                _ => "-".into(),
            };
            let kernel = if r.chosen {
                format!("{} *", r.kernel)
            } else {
                r.kernel.clone()
            };
            let _ = writeln!(
                out,
                "{:<34} {:<9} {:<36} {:>10.2} {:>8.1} {:>7} {:>9} {:>7}  {}",
                label, r.implementation, kernel, r.us, r.gbps, pct, ratio, repro, r.check
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "* the kernel the library chooses for the shape (reproducible_…: in the reproducible mode, whose time /plain divides by the plain choice's)"
    );
    out
}

/// The sweep's chart: one line per row kernel, PyTorch, CUB, and the read-only ceiling.
fn sweep_series(rows: &[ShapeRow]) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.case == "rows" && r.dtype == "f32" && r.op == "sum" && r.n == SWEEP_ELEMENTS)
    {
        let name = match r.implementation.as_str() {
            "reduce-rs" => r.kernel.trim_end_matches("_f32_sum").to_string(),
            "read-only" => "read-only (ceiling)".to_string(),
            other => other.to_string(),
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((r.cols, r.gbps)),
            None => series.push(Series {
                ceiling: r.implementation == "read-only",
                name,
                points: vec![(r.cols, r.gbps)],
            }),
        }
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_parse_and_the_table_is_the_issues() {
        let arg = parse_shapes("table,sweep").unwrap();
        assert!(arg.sweep);
        assert_eq!(arg.cases.len(), 9);
        assert_eq!(
            parse_case("bf16:argmax:rows:64x128256").unwrap(),
            Case {
                dtype: DType::Bf16,
                op: OpKind::ArgMax,
                shape: CaseShape::Rows(64, 128256)
            }
        );
        assert_eq!(
            parse_case("f32:sum:whole:2^28").unwrap().shape,
            CaseShape::Whole(1 << 28)
        );
        assert!(parse_case("f32:sum:rows").is_err());
        assert!(parse_case("f32:sum:diagonal:3x3").is_err());
        assert!(parse_shapes("").is_err());
    }
}
