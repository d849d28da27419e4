//! [`Reducer`]: the handle every reduction goes through. This file: creating one, and whole
//! inputs; `each.rs`: every row, column or segment.

mod each;
mod reproducible;
pub(crate) mod shards;

use crate::element::{Element, bytes_of};
use crate::error::{DriverContext, Error, GpuUnavailable, Result};
use crate::gpu::{self, Gpu, Target};
use crate::input::{Input, Source};
use crate::op::{ArgMax, ArgMin, Max, Mean, Min, Operation, Sum};
use crate::plan::{self, Sizes};
use crate::sim::{Sim, SimReport};
use crate::version::Version;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, result};
use kernels_gpu::ops::Reduction;
use simt::Schedule;
use std::path::Path;
use std::sync::Arc;

/// Reduces host slices and GPU buffers: create one, keep it, call it many times.
///
/// A `Reducer` owns what reductions need from call to call — on the GPU a stream, the kernels
/// (compiled by the driver the first time each is used) and scratch memory — and runs either
/// on a GPU or on the CPU simulator, with the same methods and the same results (up to the
/// rounding of float sums, which depends on the launch shape).
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

enum Backend {
    Gpu(Box<Gpu>),
    Sim(Box<Sim>),
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
    /// (v6–v8), as a smaller GPU would: for tests of launch shapes.
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

    #[doc(hidden)]
    pub fn gpu_backend(&self) -> Option<&Gpu> {
        match &self.backend {
            Backend::Gpu(gpu) => Some(gpu),
            Backend::Sim(_) => None,
        }
    }

    /// `Σx` (wrapping for integers; in `f32` for `f16`/`bf16`); `0` for an empty input.
    ///
    /// ```
    /// use half::bf16;
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.sum(&[bf16::from_f32(1.5), bf16::from_f32(2.0)])?, 3.5f32);
    /// assert_eq!(reducer.sum(&[i32::MAX, 1])?, i32::MIN);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn sum<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<T::Sum> {
        self.reduce(Sum, input)
    }

    /// The smallest element (NaN if any is NaN; `-0.0 < +0.0`), `None` for an empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.min(&[3i64, -7, 5])?, Some(-7));
    /// assert!(reducer.min(&[1.0f32, f32::NAN])?.unwrap().is_nan());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn min<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<Option<T>> {
        self.reduce(Min, input)
    }

    /// The largest element (NaN if any is NaN; `-0.0 < +0.0`), `None` for an empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.max(&[3u64, 7, 5])?, Some(7));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn max<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<Option<T>> {
        self.reduce(Max, input)
    }

    /// Index and value of the first smallest element (of the first NaN, if any); `None` for an
    /// empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.argmin(&[4.0f64, 1.0, 1.0])?, Some((1, 1.0)));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn argmin<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
    ) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMin, input)
    }

    /// Index and value of the first largest element (of the first NaN, if any); `None` for an
    /// empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.argmax(&[4.0f32, 9.0, f32::NAN, 9.0])?.map(|(i, _)| i), Some(2));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn argmax<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
    ) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMax, input)
    }

    /// `Σx / n`, added up in `f32` (for `f32`, `f16`, `bf16`) or `f64` (for `f64` and the
    /// integers); `None` for an empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.mean(&[1u32, 2, 4])?, Some(7.0 / 3.0));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn mean<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<Option<T::Mean>> {
        self.reduce(Mean, input)
    }

    /// Reduces `input` with `op`, returning the result to the host. A host input is copied to
    /// the GPU; a device input is read where it is, after the work already queued on the
    /// reducer's stream, which this call then waits for.
    ///
    /// ```
    /// use reduce_rs::{Reducer, ops::Max};
    /// assert_eq!(Reducer::simulator().reduce(Max, &[2u32, 8, 5])?, Some(8));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn reduce<T, O, I>(&self, op: O, input: &I) -> Result<O::Output>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let _ = op;
        if let Some(kernel) = self.reproducible_kernel::<T, O>() {
            if input.is_empty() {
                return Ok(O::empty());
            }
            let bytes = self.run_reproducible(&kernel, input, size_of::<O::Device>())?;
            return Ok(O::output(device_value::<T, O>(&bytes)));
        }
        self.check_supported::<T, O>()?;
        if input.is_empty() {
            return Ok(O::empty());
        }
        let device = match &self.backend {
            Backend::Gpu(gpu) => self.gpu_to_host::<T, O, I>(gpu, input)?,
            Backend::Sim(sim) => self.simulate::<T, O, I>(sim, input)?,
        };
        Ok(O::output(device))
    }

    /// Reduces `input` with `op` and writes the result to `output[0]`, on the GPU, without
    /// waiting for it: the result is there for the caller's next kernel on the reducer's
    /// stream. An empty input writes `0` for a sum and is an error for the other operations
    /// (they have no value). GPU only.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// use reduce_rs::{Reducer, ops::Sum};
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let data = stream.clone_htod(&vec![0.5f32; 1 << 20])?;
    /// let mut total = stream.alloc_zeros::<f32>(1)?;
    /// let reducer = Reducer::on_stream(stream.clone())?;
    /// reducer.reduce_into(Sum, &data, &mut total)?;
    /// assert_eq!(stream.clone_dtoh(&total)?, [524288.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_into<T, O, I, D>(&self, op: O, input: &I, output: &mut D) -> Result<()>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
        D: DevicePtrMut<O::Device>,
    {
        let _ = op;
        if self.reproducible_kernel::<T, O>().is_none() {
            self.check_supported::<T, O>()?;
        }
        let Backend::Gpu(gpu) = &self.backend else {
            return Err(Error::WrongDevice(
                "reduce_into writes to GPU memory; this Reducer is the simulator (use reduce)"
                    .into(),
            ));
        };
        if output.len() == 0 {
            return Err(Error::OutputTooSmall { len: 0, needed: 1 });
        }
        check_context(gpu, output.stream(), "output")?;
        let (out_ptr, _record_write) = output.device_ptr_mut(gpu.stream());
        if input.is_empty() {
            let value = O::empty_device().ok_or(Error::Empty { op: O::KIND })?;
            // SAFETY: `out_ptr` holds at least one `O::Device` (checked above); the copy is
            // ordered on the reducer's stream like every other use of the output.
            unsafe {
                result::memcpy_htod_async(
                    out_ptr,
                    std::slice::from_ref(&value),
                    gpu.stream().cu_stream(),
                )
            }
            .doing(|| "writing the sum of an empty input".into())?;
            return Ok(());
        }
        self.gpu_enqueue::<T, O, I>(gpu, input, out_ptr, 1)
    }

    /// Reduces `input` with `op` into a new one-element buffer on the reducer's stream, without
    /// waiting for it (see [`Reducer::reduce_into`]). GPU only.
    ///
    /// ```no_run
    /// use reduce_rs::{Reducer, ops::ArgMax};
    /// let reducer = Reducer::gpu(0)?;
    /// let stream = reducer.stream().unwrap().clone();
    /// let logits = stream.clone_htod(&[0.1f32, 2.5, 0.3])?;
    /// let best = reducer.reduce_to_device(ArgMax, &logits)?;
    /// assert_eq!(stream.clone_dtoh(&best)?[0].index, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_to_device<T, O, I>(&self, op: O, input: &I) -> Result<CudaSlice<O::Device>>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let Backend::Gpu(gpu) = &self.backend else {
            return Err(Error::WrongDevice(
                "reduce_to_device leaves the result in GPU memory; this Reducer is the simulator (use reduce)".into(),
            ));
        };
        let mut output = gpu
            .stream()
            .alloc_zeros::<O::Device>(1)
            .doing(|| "allocating the result buffer".into())?;
        self.reduce_into(op, input, &mut output)?;
        Ok(output)
    }

    fn check_supported<T: Element, O: Operation<T>>(&self) -> Result<()> {
        if self.version.supports(T::DTYPE, O::KIND) {
            Ok(())
        } else {
            Err(Error::Unsupported {
                version: self.version.name(),
                dtype: T::DTYPE,
                op: O::KIND,
            })
        }
    }

    /// The block size a reduction of `len` elements uses.
    pub fn block_for(&self, len: usize) -> u32 {
        self.block.unwrap_or_else(|| self.version.tuned_block(len))
    }

    /// Host result of a reduction on the GPU.
    fn gpu_to_host<T: Element, O: Operation<T>, I: Input<T> + ?Sized>(
        &self,
        gpu: &Gpu,
        input: &I,
    ) -> Result<O::Device> {
        let out = gpu.result_buffer()?;
        self.gpu_enqueue::<T, O, I>(gpu, input, out, 1)?;
        let name = self.entry_name::<T, O>(input.len());
        let bytes = gpu
            .read_back(out, size_of::<O::Device>())
            .map_err(|e| match e {
                Error::Driver { source, .. } => Error::KernelFailed {
                    kernel: name.clone(),
                    source,
                },
                other => other,
            })?;
        Ok(device_value::<T, O>(&bytes))
    }

    fn entry_name<T: Element, O: Operation<T>>(&self, len: usize) -> String {
        plan::entry_name::<T, O>(self.version, self.block_for(len))
    }

    /// Enqueues a whole-array reduction of `input` writing `output` (a device address).
    fn gpu_enqueue<T: Element, O: Operation<T>, I: Input<T> + ?Sized>(
        &self,
        gpu: &Gpu,
        input: &I,
        output: u64,
        output_len: usize,
    ) -> Result<()> {
        if let Some(kernel) = self.reproducible_kernel::<T, O>() {
            return self.enqueue_reproducible(gpu, &kernel, input, output);
        }
        let len = input.len();
        let block = self.block_for(len);
        let name = self.entry_name::<T, O>(len);
        let sizes = sizes::<T, O>();
        let (function, passes) =
            gpu.plan(self.version, &name, len, block, sizes, self.max_blocks)?;
        match input.source() {
            Source::Host(slice) => {
                let input = gpu.upload(bytes_of(slice))?;
                gpu.enqueue(
                    &name,
                    &function,
                    &passes,
                    sizes,
                    target(input, len, output, output_len),
                )
            }
            Source::Device(device) => {
                check_context(gpu, device.stream(), "input")?;
                let (input, _record_read) = device.device_ptr(gpu.stream());
                gpu.enqueue(
                    &name,
                    &function,
                    &passes,
                    sizes,
                    target(input, len, output, output_len),
                )
            }
        }
    }

    fn simulate<T: Element, O: Operation<T>, I: Input<T> + ?Sized>(
        &self,
        sim: &Sim,
        input: &I,
    ) -> Result<O::Device> {
        let Source::Host(slice) = input.source() else {
            return Err(Error::WrongDevice(
                "this Reducer is the simulator, which reads host memory: copy the data to the host, or use a GPU Reducer".into(),
            ));
        };
        let len = slice.len();
        let sizes = sizes::<T, O>();
        let passes = sim.plan(
            self.version,
            len,
            self.block_for(len),
            sizes,
            self.max_blocks,
        )?;
        let name = self.entry_name::<T, O>(len);
        let bytes = sim.run(
            &name,
            &passes,
            sizes,
            bytes_of(slice),
            len,
            1,
            size_of::<O::Device>(),
        )?;
        Ok(device_value::<T, O>(&bytes))
    }
}

fn target(input: u64, len: usize, output: u64, output_len: usize) -> Target {
    Target {
        input,
        len,
        output,
        output_len,
    }
}

fn sizes<T: Element, O: Operation<T>>() -> Sizes {
    Sizes::of::<T, O>()
}

/// The device result `O` left in `bytes` (at least `size_of::<O::Device>()` of them).
pub fn device_value<T: Element, O: Operation<T>>(bytes: &[u8]) -> O::Device {
    const {
        assert!(
            size_of::<O::Device>() == size_of::<<O as Reduction<T::Kernel>>::Out>(),
            "the host's view of a result has the kernel's layout"
        )
    };
    assert!(
        bytes.len() >= size_of::<O::Device>(),
        "a whole result was read"
    );
    // SAFETY: `bytes` holds the kernel's `Out`, which has `O::Device`'s layout (same size,
    // checked above; `repr(C)` twins or the same primitive), and every bit pattern the kernel
    // writes is a valid `O::Device`.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) }
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
