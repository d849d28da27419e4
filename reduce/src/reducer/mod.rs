//! [`Reducer`]: the handle every reduction goes through, and the public API. This file:
//! creating and configuring one, and how a reduction reaches the backend; `whole.rs`: whole
//! inputs; `each.rs`: every row, column or segment; `reproducible.rs`: the reproducible mode
//! and partial sums. Each reduction is planned (`crate::plan`) into a
//! job that the backend (`crate::backend`) runs or enqueues.

mod each;
mod reproducible;
mod whole;

use crate::backend::gpu::{self, Gpu};
use crate::backend::sim::{Sim, SimReport};
use crate::backend::{Backend, Feed};
use crate::bytes::bytes_of;
use crate::element::Element;
use crate::error::{DriverContext, Error, GpuUnavailable, Result};
use crate::input::{Input, Source};
use crate::plan;
use crate::version::Version;
use cudarc::driver::{CudaStream, DevicePtrMut, SyncOnDrop, result};
use simt::Schedule;
use std::path::Path;
use std::sync::Arc;

/// Reduces host slices and GPU buffers: create one, keep it, call it many times.
///
/// A `Reducer` owns what reductions need from call to call — on the GPU a stream, the kernels
/// (compiled by the driver the first time each is used) and scratch memory — and runs either
/// on a GPU or on the CPU simulator, with the same methods and the same results (up to the
/// rounding of float sums, which depends on the launch grid).
///
/// ```
/// use reduce_rs::Reducer;
/// // The GPU if there is one, else the simulator.
/// let reducer = Reducer::new()?;
/// let data: Vec<f32> = (1..=100).map(|i| i as f32).collect();
/// assert_eq!(reducer.sum(&data)?, 5050.0);
/// assert_eq!(reducer.max(&data)?, Some(100.0));
/// assert_eq!(reducer.argmin(&data)?, Some((0, 1.0)));
/// assert_eq!(reducer.mean(&data)?, Some(50.5));
/// assert_eq!(reducer.min::<f32, _>(&[])?, None);
/// # Ok::<(), reduce_rs::Error>(())
/// ```
pub struct Reducer {
    backend: Backend,
    version: Version,
    block: Option<u32>,
    max_blocks: Option<u32>,
    /// Float sums and means with the reproducible kernels ([`Reducer::with_reproducible`]).
    reproducible: bool,
}

/// Which backend a [`Reducer`] runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendInfo {
    /// A GPU: its name, multiprocessors, architecture (`sm_90`) and where its kernels came from.
    Gpu {
        /// The GPU's name.
        name: String,
        /// Its CUDA ordinal.
        ordinal: usize,
        /// Its streaming multiprocessors.
        multiprocessors: u32,
        /// Its architecture (`sm_90`).
        arch: String,
        /// Where the kernels came from (the PTX embedded in the library, or a file).
        kernels: String,
    },
    /// The CPU simulator, with its thread schedule.
    Simulator {
        /// The order the simulated threads run in.
        schedule: Schedule,
    },
}

/// Whether this machine has a CUDA driver and a GPU, and how many GPUs.
///
/// ```
/// match reduce_rs::gpu_available() {
///     Ok(count) => println!("{count} GPU(s)"),
///     Err(why) => println!("no GPU: {why}"),
/// }
/// ```
pub fn gpu_available() -> Result<usize, GpuUnavailable> {
    gpu::probe()
}

impl Reducer {
    /// GPU 0 if this machine has a CUDA driver and a GPU, else the CPU simulator.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::new()?;
    /// println!("{:?}", reducer.backend());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn new() -> Result<Reducer> {
        match gpu::probe() {
            Ok(_) => Reducer::gpu(0),
            Err(GpuUnavailable::NoDriver | GpuUnavailable::NoDevice) => Ok(Reducer::simulator()),
            Err(other) => Err(other.into()),
        }
    }

    /// GPU `ordinal`, on its default stream.
    ///
    /// ```no_run
    /// let reducer = reduce_rs::Reducer::gpu(0)?;
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn gpu(ordinal: usize) -> Result<Reducer> {
        Ok(Reducer::with_backend(Backend::Gpu(Box::new(Gpu::open(
            ordinal,
        )?))))
    }

    /// The GPU of `stream`, enqueueing every reduction on `stream`: after the caller's own work
    /// there, with no synchronisation unless a result must reach the host.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let data = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;
    /// let reducer = reduce_rs::Reducer::on_stream(stream.clone())?;
    /// assert_eq!(reducer.sum(&data)?, 6.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_stream(stream: Arc<CudaStream>) -> Result<Reducer> {
        Ok(Reducer::with_backend(Backend::Gpu(Box::new(
            Gpu::on_stream(stream)?,
        ))))
    }

    /// The CPU simulator, threads in order: no GPU needed; every access is checked.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.sum(&[1i32, -2, 3])?, 2);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn simulator() -> Reducer {
        Reducer::simulator_with(Schedule::InOrder)
    }

    /// The CPU simulator with the given thread schedule (`Schedule::Shuffled { seed }` runs the
    /// threads of each block in a seeded random order).
    ///
    /// ```
    /// use reduce_rs::{Reducer, Schedule};
    /// let reducer = Reducer::simulator_with(Schedule::Shuffled { seed: 7 });
    /// assert_eq!(reducer.max(&[1u32, 9, 3])?, Some(9));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn simulator_with(schedule: Schedule) -> Reducer {
        Reducer::with_backend(Backend::Sim(Box::new(Sim::new(schedule))))
    }

    fn with_backend(backend: Backend) -> Reducer {
        Reducer {
            backend,
            version: Version::fastest(),
            block: None,
            max_blocks: None,
            reproducible: false,
        }
    }

    /// Reduces with `version` instead of the fastest one (v8).
    ///
    /// ```
    /// use reduce_rs::{Reducer, Version};
    /// let reducer = Reducer::simulator().with_version(Version::find("v0")?);
    /// assert_eq!(reducer.version().name(), "v0");
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn with_version(mut self, version: Version) -> Reducer {
        self.version = version;
        self
    }

    /// Launches blocks of `block` threads (64, 128, 256, 512 or 1024) instead of the version's
    /// tuned size.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator().with_block_size(128)?;
    /// assert_eq!(reducer.sum(&[1.0f64; 1000])?, 1000.0);
    /// assert!(reduce_rs::Reducer::simulator().with_block_size(100).is_err());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn with_block_size(mut self, block: u32) -> Result<Reducer> {
        plan::check_block(self.version, block)?;
        self.block = Some(block);
        Ok(self)
    }

    /// Launches at most `blocks` blocks in the versions that size their grid to the GPU
    /// (v6–v8), as a smaller GPU would: for tests of launch grids.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator().with_max_blocks(3);
    /// assert_eq!(reducer.sum(&vec![1u32; 10_000])?, 10_000);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn with_max_blocks(mut self, blocks: u32) -> Reducer {
        self.max_blocks = Some(blocks.max(1));
        self
    }

    /// Loads the kernels from a directory written by `cargo xtask build-ptx` (a cubin for this
    /// GPU loads without compiling) instead of the PTX embedded in the library. GPU only.
    ///
    /// ```no_run
    /// let reducer = reduce_rs::Reducer::gpu(0)?.with_kernels_from("target/ptx")?;
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn with_kernels_from(mut self, dir: impl AsRef<Path>) -> Result<Reducer> {
        match &mut self.backend {
            Backend::Gpu(gpu) => gpu.use_kernels_from(dir.as_ref())?,
            Backend::Sim(_) => {
                return Err(Error::WrongDevice(
                    "the simulator runs the kernels' Rust code; it loads no PTX".into(),
                ));
            }
        }
        Ok(self)
    }

    /// Switches to `version` (see [`Reducer::with_version`]).
    pub fn set_version(&mut self, version: Version) {
        self.version = version;
    }

    /// Switches to blocks of `block` threads, or back to each version's tuned size for `None`
    /// (see [`Reducer::with_block_size`]).
    pub fn set_block_size(&mut self, block: Option<u32>) -> Result<()> {
        if let Some(block) = block {
            plan::check_block(self.version, block)?;
        }
        self.block = block;
        Ok(())
    }

    /// Limits the grid to `blocks` blocks (see [`Reducer::with_max_blocks`]), or lifts the
    /// limit for `None`.
    pub fn set_max_blocks(&mut self, blocks: Option<u32>) {
        self.max_blocks = blocks.map(|blocks| blocks.max(1));
    }

    /// Runs `entry` instead of the simulator's kernel `name` (simulator only): how tests plant
    /// a broken kernel to see that the checks catch it.
    #[doc(hidden)]
    pub fn with_simulated_kernel(
        mut self,
        name: &str,
        entry: kernels_gpu::params::SimEntry,
    ) -> Reducer {
        if let Backend::Sim(sim) = &mut self.backend {
            sim.override_kernel(name, entry);
        }
        self
    }

    /// The version reductions use.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The block size chosen with [`Reducer::with_block_size`], if any.
    pub fn block_size(&self) -> Option<u32> {
        self.block
    }

    /// Which backend this is.
    ///
    /// ```
    /// use reduce_rs::{BackendInfo, Reducer, Schedule};
    /// assert_eq!(
    ///     Reducer::simulator().backend(),
    ///     BackendInfo::Simulator { schedule: Schedule::InOrder }
    /// );
    /// ```
    pub fn backend(&self) -> BackendInfo {
        match &self.backend {
            Backend::Gpu(gpu) => BackendInfo::Gpu {
                name: gpu.info().name.clone(),
                ordinal: gpu.info().ordinal,
                multiprocessors: gpu.info().multiprocessors,
                arch: gpu.info().arch(),
                kernels: gpu.kernel_source().to_string(),
            },
            Backend::Sim(sim) => BackendInfo::Simulator {
                schedule: sim.schedule(),
            },
        }
    }

    /// The stream reductions run on (GPU only).
    pub fn stream(&self) -> Option<&Arc<CudaStream>> {
        match &self.backend {
            Backend::Gpu(gpu) => Some(gpu.stream()),
            Backend::Sim(_) => None,
        }
    }

    /// What the simulator's launches did in the last reduction (simulator only).
    pub fn last_simulation(&self) -> Option<SimReport> {
        match &self.backend {
            Backend::Sim(sim) => Some(sim.last_report()),
            Backend::Gpu(_) => None,
        }
    }

    /// The largest grid reductions may use, if limited ([`Reducer::with_max_blocks`]).
    pub fn max_blocks(&self) -> Option<u32> {
        self.max_blocks
    }

    /// The GPU backend (`None` on the simulator): the library's lower level, for benchmarks
    /// that plan, launch and time kernels themselves (see [`crate::backend`]).
    ///
    /// ```
    /// assert!(reduce_rs::Reducer::simulator().gpu_backend().is_none());
    /// ```
    pub fn gpu_backend(&self) -> Option<&Gpu> {
        match &self.backend {
            Backend::Gpu(gpu) => Some(gpu),
            Backend::Sim(_) => None,
        }
    }
}

impl Reducer {
    /// Where `input` is, for a backend: its host bytes, or its device address after the checks
    /// a device input needs (this reducer's GPU) and with the guard that orders the read on
    /// cudarc's other streams (kept until the job is enqueued).
    pub(crate) fn feed<'a, T: Element, I: Input<T> + ?Sized>(
        &'a self,
        input: &'a I,
    ) -> Result<(Feed<'a>, SyncOnDrop<'a>)> {
        match input.source() {
            Source::Host(slice) => Ok((Feed::Host(bytes_of(slice)), SyncOnDrop::Sync(None))),
            Source::Device(device) => {
                let Backend::Gpu(gpu) = &self.backend else {
                    return Err(Error::WrongDevice(
                        "this Reducer is the simulator, which reads host memory: copy the data to the host, or use a GPU Reducer".into(),
                    ));
                };
                check_context(gpu, device.stream(), "input")?;
                let (ptr, record_read) = device.device_ptr(gpu.stream());
                Ok((Feed::Device(ptr), record_read))
            }
        }
    }

    /// The GPU and the address of `output` (at least `needed` values, on this reducer's GPU),
    /// for a call `what` that writes device memory (`instead`: its host-result twin).
    pub(crate) fn device_output<'a, V, D: DevicePtrMut<V>>(
        &'a self,
        output: &'a mut D,
        needed: usize,
        (what, instead): (&str, &str),
    ) -> Result<(&'a Gpu, u64, SyncOnDrop<'a>)> {
        let gpu = self.backend.gpu(what, instead)?;
        if output.len() < needed {
            return Err(Error::OutputTooSmall {
                len: output.len(),
                needed,
            });
        }
        check_context(gpu, output.stream(), "output")?;
        let (ptr, record_write) = output.device_ptr_mut(gpu.stream());
        Ok((gpu, ptr, record_write))
    }

    /// The backend (for the layers above: several devices).
    pub(crate) fn backend_ref(&self) -> &Backend {
        &self.backend
    }
}

/// Copies `value` to `output[0]` on the GPU's stream (the result of an empty input).
pub(crate) fn write_one<V>(gpu: &Gpu, output: u64, value: &V) -> Result<()> {
    crate::backend::gpu::make_current(gpu.stream())?;
    // SAFETY: `output` holds at least one `V` (checked by the caller); the copy is ordered on
    // the reducer's stream like every other use of it, and reads `value` before returning.
    unsafe {
        result::memcpy_htod_async(
            output,
            std::slice::from_ref(value),
            gpu.stream().cu_stream(),
        )
    }
    .doing(|| "writing the result of an empty input".into())
}

/// A device buffer must live in the reducer's context.
fn check_context(gpu: &Gpu, stream: &Arc<CudaStream>, what: &str) -> Result<()> {
    if stream.context() == gpu.context() {
        Ok(())
    } else {
        Err(Error::WrongDevice(format!(
            "the {what} lives on GPU {} (another CUDA context) but the Reducer runs on GPU {}",
            stream.context().ordinal(),
            gpu.info().ordinal
        )))
    }
}
