//! The versions' sweep (`reduce-rs bench`): every version × size × element type on the GPU,
//! with the read-only kernel as the ceiling and (where `nvcc` is installed) CUB's
//! `DeviceReduce::Sum` and the CUDA C++ originals from `bench/cuda/reduce_ref.cu` beside them.
//! Prints one table per type and writes `bench.csv`, `bench.json` and one SVG chart per type.
//!
//! Small inputs fit in the 50 MB L2 cache: timed back to back on one buffer they would measure
//! the cache, not DRAM. So every run reads another copy of the input (the rotation continues
//! across versions and the probe, so no version re-reads what the previous one left in L2), and
//! a copy is only read again after at least [`ROTATION_BYTES`] of other copies; where that would
//! need more copies than there are runs, there is one copy per run and 256 MiB are written
//! after the upload so that the upload itself leaves nothing in L2.

use super::options::BenchOptions;
use super::output::write_results;
use super::peers::locate::PeerDirs;
use super::peers::{Notes, Peer, cuda};
use super::plan::{self, Planned, ROTATION_BYTES, SEED};
use super::probe::read_probe;
use super::report::format_report;
use super::rows::{
    Check, Header, Impl, Row, Subject, Tally, fill_derived, gbps, size_label, sort_rows,
};
use crate::element::HostElement;
use crate::input::{Pattern, generate};
use crate::reference::Checked;
use crate::timing::Timer;
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use kernels_gpu::launch::BLOCK_SIZES;
use reduce_rs::backend::gpu::{DeviceBuffer, Gpu};
use reduce_rs::ops::Sum;
use reduce_rs::plan as launch_plan;
use reduce_rs::{Operation, Reducer};
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs the sweep; `Ok(false)` when a result was wrong or one of our runs could not run.
pub fn run(options: &BenchOptions) -> Result<bool> {
    let mut reducer = Reducer::gpu(0).context("bench times the kernels on the GPU")?;
    if let Some(dir) = &options.ptx_dir {
        reducer = reducer.with_kernels_from(dir)?;
    }
    // The reproducible rows use the chosen block size, or the kernel's default.
    reducer.set_block_size(options.block)?;
    let gpu = reducer
        .gpu_backend()
        .context("bench times the kernels on the GPU")?;
    let info = gpu.info().clone();
    let (free_memory, _) = gpu.memory()?;
    let plan = plan::plan(
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
    let mut notes = Notes::default();
    let reduce_ref = if options.cub {
        let dirs = PeerDirs::of_process(options.peers_dir.as_deref());
        cuda::build_reduce_ref(&dirs, &options.out, info.compute_capability)
    } else {
        Err("--no-cub".to_string())
    };
    let cub_text = match &reduce_ref {
        Ok(_) => cuda::CUB_TEXT.to_string(),
        Err(why) => {
            if options.cub {
                notes.not_timed(Peer::Cub, why);
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
            reduce_rs::backend::gpu::kernels::KernelSource::File { cubin: true, .. }
        ),
        date_unix_seconds: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        op: "sum".into(),
        input: format!("random (seed {SEED}): floats uniform in [-1, 1), integers over their whole range"),
        block: options
            .block
            .map_or_else(|| "tuned per version (see `reduce-rs list`)".to_string(), |b| b.to_string()),
        repeat: options.timing.repeat,
        warmup: options.timing.warmup,
        timing: "CUDA events behind a 50 µs GPU pre-roll (so the CPU launch path is not timed); median of `repeat` runs after `warmup` untimed ones; single-launch work between exactly two events, multi-pass versions with a third after the first pass".into(),
        rotation: plan::rotation_text(),
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
            let result = crate::with_dtype!(
                dtype,
                run_case(gpu, &reducer, options, case, &mut flush, &bar)
            );
            match result {
                Ok(case_rows) => rows.extend(case_rows),
                Err(error) => {
                    let error = format!("{error:#}");
                    bar.suspend(|| eprintln!("error: {dtype} {}: {error}", size_label(case.n)));
                    rows.push(Row::new(dtype, case.n, Subject::ReadOnly).failed(error.clone()));
                    for &v in &options.versions {
                        rows.push(
                            Row::new(dtype, case.n, Subject::Version(v)).failed(error.clone()),
                        );
                    }
                    bar.inc(options.versions.len() as u64 + 1);
                }
            }
        }
        if let Ok(exe) = &reduce_ref
            && !notes.gave_up(Peer::Cub)
        {
            let sizes: Vec<usize> = plan
                .cases
                .iter()
                .filter(|c| c.dtype == dtype)
                .map(|c| c.n)
                .collect();
            bar.set_message(format!("{dtype}: CUB and CUDA C++ (reduce_ref)"));
            let run = cuda::run_reduce_ref(
                exe,
                dtype,
                &sizes,
                &options.versions,
                options.block,
                options.timing,
                &options.out,
            );
            match run {
                Ok((ref_rows, ref_notes)) => {
                    for note in ref_notes {
                        bar.suspend(|| eprintln!("note: reduce_ref {dtype}: {note}"));
                    }
                    rows.extend(ref_rows);
                }
                // A peer that could not run: its column stays empty.
                Err(error) => bar.suspend(|| {
                    notes.not_timed(Peer::Cub, &format!("reduce_ref {dtype}: {error:#}"))
                }),
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
    let mut tally = Tally::default();
    for row in &rows {
        tally.add(
            row.check,
            !matches!(row.implementation(), Impl::Cub | Impl::Cuda),
        );
    }
    if let Some(summary) = tally.summary() {
        eprintln!("error: {summary}");
    }
    Ok(tally.passed())
}

/// Times every version and the read probe on one (type, size). The error is for the input
/// itself (generation, upload); a version's own failure is its row.
fn run_case<T: HostElement>(
    gpu: &Gpu,
    reducer: &Reducer,
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
        *flush = Some(
            gpu.copy_to_device(&zeros)
                .context("writing 256 MiB to flush L2")?,
        );
    }
    let timer = Timer::new(gpu)?;
    let runs = (options.timing.warmup + options.timing.repeat) as usize;
    let bytes = n * dtype.size();
    let base = |subject| {
        let mut row = Row::new(dtype, n, subject);
        row.copies = Some(case.copies);
        row.l2_cold = Some(case.l2_cold);
        row
    };
    let mut rows = Vec::new();

    bar.set_message(format!("{dtype} {}: read-only probe", size_label(n)));
    let row = base(Subject::ReadOnly);
    rows.push(
        match read_probe::<T>(&timer, &pointers, n, options.timing) {
            Ok(ms) => Row {
                first_pass_ms: Some(ms),
                first_pass_gbps: gbps(bytes, ms),
                to_scalar_us: Some(ms * 1e3),
                passes: Some(1),
                ..row
            },
            Err(e) => row.failed(format!("{e:#}")),
        },
    );
    // The next run reads the copy after the last one read.
    pointers.rotate_left(runs % case.copies);
    bar.inc(1);

    for &version in &options.versions {
        bar.set_message(format!("{dtype} {}: {}", size_label(n), version.name()));
        let row = base(Subject::Version(version));
        let block = options
            .block
            .map_or_else(|| gpu.tuned_block::<T, Sum>(version, n), Ok);
        let run = block.map_err(anyhow::Error::from).and_then(|block| {
            timer.reduce::<T, Sum>(version, block, None, &pointers, n, options.timing)
        });
        rows.push(match run {
            Ok(run) => {
                let additions = launch_plan::additions_per_element(version, &run.passes);
                let got = <Sum as Operation<T>>::output(run.value);
                let verdict = <Sum as Checked<T>>::check(got, &expected, additions);
                timed_row(row, &run, run.passes.len(), bytes, &verdict)
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
        });
        pointers.rotate_left(runs % case.copies);
        bar.inc(1);
    }

    // The reproducible sum (float types), right after the versions: the same rotation.
    if reduce_rs::plan::reproducible::kernel_for(dtype, reduce_rs::OpKind::Sum).is_some() {
        bar.set_message(format!("{dtype} {}: reproducible", size_label(n)));
        let row = base(Subject::Reproducible);
        let result = timer.reduce_reproducible::<T, Sum>(reducer, &pointers, n, options.timing);
        rows.push(match result {
            Ok(run) => {
                let got = <Sum as Operation<T>>::output(run.value);
                // The reference check's `h` for the binned sum over uniform [-1, 1): 3.
                let verdict = <Sum as Checked<T>>::check(got, &expected, 3);
                timed_row(row, &run, 1, bytes, &verdict)
            }
            Err(e) => {
                let error = format!("{e:#}");
                bar.suspend(|| eprintln!("error: {dtype} {} reproducible: {error}", size_label(n)));
                row.failed(error)
            }
        });
        pointers.rotate_left(runs % case.copies);
    }
    Ok(rows)
}

/// `row` filled from a timed run of `passes` launches over `bytes` of input, and its check.
fn timed_row<D>(
    row: Row,
    run: &crate::timing::TimedRun<D>,
    passes: usize,
    bytes: usize,
    verdict: &crate::reference::Verdict,
) -> Row {
    let first = run.passes[0].launch;
    Row {
        grid: Some(first.grid),
        block: Some(first.block),
        passes: Some(passes),
        first_pass_ms: Some(run.first_pass_ms),
        first_pass_gbps: gbps(bytes, run.first_pass_ms),
        to_scalar_us: Some(run.to_result_ms * 1e3),
        check: Check::of(verdict.pass),
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
