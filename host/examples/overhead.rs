//! What the library's API costs over a bare kernel launch, on the GPU:
//!
//! 1. GPU time (two CUDA events behind a pre-roll, median): `Reducer::reduce_into` on a cudarc
//!    `CudaSlice` the caller owns, against the bare v8 launch the library makes for it.
//! 2. Wall-clock time of "reduce and bring the scalar home": `Reducer::sum` on a `CudaSlice`
//!    (`std::time::Instant` around the call, median), to compare with CUB + `cudaMemcpy`
//!    measured the same way by `bench/cuda/roundtrip.cu`.
//!
//! ```sh
//! cargo run --release -p host --example overhead -- --sizes 2^20,2^25
//! ```

use anyhow::{Context, Result};
use clap::Parser;
use cudarc::driver::CudaSlice;
use host::size::parse_sizes;
use host::timing::{Timer, Timing, median};
use reduce_rs::internals::Target;
use reduce_rs::ops::Sum;
use reduce_rs::plan::{self, Sizes};
use reduce_rs::{Reducer, Version};
use std::time::Instant;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value = "2^20,2^25")]
    sizes: String,
    #[arg(long, default_value_t = 100)]
    repeat: u32,
    #[arg(long, default_value_t = 10)]
    warmup: u32,
}

/// Copies of the input, so that no timed run finds its input in the 50 MB L2.
const ROTATION_BYTES: usize = 256 << 20;

fn main() -> Result<()> {
    let args = Args::parse();
    let sizes = parse_sizes(&args.sizes).map_err(anyhow::Error::msg)?.0;
    let timing = Timing {
        warmup: args.warmup,
        repeat: args.repeat,
    };
    // The caller's own stream: as a user of the library would have it.
    let ctx = cudarc::driver::CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let reducer = Reducer::on_stream(stream.clone())?;
    let gpu = reducer.gpu_backend().context("a GPU")?;
    let timer = Timer::new(gpu)?;
    println!("what,n,median_us,repeat");
    for n in sizes {
        let data: Vec<f32> = (0..n)
            .map(|i| ((i % 1000) as f32 - 499.5) / 1000.0)
            .collect();
        let copies = ROTATION_BYTES.div_ceil(n * 4).clamp(1, 64);
        let inputs = (0..copies)
            .map(|_| stream.clone_htod(&data))
            .collect::<Result<Vec<CudaSlice<f32>>, _>>()?;
        let mut output = stream.alloc_zeros::<f32>(1)?;

        // The bare launch: the same kernel and shape the library picks, enqueued directly.
        let version = Version::fastest();
        let block = version.tuned_block(n);
        let name = plan::entry_name::<f32, Sum>(version, block);
        let sizes = Sizes::of::<f32, Sum>();
        let (function, passes) = gpu.plan(version, &name, n, block, sizes, None)?;
        let result = gpu.result_buffer()?;
        let addresses: Vec<u64> = inputs
            .iter()
            .map(|slice| {
                let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(slice, &stream);
                ptr
            })
            .collect();
        let bare = timer.time(timing, |run| {
            let target = Target {
                input: addresses[run % addresses.len()],
                len: n,
                output: result,
                output_len: 1,
            };
            Ok(gpu.enqueue(&name, &function, &passes, sizes, target)?)
        })?;
        let api = timer.time(timing, |run| {
            Ok(reducer.reduce_into(Sum, &inputs[run % inputs.len()], &mut output)?)
        })?;
        println!(
            "bare v8 launch (GPU time),{n},{:.3},{}",
            bare * 1e3,
            args.repeat
        );
        println!(
            "Reducer::reduce_into on a CudaSlice (GPU time),{n},{:.3},{}",
            api * 1e3,
            args.repeat
        );

        let mut wall = Vec::new();
        for run in 0..(args.warmup + args.repeat) as usize {
            let started = Instant::now();
            let total = reducer.sum(&inputs[run % inputs.len()])?;
            let elapsed = started.elapsed().as_secs_f64() * 1e6;
            std::hint::black_box(total);
            if run >= args.warmup as usize {
                wall.push(elapsed);
            }
        }
        println!(
            "Reducer::sum on a CudaSlice, result on the host (wall clock),{n},{:.3},{}",
            median(&mut wall),
            args.repeat
        );
    }
    Ok(())
}
