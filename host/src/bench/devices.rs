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

use super::Timing;
use crate::devices::{DeviceCount, reduce_split};
use crate::input::{Pattern, generate};
use crate::reference::Checked;
use crate::timing::Timer;
use anyhow::{Context, Result, bail};
use reduce_rs::devices::{Devices, nccl_available};
use reduce_rs::ops::Sum;
use reduce_rs::{Version, gpu_available};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

struct Row {
    implementation: String,
    op: String,
    gpus: usize,
    per_gpu: usize,
    us: f64,
    check: String,
}

pub fn run(count: DeviceCount, sizes: &[usize], timing: Timing, out: &Path) -> Result<bool> {
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
    let mut pass = true;
    for &per_gpu in sizes {
        let input: Vec<f32> = generate(Pattern::Random, per_gpu * n, 1);
        // One GPU alone: v8 over GPU 0's shard, no collective.
        let shard = &input[..per_gpu];
        let timer = Timer::new(gpu)?;
        // Copies adding up to 256 MiB, read in turn: no run finds its input in the L2 cache.
        let copies = (256usize << 20).div_ceil(per_gpu.max(1) * 4).clamp(1, 64);
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
        pass &= verdict.pass;
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
        pass &= ok;
        rows.push(Row {
            implementation: "reduce-rs".into(),
            op: "sum+allreduce".into(),
            gpus: n,
            per_gpu,
            us: run.ms.map_or(f64::NAN, |(slowest, _)| slowest * 1000.0),
            check: word(ok).into(),
        });
    }
    rows.extend(torch_peer(n, sizes, timing, out));
    print_rows(&rows);
    write_csv(&rows, &out.join("devices.csv"))?;
    println!("wrote {}", out.join("devices.csv").display());
    Ok(pass)
}

fn word(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// `allreduce_torch.py` over the same GPUs and sizes, where `python3` has torch.
fn torch_peer(n: usize, sizes: &[usize], timing: Timing, out: &Path) -> Vec<Row> {
    let csv = out.join("peers_devices.csv");
    let _ = std::fs::remove_file(&csv);
    // From the repository root (where a copied binary runs), else from where this was built.
    let script = [
        Path::new("bench/torch/allreduce_torch.py").to_path_buf(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/torch/allreduce_torch.py"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .unwrap_or_else(|| Path::new("bench/torch/allreduce_torch.py").to_path_buf());
    let per_gpu: Vec<String> = sizes.iter().map(usize::to_string).collect();
    let output = Command::new("python3")
        .arg(&script)
        .args(["--per-gpu", &per_gpu.join(",")])
        .args(["--world", &n.to_string()])
        .args(["--repeat", &timing.repeat.to_string()])
        .args(["--warmup", &timing.warmup.to_string()])
        .arg("--csv")
        .arg(&csv)
        .env("NCCL_NVLS_ENABLE", "0")
        .output();
    match output {
        Ok(output) if !output.status.success() && output.status.code() != Some(2) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            eprintln!(
                "note: torch not timed: {}",
                stderr.lines().last().unwrap_or("")
            );
            return Vec::new();
        }
        Err(e) => {
            eprintln!("note: torch not timed: python3: {e}");
            return Vec::new();
        }
        _ => {}
    }
    let text = std::fs::read_to_string(&csv).unwrap_or_default();
    // impl,case,op,dtype,rows,cols,n,ms,gbps,check (rows = GPUs, cols = per GPU)
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (f.len() == 10).then(|| Row {
                implementation: f[0].to_string(),
                op: f[2].to_string(),
                gpus: f[4].parse().unwrap_or(0),
                per_gpu: f[5].parse().unwrap_or(0),
                us: f[7].parse::<f64>().map_or(f64::NAN, |ms| ms * 1000.0),
                check: f[9].to_string(),
            })
        })
        .collect()
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
