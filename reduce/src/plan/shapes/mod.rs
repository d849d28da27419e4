//! Which kernel reduces a [`Shape`] and how it is launched: a warp (or a group of its lanes)
//! per short row, a block per long row, several blocks per row for few long rows, bands of
//! rows for columns, a flat read for a few columns, by the shape and the GPU's occupancy. The
//! same for the kernels' reproducible twins ([`Family::Reproducible`]), which give each lane
//! more of a row (the flat read has none: the mode keeps the bands).

use super::launch::{LaunchGrid, MAX_GRID, Sizes, Wave, shared_bytes_of, vector_grid};
use crate::op::OpKind;
use crate::shape::Shape;
use kernels_gpu::launch::{MAX_LANES, VECTORS_IN_FLIGHT, WARP_SIZE, elements_per_vector};
use kernels_gpu::shapes::{columns, columns_narrow};

/// The kernels that reduce shapes, as `kernels_gpu::shapes` declares them (block, shared
/// memory, grid).
pub use kernels_gpu::shapes::ShapeKernel;

mod rules;
#[cfg(test)]
mod tests;

pub use rules::{
    ARG_BAND_WAVE_DIVISOR, ARG_BLOCK_ROW_BYTES, ARG_FULL_WARPS_ROW_BYTES, ARG_WARP_ROW_BYTES,
    EXTREME_WARP_ROW_BYTES, FEW_LANES_DIVISOR, FEW_RUNS_PER_BAND, Family, MAX_BANDS_PER_THREAD,
    NARROW_ANY_WIDTH_ELEMENT, NARROW_COLUMNS, NARROW_FLAT_ROWS, NARROW_PARTIALS,
    REPRODUCIBLE_VECTORS_PER_LANE, REPRODUCIBLE_WARP_ROW_BYTES, RUNS_PER_BAND, SPLIT_MIN_VECTORS,
    SPLIT_ROW_BYTES, SPLIT_TILE_VECTORS, SPREAD_LANES_DIVISOR, WARP_ROW_BYTES, lane_vectors,
    lanes_per_row, narrow_columns, warp_per_row,
};

/// One launch of a shape kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapePlan {
    /// The kernel that runs.
    pub kernel: ShapeKernel,
    /// Whose kernel: the plain one or its reproducible twin. A plan keeps it so that it
    /// launches the kernel its grid, block and scratch were counted for, whatever mode the
    /// reducer that runs it is in.
    pub family: Family,
    /// Its launch grid.
    pub launch: LaunchGrid,
    /// Blocks per row (`RowsSplit`), bands of rows (`Columns`), lanes per row (`RowsWarp`),
    /// blocks (`ColumnsNarrow`); 1 for `RowsBlock`.
    pub split: usize,
    /// Accumulators of scratch the launch needs, and ticket counters.
    pub partials: usize,
    /// Ticket counters (`u32`): one per row (`RowsSplit`) or tile of columns (`Columns`), one
    /// for the matrix (`ColumnsNarrow`).
    pub counters: usize,
}

impl ShapePlan {
    /// The same launch with `split` bands of rows (`Columns`), blocks per row (`RowsSplit`) or
    /// blocks (`ColumnsNarrow`) instead of the planner's: for these kernels the grid is the
    /// plan's counters times the split, and the partials the split times what one band, block
    /// or row of blocks holds. `None` for `RowsBlock` (its split is not free) and `RowsWarp`
    /// (its grid depends on the rows: [`with_forced_split`] asks the planner), for a split of
    /// 0, for `RowsSplit` with no rows, where the grid would pass the launch limit, and for
    /// `ColumnsNarrow` at no multiple of the column count's odd part or where its threads
    /// times 8 lanes pass 32 bits. The public way in is [`plan_split`] (or
    /// `Reducer::plan_each_split`).
    pub(crate) fn with_split(self, split: usize) -> Option<ShapePlan> {
        let free = matches!(
            self.kernel,
            ShapeKernel::Columns | ShapeKernel::ColumnsNarrow | ShapeKernel::RowsSplit
        );
        let grid = self.counters.checked_mul(split)?;
        if !free || split == 0 || grid == 0 || grid as u64 > MAX_GRID {
            return None;
        }
        // Partials: one row of columns per band (`Columns`) or block (`ColumnsNarrow`), one per
        // block of a row (`RowsSplit`).
        let per_split = self.partials / self.split.max(1);
        // The flat read's grid (its partials per block are its columns): a multiple of the
        // columns' odd part, whose threads' lanes the kernel counts in 32 bits (else it writes
        // nothing); 8 lanes cover every type.
        let lanes_in_grid = u64::from(self.launch.block) * MAX_LANES as u64 * split as u64;
        if self.kernel == ShapeKernel::ColumnsNarrow
            && (!split.is_multiple_of(columns_narrow::grid_multiple(per_split))
                || lanes_in_grid > u64::from(u32::MAX))
        {
            return None;
        }
        Some(ShapePlan {
            launch: LaunchGrid {
                grid: grid as u32,
                ..self.launch
            },
            split,
            partials: per_split * split,
            ..self
        })
    }
}

/// What a benchmark or a test fixes of a plan in place of the planner: the kernel, and for
/// `RowsWarp` the lanes per row (whose grid the planner then counts from the rows, as it
/// would for its own lanes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Forced {
    pub kernel: ShapeKernel,
    pub lanes: Option<usize>,
}

impl From<ShapeKernel> for Forced {
    fn from(kernel: ShapeKernel) -> Forced {
        Forced {
            kernel,
            lanes: None,
        }
    }
}

/// The plan of `kernel` with `split` in place of the planner's split, `plan_with(forced)`
/// being the planner's plan with `forced` (`None` where the kernel cannot reduce the shape):
/// `RowsWarp`'s lanes (a power of two up to 32) go to the planner, which grows or shrinks the
/// grid with the rows a block holds at once, below its cap of four waves; the other kernels'
/// splits are [`ShapePlan::with_split`]'s.
pub(crate) fn with_forced_split(
    kernel: ShapeKernel,
    split: usize,
    plan_with: impl FnOnce(Forced) -> Option<ShapePlan>,
) -> Option<ShapePlan> {
    if kernel != ShapeKernel::RowsWarp {
        return plan_with(kernel.into())?.with_split(split);
    }
    if !split.is_power_of_two() || split > WARP_SIZE as usize {
        return None;
    }
    plan_with(Forced {
        kernel,
        lanes: Some(split),
    })
}

/// The launch of `kernel` for `shape` with `split` in place of the planner's split, for a
/// benchmark that measures which split a shape wants: `split` bands of rows (`Columns`),
/// blocks per row (`RowsSplit`), blocks (`ColumnsNarrow`) or lanes per row (`RowsWarp`, a
/// power of two up to 32, its grid grown or shrunk with the rows a block holds at once, as
/// the planner's would be, below its cap of four waves: on the same grid more lanes a row
/// would only make the same warps take their rows one after another). `None` where `kernel`
/// cannot reduce `shape` (as [`plan_for`]), for `RowsBlock` (its split is not free), for a
/// split of 0 (or no power of two for `RowsWarp`, or no multiple of the odd part of the
/// column count for `ColumnsNarrow`), for `RowsSplit` with no rows, and where the grid would
/// pass the launch limit (or, for `ColumnsNarrow`, where its threads times 8 lanes pass 32
/// bits). The partials are `split` × the columns (`Columns`, `ColumnsNarrow`) or rows
/// (`RowsSplit`).
///
/// ```
/// use reduce_rs::{OpKind, Shape};
/// use reduce_rs::plan::{Sizes, Wave, shapes::{ShapeKernel, plan_shape, plan_split}};
/// let f32 = Sizes { element: 4, accumulator: 4 };
/// // The H100's 132 SMs, `per_sm` blocks of every kernel on each.
/// let h100 = |per_sm: u64| move |_| Wave::new(132 * per_sm, 132);
/// let square = Shape::columns(4096, 4096);
/// let plan = plan_shape(&square, OpKind::Sum, f32, h100(3));
/// assert_eq!((plan.kernel, plan.counters, plan.split), (ShapeKernel::Columns, 16, 22));
/// let wider = plan_split(ShapeKernel::Columns, 99, &square, OpKind::Sum, f32, h100(3)).unwrap();
/// assert_eq!((wider.launch.grid, wider.partials), (16 * 99, 99 * 4096));
/// let few_rows = Shape::rows(16, 1 << 22);
/// let plan = plan_shape(&few_rows, OpKind::Sum, f32, h100(2));
/// assert_eq!((plan.kernel, plan.split), (ShapeKernel::RowsSplit, 256));
/// let more = plan_split(ShapeKernel::RowsSplit, 64, &few_rows, OpKind::Sum, f32, h100(2)).unwrap();
/// assert_eq!((more.launch.grid, more.partials, more.counters), (16 * 64, 16 * 64, 16));
/// // 65536 rows of 2 KiB: 16 lanes a row on 4096 blocks of 16 rows (eight warps of two), 8
/// // lanes on 2048 blocks of 32 rows; 32 lanes would take 8192 blocks of 8 rows, capped at
/// // four waves (4224 blocks), whose warps then take a second row.
/// let short = Shape::rows(65536, 512);
/// let warp = |lanes| plan_split(ShapeKernel::RowsWarp, lanes, &short, OpKind::Sum, f32, h100(8));
/// let plan = plan_shape(&short, OpKind::Sum, f32, h100(8));
/// assert_eq!((plan.kernel, plan.split, plan.launch.grid), (ShapeKernel::RowsWarp, 16, 4096));
/// assert_eq!(warp(16), Some(plan));
/// assert_eq!(warp(8).unwrap().launch.grid, 2048);
/// assert_eq!(warp(32).unwrap().launch.grid, 4224);
/// assert!(warp(6).is_none() && warp(64).is_none() && warp(0).is_none());
/// let sum_rows = |shape, kernel, split| plan_split(kernel, split, &shape, OpKind::Sum, f32, h100(2));
/// assert!(sum_rows(Shape::rows(0, 512), ShapeKernel::RowsSplit, 2).is_none());
/// assert!(sum_rows(Shape::rows(64, 8192), ShapeKernel::RowsBlock, 2).is_none());
/// assert!(sum_rows(Shape::rows(64, 8192), ShapeKernel::Columns, 2).is_none());
/// ```
pub fn plan_split(
    kernel: ShapeKernel,
    split: usize,
    shape: &Shape<'_>,
    op: OpKind,
    sizes: Sizes,
    wave: impl Fn(ShapeKernel) -> Wave,
) -> Option<ShapePlan> {
    with_forced_split(kernel, split, |forced| {
        plain_forced(shape, op, sizes, wave, forced)
    })
}

/// The plain kernels' plan of `shape` with `forced` in place of the planner's choice, or `None`
/// where the kernel cannot reduce it ([`fits`]).
fn plain_forced(
    shape: &Shape<'_>,
    op: OpKind,
    sizes: Sizes,
    wave: impl Fn(ShapeKernel) -> Wave,
    forced: Forced,
) -> Option<ShapePlan> {
    let block = |kernel: ShapeKernel| kernel.block();
    plan_fitting(shape, op, sizes, Family::Plain, block, wave, Some(forced))
}

/// Chooses the kernel and launch for reducing `shape` with `op` over elements of `sizes`, on
/// a GPU whose wave of each kernel is `wave(kernel)`.
///
/// ```
/// use reduce_rs::plan::{Sizes, Wave, shapes::{ShapeKernel, plan_shape}};
/// use reduce_rs::{OpKind, Shape};
/// let f32 = Sizes { element: 4, accumulator: 4 };
/// let h100 = |kernel: ShapeKernel| Wave::new(132 * u64::from(2048 / kernel.block()), 132);
/// // Rows of 8 KiB: a block each for sums, a warp each for max.
/// let rows = Shape::rows(32768, 2048);
/// assert_eq!(plan_shape(&rows, OpKind::Sum, f32, h100).kernel, ShapeKernel::RowsBlock);
/// assert_eq!(plan_shape(&rows, OpKind::Max, f32, h100).kernel, ShapeKernel::RowsWarp);
/// ```
pub fn plan_shape(
    shape: &Shape<'_>,
    op: OpKind,
    sizes: Sizes,
    wave: impl Fn(ShapeKernel) -> Wave,
) -> ShapePlan {
    plan_layout(
        Layout::of(shape),
        op,
        sizes,
        Family::Plain,
        |k| k.block(),
        wave,
        None,
    )
}

/// The reproducible mode's plan for `shape` (see [`Family::Reproducible`]): the kernel it
/// chooses, or the twin of `forced` if that can reduce the shape (as [`plan_for`]). `sizes`
/// are the element's and the state's
/// ([`reproducible::sizes`](super::reproducible::sizes)); `block(kernel)` the threads per
/// block each kernel runs with.
///
/// ```
/// use reduce_rs::plan::{Wave, reproducible, shapes::{ShapeKernel, plan_reproducible}};
/// use reduce_rs::{DType, Shape};
/// let sizes = reproducible::sizes(DType::F32);
/// let h100 = |_| Wave::new(132 * 8, 132);
/// let plan = plan_reproducible(&Shape::rows(8192, 8192), sizes, |_| 256, h100, None).unwrap();
/// assert_eq!((plan.kernel, plan.split), (ShapeKernel::RowsWarp, 32)); // a warp per row
/// let plan = plan_reproducible(&Shape::rows(16, 1 << 22), sizes, |_| 256, h100, None).unwrap();
/// assert_eq!((plan.kernel, plan.split), (ShapeKernel::RowsSplit, 66)); // 66 blocks per row
/// ```
pub fn plan_reproducible(
    shape: &Shape<'_>,
    sizes: Sizes,
    block: impl Fn(ShapeKernel) -> u32,
    wave: impl Fn(ShapeKernel) -> Wave,
    forced: Option<ShapeKernel>,
) -> Option<ShapePlan> {
    plan_fitting(
        shape,
        OpKind::Sum,
        sizes,
        Family::Reproducible,
        block,
        wave,
        forced.map(Forced::from),
    )
}

/// [`plan_layout`] of `shape`, or `None` where the `forced` kernel cannot reduce it ([`fits`]).
fn plan_fitting(
    shape: &Shape<'_>,
    op: OpKind,
    sizes: Sizes,
    family: Family,
    block: impl Fn(ShapeKernel) -> u32,
    wave: impl Fn(ShapeKernel) -> Wave,
    forced: Option<Forced>,
) -> Option<ShapePlan> {
    if forced.is_some_and(|forced| !fits(forced.kernel, shape, family, sizes.element)) {
        return None;
    }
    Some(plan_layout(
        Layout::of(shape),
        op,
        sizes,
        family,
        block,
        wave,
        forced,
    ))
}

/// Whether `kernel` of `family` can reduce `shape` of `element`-byte elements: the row kernels
/// take rows and segments (`RowsSplit` only rows of equal length), `Columns` takes columns,
/// `ColumnsNarrow` (which has no reproducible twin) 1 to 32 columns
/// ([`columns_narrow::is_narrow`]).
pub(crate) fn fits(kernel: ShapeKernel, shape: &Shape<'_>, family: Family, element: usize) -> bool {
    match (kernel, shape) {
        (ShapeKernel::ColumnsNarrow, &Shape::Columns { cols, .. }) => {
            family == Family::Plain && columns_narrow::is_narrow(cols, element)
        }
        _ => matches!(
            (kernel, shape),
            (ShapeKernel::Columns, Shape::Columns { .. })
                | (
                    ShapeKernel::RowsWarp | ShapeKernel::RowsBlock,
                    Shape::Rows { .. } | Shape::Segments(_)
                )
                | (ShapeKernel::RowsSplit, Shape::Rows { .. })
        ),
    }
}

/// The launch of `kernel` for `shape`, if that kernel can reduce it (the benchmark times every
/// kernel a shape could use): the row kernels take rows and segments (`RowsSplit` only rows of
/// equal length), `Columns` takes columns, `ColumnsNarrow` 1 to 32 of them
/// ([`columns_narrow::is_narrow`]).
///
/// ```
/// use reduce_rs::plan::{Sizes, Wave, shapes::{ShapeKernel, plan_for}};
/// use reduce_rs::{OpKind, Shape};
/// let f32 = Sizes { element: 4, accumulator: 4 };
/// let rows = Shape::rows(1000, 64);
/// let h100 = |_| Wave::new(132 * 8, 132);
/// let plan = plan_for(ShapeKernel::RowsBlock, &rows, OpKind::Sum, f32, h100).unwrap();
/// assert_eq!((plan.kernel, plan.launch.grid), (ShapeKernel::RowsBlock, 1000));
/// assert!(plan_for(ShapeKernel::Columns, &rows, OpKind::Sum, f32, h100).is_none());
/// ```
pub fn plan_for(
    kernel: ShapeKernel,
    shape: &Shape<'_>,
    op: OpKind,
    sizes: Sizes,
    wave: impl Fn(ShapeKernel) -> Wave,
) -> Option<ShapePlan> {
    plain_forced(shape, op, sizes, wave, kernel.into())
}

/// What the planner needs to know of a [`Shape`]: the matrix, or the segments' count and
/// their total length (segment offsets on the GPU are not read to plan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    Rows { rows: usize, cols: usize },
    Columns { rows: usize, cols: usize },
    Segments { count: usize, total: usize },
}

/// The most elements a shape may have for the planner to take it as it is: 2^48, more than any
/// GPU holds, so that its arithmetic (elements by bytes, blocks by columns) cannot overflow. A
/// larger shape fits no input ([`Shape::check`] refuses it) and is planned as an empty one.
const MAX_PLANNED_ELEMENTS: u128 = 1 << 48;

impl Layout {
    pub(crate) fn of(shape: &Shape<'_>) -> Layout {
        let plannable = |a: usize, b: usize| a as u128 * b as u128 <= MAX_PLANNED_ELEMENTS;
        match *shape {
            Shape::Rows { rows, cols } if plannable(rows, cols) => Layout::Rows { rows, cols },
            Shape::Columns { rows, cols } if plannable(rows, cols) => {
                Layout::Columns { rows, cols }
            }
            Shape::Rows { .. } => Layout::Rows { rows: 0, cols: 0 },
            Shape::Columns { .. } => Layout::Columns { rows: 0, cols: 0 },
            Shape::Segments(offsets) => {
                // Offsets that decrease (which `Shape::check` refuses) span nothing.
                let total = offsets
                    .last()
                    .copied()
                    .unwrap_or(0)
                    .saturating_sub(offsets.first().copied().unwrap_or(0));
                let count = shape.results();
                if plannable(total, 1) {
                    Layout::Segments { count, total }
                } else {
                    Layout::Segments { count, total: 0 }
                }
            }
        }
    }
}

/// The flat read's grid over `len` elements of `element` bytes, in blocks of `block` threads
/// of which `wave` run at once: the fewest batches of `VECTORS_IN_FLIGHT` vectors a thread
/// that one wave covers, and as many blocks as give each thread that many (not a batch and a
/// few vectors more, which take a load latency each); a multiple of `multiple` (the column
/// count's odd part, [`columns_narrow::grid_multiple`]), rounded up unless that passes the wave
/// (a grid capped below the wave keeps the planner's choice of the bands), else down, and at
/// least `multiple`.
fn narrow_grid(len: usize, element: usize, block: u32, wave: u64, multiple: u64) -> usize {
    let wave = wave.max(1);
    let batch = VECTORS_IN_FLIGHT as u64;
    let batches = vector_grid(len, element, batch, block, u64::MAX).div_ceil(wave);
    let grid = vector_grid(len, element, batch * batches, block, wave);
    let up = grid.next_multiple_of(multiple);
    let grid = if up <= wave {
        up
    } else {
        grid - grid % multiple
    };
    grid.max(multiple) as usize
}

/// The launch for `layout` (see [`plan_shape`]) of a kernel of `family` (`sizes.accumulator`
/// is a state's bytes for [`Family::Reproducible`]), `block(kernel)` threads per block;
/// `forced` names the kernel instead of choosing (and perhaps `RowsWarp`'s lanes).
pub(crate) fn plan_layout(
    layout: Layout,
    op: OpKind,
    sizes: Sizes,
    family: Family,
    block: impl Fn(ShapeKernel) -> u32,
    wave: impl Fn(ShapeKernel) -> Wave,
    forced: Option<Forced>,
) -> ShapePlan {
    let forced_lanes = forced.and_then(|forced| forced.lanes);
    let forced = forced.map(|forced| forced.kernel);
    // The blocks, and the warps, of `kernel` the device holds at once.
    let blocks_of = |kernel: ShapeKernel| wave(kernel).blocks();
    let warps_of =
        |kernel: ShapeKernel| blocks_of(kernel) as usize * (block(kernel) / WARP_SIZE) as usize;
    let plan = |kernel: ShapeKernel, grid: u64, split: usize, partials: usize, counters: usize| {
        let block = block(kernel);
        // The reproducible twins hold in shared memory what their plain kernels do (a value
        // per warp, and the ticket), as states; but for columns, half a state per thread.
        let tile_accumulators = match (layout, family) {
            (Layout::Columns { cols, .. }, Family::Plain) => {
                columns::shared_accumulators(cols, sizes.element, block)
            }
            (Layout::Columns { cols, .. }, Family::Reproducible) => {
                kernels_gpu::reproducible::columns::shared_states(cols, sizes.element, block)
            }
            _ => 0,
        };
        let shared_bytes = shared_bytes_of(kernel.info().shared, block, sizes, tile_accumulators);
        ShapePlan {
            kernel,
            family,
            launch: LaunchGrid {
                grid: grid.clamp(1, MAX_GRID) as u32,
                block,
                shared_bytes,
            },
            split,
            partials,
            counters,
        }
    };
    // Groups of `lanes` lanes (`Family::lanes_for_rows`, or the caller's), `32 / lanes` rows per
    // warp at a time; a grid of at most four waves, whose warps then take the next rows.
    let rows_warp = |rows: usize, row_bytes: usize| {
        let kernel = ShapeKernel::RowsWarp;
        let lanes = forced_lanes.unwrap_or_else(|| {
            family.lanes_for_rows(op, sizes.element, row_bytes, rows, warps_of(kernel))
        });
        let rows_per_block =
            (block(kernel) as usize / WARP_SIZE as usize) * (WARP_SIZE as usize / lanes);
        let grid = (rows.div_ceil(rows_per_block) as u64).min(blocks_of(kernel) * 4);
        plan(kernel, grid, lanes, 0, 0)
    };
    match layout {
        Layout::Columns { rows, cols } => {
            // `ColumnsNarrow` (for the column counts it can take): its grid found once, a
            // partial of every column per block, one ticket.
            let narrow = ShapeKernel::ColumnsNarrow;
            let flat_grid = (family == Family::Plain
                && columns_narrow::is_narrow(cols, sizes.element))
            .then(|| {
                let multiple = columns_narrow::grid_multiple(cols) as u64;
                narrow_grid(
                    rows * cols,
                    sizes.element,
                    block(narrow),
                    blocks_of(narrow),
                    multiple,
                )
            })
            .filter(|&grid| match forced {
                Some(kernel) => kernel == narrow,
                None => {
                    grid <= blocks_of(narrow) as usize
                        && narrow_columns(rows, cols, sizes.element, grid)
                }
            });
            if let Some(grid) = flat_grid {
                return plan(narrow, grid as u64, grid, grid * cols, 1);
            }
            let kernel = ShapeKernel::Columns;
            let block = block(kernel);
            let groups = columns::groups_per_tile(cols, sizes.element, block);
            let tiles = cols
                .div_ceil(elements_per_vector(sizes.element))
                .div_ceil(groups)
                .max(1);
            let rows_per_step = block as usize / groups;
            // Bands of `RUNS_PER_BAND` runs each (fewer where that leaves too few blocks); more
            // where the grid would pass one wave (half a wave for the arg operators), or where
            // the tile's last block would add up more than `MAX_BANDS_PER_THREAD` bands per
            // thread.
            let runs = columns::whole_runs(rows, rows_per_step).1.max(1);
            let wave_blocks = blocks_of(kernel) as usize;
            let band_wave = match op {
                OpKind::ArgMin | OpKind::ArgMax => (wave_blocks / ARG_BAND_WAVE_DIVISOR).max(1),
                _ => wave_blocks,
            };
            let runs_per_band = if runs.div_ceil(RUNS_PER_BAND) * tiles >= wave_blocks / 4 {
                RUNS_PER_BAND
            } else {
                FEW_RUNS_PER_BAND
            }
            .max(runs.div_ceil((band_wave / tiles).max(1)))
            .max(runs.div_ceil(rows_per_step * MAX_BANDS_PER_THREAD));
            let split = runs.div_ceil(runs_per_band);
            plan(kernel, (tiles * split) as u64, split, split * cols, tiles)
        }
        Layout::Rows { rows, cols } => {
            let row_bytes = cols * sizes.element;
            let resident_blocks = blocks_of(ShapeKernel::RowsBlock) as usize;
            let split_wave = wave(ShapeKernel::RowsSplit);
            // Fewer rows than half a wave of `RowsSplit`'s blocks: cut them over several blocks
            // each if they are long, else a block each (below). Otherwise by row length (the
            // reproducible mode: a warp per row also when every resident warp gets a row).
            let warp = match family {
                Family::Plain => warp_per_row(
                    op,
                    sizes.element,
                    row_bytes,
                    rows,
                    warps_of(ShapeKernel::RowsWarp),
                ),
                Family::Reproducible => {
                    row_bytes <= REPRODUCIBLE_WARP_ROW_BYTES
                        || rows >= warps_of(ShapeKernel::RowsBlock)
                }
            };
            // Measured on the H100, where a wave of `rows_split_f32_sum` is 528 blocks: 128 rows
            // of 2 MiB, split 91.4 µs, a block each 104.2; 512 rows of 512 KiB, split 91.8, a
            // block each 89.7. The reproducible twins keep their line at a wave of `RowsBlock`.
            let split_below = match family {
                Family::Plain => (split_wave.blocks() as usize / 2).max(1),
                Family::Reproducible => resident_blocks,
            };
            let split = family.blocks_per_row(
                op,
                rows,
                cols,
                sizes.element,
                block(ShapeKernel::RowsSplit),
                split_wave,
            );
            // Few rows of at most `SPLIT_ROW_BYTES`, or that one block of `RowsSplit` would
            // read alone, get `RowsBlock`: the same reads without the hand-over. Short ones
            // too: on the H100, 64 × 512 f32 a block each 4.1 µs, a warp each 4.0–4.2; 100 ×
            // 2000, 4.8 against 7.2; the reproducible twins 6.1 against 7.7 (64 × 512).
            let cut = split > 1 && row_bytes > SPLIT_ROW_BYTES;
            let choice = forced.unwrap_or(if rows < split_below && cut {
                ShapeKernel::RowsSplit
            } else if rows < split_below || !warp {
                ShapeKernel::RowsBlock
            } else {
                ShapeKernel::RowsWarp
            });
            match choice {
                ShapeKernel::RowsWarp => rows_warp(rows, row_bytes),
                ShapeKernel::RowsSplit => plan(
                    ShapeKernel::RowsSplit,
                    (rows * split) as u64,
                    split,
                    rows * split,
                    rows,
                ),
                _ => plan(ShapeKernel::RowsBlock, rows as u64, 1, 0, 0),
            }
        }
        Layout::Segments { count, total } => {
            let average_bytes = total.div_ceil(count.max(1)) * sizes.element;
            let warp = match (forced, family) {
                (Some(kernel), _) => kernel == ShapeKernel::RowsWarp,
                (None, Family::Plain) => warp_per_row(
                    op,
                    sizes.element,
                    average_bytes,
                    count,
                    warps_of(ShapeKernel::RowsWarp),
                ),
                (None, Family::Reproducible) => average_bytes <= REPRODUCIBLE_WARP_ROW_BYTES,
            };
            if warp {
                rows_warp(count, average_bytes)
            } else {
                plan(ShapeKernel::RowsBlock, count as u64, 1, 0, 0)
            }
        }
    }
}
