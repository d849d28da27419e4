//! Reductions of every row, column or segment ([`Shape`]).

use super::{Backend, Reducer, check_context};
use crate::element::{Element, bytes_of};
use crate::error::{Error, Result};
use crate::gpu::SegmentOffsets;
use crate::input::{Input, Source};
use crate::op::Operation;
use crate::plan::{self, Sizes};
use crate::shape::{Layout, Shape, ShapeKernel, ShapePlan, plan_layout};
use cudarc::driver::{DevicePtr, DevicePtrMut};

impl Reducer {
    /// Reduces every row, column or segment of `input` with `op` (see [`Shape`]); the results
    /// come back to the host in order. An empty row or segment gives the operation's result for
    /// an empty input (`0` for a sum, `None` for the others).
    ///
    /// The kernel is chosen by shape: a warp per row for short rows, a block per row for many
    /// long rows, several blocks per row for few long rows, a thread per column for columns.
    ///
    /// ```
    /// use reduce_rs::{Reducer, Shape, ops::ArgMax};
    /// let reducer = Reducer::simulator();
    /// let logits = [0.1f32, 0.7, 0.2, /* row 1 */ 0.5, 0.4, 0.1];
    /// let best = reducer.reduce_each(ArgMax, &logits, Shape::rows(2, 3))?;
    /// assert_eq!(best, [Some((1, 0.7)), Some((0, 0.5))]);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn reduce_each<T, O, I>(&self, op: O, input: &I, shape: Shape<'_>) -> Result<Vec<O::Output>>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let _ = op;
        shape.check(input.len())?;
        let results = shape.results();
        if results == 0 || input.is_empty() {
            return Ok(vec![O::empty(); results]);
        }
        let device: Vec<O::Device> = match &self.backend {
            Backend::Gpu(gpu) => {
                let bytes = results * size_of::<O::Device>();
                let output = gpu.results_buffer(bytes)?;
                self.enqueue_each::<T, O, I>(input, &shape, output)?;
                let name = self.each_plan::<T, O>(&shape).1;
                let raw = gpu.read_back_many(output, bytes).map_err(|e| match e {
                    Error::Driver { source, .. } => Error::KernelFailed {
                        kernel: name,
                        source,
                    },
                    other => other,
                })?;
                raw.chunks_exact(size_of::<O::Device>())
                    .map(super::device_value::<T, O>)
                    .collect()
            }
            Backend::Sim(sim) => {
                let Source::Host(slice) = input.source() else {
                    return Err(Error::WrongDevice(
                        "this Reducer is the simulator, which reads host memory: copy the data to the host, or use a GPU Reducer".into(),
                    ));
                };
                let (plan, name) = self.each_plan::<T, O>(&shape);
                let raw = sim.run_shape(
                    &name,
                    &plan,
                    Sizes::of::<T, O>(),
                    bytes_of(slice),
                    slice.len(),
                    match shape {
                        Shape::Segments(offsets) => Some(offsets),
                        _ => None,
                    },
                    kernel_sizes(&shape),
                    results,
                    results * size_of::<O::Device>(),
                )?;
                raw.chunks_exact(size_of::<O::Device>())
                    .map(super::device_value::<T, O>)
                    .collect()
            }
        };
        Ok(device
            .into_iter()
            .enumerate()
            .map(|(i, value)| {
                if shape.len_of(i) == 0 {
                    O::empty()
                } else {
                    O::output(value)
                }
            })
            .collect())
    }

    /// Reduces every row, column or segment of `input` with `op` into `output` (one result
    /// each), on the GPU, without waiting for it. Empty rows or segments get `0` for a sum, NaN
    /// for a mean, the identity for min and max (`+inf`/`-inf`, or the type's largest/smallest
    /// value) and index `u64::MAX` for argmin and argmax. GPU only.
    ///
    /// ```no_run
    /// use reduce_rs::{Reducer, Shape, ops::Sum};
    /// let reducer = Reducer::gpu(0)?;
    /// let stream = reducer.stream().unwrap().clone();
    /// let matrix = stream.clone_htod(&vec![1.0f32; 64 * 1024])?;
    /// let mut row_sums = stream.alloc_zeros::<f32>(64)?;
    /// reducer.reduce_each_into(Sum, &matrix, Shape::rows(64, 1024), &mut row_sums)?;
    /// assert_eq!(stream.clone_dtoh(&row_sums)?, vec![1024.0; 64]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_each_into<T, O, I, D>(
        &self,
        op: O,
        input: &I,
        shape: Shape<'_>,
        output: &mut D,
    ) -> Result<()>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
        D: DevicePtrMut<O::Device>,
    {
        let _ = op;
        shape.check(input.len())?;
        let Backend::Gpu(gpu) = &self.backend else {
            return Err(Error::WrongDevice(
                "reduce_each_into writes to GPU memory; this Reducer is the simulator (use reduce_each)".into(),
            ));
        };
        let results = shape.results();
        if output.len() < results {
            return Err(Error::OutputTooSmall {
                len: output.len(),
                needed: results,
            });
        }
        if results == 0 {
            return Ok(());
        }
        check_context(gpu, output.stream(), "output")?;
        // Empty rows included: the kernels write their results too.
        let (out_ptr, _record_write) = output.device_ptr_mut(gpu.stream());
        self.enqueue_each::<T, O, I>(input, &shape, out_ptr)
    }

    /// The kernel and launch [`Reducer::reduce_each`] uses for `shape`, and the kernel's entry
    /// point (`rows_block_f32_sum`).
    ///
    /// ```
    /// use reduce_rs::{Reducer, Shape, ops::Sum, shape::ShapeKernel};
    /// let (plan, name) = Reducer::simulator().plan_each::<f32, Sum>(&Shape::rows(1000, 64));
    /// assert_eq!((plan.kernel, name.as_str()), (ShapeKernel::RowsWarp, "rows_warp_f32_sum"));
    /// ```
    pub fn plan_each<T: Element, O: Operation<T>>(&self, shape: &Shape<'_>) -> (ShapePlan, String) {
        self.each_plan::<T, O>(shape)
    }

    fn each_plan<T: Element, O: Operation<T>>(&self, shape: &Shape<'_>) -> (ShapePlan, String) {
        self.layout_plan::<T, O>(Layout::of(shape))
    }

    fn layout_plan<T: Element, O: Operation<T>>(&self, layout: Layout) -> (ShapePlan, String) {
        let sizes = Sizes::of::<T, O>();
        // On the GPU, what the driver's occupancy calculator says of this very entry point (a
        // kernel with many registers fits fewer blocks than the threads allow): a grid of one
        // wave, not one and a bit.
        let resident = |kernel: ShapeKernel| match &self.backend {
            Backend::Gpu(gpu) => {
                let name = format!("{}_{}_{}", kernel.name(), T::DTYPE, O::KIND);
                gpu.kernel(&name, kernel.block(), 0)
                    .map(|(_, resident)| resident)
                    .unwrap_or_else(|_| {
                        plan::resident_blocks(gpu.info().multiprocessors, kernel.block())
                    })
            }
            Backend::Sim(sim) => sim.resident_blocks(kernel.block(), self.max_blocks),
        };
        let plan = plan_layout(layout, sizes, resident, None);
        let name = format!("{}_{}_{}", plan.kernel.name(), T::DTYPE, O::KIND);
        (plan, name)
    }

    /// Reduces every segment of `input` with `op` into `output` (one result each), reading the
    /// segments' `segments + 1` offsets from the GPU buffer `offsets` (`u64`, CSR style), on
    /// the GPU, without waiting. Results of empty segments as
    /// [`Reducer::reduce_each_into`] says. GPU only.
    ///
    /// # Safety
    /// The offsets are not checked (that would wait for the GPU): they must not decrease, and
    /// the last must be at most `input.len()`. A kernel that reads past its input stops with an
    /// error that leaves the CUDA context unusable. [`Reducer::reduce_each_into`] with
    /// [`Shape::segments`] checks host offsets.
    ///
    /// ```no_run
    /// use reduce_rs::{Reducer, ops::Sum};
    /// let reducer = Reducer::gpu(0)?;
    /// let stream = reducer.stream().unwrap().clone();
    /// let values = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0])?;
    /// let offsets = stream.clone_htod(&[0u64, 1, 1, 4])?;
    /// let mut sums = stream.alloc_zeros::<f32>(3)?;
    /// // SAFETY: the offsets ascend and end at the input's length.
    /// unsafe { reducer.reduce_segments_into(Sum, &values, &offsets, &mut sums)? };
    /// assert_eq!(stream.clone_dtoh(&sums)?, [1.0, 0.0, 9.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn reduce_segments_into<T, O, I, S, D>(
        &self,
        op: O,
        input: &I,
        offsets: &S,
        output: &mut D,
    ) -> Result<()>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
        S: DevicePtr<u64>,
        D: DevicePtrMut<O::Device>,
    {
        let _ = op;
        let Backend::Gpu(gpu) = &self.backend else {
            return Err(Error::WrongDevice(
                "reduce_segments_into reads offsets from GPU memory; this Reducer is the simulator (use reduce_each with Shape::segments)".into(),
            ));
        };
        let Some(segments) = offsets.len().checked_sub(1) else {
            return Err(Error::Shape(
                "segment offsets need at least one entry (n segments have n + 1 offsets)".into(),
            ));
        };
        if output.len() < segments {
            return Err(Error::OutputTooSmall {
                len: output.len(),
                needed: segments,
            });
        }
        if segments == 0 {
            return Ok(());
        }
        check_context(gpu, offsets.stream(), "offsets")?;
        check_context(gpu, output.stream(), "output")?;
        let layout = Layout::Segments {
            count: segments,
            total: input.len(),
        };
        let (offsets_ptr, _record_read) = offsets.device_ptr(gpu.stream());
        let (out_ptr, _record_write) = output.device_ptr_mut(gpu.stream());
        self.enqueue_layout::<T, O, I>(
            input,
            layout,
            SegmentOffsets::Device(offsets_ptr),
            (segments, 0),
            out_ptr,
        )
    }

    /// Enqueues a shape reduction of `input` writing its results to `output` (GPU).
    fn enqueue_each<T: Element, O: Operation<T>, I: Input<T> + ?Sized>(
        &self,
        input: &I,
        shape: &Shape<'_>,
        output: u64,
    ) -> Result<()> {
        self.enqueue_layout::<T, O, I>(
            input,
            Layout::of(shape),
            offsets_of(shape),
            kernel_sizes(shape),
            output,
        )
    }

    /// Enqueues the reduction of `input` laid out as `layout` (segments' offsets in
    /// `offsets`; `(segments, segment_len)` the kernel's sizes), writing `output` (GPU).
    fn enqueue_layout<T: Element, O: Operation<T>, I: Input<T> + ?Sized>(
        &self,
        input: &I,
        layout: Layout,
        offsets: SegmentOffsets<'_>,
        kernel_sizes: (usize, usize),
        output: u64,
    ) -> Result<()> {
        let Backend::Gpu(gpu) = &self.backend else {
            unreachable!("called for the GPU backend only");
        };
        let (plan, name) = self.layout_plan::<T, O>(layout);
        let (function, _) = gpu.kernel(&name, plan.launch.block, plan.launch.shared_bytes)?;
        let sizes = Sizes::of::<T, O>();
        let len = input.len();
        let target = (output, kernel_sizes_results(layout));
        match input.source() {
            Source::Host(slice) => {
                let input = gpu.upload(bytes_of(slice))?;
                gpu.enqueue_shape(
                    &name,
                    &function,
                    &plan,
                    sizes,
                    (input, len),
                    offsets,
                    kernel_sizes,
                    target,
                )
            }
            Source::Device(device) => {
                check_context(gpu, device.stream(), "input")?;
                let (input, _record_read) = device.device_ptr(gpu.stream());
                gpu.enqueue_shape(
                    &name,
                    &function,
                    &plan,
                    sizes,
                    (input, len),
                    offsets,
                    kernel_sizes,
                    target,
                )
            }
        }
    }
}

/// The segments' offsets, for the kernels that read them.
fn offsets_of<'a>(shape: &Shape<'a>) -> SegmentOffsets<'a> {
    match *shape {
        Shape::Segments(offsets) => SegmentOffsets::Host(offsets),
        _ => SegmentOffsets::None,
    }
}

/// How many results a reduction laid out as `layout` writes.
fn kernel_sizes_results(layout: Layout) -> usize {
    match layout {
        Layout::Rows { rows, .. } => rows,
        Layout::Columns { cols, .. } => cols,
        Layout::Segments { count, .. } => count,
    }
}

/// The kernels' `(segments, segment_len)`: rows and their length, or columns and the rows.
fn kernel_sizes(shape: &Shape<'_>) -> (usize, usize) {
    match *shape {
        Shape::Rows { rows, cols } => (rows, cols),
        Shape::Columns { rows, cols } => (cols, rows),
        Shape::Segments(offsets) => (offsets.len() - 1, 0),
    }
}
