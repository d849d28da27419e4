//! What the library's API costs over a bare kernel launch, on the GPU:
//!
//! 1. GPU time (two CUDA events behind a pre-roll, median): `Reducer::reduce_into` on a cudarc
//!    `CudaSlice` the caller owns, against the bare v8 launch the library makes for it.
//! 2. Wall-clock time of "reduce and bring the scalar home": `Reducer::sum` on a `CudaSlice`
//!    (`std::time::Instant` around the call, median), to compare with CUB + `cudaMemcpy`
//!    measured the same way by `bench/cuda/roundtrip.cu`.
//! 3. Host time per call of 1024 elements (many calls back to back, no synchronisation inside:
//!    the GPU keeps up, so the time is the host's): `reduce_into` on a `CudaSlice` and on an
//!    `ExternalBuffer` (as the Python package calls it), the library's bare enqueue, and the
//!    bare driver launch of the same kernel.
//!
//! ```sh
//! cargo run --release -p host --example overhead -- --sizes 2^20,2^25
//! ```

use anyhow::{Context, Result};
use clap::Parser;
use cudarc::driver::CudaSlice;
use host::size::parse_sizes;
use host::timing::{Timer, Timing, median};
use reduce_rs::backend::gpu::{Gpu, Pointers};
use reduce_rs::ops::Sum;
use reduce_rs::plan::{self, Job, Sizes, Work};
use reduce_rs::{ExternalBuffer, Reducer, Version};
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
        let job = planned(gpu, n)?;
        let result = gpu.result_buffer()?;
        let addresses: Vec<u64> = inputs
            .iter()
            .map(|slice| {
                let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(slice, &stream);
                ptr
            })
            .collect();
        let bare = timer.time(timing, |run| {
            Ok(gpu.run(&job, addresses[run % addresses.len()], result)?)
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
    host_time_per_call(&reducer)?;
    Ok(())
}

/// Part 3: host µs per call, 1024 f32 elements, over `CALLS` calls.
fn host_time_per_call(reducer: &Reducer) -> Result<()> {
    const CALLS: usize = 20_000;
    const N: usize = 1024;
    let gpu = reducer.gpu_backend().context("a GPU")?;
    let stream = reducer.stream().context("a GPU")?.clone();
    let input = stream.clone_htod(&vec![1.0f32; N])?;
    let mut output = stream.alloc_zeros::<f32>(1)?;
    let (input_ptr, output_ptr) = {
        let (i, _) = cudarc::driver::DevicePtr::device_ptr(&input, &stream);
        let (o, _) = cudarc::driver::DevicePtr::device_ptr(&output, &stream);
        (i, o)
    };
    let per_call = |what: &str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        for _ in 0..100 {
            f()?;
        }
        stream.synchronize()?;
        let started = Instant::now();
        for _ in 0..CALLS {
            f()?;
        }
        stream.synchronize()?;
        let us = started.elapsed().as_secs_f64() * 1e6 / CALLS as f64;
        println!("{what} (host time per call),{N},{us:.3},{CALLS}");
        Ok(())
    };
    per_call("Reducer::reduce_into on a CudaSlice", &mut || {
        Ok(reducer.reduce_into(Sum, &input, &mut output)?)
    })?;
    // SAFETY: the buffers above, alive for the whole measurement, on the reducer's stream.
    let external_in = unsafe { ExternalBuffer::<f32>::new(input_ptr, N, &stream) };
    let mut external_out = unsafe { ExternalBuffer::<f32>::new(output_ptr, 1, &stream) };
    per_call("Reducer::reduce_into on an ExternalBuffer", &mut || {
        Ok(reducer.reduce_into(Sum, &external_in, &mut external_out)?)
    })?;
    let job = planned(gpu, N)?;
    per_call("the library's bare enqueue (planned once)", &mut || {
        Ok(gpu.run(&job, input_ptr, output_ptr)?)
    })?;
    let Work::Passes { passes, .. } = &job.work else {
        unreachable!("v8 plans passes");
    };
    let first = job.first_launch();
    let (function, _) = gpu.kernel(&job.kernel, first.block, first.shared_bytes)?;
    let counters = gpu.results_buffer(64)?;
    let pointers = Pointers {
        input: input_ptr,
        partials: counters + 16,
        retired: counters,
        output: output_ptr,
        offsets: 0,
    };
    let params = kernels_gpu::params::Params {
        len: N as u64,
        partials_len: 1,
        retired_len: 1,
        output_len: 1,
        ..Default::default()
    };
    per_call("one driver launch of the same kernel", &mut || {
        Ok(gpu.launch(&job.kernel, &function, passes[0].launch, pointers, params)?)
    })?;
    Ok(())
}

/// The job the library plans for an f32 sum of `n` elements with v8 on `gpu`.
fn planned(gpu: &Gpu, n: usize) -> Result<Job<'static>> {
    let version = Version::fastest();
    let block = gpu.tuned_block::<f32, Sum>(version, n)?;
    let name = plan::entry_name::<f32, Sum>(version, block);
    let shared = plan::shared_bytes(version, block, Sizes::of::<f32, Sum>());
    let resident = gpu.resident(&name, block, shared, None)?;
    Ok(plan::whole::<f32, Sum>(version, n, block, resident)?)
}
