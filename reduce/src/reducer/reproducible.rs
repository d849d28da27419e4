//! The reproducible mode of a [`Reducer`] (see [`crate::reproducible`]): the option, the
//! dispatch of float sums and means to the reproducible kernels, and partial sums.

use super::{Backend, Reducer, check_context};
use crate::element::DType;
use crate::element::{Element, bytes_of};
use crate::error::{DriverContext, Error, Result};
use crate::gpu::{Gpu, Target};
use crate::input::{Input, Source};
use crate::op::Operation;
use crate::reproducible::{self as repro, PartialSum, STATE_BYTES_F32, SumFloat};
use cudarc::driver::{DevicePtr, DevicePtrMut, result};
use kernels_gpu::launch::WARP_SIZE;

/// Where a reproducible launch reads: elements (as vectors) or partial sums (one per thread).
#[derive(Clone, Copy)]
struct Reads {
    len: usize,
    element_bytes: usize,
    vectors: bool,
    state_bytes: usize,
}

impl Reducer {
    /// Sums and means of floats (and means of integers) with the reproducible kernel: the same
    /// bits for any grid, block size, GPU model and split of the input, at some cost in speed
    /// (see [`crate::reproducible`]). The other reductions are order-independent already and
    /// do not change. It takes the place of the version for the reductions it covers.
    ///
    /// ```
    /// use reduce_rs::Reducer;
    /// let data: Vec<f32> = (0..50_000).map(|i| (i as f32).sin()).collect();
    /// let a = Reducer::simulator().with_reproducible(true);
    /// let b = Reducer::simulator().with_reproducible(true).with_block_size(1024)?.with_max_blocks(1);
    /// assert_eq!(a.sum(&data)?.to_bits(), b.sum(&data)?.to_bits());
    /// assert!(a.reproducible());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn with_reproducible(mut self, reproducible: bool) -> Reducer {
        self.reproducible = reproducible;
        self
    }

    /// Switches the reproducible mode on or off (see [`Reducer::with_reproducible`]).
    ///
    /// ```
    /// let mut reducer = reduce_rs::Reducer::simulator();
    /// reducer.set_reproducible(true);
    /// assert_eq!(reducer.mean(&[1.0f64, 2.0, 4.5])?, Some(2.5));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn set_reproducible(&mut self, reproducible: bool) {
        self.reproducible = reproducible;
    }

    /// Whether float sums and means are reproducible ([`Reducer::with_reproducible`]).
    pub fn reproducible(&self) -> bool {
        self.reproducible
    }

    /// The entry point a reduction of `T` with `O` runs in the reproducible mode, if it does:
    /// `reproducible_f32_sum` (for the CLI and the benchmark).
    pub fn reproducible_kernel<T: Element, O: Operation<T>>(&self) -> Option<String> {
        if self.reproducible {
            repro::kernel_for(T::DTYPE, O::KIND)
        } else {
            None
        }
    }

    /// The unfinished reproducible sum of `input`, one shard of a larger sum: merge the
    /// shards' partial sums ([`PartialSum::merge`], [`Reducer::merge_partial_sums`]) and the
    /// value is the same bits as the reproducible sum of all of them together (whatever the
    /// reducer's mode).
    ///
    /// ```
    /// use reduce_rs::Reducer;
    /// use half::f16;
    /// let reducer = Reducer::simulator();
    /// let data: Vec<f16> = (0..3000).map(|i| f16::from_f32(i as f32 * 0.25)).collect();
    /// let mut total = reducer.partial_sum(&data[..1000])?;
    /// total.merge(&reducer.partial_sum(&data[1000..])?);
    /// let whole = reducer.with_reproducible(true).sum(&data)?;
    /// assert_eq!(total.value(), whole);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn partial_sum<T, I>(&self, input: &I) -> Result<PartialSum<T::Sum>>
    where
        T: Element,
        T::Sum: SumFloat,
        I: Input<T> + ?Sized,
    {
        if input.is_empty() {
            return Ok(PartialSum::EMPTY);
        }
        let name = repro::state_kernel(T::DTYPE);
        let bytes = self.run_reproducible(&name, input, size_of::<PartialSum<T::Sum>>())?;
        Ok(PartialSum::from_bytes(&bytes))
    }

    /// Writes the partial sum of `input` ([`Reducer::partial_sum`]) to `output[0]` on the GPU,
    /// without waiting: for sums over several GPUs, each writes its shard's, then one merges
    /// them ([`Reducer::merge_partial_sums_into`]). GPU only.
    ///
    /// ```no_run
    /// use reduce_rs::{Reducer, reproducible::PartialSum};
    /// let reducer = Reducer::gpu(0)?;
    /// let stream = reducer.stream().unwrap().clone();
    /// let shard = stream.clone_htod(&vec![0.1f32; 1 << 20])?;
    /// let mut partials = stream.alloc_zeros::<PartialSum<f32>>(2)?;
    /// reducer.partial_sum_into(&shard, &mut partials.slice_mut(0..1))?;
    /// reducer.partial_sum_into(&shard, &mut partials.slice_mut(1..2))?;
    /// let mut total = stream.alloc_zeros::<f32>(1)?;
    /// reducer.merge_partial_sums_into(&partials, &mut total)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn partial_sum_into<T, I, D>(&self, input: &I, output: &mut D) -> Result<()>
    where
        T: Element,
        T::Sum: SumFloat,
        I: Input<T> + ?Sized,
        D: DevicePtrMut<PartialSum<T::Sum>>,
    {
        let gpu = self.gpu_for("partial_sum_into", "partial_sum")?;
        let (out_ptr, _record_write) = self.device_output(gpu, output)?;
        if input.is_empty() {
            return write_one(gpu, out_ptr, &PartialSum::<T::Sum>::EMPTY);
        }
        let name = repro::state_kernel(T::DTYPE);
        self.enqueue_reproducible(gpu, &name, input, out_ptr)
    }

    /// The value of the partial sums merged: the same bits as the reproducible sum of the
    /// inputs they came from, taken together. On the GPU they are copied up and merged by a
    /// kernel; on the simulator the same kernel runs.
    ///
    /// ```
    /// use reduce_rs::Reducer;
    /// let reducer = Reducer::simulator();
    /// let parts = [reducer.partial_sum(&[1e30f64, 3.0])?, reducer.partial_sum(&[-1e30f64])?];
    /// assert_eq!(reducer.merge_partial_sums(&parts)?, 3.0);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn merge_partial_sums<F: SumFloat>(&self, partials: &[PartialSum<F>]) -> Result<F> {
        if partials.is_empty() {
            return Ok(F::ZERO);
        }
        let name = repro::merge_kernel::<F>();
        let reads = Reads {
            len: partials.len(),
            element_bytes: size_of::<PartialSum<F>>(),
            vectors: false,
            state_bytes: size_of::<PartialSum<F>>(),
        };
        let input = PartialSum::bytes_of(partials);
        let bytes = match &self.backend {
            Backend::Gpu(gpu) => {
                let out = gpu.result_buffer()?;
                let input = gpu.upload(input)?;
                self.enqueue_launch(gpu, &name, reads, input, out)?;
                read_result(gpu, &name, out, size_of::<F>())?
            }
            Backend::Sim(sim) => {
                let shape = self.sim_shape(sim, reads);
                let partials_bytes = shape.grid as usize * reads.state_bytes;
                sim.run_single(
                    &name,
                    shape,
                    partials_bytes,
                    input,
                    reads.len,
                    size_of::<F>(),
                )?
            }
        };
        // SAFETY: the kernel wrote one `F` there.
        Ok(unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) })
    }

    /// Merges the partial sums in `partials` (a device buffer) and writes their value to
    /// `output[0]`, without waiting (see [`Reducer::partial_sum_into`]). GPU only.
    pub fn merge_partial_sums_into<F, S, D>(&self, partials: &S, output: &mut D) -> Result<()>
    where
        F: SumFloat,
        S: DevicePtr<PartialSum<F>>,
        D: DevicePtrMut<F>,
    {
        let gpu = self.gpu_for("merge_partial_sums_into", "merge_partial_sums")?;
        let (out_ptr, _record_write) = self.device_output(gpu, output)?;
        if partials.len() == 0 {
            return write_one(gpu, out_ptr, &F::ZERO);
        }
        check_context(gpu, partials.stream(), "partial sums")?;
        let (input, _record_read) = partials.device_ptr(gpu.stream());
        let reads = Reads {
            len: partials.len(),
            element_bytes: size_of::<PartialSum<F>>(),
            vectors: false,
            state_bytes: size_of::<PartialSum<F>>(),
        };
        self.enqueue_launch(gpu, &repro::merge_kernel::<F>(), reads, input, out_ptr)?;
        Ok(())
    }

    /// Enqueues the reproducible kernel of `T` × `O` over `len` elements at device address
    /// `input`, writing `output[0]`, and returns its launch (GPU; for the benchmark's timer).
    #[doc(hidden)]
    pub fn enqueue_reproducible_at<T: Element, O: Operation<T>>(
        &self,
        input: u64,
        len: usize,
        output: u64,
    ) -> Result<crate::plan::LaunchShape> {
        let gpu = self.gpu_for("enqueue_reproducible_at", "reduce")?;
        let name = reproducible_kernel_name::<T, O>()?;
        self.enqueue_launch(gpu, &name, element_reads::<T>(len), input, output)
    }

    /// The launch the reproducible kernel of `T` with `O` uses over `len` elements on this
    /// backend (the kernel [`Reducer::reproducible_kernel`] names).
    #[doc(hidden)]
    pub fn reproducible_launch<T: Element, O: Operation<T>>(
        &self,
        len: usize,
    ) -> Result<crate::plan::LaunchShape> {
        let reads = element_reads::<T>(len);
        Ok(match &self.backend {
            Backend::Gpu(gpu) => {
                let name = reproducible_kernel_name::<T, O>()?;
                self.gpu_launch(gpu, &name, reads)?.1
            }
            Backend::Sim(sim) => self.sim_shape(sim, reads),
        })
    }

    /// Runs the reproducible kernel `name` over `input` and returns the `out_bytes` bytes of
    /// its result, on either backend.
    pub(super) fn run_reproducible<T: Element, I: Input<T> + ?Sized>(
        &self,
        name: &str,
        input: &I,
        out_bytes: usize,
    ) -> Result<Vec<u8>> {
        match &self.backend {
            Backend::Gpu(gpu) => {
                let out = gpu.result_buffer()?;
                self.enqueue_reproducible(gpu, name, input, out)?;
                read_result(gpu, name, out, out_bytes)
            }
            Backend::Sim(sim) => {
                let Source::Host(slice) = input.source() else {
                    return Err(Error::WrongDevice(
                        "this Reducer is the simulator, which reads host memory: copy the data to the host, or use a GPU Reducer".into(),
                    ));
                };
                let reads = element_reads::<T>(slice.len());
                let shape = self.sim_shape(sim, reads);
                let partials_bytes = shape.grid as usize * reads.state_bytes;
                sim.run_single(
                    name,
                    shape,
                    partials_bytes,
                    bytes_of(slice),
                    slice.len(),
                    out_bytes,
                )
            }
        }
    }

    /// Enqueues the reproducible kernel `name` over `input`, writing `output[0]` (GPU).
    pub(super) fn enqueue_reproducible<T: Element, I: Input<T> + ?Sized>(
        &self,
        gpu: &Gpu,
        name: &str,
        input: &I,
        output: u64,
    ) -> Result<()> {
        let reads = element_reads::<T>(input.len());
        match input.source() {
            Source::Host(slice) => {
                let input = gpu.upload(bytes_of(slice))?;
                self.enqueue_launch(gpu, name, reads, input, output)?;
            }
            Source::Device(device) => {
                check_context(gpu, device.stream(), "input")?;
                let (input, _record_read) = device.device_ptr(gpu.stream());
                self.enqueue_launch(gpu, name, reads, input, output)?;
            }
        }
        Ok(())
    }

    fn enqueue_launch(
        &self,
        gpu: &Gpu,
        name: &str,
        reads: Reads,
        input: u64,
        output: u64,
    ) -> Result<crate::plan::LaunchShape> {
        let (function, shape) = self.gpu_launch(gpu, name, reads)?;
        let target = Target {
            input,
            len: reads.len,
            output,
            output_len: 1,
        };
        let partials_bytes = shape.grid as usize * reads.state_bytes;
        gpu.enqueue_single(name, &function, shape, partials_bytes, target)?;
        Ok(shape)
    }

    /// The kernel `name` and its launch over `reads` on `gpu`: the block of
    /// [`Self::gpu_block`], at most one wave of blocks (or `max_blocks`).
    fn gpu_launch(
        &self,
        gpu: &Gpu,
        name: &str,
        reads: Reads,
    ) -> Result<(cudarc::driver::CudaFunction, crate::plan::LaunchShape)> {
        let block = self.gpu_block(gpu, name)?;
        let shared = repro::shared_bytes(block, reads.state_bytes);
        let (function, resident) = gpu.kernel(name, block, shared)?;
        let resident = self
            .max_blocks
            .map_or(resident, |max| resident.min(u64::from(max)));
        Ok((function, shape_of(reads, block, resident)))
    }

    /// The block the reproducible kernel `name` runs with on `gpu`: the one chosen, or where
    /// the kernel cannot run blocks that large (its registers), the largest power of two it
    /// can (the block merge needs a power-of-two number of warps). The sum's bits do not
    /// depend on the block, so this changes only its speed. A kernel that cannot run even one
    /// warp per block is reported by [`Gpu::kernel`] as [`Error::BlockTooLarge`].
    fn gpu_block(&self, gpu: &Gpu, name: &str) -> Result<u32> {
        let chosen = repro::block(self.block);
        let max = gpu.max_block(name)?;
        Ok(if chosen <= max {
            chosen
        } else {
            1 << max.max(WARP_SIZE).ilog2()
        })
    }

    fn sim_shape(&self, sim: &crate::sim::Sim, reads: Reads) -> crate::plan::LaunchShape {
        let block = repro::block(self.block);
        shape_of(reads, block, sim.resident_blocks(block, self.max_blocks))
    }

    /// The GPU, or why `what` needs one.
    /// Enqueues the partial sum (binned state) of `input`, a float type's, into the state at
    /// device address `output` (GPU): a shard's step of a reproducible sum over several
    /// devices (`crate::devices`).
    pub(crate) fn enqueue_partial_sum_at<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
        output: u64,
    ) -> Result<()> {
        let gpu = self.gpu_for("a shard's partial sum", "partial_sum")?;
        if input.is_empty() {
            return match repro::state_bytes(T::DTYPE) {
                STATE_BYTES_F32 => write_one(gpu, output, &PartialSum::<f32>::EMPTY),
                _ => write_one(gpu, output, &PartialSum::<f64>::EMPTY),
            };
        }
        self.enqueue_reproducible(gpu, &repro::state_kernel(T::DTYPE), input, output)
    }

    /// The partial sum (binned state) of `input`, a float type's, as bytes, on either backend.
    pub(crate) fn partial_sum_bytes<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
    ) -> Result<Vec<u8>> {
        let bytes = repro::state_bytes(T::DTYPE);
        if input.is_empty() {
            return Ok(match bytes {
                STATE_BYTES_F32 => PartialSum::bytes_of(&[PartialSum::<f32>::EMPTY]).to_vec(),
                _ => PartialSum::bytes_of(&[PartialSum::<f64>::EMPTY]).to_vec(),
            });
        }
        self.run_reproducible(&repro::state_kernel(T::DTYPE), input, bytes)
    }

    /// Enqueues the merge of the `count` partial sums of `T`'s sums at device address
    /// `states` into the value at `output` (GPU): the last step of a reproducible sum over
    /// several devices.
    pub(crate) fn enqueue_merge_at<T: Element>(
        &self,
        states: u64,
        count: usize,
        output: u64,
    ) -> Result<()> {
        let gpu = self.gpu_for("merging partial sums on the device", "merge_partial_sums")?;
        let (name, bytes) = merge_of(T::DTYPE);
        let reads = Reads {
            len: count,
            element_bytes: bytes,
            vectors: false,
            state_bytes: bytes,
        };
        self.enqueue_launch(gpu, &name, reads, states, output)
            .map(|_| ())
    }

    /// The merge of the `count` partial sums of `T`'s sums in `states` (bytes), as the bytes
    /// of the value, by the merge kernel on this backend (simulated devices).
    pub(crate) fn merge_state_bytes<T: Element>(
        &self,
        states: &[u8],
        count: usize,
    ) -> Result<Vec<u8>> {
        let (name, bytes) = merge_of(T::DTYPE);
        let reads = Reads {
            len: count,
            element_bytes: bytes,
            vectors: false,
            state_bytes: bytes,
        };
        let value_bytes = if bytes == STATE_BYTES_F32 { 4 } else { 8 };
        match &self.backend {
            Backend::Gpu(gpu) => {
                let out = gpu.result_buffer()?;
                let input = gpu.upload(states)?;
                self.enqueue_launch(gpu, &name, reads, input, out)?;
                read_result(gpu, &name, out, value_bytes)
            }
            Backend::Sim(sim) => {
                let shape = self.sim_shape(sim, reads);
                let partials_bytes = shape.grid as usize * reads.state_bytes;
                sim.run_single(&name, shape, partials_bytes, states, count, value_bytes)
            }
        }
    }

    fn gpu_for(&self, what: &str, instead: &str) -> Result<&Gpu> {
        match &self.backend {
            Backend::Gpu(gpu) => Ok(gpu),
            Backend::Sim(_) => Err(Error::WrongDevice(format!(
                "{what} writes to GPU memory; this Reducer is the simulator (use {instead})"
            ))),
        }
    }

    /// `output`'s address, after the checks every `…_into` makes.
    fn device_output<'a, V, D: DevicePtrMut<V>>(
        &self,
        gpu: &'a Gpu,
        output: &'a mut D,
    ) -> Result<(u64, cudarc::driver::SyncOnDrop<'a>)> {
        if output.len() == 0 {
            return Err(Error::OutputTooSmall { len: 0, needed: 1 });
        }
        check_context(gpu, output.stream(), "output")?;
        Ok(output.device_ptr_mut(gpu.stream()))
    }
}

/// What a reduction over `len` elements of `T` reads.
fn element_reads<T: Element>(len: usize) -> Reads {
    Reads {
        len,
        element_bytes: size_of::<T>(),
        vectors: true,
        state_bytes: repro::state_bytes(T::DTYPE),
    }
}

/// The reproducible kernel of `T` with `O`, or why there is none.
fn reproducible_kernel_name<T: Element, O: Operation<T>>() -> Result<String> {
    repro::kernel_for(T::DTYPE, O::KIND).ok_or(Error::Unsupported {
        version: "reproducible",
        dtype: T::DTYPE,
        op: O::KIND,
    })
}

fn shape_of(reads: Reads, block: u32, resident: u64) -> crate::plan::LaunchShape {
    repro::launch(
        reads.len,
        reads.element_bytes,
        reads.vectors,
        reads.state_bytes,
        block,
        resident,
    )
}

/// Copies `value` to `output[0]` on the reducer's stream (the result of an empty input).
fn write_one<V>(gpu: &Gpu, output: u64, value: &V) -> Result<()> {
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

/// The `bytes` bytes of the result at `out`, a failed launch named as such.
fn read_result(gpu: &Gpu, name: &str, out: u64, bytes: usize) -> Result<Vec<u8>> {
    gpu.read_back(out, bytes).map_err(|e| match e {
        Error::Driver { source, .. } => Error::KernelFailed {
            kernel: name.to_string(),
            source,
        },
        other => other,
    })
}

/// The merge kernel for the partial sums of `dtype`'s sums, and the bytes of one.
fn merge_of(dtype: DType) -> (String, usize) {
    match repro::state_bytes(dtype) {
        STATE_BYTES_F32 => (repro::merge_kernel::<f32>(), STATE_BYTES_F32),
        bytes => (repro::merge_kernel::<f64>(), bytes),
    }
}
