//! The reproducible mode of a [`Reducer`] (see [`crate::reproducible`]): the option, the
//! dispatch of float sums and means to the reproducible kernels, and partial sums.

use super::{Reducer, check_context, write_one};
use crate::backend::Feed;
use crate::bytes::{bytes_of, read_value};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::input::Input;
use crate::op::Operation;
use crate::plan::reproducible as repro;
use crate::plan::{Job, LaunchGrid, Work};
use crate::reproducible::{PartialSum, STATE_BYTES_F32, SumFloat};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use kernels_gpu::launch::WARP_SIZE;

/// What a reproducible launch reads: elements (as vectors) or partial sums (one per thread).
#[derive(Clone, Copy)]
struct Reads {
    len: usize,
    element_bytes: usize,
    vectors: bool,
    state_bytes: usize,
}

impl Reducer {
    /// Sums and means of floats (and means of integers) with the reproducible kernels: the same
    /// bits for any grid, block size, GPU model and split of the input, at some cost in speed
    /// (see [`crate::reproducible`]). The other reductions are order-independent already and
    /// do not change. It takes the place of the version for the reductions it covers, and of
    /// the shape kernels in [`Reducer::reduce_each`], [`Reducer::reduce_each_into`] and
    /// [`Reducer::reduce_segments_into`]: each row's, column's or segment's result is then the
    /// bits of the reproducible sum (mean) of that row alone, in any batch (batch invariance).
    ///
    /// ```
    /// use reduce_rs::{Reducer, Shape, ops::Sum};
    /// let reducer = Reducer::simulator().with_reproducible(true);
    /// let matrix: Vec<f32> = (0..7 * 1000).map(|i| (i as f32).cos()).collect();
    /// let sums = reducer.reduce_each(Sum, &matrix, Shape::rows(7, 1000))?;
    /// assert_eq!(sums[2].to_bits(), reducer.sum(&matrix[2000..3000])?.to_bits());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
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
        Ok(PartialSum::from_bytes(&self.partial_sum_bytes(input)?))
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
        let (_, out_ptr, _record_write) =
            self.device_output(output, 1, ("partial_sum_into", "partial_sum"))?;
        self.enqueue_partial_sum_at(input, out_ptr)
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
        let job = self.merge_job(F::DTYPE, partials.len())?;
        let bytes = self.backend.run(&job, Feed::Host(bytes_of(partials)))?;
        Ok(read_value(&bytes))
    }

    /// Merges the partial sums in `partials` (a device buffer) and writes their value to
    /// `output[0]`, without waiting (see [`Reducer::partial_sum_into`]). GPU only.
    pub fn merge_partial_sums_into<F, S, D>(&self, partials: &S, output: &mut D) -> Result<()>
    where
        F: SumFloat,
        S: DevicePtr<PartialSum<F>>,
        D: DevicePtrMut<F>,
    {
        const CALL: (&str, &str) = ("merge_partial_sums_into", "merge_partial_sums");
        let (gpu, out_ptr, _record_write) = self.device_output(output, 1, CALL)?;
        if partials.len() == 0 {
            return write_one(gpu, out_ptr, &F::ZERO);
        }
        check_context(gpu, partials.stream(), "partial sums")?;
        let (input, _record_read) = partials.device_ptr(gpu.stream());
        let job = self.merge_job(F::DTYPE, partials.len())?;
        self.backend
            .enqueue(&job, Feed::Device(input), out_ptr, CALL)
    }

    /// Enqueues the reproducible kernel of `T` × `O` over `len` elements at device address
    /// `input`, writing `output[0]`, and returns its launch (GPU; for the benchmark's timer).
    #[doc(hidden)]
    pub fn enqueue_reproducible_at<T: Element, O: Operation<T>>(
        &self,
        input: u64,
        len: usize,
        output: u64,
    ) -> Result<LaunchGrid> {
        let job = self.reproducible_job::<T>(
            reproducible_kernel_name::<T, O>()?,
            len,
            size_of::<O::Device>(),
        )?;
        self.backend.enqueue(
            &job,
            Feed::Device(input),
            output,
            ("enqueue_reproducible_at", "reduce"),
        )?;
        Ok(job.first_launch())
    }

    /// The launch the reproducible kernel of `T` with `O` uses over `len` elements on this
    /// backend (the kernel [`Reducer::reproducible_kernel`] names).
    #[doc(hidden)]
    pub fn reproducible_launch<T: Element, O: Operation<T>>(
        &self,
        len: usize,
    ) -> Result<LaunchGrid> {
        let kernel = reproducible_kernel_name::<T, O>()?;
        Ok(self
            .reproducible_job::<T>(kernel, len, size_of::<O::Device>())?
            .first_launch())
    }

    /// The job of the reproducible kernel `kernel` over `len` elements of `T`, writing one
    /// result of `result_bytes`.
    pub(crate) fn reproducible_job<T: Element>(
        &self,
        kernel: String,
        len: usize,
        result_bytes: usize,
    ) -> Result<Job<'static>> {
        let reads = Reads {
            len,
            element_bytes: size_of::<T>(),
            vectors: true,
            state_bytes: repro::state_bytes(T::DTYPE),
        };
        self.single_job(kernel, reads, result_bytes)
    }

    /// The job of the merging kernel over `count` partial sums of `dtype`'s sums, writing
    /// their value.
    fn merge_job(&self, dtype: DType, count: usize) -> Result<Job<'static>> {
        let (kernel, bytes) = merge_of(dtype);
        let reads = Reads {
            len: count,
            element_bytes: bytes,
            vectors: false,
            state_bytes: bytes,
        };
        let value_bytes = if bytes == STATE_BYTES_F32 { 4 } else { 8 };
        self.single_job(kernel, reads, value_bytes)
    }

    fn single_job(
        &self,
        kernel: String,
        reads: Reads,
        result_bytes: usize,
    ) -> Result<Job<'static>> {
        let block = self.reproducible_block(&kernel)?;
        let shared = repro::shared_bytes(block, reads.state_bytes);
        let resident = self
            .backend
            .resident(&kernel, block, shared, self.max_blocks)?;
        let launch = repro::launch(
            reads.len,
            reads.element_bytes,
            reads.vectors,
            reads.state_bytes,
            block,
            resident,
        );
        Ok(Job {
            kernel,
            len: reads.len,
            result_bytes,
            work: Work::Single {
                launch,
                partials_bytes: launch.grid as usize * reads.state_bytes,
            },
        })
    }

    /// The block the reproducible kernel `kernel` runs with: the one chosen, or where the
    /// kernel cannot run blocks that large (its registers), the largest power of two it can
    /// (the block merge needs a power-of-two number of warps). The sum's bits do not depend on
    /// the block, so this changes only its speed. A kernel that cannot run even one warp per
    /// block is reported as [`Error::BlockTooLarge`] when it is looked up.
    pub(super) fn reproducible_block(&self, kernel: &str) -> Result<u32> {
        let chosen = repro::block(self.block);
        let max = self.backend.max_block(kernel)?;
        Ok(if chosen <= max {
            chosen
        } else {
            1 << max.max(WARP_SIZE).ilog2()
        })
    }

    /// Enqueues the partial sum (binned state) of `input`, a float type's, into the state at
    /// device address `output` (GPU): a shard's step of a reproducible sum over several
    /// devices (`crate::devices`), and [`Reducer::partial_sum_into`].
    pub(crate) fn enqueue_partial_sum_at<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
        output: u64,
    ) -> Result<()> {
        const CALL: (&str, &str) = ("a shard's partial sum", "partial_sum");
        let gpu = self.backend.gpu(CALL.0, CALL.1)?;
        if input.is_empty() {
            return match repro::state_bytes(T::DTYPE) {
                STATE_BYTES_F32 => write_one(gpu, output, &PartialSum::<f32>::EMPTY),
                _ => write_one(gpu, output, &PartialSum::<f64>::EMPTY),
            };
        }
        let bytes = repro::state_bytes(T::DTYPE);
        let job = self.reproducible_job::<T>(repro::state_kernel(T::DTYPE), input.len(), bytes)?;
        let (feed, _record_read) = self.feed(input)?;
        self.backend.enqueue(&job, feed, output, CALL)
    }

    /// The partial sum (binned state) of `input`, a float type's, as bytes, on either backend.
    pub(crate) fn partial_sum_bytes<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
    ) -> Result<Vec<u8>> {
        let bytes = repro::state_bytes(T::DTYPE);
        if input.is_empty() {
            return Ok(match bytes {
                STATE_BYTES_F32 => bytes_of(&[PartialSum::<f32>::EMPTY]).to_vec(),
                _ => bytes_of(&[PartialSum::<f64>::EMPTY]).to_vec(),
            });
        }
        let job = self.reproducible_job::<T>(repro::state_kernel(T::DTYPE), input.len(), bytes)?;
        let (feed, _record_read) = self.feed(input)?;
        self.backend.run(&job, feed)
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
        let job = self.merge_job(T::DTYPE, count)?;
        self.backend.enqueue(
            &job,
            Feed::Device(states),
            output,
            ("merging partial sums on the device", "merge_partial_sums"),
        )
    }

    /// The merge of the `count` partial sums of `T`'s sums in `states` (bytes), as the bytes
    /// of the value, by the merge kernel on this backend (simulated devices).
    pub(crate) fn merge_state_bytes<T: Element>(
        &self,
        states: &[u8],
        count: usize,
    ) -> Result<Vec<u8>> {
        let job = self.merge_job(T::DTYPE, count)?;
        self.backend.run(&job, Feed::Host(states))
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

/// The merge kernel for the partial sums of `dtype`'s sums, and the bytes of one.
fn merge_of(dtype: DType) -> (String, usize) {
    match repro::state_bytes(dtype) {
        STATE_BYTES_F32 => (repro::merge_kernel::<f32>(), STATE_BYTES_F32),
        bytes => (repro::merge_kernel::<f64>(), bytes),
    }
}
