//! `reduce-rs bench --accuracy`: how far each version's `f32` sum is from the exact sum, at
//! 2^24, 2^28 and 2^32 elements (`--accuracy-sizes`), the reproducible mode included.
//!
//! The input is uniform in [-1, 1), generated in parallel: chunk `k` of [`CHUNK`] elements
//! comes from its own ChaCha8 stream `k` of one seed, so the input is the same whatever the
//! number of threads (and 2^32 elements take seconds, not minutes). The reference is exact:
//! every `f32` is an integer mantissa times a power of two, so the mantissas are added up as
//! integers, one `i64` per exponent (2^32 · 2^24 fits), and the 254 exact terms are combined in
//! double-double arithmetic, whose error (far below 2^-80 of the sum here) is invisible next
//! to an `f32` result's.

use super::options::BenchOptions;
use crate::timing::{Timer, Timing};
use anyhow::{Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::ops::Sum;
use reduce_rs::{DType, OpKind, Operation, Reducer, Version};
use std::fmt::Write as _;

/// Elements per generator stream.
pub const CHUNK: usize = 1 << 22;

/// The seed of the input (the bench's).
const SEED: u64 = super::plan::SEED;

/// One measured error.
#[derive(Clone, Debug)]
pub struct AccuracyRow {
    pub n: usize,
    /// `v0` … `v8`, or `repro`.
    pub subject: String,
    pub result: Option<f32>,
    pub exact: f64,
    /// `|result − exact| / |exact|`.
    pub rel_error: Option<f64>,
    pub error: Option<String>,
}

/// `n` elements uniform in [-1, 1): chunk `k` from ChaCha8 stream `k` of `seed`, in parallel.
pub fn generate_uniform(n: usize, seed: u64) -> Vec<f32> {
    let mut data = vec![0.0f32; n];
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let chunks: Vec<(usize, &mut [f32])> = data.chunks_mut(CHUNK).enumerate().collect();
    let mut per_thread: Vec<Vec<(usize, &mut [f32])>> = (0..threads).map(|_| Vec::new()).collect();
    for (k, chunk) in chunks {
        per_thread[k % threads].push((k, chunk));
    }
    std::thread::scope(|scope| {
        for work in per_thread {
            scope.spawn(move || {
                for (k, chunk) in work {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    rng.set_stream(k as u64);
                    for x in chunk.iter_mut() {
                        *x = rng.random_range(-1.0f32..1.0);
                    }
                }
            });
        }
    });
    data
}

/// The exact sum of finite `f32`s, as the nearest `f64` (see the module docs).
pub fn exact_sum(data: &[f32]) -> f64 {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = data.len().div_ceil(threads).max(1);
    let bins: Vec<[i64; 256]> = std::thread::scope(|scope| {
        let handles: Vec<_> = data
            .chunks(per)
            .map(|part| {
                scope.spawn(move || {
                    let mut bins = [0i64; 256];
                    for &x in part {
                        let bits = x.to_bits();
                        let exponent = ((bits >> 23) & 0xff) as usize;
                        let hidden = if exponent == 0 { 0 } else { 1 << 23 };
                        let mantissa = i64::from((bits & 0x7f_ffff) | hidden);
                        bins[exponent.max(1)] += if bits >> 31 == 1 { -mantissa } else { mantissa };
                    }
                    bins
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a summing thread panicked"))
            .collect()
    });
    let mut total = [0i64; 256];
    for part in &bins {
        for (t, b) in total.iter_mut().zip(part) {
            *t += b;
        }
    }
    // Bin e holds mantissas of weight 2^(e - 150); combine them in double-double.
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for (e, &sum) in total.iter().enumerate().rev() {
        if sum == 0 {
            continue;
        }
        let scale = 2f64.powi(e as i32 - 150);
        let top = sum as f64;
        let rest = (sum - top as i64) as f64;
        for term in [top * scale, rest * scale] {
            let s = hi + term;
            let v = s - hi;
            lo += (hi - (s - v)) + (term - v);
            hi = s;
        }
    }
    hi + lo
}

/// Measures every version and the reproducible mode at each size; prints the table and writes
/// `accuracy.csv`. `Ok(false)` if a run failed.
pub fn run(sizes: &[usize], options: &BenchOptions) -> Result<bool> {
    let mut reducer = Reducer::gpu(0).context("bench --accuracy runs the kernels on the GPU")?;
    if let Some(dir) = &options.ptx_dir {
        reducer = reducer.with_kernels_from(dir)?;
    }
    reducer.set_block_size(options.block)?;
    let gpu = reducer
        .gpu_backend()
        .context("bench --accuracy runs the kernels on the GPU")?;
    let timer = Timer::new(gpu)?;
    let once = Timing {
        warmup: 0,
        repeat: 1,
    };
    let versions: Vec<Version> = options
        .versions
        .iter()
        .copied()
        .filter(|v| v.supports(DType::F32, OpKind::Sum))
        .collect();
    let mut rows = Vec::new();
    for &n in sizes {
        let (free, _) = gpu.memory()?;
        // The input and the largest partials (v0: one per 256 elements, two buffers).
        if n.saturating_mul(4).saturating_add(n / 64) > free {
            eprintln!(
                "note: skipped 2^{:.0}: {} MiB of input, {} MiB free on the GPU",
                (n as f64).log2(),
                (n * 4) >> 20,
                free >> 20
            );
            continue;
        }
        eprintln!("accuracy: {n} elements: generating, exact sum");
        let data = generate_uniform(n, SEED);
        let exact = exact_sum(&data);
        let device = gpu.copy_to_device(&data)?;
        drop(data);
        let ptr = [device.ptr()];
        let row = |subject: String, got: Result<f32>| match got {
            Ok(value) => AccuracyRow {
                n,
                subject,
                result: Some(value),
                exact,
                rel_error: Some((f64::from(value) - exact).abs() / exact.abs()),
                error: None,
            },
            Err(e) => AccuracyRow {
                n,
                subject,
                result: None,
                exact,
                rel_error: None,
                error: Some(format!("{e:#}")),
            },
        };
        for &version in &versions {
            eprintln!("accuracy: {n} elements: {version}");
            let block = options
                .block
                .map_or_else(|| gpu.tuned_block::<f32, Sum>(version, n), Ok);
            let got = block
                .map_err(anyhow::Error::from)
                .and_then(|block| timer.reduce::<f32, Sum>(version, block, None, &ptr, n, once))
                .map(|run| <Sum as Operation<f32>>::output(run.value));
            rows.push(row(version.name().to_string(), got));
        }
        eprintln!("accuracy: {n} elements: reproducible");
        let got = timer
            .reduce_reproducible::<f32, Sum>(&reducer, &ptr, n, once)
            .map(|run| <Sum as Operation<f32>>::output(run.value));
        rows.push(row("repro".to_string(), got));
        drop(device);
        gpu.free_staging();
    }
    print!("{}", format_accuracy(gpu.info().name.as_str(), &rows));
    std::fs::create_dir_all(&options.out)
        .with_context(|| format!("creating {}", options.out.display()))?;
    let path = options.out.join("accuracy.csv");
    std::fs::write(&path, accuracy_csv(&rows))
        .with_context(|| format!("writing {}", path.display()))?;
    println!("\nwrote {}", path.display());
    Ok(rows.iter().all(|r| r.error.is_none()))
}

/// The table as printed.
pub fn format_accuracy(device: &str, rows: &[AccuracyRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "accuracy  f32 sum of uniform [-1, 1) (seed {SEED}, {CHUNK}-element ChaCha8 streams) on {device}"
    );
    let _ = writeln!(
        out,
        "          relative error against the exact sum; repro = reduce-rs reproducible"
    );
    let _ = writeln!(
        out,
        "{:>6} {:<8} {:>18} {:>22} {:>10}",
        "n", "version", "result", "exact", "rel. error"
    );
    for row in rows {
        let n = format!("2^{:.0}", (row.n as f64).log2());
        let n = if row.n.is_power_of_two() {
            n
        } else {
            row.n.to_string()
        };
        match (row.result, row.rel_error, &row.error) {
            (Some(value), Some(rel), _) => {
                let _ = writeln!(
                    out,
                    "{n:>6} {:<8} {:>18.10e} {:>22.15e} {rel:>10.2e}",
                    row.subject, value, row.exact
                );
            }
            (_, _, error) => {
                let _ = writeln!(
                    out,
                    "{n:>6} {:<8} error: {}",
                    row.subject,
                    error.as_deref().unwrap_or("no result")
                );
            }
        }
    }
    out
}

/// `accuracy.csv`: one line per (size, version).
pub fn accuracy_csv(rows: &[AccuracyRow]) -> String {
    let mut out = String::from("dtype,n,version,result,exact,rel_error,error\n");
    for row in rows {
        let _ = writeln!(
            out,
            "f32,{},{},{},{:e},{},{}",
            row.n,
            row.subject,
            row.result.map_or(String::new(), |v| format!("{v:e}")),
            row.exact,
            row.rel_error.map_or(String::new(), |e| format!("{e:e}")),
            row.error.as_deref().unwrap_or("").replace(',', ";")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_sum_is_exact() {
        // Integers and halves: the f64 sum is exact, and so must this be.
        let data: Vec<f32> = (0..100_000)
            .map(|i| (i % 201) as f32 * 0.5 - 50.0)
            .collect();
        let plain: f64 = data.iter().map(|&x| f64::from(x)).sum();
        assert_eq!(exact_sum(&data), plain);
        // 1 + many tiny values that f32 (and f64, in this order) would lose one by one.
        let mut data = vec![2f32.powi(-60); 1 << 16];
        data.push(1.0);
        data.push(-2f32.powi(-100));
        let expected = 1.0 + 2f64.powi(-44) - 2f64.powi(-100);
        assert_eq!(exact_sum(&data), expected);
        assert_eq!(exact_sum(&[1e-45, -3e38, 3e38]), f64::from(1e-45f32));
    }

    #[test]
    fn generation_does_not_depend_on_the_threads() {
        let a = generate_uniform(3 * CHUNK + 5, 9);
        assert!(a.iter().all(|&x| (-1.0..1.0).contains(&x)));
        // Chunk 2 is stream 2 of the seed, wherever it was made.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        rng.set_stream(2);
        let first: f32 = rng.random_range(-1.0f32..1.0);
        assert_eq!(a[2 * CHUNK], first);
        assert_ne!(a[0], a[CHUNK]);
    }

    #[test]
    fn the_table_and_the_csv() {
        let rows = vec![
            AccuracyRow {
                n: 1 << 24,
                subject: "v8".into(),
                result: Some(1.5),
                exact: 1.5000001,
                rel_error: Some(6.7e-8),
                error: None,
            },
            AccuracyRow {
                n: 1 << 32,
                subject: "v0".into(),
                result: None,
                exact: 2.0,
                rel_error: None,
                error: Some("out of memory, really".into()),
            },
        ];
        let table = format_accuracy("H100", &rows);
        assert!(table.contains("2^24 v8"), "{table}");
        assert!(table.contains("6.70e-8"), "{table}");
        assert!(
            table.contains("2^32 v0       error: out of memory"),
            "{table}"
        );
        let csv = accuracy_csv(&rows);
        assert!(csv.contains("f32,16777216,v8,1.5e0,"), "{csv}");
        assert!(csv.ends_with("out of memory; really\n"), "{csv}");
    }
}
