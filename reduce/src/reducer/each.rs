//! Reductions of every row, column or segment ([`Shape`]).

use super::Reducer;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::op::Operation;
use crate::plan::reproducible as repro;
use crate::plan::shapes::{
    Family, Forced, Layout, ShapeKernel, ShapePlan, plan_layout, with_forced_split,
};
use crate::plan::{self, Job, SegmentOffsets, Sizes, Wave, Work};
use crate::shape::Shape;
use cudarc::driver::{DevicePtr, DevicePtrMut};

impl Reducer {
    /// Reduces every row, column or segment of `input` with `op` (see [`Shape`]); the results
    /// come back to the host in order. An empty row or segment gives the operation's result for
    /// an empty input (`0` for a sum, `None` for the others).
    ///
    /// The kernel is chosen by shape: a warp per row for short rows, a block per row for many
    /// long rows, several blocks per row for few long rows, a thread per column for columns.
    /// In the reproducible mode ([`Reducer::with_reproducible`]) float sums and every mean run
    /// the kernels' binned twins: each result is then the bits of the reproducible sum (mean)
    /// of its row alone ([`Reducer::sum`]), whatever the batch, the kernel, the grid, the block
    /// size and the GPU.
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
        // Checked before it is planned: the planner takes the shape's counts as they are.
        shape.check(input.len())?;
        if shape.results() == 0 || input.is_empty() {
            return Ok(vec![O::empty(); shape.results()]);
        }
        let (plan, _) = self.layout_plan::<T, O>(Layout::of(&shape), None);
        self.run_plan::<T, O, I>(input, shape, plan)
    }

    /// [`Reducer::reduce_each`] by a plan of one's own: one this reducer made with
    /// [`Reducer::plan_each`], [`Reducer::plan_each_with`] or [`Reducer::plan_each_split`]
    /// (another split) for the same `shape`, `T` and `O`, for a benchmark or a test that
    /// compares the kernels a shape could use. The plan's [`Family`] decides whether the
    /// reproducible twin runs, as in [`Reducer::job_each`]. Any other plan is refused
    /// ([`Error::Shape`]): its grid and scratch were counted for another reduction. The kernel
    /// runs even over an empty input, to write the empty rows' results.
    ///
    /// ```
    /// use reduce_rs::{Reducer, Shape, ops::Sum, plan::shapes::ShapeKernel};
    /// let reducer = Reducer::simulator();
    /// let columns = Shape::columns(700, 4);
    /// let input: Vec<f32> = (0..2800).map(|i| (i % 4) as f32).collect();
    /// let (plan, _) = reducer.plan_each_split::<f32, Sum>(&columns, ShapeKernel::Columns, 3).unwrap();
    /// let in_bands = reducer.reduce_each_planned(Sum, &input, columns, plan)?;
    /// assert_eq!(in_bands, [0.0, 700.0, 1400.0, 2100.0]);
    /// // The same elements as 350 rows of 8 columns: not what the plan was made for.
    /// assert!(reducer.reduce_each_planned(Sum, &input, Shape::columns(350, 8), plan).is_err());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn reduce_each_planned<T, O, I>(
        &self,
        op: O,
        input: &I,
        shape: Shape<'_>,
        plan: ShapePlan,
    ) -> Result<Vec<O::Output>>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let _ = op;
        shape.check(input.len())?;
        if !self.planned_for::<T, O>(&shape, plan) {
            return Err(Error::Shape(format!(
                "{plan:?} is no plan this reducer makes for {shape:?} of {} with {} \
                 (plan_each, plan_each_with, plan_each_split)",
                T::DTYPE,
                O::KIND.name()
            )));
        }
        if shape.results() == 0 {
            return Ok(Vec::new());
        }
        self.run_plan::<T, O, I>(input, shape, plan)
    }

    /// `plan` over `input` laid out as `shape` (checked, and the plan made for it), its results
    /// read back.
    fn run_plan<T, O, I>(
        &self,
        input: &I,
        shape: Shape<'_>,
        plan: ShapePlan,
    ) -> Result<Vec<O::Output>>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let job = job_for::<T, O>(Layout::of(&shape), plan, offsets_of(&shape), input.len());
        let (feed, _record_read) = self.feed(input)?;
        let bytes = self.backend.run(&job, feed)?;
        Ok(shape.outputs_of::<T, O>(&bytes))
    }

    /// Whether `plan` is one this reducer makes for `shape`: by [`Reducer::plan_each`],
    /// [`Reducer::plan_each_with`] or [`Reducer::plan_each_split`] in the plan's family.
    fn planned_for<T: Element, O: Operation<T>>(&self, shape: &Shape<'_>, plan: ShapePlan) -> bool {
        // A reproducible plan only where the mode has a twin for the reduction.
        if plan.family == Family::Reproducible && repro::kernel_for(T::DTYPE, O::KIND).is_none() {
            return false;
        }
        let layout = Layout::of(shape);
        let fits = crate::plan::shapes::fits(plan.kernel, shape, plan.family, size_of::<T>());
        let as_planned = |forced: Option<Forced>| {
            self.family_plan::<T, O>(plan.family, layout, forced).0 == plan
        };
        as_planned(None)
            || fits && as_planned(Some(plan.kernel.into()))
            || self.family_split::<T, O>(plan.family, shape, plan.kernel, plan.split) == Some(plan)
    }

    /// Reduces every row, column or segment of `input` with `op` into `output` (one result
    /// each), on the GPU, without waiting for it. Empty rows or segments get `0` for a sum, NaN
    /// for a mean, the identity for min and max (`+inf`/`-inf`, or the type's largest/smallest
    /// value) and index `u64::MAX` for argmin and argmax. The reproducible mode applies as in
    /// [`Reducer::reduce_each`]. GPU only.
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
        const CALL: (&str, &str) = ("reduce_each_into", "reduce_each");
        let results = shape.results();
        let (_, out_ptr, _record_write) = self.device_output(output, results, CALL)?;
        if results == 0 {
            return Ok(());
        }
        // Empty rows included: the kernels write their results too.
        let job = self.shape_job::<T, O>(Layout::of(&shape), offsets_of(&shape), input.len());
        let (feed, _record_read) = self.feed(input)?;
        self.backend.enqueue(&job, feed, out_ptr, CALL)
    }

    /// Reduces every segment of `input` with `op` into `output` (one result each), reading the
    /// segments' `segments + 1` offsets from the GPU buffer `offsets` (`u64`, CSR style), on
    /// the GPU, without waiting. Results of empty segments as
    /// [`Reducer::reduce_each_into`] says; the reproducible mode as [`Reducer::reduce_each`]
    /// (the kernel is chosen from the segments' average length). GPU only.
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
        const CALL: (&str, &str) = ("reduce_segments_into", "reduce_each with Shape::segments");
        let Some(segments) = offsets.len().checked_sub(1) else {
            return Err(Error::Shape(
                "segment offsets need at least one entry (n segments have n + 1 offsets)".into(),
            ));
        };
        let (gpu, out_ptr, _record_write) = self.device_output(output, segments, CALL)?;
        if segments == 0 {
            return Ok(());
        }
        super::check_context(gpu, offsets.stream(), "offsets")?;
        let (offsets_ptr, _record_offsets) = offsets.device_ptr(gpu.stream());
        let layout = Layout::Segments {
            count: segments,
            total: input.len(),
        };
        let job = self.shape_job::<T, O>(layout, SegmentOffsets::Device(offsets_ptr), input.len());
        let (feed, _record_read) = self.feed(input)?;
        self.backend.enqueue(&job, feed, out_ptr, CALL)
    }

    /// The kernel and launch [`Reducer::reduce_each`] uses for `shape`, and the kernel's entry
    /// point (`rows_block_f32_sum`).
    ///
    /// ```
    /// use reduce_rs::{Reducer, Shape, ops::Sum, plan::shapes::ShapeKernel};
    /// let (plan, name) = Reducer::simulator().plan_each::<f32, Sum>(&Shape::rows(1000, 64));
    /// assert_eq!((plan.kernel, name.as_str()), (ShapeKernel::RowsWarp, "rows_warp_f32_sum"));
    /// ```
    pub fn plan_each<T: Element, O: Operation<T>>(&self, shape: &Shape<'_>) -> (ShapePlan, String) {
        let (plan, name) = self.layout_plan::<T, O>(Layout::of(shape), None);
        (plan, name)
    }

    /// The launch [`Reducer::reduce_each`] would make for `shape` if it chose `kernel` (a
    /// benchmark times every kernel a shape could use, each as the library would launch it),
    /// and its entry point; `None` where `kernel` cannot reduce `shape` (`Columns` for rows,
    /// the row kernels for columns, `RowsSplit` for segments, `ColumnsNarrow` for columns
    /// other than 1 to 32 of them, a power of two, and in the reproducible mode).
    ///
    /// ```
    /// use reduce_rs::{Reducer, Shape, ops::Sum, plan::shapes::ShapeKernel};
    /// let reducer = Reducer::simulator();
    /// let rows = Shape::rows(1000, 64);
    /// let (plan, name) = reducer.plan_each_with::<f32, Sum>(&rows, ShapeKernel::RowsBlock).unwrap();
    /// assert_eq!((plan.kernel, plan.launch.grid, name.as_str()), (ShapeKernel::RowsBlock, 1000, "rows_block_f32_sum"));
    /// assert!(reducer.plan_each_with::<f32, Sum>(&rows, ShapeKernel::Columns).is_none());
    /// // In the reproducible mode, its twins.
    /// let reproducible = Reducer::simulator().with_reproducible(true);
    /// let (plan, name) = reproducible.plan_each_with::<f32, Sum>(&rows, ShapeKernel::RowsSplit).unwrap();
    /// assert_eq!((plan.kernel, name.as_str()), (ShapeKernel::RowsSplit, "reproducible_rows_split_f32_sum"));
    /// ```
    pub fn plan_each_with<T: Element, O: Operation<T>>(
        &self,
        shape: &Shape<'_>,
        kernel: ShapeKernel,
    ) -> Option<(ShapePlan, String)> {
        let (family, _) = self.family::<T, O>();
        crate::plan::shapes::fits(kernel, shape, family, size_of::<T>()).then(|| {
            let (plan, name) = self.layout_plan::<T, O>(Layout::of(shape), Some(kernel.into()));
            (plan, name)
        })
    }

    /// The launch [`Reducer::reduce_each`] would make for `shape` if it chose `kernel` with
    /// `split` in place of the planner's split (bands of rows for `Columns`, blocks per row for
    /// `RowsSplit`, blocks for `ColumnsNarrow`, lanes per row for `RowsWarp`: see
    /// [`plan_split`](crate::plan::shapes::plan_split), whose rules these are), for a benchmark
    /// that measures which split a shape wants; and its entry point. `None` where `kernel`
    /// cannot reduce `shape` (as [`Reducer::plan_each_with`]) or takes no such split.
    ///
    /// ```
    /// use reduce_rs::{Reducer, Shape, ops::Sum, plan::shapes::ShapeKernel};
    /// let reducer = Reducer::simulator();
    /// let columns = Shape::columns(700, 64);
    /// let (plan, name) = reducer.plan_each_split::<f32, Sum>(&columns, ShapeKernel::Columns, 5).unwrap();
    /// assert_eq!((plan.split, name.as_str()), (5, "columns_f32_sum"));
    /// // Rows read by a warp's lanes, 4 lanes a row instead of the planner's.
    /// let rows = Shape::rows(1000, 64);
    /// let (plan, _) = reducer.plan_each_split::<f32, Sum>(&rows, ShapeKernel::RowsWarp, 4).unwrap();
    /// assert_eq!((plan.kernel, plan.split), (ShapeKernel::RowsWarp, 4));
    /// assert!(reducer.plan_each_split::<f32, Sum>(&rows, ShapeKernel::RowsWarp, 3).is_none());
    /// assert!(reducer.plan_each_split::<f32, Sum>(&rows, ShapeKernel::RowsBlock, 2).is_none());
    /// ```
    pub fn plan_each_split<T: Element, O: Operation<T>>(
        &self,
        shape: &Shape<'_>,
        kernel: ShapeKernel,
        split: usize,
    ) -> Option<(ShapePlan, String)> {
        let (family, _) = self.family::<T, O>();
        let plan = self.family_split::<T, O>(family, shape, kernel, split)?;
        Some((plan, family.entry(plan.kernel, T::DTYPE, O::KIND)))
    }

    /// [`Reducer::plan_each_split`]'s plan by the kernels of `family`, whatever mode this
    /// reducer is in.
    fn family_split<T: Element, O: Operation<T>>(
        &self,
        family: Family,
        shape: &Shape<'_>,
        kernel: ShapeKernel,
        split: usize,
    ) -> Option<ShapePlan> {
        let fits = crate::plan::shapes::fits(kernel, shape, family, size_of::<T>());
        with_forced_split(kernel, split, |forced| {
            fits.then(|| {
                self.family_plan::<T, O>(family, Layout::of(shape), Some(forced))
                    .0
            })
        })
    }

    /// The job that runs `plan` over the `len` elements of `shape` (the segments' offsets in
    /// `offsets`): what [`Reducer::reduce_each`] hands to the backend, for a plan of one's own
    /// — one from [`Reducer::plan_each`], [`Reducer::plan_each_with`] or
    /// [`Reducer::plan_each_split`]. The entry point and the scratch's sizes are those of
    /// the plan's [`Family`], as `reduce_each` would use them: a plan made in the reproducible
    /// mode launches the reproducible twin, whatever mode `self` is in now. The plan must come
    /// from the same `T` and `O` (another's names a kernel that may not exist: the backend
    /// then refuses the job).
    ///
    /// ```
    /// use reduce_rs::plan::{SegmentOffsets, shapes::ShapeKernel};
    /// use reduce_rs::{Reducer, Shape, ops::Sum};
    /// let reducer = Reducer::simulator();
    /// let columns = Shape::columns(700, 64);
    /// let (five_bands, name) = reducer
    ///     .plan_each_split::<f32, Sum>(&columns, ShapeKernel::Columns, 5)
    ///     .expect("a split the layout allows");
    /// let job = reducer.job_each::<f32, Sum>(&columns, five_bands, SegmentOffsets::None, 700 * 64);
    /// assert_eq!((job.kernel.as_str(), job.len), (name.as_str(), 700 * 64));
    /// // A reproducible plan stays reproducible.
    /// let (plan, name) = Reducer::simulator().with_reproducible(true).plan_each::<f32, Sum>(&columns);
    /// let job = reducer.job_each::<f32, Sum>(&columns, plan, SegmentOffsets::None, 700 * 64);
    /// assert_eq!(job.kernel, name);
    /// assert!(name.starts_with("reproducible_"));
    /// ```
    pub fn job_each<'a, T: Element, O: Operation<T>>(
        &self,
        shape: &Shape<'_>,
        plan: ShapePlan,
        offsets: SegmentOffsets<'a>,
        len: usize,
    ) -> Job<'a> {
        job_for::<T, O>(Layout::of(shape), plan, offsets, len)
    }

    /// The kernels a reduction of `T` with `O` runs, and the sizes their scratch is counted in:
    /// the reproducible twins of the shape kernels where the mode covers the reduction (their
    /// partials are states), else the shape kernels.
    fn family<T: Element, O: Operation<T>>(&self) -> (Family, Sizes) {
        let family = if self.reproducible_kernel::<T, O>().is_some() {
            Family::Reproducible
        } else {
            Family::Plain
        };
        (family, sizes_of::<T, O>(family))
    }

    /// The plan of a reduction of `T` with `O` laid out as `layout`, and its entry point: the
    /// reproducible twins of the shape kernels where the mode covers the reduction (their
    /// partials are states), else the shape kernels; `forced` names the kernel instead of
    /// choosing it.
    fn layout_plan<T: Element, O: Operation<T>>(
        &self,
        layout: Layout,
        forced: Option<Forced>,
    ) -> (ShapePlan, String) {
        let (family, _) = self.family::<T, O>();
        self.family_plan::<T, O>(family, layout, forced)
    }

    /// [`Self::layout_plan`] by the kernels of `family`, whatever mode this reducer is in.
    fn family_plan<T: Element, O: Operation<T>>(
        &self,
        family: Family,
        layout: Layout,
        forced: Option<Forced>,
    ) -> (ShapePlan, String) {
        let sizes = sizes_of::<T, O>(family);
        let name_of = |kernel: ShapeKernel| family.entry(kernel, T::DTYPE, O::KIND);
        // The plain kernels are built for one block size; the reproducible ones take the
        // reducer's (or their default), as far as their registers allow.
        let block = |kernel: ShapeKernel| match family {
            Family::Plain => kernel.block(),
            Family::Reproducible => self
                .reproducible_block(&name_of(kernel))
                .unwrap_or_else(|_| repro::block(self.block)),
        };
        // What the device runs at once of this very entry point (on the GPU the driver's
        // occupancy: a kernel with many registers fits fewer blocks than the threads allow), so
        // that the grid is one wave, not one and a bit; and the SMs those blocks spread over,
        // for the rules that want a block per SM.
        let multiprocessors = u64::from(self.backend.multiprocessors());
        let wave = |kernel: ShapeKernel| {
            let block = block(kernel);
            let blocks = self
                .backend
                .resident(&name_of(kernel), block, 0, self.max_blocks)
                .unwrap_or_else(|_| plan::resident_blocks(1, block));
            Wave::new(blocks, multiprocessors)
        };
        let plan = plan_layout(layout, O::KIND, sizes, family, block, wave, forced);
        (plan, name_of(plan.kernel))
    }

    /// The job of a reduction of `len` elements laid out as `layout`, the segments' offsets in
    /// `offsets`.
    fn shape_job<'a, T: Element, O: Operation<T>>(
        &self,
        layout: Layout,
        offsets: SegmentOffsets<'a>,
        len: usize,
    ) -> Job<'a> {
        let (plan, _) = self.layout_plan::<T, O>(layout, None);
        job_for::<T, O>(layout, plan, offsets, len)
    }
}

/// The sizes the scratch of `family`'s kernels for `T` and `O` is counted in: the element's
/// and the accumulator's, or the reproducible state's.
fn sizes_of<T: Element, O: Operation<T>>(family: Family) -> Sizes {
    match family {
        Family::Plain => Sizes::of::<T, O>(),
        Family::Reproducible => repro::sizes(T::DTYPE),
    }
}

/// The job of `plan` over `len` elements laid out as `layout`, the segments' offsets in
/// `offsets`: the entry point of the plan's family and kernel, its scratch counted in that
/// family's sizes.
fn job_for<'a, T: Element, O: Operation<T>>(
    layout: Layout,
    plan: ShapePlan,
    offsets: SegmentOffsets<'a>,
    len: usize,
) -> Job<'a> {
    let kernel = plan.family.entry(plan.kernel, T::DTYPE, O::KIND);
    let sizes = sizes_of::<T, O>(plan.family);
    // The kernels' `(segments, segment_len)`: rows and their length, or columns and the
    // rows, or the segments (their lengths come from the offsets).
    let (segments, segment_len, results) = match layout {
        Layout::Rows { rows, cols } => (rows, cols, rows),
        Layout::Columns { rows, cols } => (cols, rows, cols),
        Layout::Segments { count, .. } => (count, 0, count),
    };
    Job {
        kernel,
        len,
        result_bytes: size_of::<O::Device>(),
        work: Work::Shape {
            plan,
            sizes,
            offsets,
            segments,
            segment_len,
            results,
        },
    }
}

/// The segments' offsets, for the kernels that read them.
fn offsets_of<'a>(shape: &Shape<'a>) -> SegmentOffsets<'a> {
    match *shape {
        Shape::Segments(offsets) => SegmentOffsets::Host(offsets),
        _ => SegmentOffsets::None,
    }
}
