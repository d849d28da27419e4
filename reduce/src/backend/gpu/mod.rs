//! The GPU backend: a CUDA context and stream, the kernels, and scratch memory reused from call
//! to call.
//!
//! Everything is enqueued on one stream — the caller's, or the default stream of the device —
//! and nothing synchronises unless a result has to reach the host.

mod buffer;
pub mod kernels;
pub mod ptx;

use crate::element::Element;
use crate::error::{DriverContext, Error, GpuUnavailable, Result};
use crate::op::Operation;
use crate::plan::{self, Job, SegmentOffsets, Work};
use crate::version::Version;
pub use buffer::DeviceBuffer;
pub(crate) use buffer::make_current;
use buffer::{Growing, PinnedBuffer};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg, result, sys,
};
use kernels::{KernelSource, Kernels};
use kernels_gpu::params::Params;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Checks for a driver and a device without panicking (cudarc panics when it cannot load
/// `libcuda.so`, so ask first).
pub fn probe() -> Result<usize, GpuUnavailable> {
    // SAFETY: only tries to open the library by name; no CUDA call is made.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuUnavailable::NoDriver);
    }
    match CudaContext::device_count() {
        Ok(0) => Err(GpuUnavailable::NoDevice),
        Ok(count) => Ok(count as usize),
        Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NO_DEVICE => Err(GpuUnavailable::NoDevice),
        Err(e) => Err(GpuUnavailable::Driver(e)),
    }
}

/// What the library knows of its GPU.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// The GPU's name.
    pub name: String,
    /// Its CUDA ordinal.
    pub ordinal: usize,
    /// Its streaming multiprocessors.
    pub multiprocessors: u32,
    /// Its compute capability, (major, minor).
    pub compute_capability: (u32, u32),
    /// The most shared memory a block may have, in bytes.
    pub max_shared_per_block: usize,
    /// Its memory, in bytes.
    pub total_memory: usize,
}

impl DeviceInfo {
    /// `sm_90` for an H100.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }

    fn read(ctx: &Arc<CudaContext>) -> Result<DeviceInfo> {
        let attribute = |a| {
            ctx.attribute(a)
                .map(|v| v as u32)
                .doing(|| "reading the GPU's attributes".into())
        };
        Ok(DeviceInfo {
            name: ctx.name().doing(|| "reading the GPU's name".into())?,
            ordinal: ctx.ordinal(),
            multiprocessors: attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )?,
            compute_capability: (
                attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
            max_shared_per_block: attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )? as usize,
            total_memory: ctx
                .total_mem()
                .doing(|| "reading the GPU's memory size".into())?,
        })
    }
}

/// The sizes every kernel takes, as a kernel argument.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct LaunchParams(Params);
// SAFETY: `Params` is `repr(C)` plain data (`u64`s); the kernels declare it as one 56-byte,
// 8-aligned `.param`, which is how CUDA passes a struct by value.
unsafe impl DeviceRepr for LaunchParams {}

/// The device addresses every kernel takes before its sizes (0 where a kernel uses none).
#[derive(Clone, Copy, Debug, Default)]
pub struct Pointers {
    pub input: u64,
    pub partials: u64,
    pub retired: u64,
    pub output: u64,
    pub offsets: u64,
}

/// Scratch memory, reused from call to call (only this backend's stream touches it).
#[derive(Default)]
struct Scratch {
    /// Segment offsets, copied up as `u64`.
    offsets: Growing,
    /// Results of a shape reduction on their way to the host.
    results: Growing,
    /// Single-pass kernels' per-block partials.
    partials: Growing,
    /// Single-pass kernels' counters; kept at zero by the kernels themselves.
    counters: Growing,
    /// Multi-pass versions' per-block values, ping and pong.
    passes: [Growing; 2],
    /// A result on its way to the host.
    result: Growing,
    /// Host inputs, copied up.
    staging: Growing,
}

/// The GPU backend of a [`Reducer`](crate::Reducer).
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    kernels: Arc<Kernels>,
    scratch: Mutex<(Scratch, Option<PinnedBuffer>)>,
}

/// The GPU's description and the embedded kernels of `ctx`, shared by every `Gpu` on that
/// context (each kernel is then compiled by the driver once per context, however many reducers
/// and streams use it), and kept while some `Gpu` holds them.
fn on_context(ctx: &Arc<CudaContext>) -> Result<(DeviceInfo, Arc<Kernels>)> {
    type Cache = Vec<(usize, DeviceInfo, std::sync::Weak<Kernels>)>;
    static CACHE: Mutex<Cache> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache.retain(|(_, _, kernels)| kernels.strong_count() > 0);
    let key = ctx.cu_ctx() as usize;
    if let Some((info, kernels)) = cache
        .iter()
        .find(|(k, _, _)| *k == key)
        .and_then(|(_, info, weak)| Some((info.clone(), weak.upgrade()?)))
    {
        return Ok((info, kernels));
    }
    let info = DeviceInfo::read(ctx)?;
    let kernels = Arc::new(Kernels::embedded(ctx)?);
    cache.push((key, info.clone(), Arc::downgrade(&kernels)));
    Ok((info, kernels))
}

/// The largest result a reduction brings home (an `Arg<f64>`), rounded up.
pub(crate) const RESULT_BYTES: usize = 64;

impl Gpu {
    /// GPU `ordinal`, its default stream, the embedded kernels.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let count = probe()?;
        if ordinal >= count {
            return Err(GpuUnavailable::NoSuchDevice { ordinal, count }.into());
        }
        let ctx = CudaContext::new(ordinal).doing(|| format!("opening GPU {ordinal}"))?;
        let stream = ctx.default_stream();
        Gpu::on_stream(stream)
    }

    /// The caller's stream (and its context).
    pub fn on_stream(stream: Arc<CudaStream>) -> Result<Gpu> {
        let ctx = stream.context().clone();
        let (info, kernels) = on_context(&ctx)?;
        Ok(Gpu {
            ctx,
            stream,
            info,
            kernels,
            scratch: Mutex::new((Scratch::default(), None)),
        })
    }

    /// Replaces the embedded kernels with the ones in `dir`.
    pub fn use_kernels_from(&mut self, dir: &Path) -> Result<()> {
        let arch = self.info.compute_capability.0 * 10 + self.info.compute_capability.1;
        self.kernels = Arc::new(Kernels::from_dir(&self.ctx, dir, arch)?);
        Ok(())
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn kernel_source(&self) -> &KernelSource {
        self.kernels.source()
    }

    /// Free and total GPU memory, in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .doing(|| "reading the GPU's free memory".into())
    }

    /// The most threads per block the kernel `name` can be launched with on this GPU.
    pub fn max_block(&self, name: &str) -> Result<u32> {
        self.kernels.max_block(name)
    }

    /// The block `version` runs `len` elements of `T` with `O` on this GPU: its tuned block,
    /// or the largest built size its kernel's registers allow ([`plan::runnable_block`]).
    ///
    /// ```no_run
    /// use reduce_rs::backend::gpu::Gpu;
    /// use reduce_rs::{Version, ops::ArgMax};
    /// # fn main() -> reduce_rs::Result<()> {
    /// let gpu = Gpu::open(0)?; // needs a GPU
    /// // The tuned block, or the largest built size the kernel's registers allow.
    /// let v8 = Version::fastest();
    /// let block = gpu.tuned_block::<half::bf16, ArgMax>(v8, 1 << 28)?;
    /// assert!(block <= v8.tuned_block(1 << 28));
    /// # Ok(())
    /// # }
    /// ```
    pub fn tuned_block<T: Element, O: Operation<T>>(
        &self,
        version: Version,
        len: usize,
    ) -> Result<u32> {
        plan::runnable_block(version.tuned_block(len), |block| {
            self.max_block(&plan::entry_name::<T, O>(version, block))
        })
    }

    /// The kernel `name` and the blocks of `block` threads the whole GPU runs at once.
    pub fn kernel(
        &self,
        name: &str,
        block: u32,
        shared_bytes: usize,
    ) -> Result<(CudaFunction, u64)> {
        if shared_bytes > self.info.max_shared_per_block {
            return Err(Error::Kernels(format!(
                "{name} needs {shared_bytes} bytes of shared memory per block; this GPU allows {}",
                self.info.max_shared_per_block
            )));
        }
        let (function, per_sm) = self.kernels.get(name, block, shared_bytes)?;
        Ok((
            function,
            u64::from(per_sm) * u64::from(self.info.multiprocessors),
        ))
    }

    /// Blocks of `block` threads with `shared_bytes` of shared memory of the kernel `name` that
    /// the whole GPU runs at once (the driver's occupancy, for this very entry point), at most
    /// `max_blocks`.
    pub fn resident(
        &self,
        name: &str,
        block: u32,
        shared_bytes: usize,
        max_blocks: Option<u32>,
    ) -> Result<u64> {
        let (_, resident) = self.kernel(name, block, shared_bytes)?;
        Ok(max_blocks.map_or(resident, |max| resident.min(u64::from(max.max(1)))))
    }

    /// Enqueues every launch of `job`: reads `input` (the device address of `job.len` items)
    /// and writes its results to `output`. Nothing waits for the GPU.
    pub fn run(&self, job: &Job<'_>, input: u64, output: u64) -> Result<()> {
        self.run_observed(job, input, output, |_| Ok(()))
    }

    /// [`Gpu::run`], calling `after_launch(k)` once launch `k` is enqueued (a benchmark
    /// records an event there).
    pub fn run_observed(
        &self,
        job: &Job<'_>,
        input: u64,
        output: u64,
        mut after_launch: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        let first = job.first_launch();
        let (function, _) = self.kernel(&job.kernel, first.block, first.shared_bytes)?;
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let scratch = &mut guard.0;
        match &job.work {
            Work::Passes {
                passes,
                sizes,
                results,
            } => {
                let first_grid = first.grid as usize;
                let counters = scratch
                    .counters
                    .at_least(&self.stream, size_of::<u32>())?
                    .ptr();
                let partials = scratch
                    .partials
                    .at_least(&self.stream, first_grid * sizes.accumulator)?
                    .ptr();
                let mut between = [0u64; 2];
                if passes.len() > 1 {
                    for (k, buffer) in scratch.passes.iter_mut().enumerate() {
                        between[k] = buffer
                            .at_least(&self.stream, first_grid * sizes.element)?
                            .ptr();
                    }
                }
                let mut input = input;
                for (k, pass) in passes.iter().enumerate() {
                    let last = k + 1 == passes.len();
                    let (to, to_len) = if last {
                        (output, *results)
                    } else {
                        (between[k % 2], pass.launch.grid as usize)
                    };
                    let pointers = Pointers {
                        input,
                        partials,
                        retired: counters,
                        output: to,
                        offsets: 0,
                    };
                    let params = Params {
                        len: pass.len as u64,
                        partials_len: first_grid as u64,
                        retired_len: 1,
                        output_len: to_len as u64,
                        ..Params::default()
                    };
                    self.launch(&job.kernel, &function, pass.launch, pointers, params)?;
                    after_launch(k)?;
                    input = to;
                }
                Ok(())
            }
            Work::Shape {
                plan,
                sizes,
                offsets,
                segments,
                segment_len,
                results,
            } => {
                let counters = scratch
                    .counters
                    .at_least(&self.stream, plan.counters.max(1) * size_of::<u32>())?
                    .ptr();
                let partials = scratch
                    .partials
                    .at_least(&self.stream, plan.partials.max(1) * sizes.accumulator)?
                    .ptr();
                let offsets = match *offsets {
                    SegmentOffsets::Device(ptr) => ptr,
                    SegmentOffsets::Host(offsets) => {
                        let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
                        let bytes = crate::bytes::bytes_of(&wide);
                        let buffer = scratch.offsets.at_least(&self.stream, bytes.len())?;
                        make_current(&self.stream)?;
                        // SAFETY: `buffer` holds at least `bytes.len()` bytes, used only on
                        // this stream; a copy from pageable memory has read `bytes` when the
                        // call returns.
                        unsafe {
                            result::memcpy_htod_async(buffer.ptr(), bytes, self.stream.cu_stream())
                        }
                        .doing(|| "copying the segment offsets to the GPU".into())?;
                        buffer.ptr()
                    }
                    SegmentOffsets::None => 0,
                };
                let pointers = Pointers {
                    input,
                    partials,
                    retired: counters,
                    output,
                    offsets,
                };
                let params = Params {
                    len: job.len as u64,
                    partials_len: plan.partials as u64,
                    retired_len: plan.counters as u64,
                    output_len: *results as u64,
                    segments: *segments as u64,
                    segment_len: *segment_len as u64,
                    split: plan.split as u64,
                };
                self.launch(&job.kernel, &function, plan.launch, pointers, params)?;
                after_launch(0)
            }
            Work::Single {
                launch,
                partials_bytes,
            } => {
                let counters = scratch
                    .counters
                    .at_least(&self.stream, size_of::<u32>())?
                    .ptr();
                let partials = scratch
                    .partials
                    .at_least(&self.stream, (*partials_bytes).max(1))?
                    .ptr();
                let pointers = Pointers {
                    input,
                    partials,
                    retired: counters,
                    output,
                    offsets: 0,
                };
                let params = Params {
                    len: job.len as u64,
                    partials_len: u64::from(launch.grid),
                    retired_len: 1,
                    output_len: 1,
                    ..Params::default()
                };
                self.launch(&job.kernel, &function, *launch, pointers, params)?;
                after_launch(0)
            }
        }
    }

    /// A device buffer for `bytes` bytes of results on their way to the host.
    pub fn results_buffer(&self, bytes: usize) -> Result<u64> {
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        Ok(guard.0.results.at_least(&self.stream, bytes)?.ptr())
    }

    /// Copies `bytes` bytes at `src` to a new host vector once the stream gets there, waiting
    /// for it.
    pub fn read_back_many(&self, src: u64, bytes: usize) -> Result<Vec<u8>> {
        let mut host = vec![0u8; bytes];
        make_current(&self.stream)?;
        // SAFETY: `src` holds `bytes` bytes written on this stream before the copy; `host` is
        // ours for the call.
        unsafe { result::memcpy_dtoh_async(&mut host, src, self.stream.cu_stream()) }
            .doing(|| "copying the results to the host".into())?;
        self.stream
            .synchronize()
            .doing(|| "waiting for the GPU".into())?;
        Ok(host)
    }

    /// One launch of `function` with `pointers` and `sizes`.
    pub fn launch(
        &self,
        name: &str,
        function: &CudaFunction,
        launch_grid: plan::LaunchGrid,
        pointers: Pointers,
        sizes: Params,
    ) -> Result<()> {
        let config = LaunchConfig {
            grid_dim: (launch_grid.grid, 1, 1),
            block_dim: (launch_grid.block, 1, 1),
            shared_mem_bytes: launch_grid.shared_bytes as u32,
        };
        let sizes = LaunchParams(sizes);
        let mut args = self.stream.launch_builder(function);
        args.arg(&pointers.input)
            .arg(&pointers.partials)
            .arg(&pointers.retired)
            .arg(&pointers.output)
            .arg(&pointers.offsets)
            .arg(&sizes);
        // SAFETY: every kernel entry point takes exactly these five 64-bit addresses and one
        // `Params` (kernels-gpu's registry generates them all from one macro), and they satisfy
        // its launch contract (`kernels_gpu::params::Launch`): the callers size `input`,
        // `partials`, `output` and the counters from the same plan that sets the grid, the
        // counters are zeroed at allocation and every kernel leaves them at zero, and the shared
        // memory is the plan's `shared_bytes` for this kernel (which the simulator checks
        // against the kernel's `shared_array!`s at every launch in CI).
        unsafe { args.launch(config) }
            .map(|_| ())
            .map_err(|source| Error::KernelFailed {
                kernel: name.to_string(),
                source,
            })
    }

    /// A device buffer for one result on its way to the host.
    pub fn result_buffer(&self) -> Result<u64> {
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        Ok(guard.0.result.at_least(&self.stream, RESULT_BYTES)?.ptr())
    }

    /// Copies `bytes` bytes at `src` to the host once the stream gets there, waiting for it.
    pub fn read_back(&self, src: u64, bytes: usize) -> Result<Vec<u8>> {
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if guard.1.is_none() {
            guard.1 = Some(PinnedBuffer::new(&self.stream, RESULT_BYTES)?);
        }
        let pinned = guard.1.as_mut().expect("allocated above");
        let bytes = pinned.copy_from_device(src, bytes)?.to_vec();
        Ok(bytes)
    }

    /// Copies `data` into the staging buffer (allocated once, grown when needed) and returns its
    /// device address.
    pub fn upload(&self, data: &[u8]) -> Result<u64> {
        let (free, _) = self.memory()?;
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let staging = &mut guard.0.staging;
        let have = staging.capacity();
        if data.len() > have && data.len() > free {
            return Err(Error::OutOfMemory {
                what: format!("copying {} MiB of input to the GPU", data.len() >> 20),
                needed_mib: data.len() >> 20,
                free_mib: free >> 20,
            });
        }
        let buffer = staging.at_least(&self.stream, data.len())?;
        make_current(&self.stream)?;
        // SAFETY: `buffer` holds at least `data.len()` bytes and is used only on this stream;
        // `data` is borrowed for the call, and a copy from pageable memory has read it by the
        // time the call returns.
        unsafe { result::memcpy_htod_async(buffer.ptr(), data, self.stream.cu_stream()) }
            .doing(|| format!("copying {} MiB of input to the GPU", data.len() >> 20))?;
        Ok(buffer.ptr())
    }

    /// Copies `data` to the staging buffer (see [`Gpu::upload`]).
    pub fn upload_elements<T: crate::element::Element>(&self, data: &[T]) -> Result<u64> {
        self.upload(crate::bytes::bytes_of(data))
    }

    /// A device copy of `data`, owned by the caller.
    pub fn copy_to_device<T: crate::element::Element>(&self, data: &[T]) -> Result<DeviceBuffer> {
        let (free, _) = self.memory()?;
        let bytes = crate::bytes::bytes_of(data);
        if bytes.len() > free {
            return Err(Error::OutOfMemory {
                what: format!("a copy of {} MiB", bytes.len() >> 20),
                needed_mib: bytes.len() >> 20,
                free_mib: free >> 20,
            });
        }
        DeviceBuffer::from_host(&self.stream, bytes)
    }

    /// Frees the staging buffer (the next host input allocates a new one).
    pub fn free_staging(&self) {
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        guard.0.staging = Growing::default();
    }

    /// Waits for everything enqueued so far; a kernel that failed is reported here.
    pub fn synchronize(&self, name: &str) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|source| Error::KernelFailed {
                kernel: name.to_string(),
                source,
            })
    }
}
