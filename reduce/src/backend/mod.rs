//! The two backends a [`Reducer`](crate::Reducer) runs on, behind one interface: the GPU
//! ([`gpu`], through cudarc: jobs are enqueued on a stream) and the CPU simulator ([`sim`]: the
//! same kernels, every access checked). Both run the same [`Job`]s, planned by
//! [`crate::plan`]; [`Backend::gpu`] is the one place that says "this needs a GPU".
//!
//! This is the library's lower level, public for benchmarks and bindings that plan, launch
//! and time kernels themselves (this project's `reduce-rs bench` does): a [`Reducer`]'s GPU
//! backend is [`Reducer::gpu_backend`](crate::Reducer::gpu_backend). Everything a user reduces
//! goes through the [`Reducer`](crate::Reducer).
//!
//! ```no_run
//! use reduce_rs::{Reducer, Version, ops::Sum, plan};
//! let reducer = Reducer::gpu(0)?;
//! let gpu = reducer.gpu_backend().unwrap();
//! let data = gpu.copy_to_device(&vec![1.0f32; 1 << 20])?;
//! let v8 = Version::fastest();
//! let block = v8.tuned_block(1 << 20);
//! let name = plan::entry_name::<f32, Sum>(v8, block);
//! let shared = plan::shared_bytes(v8, block, plan::Sizes::of::<f32, Sum>());
//! let job = plan::whole::<f32, Sum>(v8, 1 << 20, block, gpu.resident(&name, block, shared, None)?)?;
//! let result = gpu.result_buffer()?;
//! gpu.run(&job, data.ptr(), result)?; // enqueued; nothing waits
//! let bytes = gpu.read_back(result, 4)?;
//! assert_eq!(f32::from_ne_bytes(bytes[..4].try_into().unwrap()), 1048576.0);
//! # Ok::<(), reduce_rs::Error>(())
//! ```
//!
//! [`Reducer`]: crate::Reducer

pub mod gpu;
pub mod sim;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::op::Operation;
use crate::plan::Job;
use crate::version::Version;
use gpu::Gpu;
use kernels_gpu::launch::BLOCK_SIZES;
use sim::Sim;

/// Where a job's input is: host bytes (copied up on the GPU), or a device address (GPU only).
#[derive(Clone, Copy, Debug)]
pub enum Feed<'a> {
    Host(&'a [u8]),
    Device(u64),
}

/// A GPU or the simulator.
pub enum Backend {
    Gpu(Box<Gpu>),
    Sim(Box<Sim>),
}

impl Backend {
    /// The GPU, or [`Error::WrongDevice`] saying that `what` needs one and what to call instead
    /// (`instead`).
    pub fn gpu(&self, what: &str, instead: &str) -> Result<&Gpu> {
        match self {
            Backend::Gpu(gpu) => Ok(gpu),
            Backend::Sim(_) => Err(Error::WrongDevice(format!(
                "{what} needs GPU memory; this Reducer is the simulator (use {instead})"
            ))),
        }
    }

    /// Blocks of `block` threads with `shared_bytes` of shared memory of the kernel `name` the
    /// device runs at once, at most `max_blocks`: the driver's occupancy of that very entry
    /// point on the GPU; on the simulator, a small GPU's that counts threads only.
    pub fn resident(
        &self,
        name: &str,
        block: u32,
        shared_bytes: usize,
        max_blocks: Option<u32>,
    ) -> Result<u64> {
        match self {
            Backend::Gpu(gpu) => gpu.resident(name, block, shared_bytes, max_blocks),
            Backend::Sim(sim) => Ok(sim.resident_blocks(block, max_blocks)),
        }
    }

    /// The device's streaming multiprocessors (SMs): the GPU's, or the simulator's
    /// [`SIM_MULTIPROCESSORS`](sim::SIM_MULTIPROCESSORS).
    pub fn multiprocessors(&self) -> u32 {
        match self {
            Backend::Gpu(gpu) => gpu.info().multiprocessors,
            Backend::Sim(_) => sim::SIM_MULTIPROCESSORS,
        }
    }

    /// The most threads per block the kernel `name` can run with (its registers decide it on
    /// a GPU; the simulator runs any block the kernels are built for).
    pub fn max_block(&self, name: &str) -> Result<u32> {
        match self {
            Backend::Gpu(gpu) => gpu.max_block(name),
            Backend::Sim(_) => Ok(BLOCK_SIZES[BLOCK_SIZES.len() - 1]),
        }
    }

    /// The block `version` runs `len` elements of `T` with `O` on: its tuned block, or on a GPU
    /// whose registers do not allow it, the largest built size that fits
    /// ([`crate::plan::runnable_block`]).
    ///
    /// ```
    /// use reduce_rs::backend::{Backend, sim::Sim};
    /// use reduce_rs::{Schedule, Version, ops::Sum};
    /// let sim = Backend::Sim(Box::new(Sim::new(Schedule::InOrder)));
    /// let v8 = Version::fastest();
    /// assert_eq!(sim.tuned_block::<f32, Sum>(v8, 1 << 20).unwrap(), v8.tuned_block(1 << 20));
    /// ```
    pub fn tuned_block<T: Element, O: Operation<T>>(
        &self,
        version: Version,
        len: usize,
    ) -> Result<u32> {
        match self {
            Backend::Gpu(gpu) => gpu.tuned_block::<T, O>(version, len),
            Backend::Sim(_) => Ok(version.tuned_block(len)),
        }
    }

    /// Runs `job` over `input` and brings its results home, as bytes (a GPU waits for them).
    pub fn run(&self, job: &Job<'_>, input: Feed<'_>) -> Result<Vec<u8>> {
        match self {
            Backend::Gpu(gpu) => {
                let bytes = job.output_bytes();
                let single = bytes <= gpu::RESULT_BYTES;
                let output = if single {
                    gpu.result_buffer()?
                } else {
                    gpu.results_buffer(bytes)?
                };
                let input = match input {
                    Feed::Host(data) => gpu.upload(data)?,
                    Feed::Device(ptr) => ptr,
                };
                gpu.run(job, input, output)?;
                let read = if single {
                    gpu.read_back(output, bytes)
                } else {
                    gpu.read_back_many(output, bytes)
                };
                // The copy is where a failed launch surfaces: name the kernel.
                read.map_err(|e| match e {
                    Error::Driver { source, .. } => Error::KernelFailed {
                        kernel: job.kernel.clone(),
                        source,
                    },
                    other => other,
                })
            }
            Backend::Sim(sim) => match input {
                Feed::Host(data) => sim.run(job, data),
                Feed::Device(_) => Err(Error::WrongDevice(
                    "this Reducer is the simulator, which reads host memory: copy the data to the host, or use a GPU Reducer".into(),
                )),
            },
        }
    }

    /// Enqueues `job` over `input`, its results written to the device address `output`, without
    /// waiting. GPU only: `what` and `instead` name the call and its host-result twin.
    pub fn enqueue(
        &self,
        job: &Job<'_>,
        input: Feed<'_>,
        output: u64,
        (what, instead): (&str, &str),
    ) -> Result<()> {
        let gpu = self.gpu(what, instead)?;
        let input = match input {
            Feed::Host(data) => gpu.upload(data)?,
            Feed::Device(ptr) => ptr,
        };
        gpu.run(job, input, output)
    }
}
