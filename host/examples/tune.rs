//! Tunes a single-pass kernel's launch grid on the GPU: times it for every block size and grid
//! given, at every size given, beside the read-only kernel, with the benchmark's method (pre-roll,
//! two events, inputs rotated so that L2 holds none of them, median).
//!
//! ```sh
//! cargo run --release -p host --example tune -- --sizes 2^10..2^22:1 --blocks 256,512,1024 \
//!     --grids 1,2,4,8,16,32,66,132,264 [--dtype f32] [--op sum] [--ptx-dir target/ptx-EXPERIMENT]
//! ```
//!
//! Prints one CSV line per (size, block, grid): `size,dtype,op,block,grid,us,gbps`, and the
//! read-only kernel's line as `block = 256, grid = probe`. A grid of 0 means the library's own
//! choice (the plan the Reducer uses).

use anyhow::{Context, Result, bail};
use clap::Parser;
use host::element::{DType, HostElement};
use host::input::{Pattern, generate};
use host::size::parse_sizes;
use host::timing::{Timer, Timing};
use host::with_dtype_and_op;
use reduce_rs::backend::gpu::{DeviceBuffer, Gpu, Pointers};
use reduce_rs::plan::{self, Job, LaunchGrid, Pass, Sizes, Work};
use reduce_rs::{Operation, Reducer, Version};
use std::path::PathBuf;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value = "2^10..2^22:1")]
    sizes: String,
    #[arg(long, value_delimiter = ',', default_value = "512")]
    blocks: Vec<u32>,
    /// Blocks per launch; 0 = the library's plan.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    grids: Vec<u32>,
    #[arg(long, default_value = "f32")]
    dtype: String,
    #[arg(long, default_value = "sum")]
    op: String,
    #[arg(long, default_value = "v8")]
    version: String,
    #[arg(long, default_value_t = 20)]
    repeat: u32,
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Also time the read-only kernel at each size.
    #[arg(long)]
    probe: bool,
    #[arg(long)]
    ptx_dir: Option<PathBuf>,
}

/// Copies of the input, enough that no run finds the next one in the 50 MB L2.
const ROTATION_BYTES: usize = 256 << 20;

fn main() -> Result<()> {
    let args = Args::parse();
    let sizes = parse_sizes(&args.sizes).map_err(anyhow::Error::msg)?.0;
    let dtype = DType::parse(&args.dtype).context("--dtype")?;
    let op = reduce_rs::OpKind::parse(&args.op).context("--op")?;
    let version = Version::find(&args.version)?;
    let mut reducer = Reducer::gpu(0)?;
    if let Some(dir) = &args.ptx_dir {
        reducer = reducer.with_kernels_from(dir)?;
    }
    let gpu = reducer.gpu_backend().context("a GPU")?;
    let timing = Timing {
        warmup: args.warmup,
        repeat: args.repeat,
    };
    println!("size,dtype,op,block,grid,us,gbps");
    for &n in &sizes {
        with_dtype_and_op!(dtype, op, sweep(gpu, version, &args, n, timing))?;
    }
    Ok(())
}

fn sweep<T: HostElement, O: Operation<T>>(
    gpu: &Gpu,
    version: Version,
    args: &Args,
    n: usize,
    timing: Timing,
) -> Result<()> {
    let input: Vec<T> = generate(Pattern::Random, n, 1);
    let copies_wanted = ROTATION_BYTES
        .div_ceil(size_of_val(&input[..]).max(1))
        .clamp(1, 256);
    let copies = (0..copies_wanted)
        .map(|_| gpu.copy_to_device(&input))
        .collect::<Result<Vec<DeviceBuffer>, _>>()?;
    let pointers: Vec<u64> = copies.iter().map(DeviceBuffer::ptr).collect();
    let timer = Timer::new(gpu)?;
    let bytes = (n * size_of::<T>()) as f64;
    let line = |block: u32, grid: String, ms: f64| {
        println!(
            "{n},{},{},{block},{grid},{:.2},{:.1}",
            T::DTYPE,
            O::KIND,
            ms * 1e3,
            bytes / (ms * 1e-3) / 1e9
        );
    };
    if args.probe {
        let name = format!("read_probe_{}_b256", T::DTYPE);
        let (function, resident) = gpu.kernel(&name, 256, 0)?;
        let launch = LaunchGrid {
            shared_bytes: 0,
            ..plan::launch_grid(Version::fastest(), n, 256, Sizes::of::<T, O>(), resident)?
        };
        let sink = gpu.copy_to_device(&[0u64; 2])?;
        let ms = timer.time(timing, |run| {
            let pointers = Pointers {
                input: pointers[run % pointers.len()],
                output: sink.ptr(),
                ..Default::default()
            };
            let sizes = kernels_gpu::params::Params {
                len: n as u64,
                output_len: 1,
                ..Default::default()
            };
            Ok(gpu.launch(&name, &function, launch, pointers, sizes)?)
        })?;
        line(256, "probe".into(), ms);
    }
    for &block in &args.blocks {
        let name = plan::entry_name::<T, O>(version, block);
        let sizes = Sizes::of::<T, O>();
        let shared = plan::shared_bytes(version, block, sizes);
        let resident = gpu.resident(&name, block, shared, None)?;
        for &grid in &args.grids {
            let passes = if grid == 0 {
                plan::passes(version, n, block, sizes, resident)?
            } else {
                vec![Pass {
                    len: n,
                    launch: LaunchGrid {
                        grid,
                        block,
                        shared_bytes: shared,
                    },
                }]
            };
            if passes.len() != 1 {
                bail!(
                    "{} is multi-pass; tune single-pass versions",
                    version.name()
                );
            }
            let job = Job {
                kernel: name.clone(),
                len: n,
                result_bytes: size_of::<O::Device>(),
                work: Work::Passes {
                    passes: passes.clone(),
                    sizes,
                    results: 1,
                },
            };
            let run = timer.reduce_job::<T, O>(&job, &pointers, timing)?;
            line(block, passes[0].launch.grid.to_string(), run.to_result_ms);
        }
    }
    Ok(())
}
