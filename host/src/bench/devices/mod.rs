//! `reduce-rs bench --devices all|N`: the f32 sum of `--sizes` elements *per GPU* over N GPUs,
//! one process driving them all, beside one GPU alone and (where `python3` has torch) the
//! PyTorch + NCCL peer `bench/torch/allreduce_torch.py`, one process per GPU, in the same run.
//!
//! Rows (the `gpus` column says over how many GPUs):
//! - `reduce-rs` `kernel`: v8 on one GPU's shard alone (no collective);
//! - `reduce-rs` `sum+allreduce`: `Devices::all_reduce(Sum, shards)`: each GPU's sum, then
//!   NCCL's all-reduce, the result on every GPU;
//! - `torch-nccl` `sum+allreduce` and `allreduce-scalar`: the peer's rows, read from its CSV.
//!
//! The one-process-per-GPU figures of the library come from `reduce/examples/ranks.rs` (see the
//! README's "Several GPUs").

use super::options::BenchOptions;
use super::peers::locate::PeerDirs;
use super::peers::{Notes, Peer, PeerRun, records, torch};
use super::plan::SEED;
use super::rows::{Check, Tally};
use crate::devices::{DeviceCount, reduce_split};
use crate::input::{Pattern, generate};
use crate::reference::Checked;
use crate::timing::{Timer, Timing, rotation_copies};
use anyhow::{Context, Result, bail};
use reduce_rs::devices::{Devices, nccl_available};
use reduce_rs::ops::Sum;
use reduce_rs::{Version, gpu_available};
use std::fmt::Write as _;
use std::path::Path;

struct Row {
    implementation: String,
    op: String,
    gpus: usize,
    per_gpu: usize,
    us: f64,
    check: String,
}

/// Runs the several-GPU sweep over `options.sizes` per GPU; `Ok(false)` when a result was wrong.
pub fn run(count: DeviceCount, options: &BenchOptions) -> Result<bool> {
    let (sizes, timing, out) = (&options.sizes, options.timing, options.out.as_path());
    let available = gpu_available().context("bench --devices times GPUs")?;
    let n = match count {
        DeviceCount::All => available,
        DeviceCount::Count(n) if n > available => {
            bail!("--devices {n}: this machine has {available} GPU(s)")
        }
        DeviceCount::Count(n) => n,
    };
    if n > 1
        && let Err(why) = nccl_available()
    {
        bail!("bench --devices {n} needs NCCL: {why}");
    }
    let devices = Devices::new(&(0..n).collect::<Vec<_>>())?;
    let gpu = devices.reducer(0).gpu_backend().context("a GPU")?;
    println!(
        "bench --devices: {n} × {}, {}; f32 sum, --sizes elements per GPU; median of {} after {} warm-up runs",
        gpu.info().name,
        devices
            .nccl_version()
            .unwrap_or_else(|| "one GPU, no NCCL".into()),
        timing.repeat,
        timing.warmup
    );
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut rows = Vec::new();
    for &per_gpu in sizes {
        let Some(total) = per_gpu.checked_mul(n) else {
            bail!("{per_gpu} elements per GPU over {n} GPUs do not fit in 64 bits");
        };
        let input: Vec<f32> = generate(Pattern::Random, total, SEED);
        // One GPU alone: v8 over GPU 0's shard, no collective.
        let shard = &input[..per_gpu];
        let timer = Timer::new(gpu)?;
        // Copies adding up to 256 MiB, read in turn: no run finds its input in the L2 cache.
        let copies = rotation_copies(per_gpu.saturating_mul(4), None);
        let buffers = (0..copies)
            .map(|_| gpu.copy_to_device(shard))
            .collect::<reduce_rs::Result<Vec<_>>>()?;
        let pointers: Vec<u64> = buffers.iter().map(|b| b.ptr()).collect();
        let version = Version::fastest();
        let block = version.tuned_block(per_gpu);
        let alone = timer.reduce::<f32, Sum>(version, block, None, &pointers, per_gpu, timing)?;
        drop(buffers);
        let expected = <Sum as Checked<f32>>::reference(shard);
        let additions = reduce_rs::plan::additions_per_element(version, &alone.passes);
        let verdict = <Sum as Checked<f32>>::check(alone.value, &expected, additions);
        rows.push(Row {
            implementation: "reduce-rs".into(),
            op: "kernel".into(),
            gpus: 1,
            per_gpu,
            us: alone.to_result_ms * 1000.0,
            check: word(verdict.pass).into(),
        });
        // Every GPU, one process.
        let expected = <Sum as Checked<f32>>::reference(&input);
        let run = reduce_split::<f32, Sum>(&devices, &input, &expected, timing)?;
        let ok = run.verdict.pass && run.same_everywhere;
        rows.push(Row {
            implementation: "reduce-rs".into(),
            op: "sum+allreduce".into(),
            gpus: n,
            per_gpu,
            us: run.ms.map_or(f64::NAN, |(slowest, _)| slowest * 1000.0),
            check: word(ok).into(),
        });
    }
    if options.torch {
        let dirs = PeerDirs::of_process(options.peers_dir.as_deref());
        rows.extend(torch_peer(&dirs, n, sizes, timing, out));
    }
    print_rows(&rows);
    write_csv(&rows, &out.join("devices.csv"))?;
    println!("wrote {}", out.join("devices.csv").display());
    let tally = tally(&rows);
    if let Some(summary) = tally.summary() {
        eprintln!("error: {summary}");
    }
    Ok(tally.passed())
}

/// The exit-code rule over the rows (see [`Tally`]): ours and the peer's checks alike.
fn tally(rows: &[Row]) -> Tally {
    let mut tally = Tally::default();
    for row in rows {
        tally.add(
            Check::from_word(&row.check),
            row.implementation == "reduce-rs",
        );
    }
    tally
}

fn word(pass: bool) -> &'static str {
    Check::of(pass).word()
}

/// `allreduce_torch.py` over the same GPUs and sizes, where `python3` has torch; what cannot
/// run says why in one note.
fn torch_peer(dirs: &PeerDirs, n: usize, sizes: &[usize], timing: Timing, out: &Path) -> Vec<Row> {
    let mut notes = Notes::default();
    let script = match dirs.find(torch::ALLREDUCE_TORCH) {
        Ok(script) => script,
        Err(why) => {
            notes.not_timed(Peer::Torch, &why);
            return Vec::new();
        }
    };
    let csv = out.join("peers_devices.csv");
    let _ = std::fs::remove_file(&csv);
    if let PeerRun::CouldNotRun(why) = torch::run_allreduce(&script, n, sizes, timing, &csv) {
        notes.not_timed(Peer::Torch, &why);
        return Vec::new();
    }
    // rows = GPUs, cols = elements per GPU.
    match records::read(&csv) {
        Ok(peer_rows) => peer_rows
            .into_iter()
            .map(|r| Row {
                implementation: r.implementation,
                op: r.op,
                gpus: r.rows,
                per_gpu: r.cols,
                us: r.ms * 1000.0,
                check: r.check,
            })
            .collect(),
        Err(error) => {
            eprintln!("note: PyTorch's rows are left out: {error:#}");
            Vec::new()
        }
    }
}

fn print_rows(rows: &[Row]) {
    let mut text = format!(
        "\n{:<11} {:<17} {:>4} {:>11} {:>12} {:>10} {:>9} check\n",
        "impl", "op", "gpus", "per_gpu", "n", "µs", "GB/s"
    );
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| (r.per_gpu, r.gpus, r.implementation.clone()));
    for r in sorted {
        let bytes = if r.op == "allreduce-scalar" {
            0
        } else {
            r.per_gpu * r.gpus * 4
        };
        let _ = writeln!(
            text,
            "{:<11} {:<17} {:>4} {:>11} {:>12} {:>10.1} {:>9.1} {}",
            r.implementation,
            r.op,
            r.gpus,
            r.per_gpu,
            r.per_gpu * r.gpus,
            r.us,
            bytes as f64 / (r.us * 1e3),
            r.check
        );
    }
    print!("{text}");
}

fn write_csv(rows: &[Row], path: &Path) -> Result<()> {
    let mut text = String::from("impl,op,gpus,per_gpu,n,us,check\n");
    for r in rows {
        let _ = writeln!(
            text,
            "{},{},{},{},{},{:.3},{}",
            r.implementation,
            r.op,
            r.gpus,
            r.per_gpu,
            r.per_gpu * r.gpus,
            r.us,
            r.check
        );
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
