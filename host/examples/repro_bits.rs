//! The bits of reproducible sums, to compare across GPUs (the H100 against the H200), block
//! sizes, grids and shard splits: one line per (type, size, launch), the result's bits in hex.
//! Run it on two machines and `diff` the outputs: the `repro` lines must be identical (v8's
//! may differ, since its grid follows the GPU).
//!
//! ```sh
//! cargo run --release -p host --example repro_bits                    # the GPU if there is one
//! cargo run --release -p host --example repro_bits -- --backend sim --sizes 2^12,2^16
//! ```
//!
//! Inputs: uniform [-1, 1) (seed 1, the bench's parallel generator), as f32, f64 (the f32
//! values times 1e100, plus 1e-100 times the next one, so that f64's low bits matter), f16 and
//! bf16 (the f32 values rounded). Every line also checks that the bits equal the host's
//! `PartialSum` fold of the same input, and that splitting it into shards whose partial sums
//! are merged gives the same bits.

use anyhow::{Context, Result, bail};
use clap::Parser;
use half::{bf16, f16};
use host::bench::accuracy::generate_uniform;
use host::size::parse_sizes;
use reduce_rs::reproducible::{PartialSum, SumFloat};
use reduce_rs::{Element, Reducer};

#[derive(Parser)]
struct Args {
    #[arg(long, default_value = "2^10,2^20,2^24,2^28+3")]
    sizes: String,
    /// auto (the GPU if there is one), gpu or sim
    #[arg(long, default_value = "auto")]
    backend: String,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let sizes = parse_sizes(&args.sizes).map_err(anyhow::Error::msg)?.0;
    let base = match args.backend.as_str() {
        "sim" => Reducer::simulator(),
        "gpu" => Reducer::gpu(0)?,
        _ => Reducer::new()?,
    };
    println!("backend {:?}", base.backend());
    let mut all_same = true;
    for &n in &sizes {
        let values = generate_uniform(n, 1);
        let doubles: Vec<f64> = values
            .iter()
            .zip(values.iter().cycle().skip(1))
            .map(|(&a, &b)| f64::from(a) * 1e100 + f64::from(b) * 1e-100)
            .collect();
        let halves: Vec<f16> = values.iter().map(|&x| f16::from_f32(x)).collect();
        let brains: Vec<bf16> = values.iter().map(|&x| bf16::from_f32(x)).collect();
        all_same &= lines("f32", &values, |x| x, &base)?;
        all_same &= lines("f64", &doubles, |x| x, &base)?;
        all_same &= lines("f16", &halves, |x| x.to_f32(), &base)?;
        all_same &= lines("bf16", &brains, |x| x.to_f32(), &base)?;
    }
    if !all_same {
        bail!("some launches, splits or the host fold gave other bits (see `DIFFERS` above)");
    }
    Ok(())
}

/// Prints the reproducible sum's bits for several launches of `data`, and v8's for contrast.
fn lines<T: Element>(
    name: &str,
    data: &[T],
    to_fold: impl Fn(T) -> T::Sum,
    base: &Reducer,
) -> Result<bool>
where
    T::Sum: SumFloat + Bits,
{
    let n = data.len();
    let host = PartialSum::of(data.iter().map(|&x| to_fold(x)))
        .value()
        .bits();
    let mut same = true;
    let on = |block: u32, grid: Option<u32>| -> Result<Reducer> {
        let mut r = clone_backend(base)?
            .with_reproducible(true)
            .with_block_size(block)?;
        r.set_max_blocks(grid);
        Ok(r)
    };
    for (block, grid) in [(256, None), (64, Some(7)), (1024, None), (512, Some(1000))] {
        let bits = on(block, grid)?.sum(data)?.bits();
        let verdict = if bits == host {
            ""
        } else {
            "  DIFFERS from the host fold"
        };
        same &= bits == host;
        let grid = grid.map_or("all".to_string(), |g| g.to_string());
        println!("{name:<4} n={n:<10} repro block={block:<4} grid≤{grid:<4} {bits:#018x}{verdict}");
    }
    // Three shards of uneven sizes, merged on the device (or the simulator).
    let r = clone_backend(base)?;
    let cuts = [0, n / 3, n / 3 + n / 5, n];
    let parts = cuts
        .windows(2)
        .map(|w| r.partial_sum(&data[w[0]..w[1]]))
        .collect::<reduce_rs::Result<Vec<_>>>()?;
    let merged = r.merge_partial_sums(&parts)?.bits();
    let verdict = if merged == host {
        ""
    } else {
        "  DIFFERS from the host fold"
    };
    same &= merged == host;
    println!("{name:<4} n={n:<10} repro 3 shards merged        {merged:#018x}{verdict}");
    let v8 = clone_backend(base)?.sum(data)?.bits();
    println!("{name:<4} n={n:<10} v8 (grid follows the GPU)     {v8:#018x}");
    Ok(same)
}

/// Another reducer on the same backend (the GPU's default stream, or a simulator).
fn clone_backend(base: &Reducer) -> Result<Reducer> {
    Ok(match base.gpu_backend() {
        Some(gpu) => Reducer::gpu(gpu.info().ordinal).context("opening the GPU again")?,
        None => Reducer::simulator(),
    })
}

/// A result's bits, widened to `u64`.
trait Bits {
    fn bits(self) -> u64;
}
impl Bits for f32 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}
impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}
