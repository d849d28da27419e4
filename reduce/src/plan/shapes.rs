//! Which kernel reduces a [`Shape`] and how it is launched: a warp (or a group of its lanes)
//! per short row, a block per long row, several blocks per row for few long rows, bands of
//! rows for columns, by the shape and the GPU's occupancy. The same for the kernels'
//! reproducible twins ([`Family::Reproducible`]), which give each lane more of a row.

use super::launch::{LaunchGrid, MAX_GRID, Sizes, shared_bytes_of};
use crate::op::OpKind;
use crate::shape::Shape;
use kernels_gpu::launch::{VECTORS_IN_FLIGHT, WARP_SIZE, elements_per_vector};
use kernels_gpu::shapes::columns;

/// The kernels that reduce shapes, as `kernels_gpu::shapes` declares them (block, shared
/// memory, grid).
pub use kernels_gpu::shapes::ShapeKernel;

/// Rows of at most this many bytes go to a warp (or a group of its lanes) each; longer rows
/// get a block or more. Measured on the H100 (f32 row sums of 2^28 bytes): rows of 2 KiB, a
/// warp 91.3 µs and a block of 256 threads 199.9; rows of 4 KiB, a warp 89.7 and a block
/// 121.6; rows of 8 KiB, a warp 90.1 and a block 87.9 (`docs/runs/2026-11-25-c/`).
pub const WARP_ROW_BYTES: usize = 4 * 1024;

/// Rows of at most this many bytes go to a warp each for min and max: their block per row
/// (two vectors per thread at 8 KiB, each lifted and compared lane by lane, then a block-wide
/// merge) costs more than the sums'. Measured on the H100 (µs, a warp / a block):
/// `bf16` max 32768 × 4096 (8 KiB) 94.0 / 164.6, 16384 × 8192 (16 KiB) 94.4 / 89.5; `f32`
/// max 32768 × 2048 (8 KiB) 92.1 / 108.2, 16384 × 4096 (16 KiB) 92.8 / 89.4
/// (`docs/runs/2026-11-26-c/`).
pub const EXTREME_WARP_ROW_BYTES: usize = 8 * 1024;

/// Rows of at most this many bytes go to a warp each for argmin and argmax when there are
/// enough of them to give a quarter of the warps the GPU holds a row (fewer such rows, longer
/// than [`EXTREME_WARP_ROW_BYTES`]: a block each). Min and argmin were not timed; they take
/// the rules of max and argmax, whose code they share.
/// Measured on the H100 (µs, a warp / a block): `bf16` argmax 32768 × 4096 (8 KiB) 148.1 /
/// 231.1, 16384 × 8192 141.5 / 170.8, 8192 × 16384 136.3 / 151.3, 4096 × 32768 (64 KiB)
/// 126.4 / 139.6, but 2048 × 16384 42.1 / 43.1; `f32` argmax 32768 × 2048 93.4 / 141.1, 16384
/// × 4096 93.7 / 101.9, 8192 × 8192 93.9 / 94.7, 4096 × 16384 94.0 / 94.9, but 2048 × 32768
/// (128 KiB) 101.5 / 94.2 and 1024 × 16384 34.2 / 30.9 (`docs/runs/2026-11-26-c/`).
pub const ARG_WARP_ROW_BYTES: usize = 64 * 1024;

/// Whether rows of `row_bytes` bytes, `rows` of them, go to a warp (or a group of its lanes)
/// each for `op` in the plain kernels, on a GPU that holds `warps` warps of `RowsWarp` at
/// once: sums and means up to [`WARP_ROW_BYTES`], min and max up to
/// [`EXTREME_WARP_ROW_BYTES`], the arg operators that far too, and up to
/// [`ARG_WARP_ROW_BYTES`] where `rows` is at least a quarter of `warps`. Segments take the
/// same rule by their mean length (measured on rows only).
///
/// ```
/// use reduce_rs::OpKind;
/// use reduce_rs::plan::shapes::warp_per_row;
/// // An H100 holds 64 warps per SM where the registers allow (`rows_warp_bf16_argmax`, at 60
/// // registers, gets 32: the driver's occupancy is what the planner passes).
/// let h100 = 132 * 64;
/// assert!(!warp_per_row(OpKind::Sum, 8192, 32768, h100));
/// assert!(warp_per_row(OpKind::Max, 8192, 32768, h100));
/// assert!(warp_per_row(OpKind::ArgMax, 65536, 4096, h100));
/// assert!(!warp_per_row(OpKind::ArgMax, 65536, 1024, h100));
/// ```
pub fn warp_per_row(op: OpKind, row_bytes: usize, rows: usize, warps: usize) -> bool {
    match op {
        OpKind::Sum | OpKind::Mean => row_bytes <= WARP_ROW_BYTES,
        OpKind::Min | OpKind::Max => row_bytes <= EXTREME_WARP_ROW_BYTES,
        OpKind::ArgMin | OpKind::ArgMax => {
            row_bytes <= EXTREME_WARP_ROW_BYTES
                || (row_bytes <= ARG_WARP_ROW_BYTES && rows >= warps / 4)
        }
    }
}

/// Runs of rows ([`columns::band_rows`]: a group of loads for every thread of the block) in
/// each band of a column reduction: four, so that the band's partials and its hand-over stay a
/// small part of each block's time; but [`FEW_RUNS_PER_BAND`] where four would leave fewer
/// blocks than a quarter of a wave (one per SM at the kernel's four). Measured on the H100
/// (`docs/runs/2026-11-26/`, µs at 4 runs / 2 runs per band): 4096² `f32` 31.5 / 34.8 (512 /
/// 1024 blocks), 2^20 × 8 21.5 / 23.1 (256 / 512 blocks); 2048² 16.9 / 14.4 (128 / 256
/// blocks), 2^20 × 2 12.9 / 12.4 (128 / 256 blocks).
pub const RUNS_PER_BAND: usize = 4;

/// Runs of rows in each band of a column reduction that would have fewer blocks than a quarter
/// of a wave at [`RUNS_PER_BAND`].
pub const FEW_RUNS_PER_BAND: usize = 2;

/// Bands each thread of a column tile's last block adds up at most (four rounds of eight
/// loads in flight): more bands would make that one block the kernel's tail.
pub const MAX_BANDS_PER_THREAD: usize = 32;

/// Vectors each thread of a row split over blocks reads at most before the row is cut into
/// more blocks than one wave (two groups of loads): 16 rows of 2^22 `f32` in 256 blocks of 512
/// threads each took 90.7 µs on the H100, in one wave (33 blocks each) 95.9 (the read-only
/// kernel 90.0).
pub const SPLIT_TILE_VECTORS: usize = 2 * VECTORS_IN_FLIGHT;

/// Vectors each thread of a row split over blocks reads at least: one. A vocabulary row of
/// 128256 `bf16` in 32 blocks of 512 threads took 8.3 µs on the H100, in 8 blocks (a group of
/// four loads each) 9.8: for a few rows, more SMs reading beats more loads per thread.
pub const SPLIT_MIN_VECTORS: usize = 1;

/// Rows of at most this many bytes are never cut over blocks, however few: one block of 256
/// threads reads such a row in a few groups of loads, and `RowsSplit`'s hand-over costs more
/// than it saves. Measured on the H100 (f32 sums, µs, a block each / split): 64 × 512 4.1 /
/// 6.4, 64 × 4096 4.5 / 6.9, 16 × 16384 (64 KiB) 5.9 / 7.0, but 8 × 65536 (256 KiB) 11.9 /
/// 7.4; the argmax of one 250 KiB bf16 vocabulary row 23.2 / 8.0 (`docs/runs/2026-11-26/`);
/// the reproducible twins alike (64 KiB: 9.9 / 17.0; 256 KiB: 21.5 / 17.7).
pub const SPLIT_ROW_BYTES: usize = 64 * 1024;

/// Rows of at most this many bytes go to a warp (or a group of its lanes) each in the
/// reproducible mode, and longer ones when there are enough of them to give every warp the GPU
/// holds a row: a state's merge costs as much as a few hundred deposits, and a warp per row
/// merges 32 states per row where a block of 256 threads merges 256.
pub const REPRODUCIBLE_WARP_ROW_BYTES: usize = 64 * 1024;

/// Vectors each thread of a reproducible split row reads at least (four batches of
/// `VECTORS_IN_FLIGHT`), so that the deposits outweigh the thread's share of the merges.
pub const REPRODUCIBLE_VECTORS_PER_LANE: usize = 4 * VECTORS_IN_FLIGHT;

/// Vectors a lane of `rows_warp` reads at least, by family, operator and element size: the
/// fewer lanes share a row, the fewer shuffle rounds (the reproducible twins' merges) each row
/// costs, and the more groups of loads a lane of an arg operator has over which to amortise its
/// one deferred search (`Reduction::resolve`) — most of all for the 16-bit floats, whose groups
/// are skipped by their best key (`Element::largest_key`) and so cost little each. Measured on
/// the H100 with `bench --shapes … --splits 1,2,…,32` (`docs/runs/2026-11-26-d/call3_lanes.log`
/// and `call6_arg_lanes.log`, µs, lanes per row: time): the bf16 argmax of 65536 rows of 2048,
/// 32: 169.0, 16: 116.5, 8: 112.9, 2: 111.1 (CUB 133.8); of 32768 rows of 4096, 32: 117.3, 16:
/// 111.9, 8: 110.8, 4: 107.1 (CUB 108.1); of 16384 rows of 8192, 32: 111.9, 8: 104.2, 4: 110.1
/// (CUB 103.1) — 128 vectors a lane each time; the f32 argmax of 32768 rows of 2048, 32: 93.6,
/// 16: 94.5, 8: 94.6, and of 65536 rows of 1024, 16: 94.4, 8: 94.8, 32: 96.3 — 16; the
/// reproducible sum of 100000 segments of ~300 f32, 8: 81.4, 4: 68.9, 2: 72.2, and of 65536
/// rows of 512, 8: 57.0, 4: 54.5 — 32; plain sums of those segments, 32: 49.2, 16: 45.3, 8:
/// 45.9 (rows of 512 alike within 0.5%) — 8. Min and max keep the one group per lane they had:
/// no shape measured so far turns on it (the bf16 max of 8 KiB rows is at the 32-lane cap
/// either way: 94.0 at 32 lanes, 94.7 at 16).
///
/// ```
/// use reduce_rs::OpKind;
/// use reduce_rs::plan::shapes::{Family, lane_vectors};
/// assert_eq!(lane_vectors(Family::Plain, OpKind::ArgMax, 2), 128); // bf16, f16
/// assert_eq!(lane_vectors(Family::Plain, OpKind::ArgMax, 4), 16);
/// assert_eq!(lane_vectors(Family::Plain, OpKind::Sum, 2), 8);
/// assert_eq!(lane_vectors(Family::Reproducible, OpKind::Sum, 4), 32);
/// ```
pub const fn lane_vectors(family: Family, op: OpKind, element_bytes: usize) -> usize {
    match (family, op) {
        (Family::Reproducible, _) => 8 * VECTORS_IN_FLIGHT,
        // The 16-bit floats, the only 2-byte element types.
        (Family::Plain, OpKind::ArgMin | OpKind::ArgMax) if element_bytes == 2 => {
            32 * VECTORS_IN_FLIGHT
        }
        (Family::Plain, OpKind::ArgMin | OpKind::ArgMax) => 4 * VECTORS_IN_FLIGHT,
        (Family::Plain, OpKind::Sum | OpKind::Mean) => 2 * VECTORS_IN_FLIGHT,
        (Family::Plain, OpKind::Min | OpKind::Max) => VECTORS_IN_FLIGHT,
    }
}

/// Which kernels a plan launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The shape kernels of `kernels_gpu::shapes` (`rows_warp_f32_sum`), each with the block it
    /// is built for.
    Plain,
    /// Their reproducible twins (`reproducible_rows_warp_f32_sum`, `kernels_gpu::reproducible`):
    /// binned sums and means, the block size read at run time, more of a row per lane.
    Reproducible,
}

impl Family {
    /// The entry point of `kernel` of this family for `dtype` and `op` (names as in entry
    /// points): `rows_warp_f32_sum`, `reproducible_rows_warp_f32_sum`.
    ///
    /// ```
    /// use reduce_rs::plan::shapes::{Family, ShapeKernel};
    /// assert_eq!(Family::Reproducible.entry(ShapeKernel::Columns, "bf16", "mean"), "reproducible_columns_bf16_mean");
    /// ```
    pub fn entry(
        self,
        kernel: ShapeKernel,
        dtype: impl std::fmt::Display,
        op: impl std::fmt::Display,
    ) -> String {
        match self {
            Family::Plain => format!("{}_{dtype}_{op}", kernel.name()),
            Family::Reproducible => format!("reproducible_{}_{dtype}_{op}", kernel.name()),
        }
    }

    /// Blocks of `block` threads per row of `cols` elements of `element` bytes for `RowsSplit`,
    /// `rows` rows and a wave of `wave` of its blocks: as many as fill the GPU in one wave (a
    /// second, partial wave would cost as much as the first); but rows so long that a wave's
    /// blocks would each read more than `SPLIT_TILE_VECTORS` per thread are cut into tiles of
    /// that size, many waves of them, whose last wave is a small part of the time (the
    /// reproducible twins keep one wave). Each block reads at least `SPLIT_MIN_VECTORS` per
    /// thread (four groups in the reproducible mode).
    fn blocks_per_row(
        self,
        rows: usize,
        cols: usize,
        element: usize,
        block: u32,
        wave: usize,
    ) -> usize {
        let vector_block = block as usize * elements_per_vector(element);
        let one_wave = (wave / rows.max(1)).max(1);
        let (tile_split, least) = match self {
            Family::Plain => (
                cols.div_ceil(vector_block * SPLIT_TILE_VECTORS),
                SPLIT_MIN_VECTORS,
            ),
            Family::Reproducible => (1, REPRODUCIBLE_VECTORS_PER_LANE),
        };
        let most = cols.div_ceil(vector_block * least).max(1);
        one_wave.max(tile_split).min(most)
    }

    /// Lanes that share one row of `row_bytes` bytes of `element_bytes`-byte elements in
    /// `rows_warp`, reducing with `op`.
    pub fn lanes_per_row(self, op: OpKind, element_bytes: usize, row_bytes: usize) -> usize {
        lanes_for(row_bytes, lane_vectors(self, op, element_bytes))
    }
}

/// Lanes that share one row of `row_bytes` bytes of `element_bytes`-byte elements in
/// `rows_warp` (the plain kernels): a power of two from 1 to 32, so that each lane has about
/// [`lane_vectors`] vector loads to issue (more in the reproducible mode:
/// [`Family::lanes_per_row`]).
///
/// ```
/// use reduce_rs::OpKind;
/// use reduce_rs::plan::shapes::{Family, lanes_per_row};
/// assert_eq!(lanes_per_row(OpKind::Max, 4, 128 * 4), 8); // 128 f32: 8 lanes of 4 vectors
/// assert_eq!(lanes_per_row(OpKind::Sum, 4, 128 * 4), 4); // 4 lanes of 8 vectors
/// assert_eq!(lanes_per_row(OpKind::ArgMax, 4, 2048 * 4), 32); // 2048 f32: 32 lanes of 16
/// assert_eq!(lanes_per_row(OpKind::ArgMax, 2, 4096 * 2), 4); // 4096 bf16: 4 lanes of 128
/// assert_eq!(lanes_per_row(OpKind::Sum, 4, 4096 * 4), 32); // a whole warp
/// assert_eq!(lanes_per_row(OpKind::Sum, 4, 12), 1);
/// assert_eq!(Family::Reproducible.lanes_per_row(OpKind::Sum, 4, 512 * 4), 4); // 4 lanes of 32
/// ```
pub fn lanes_per_row(op: OpKind, element_bytes: usize, row_bytes: usize) -> usize {
    Family::Plain.lanes_per_row(op, element_bytes, row_bytes)
}

fn lanes_for(row_bytes: usize, vectors_per_lane: usize) -> usize {
    let vectors = row_bytes.div_ceil(16);
    vectors
        .div_ceil(vectors_per_lane)
        .max(1)
        .next_power_of_two()
        .min(WARP_SIZE as usize)
}

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
    /// Blocks per row (`RowsSplit`), bands of rows (`Columns`), lanes per row (`RowsWarp`);
    /// 1 for `RowsBlock`.
    pub split: usize,
    /// Accumulators of scratch the launch needs, and ticket counters.
    pub partials: usize,
    /// Ticket counters (`u32`): one per row (`RowsSplit`) or tile of columns (`Columns`).
    pub counters: usize,
}

impl ShapePlan {
    /// The same launch with `split` bands of rows (`Columns`), blocks per row (`RowsSplit`)
    /// or lanes per row (`RowsWarp`, a power of two up to 32, on the same grid: the warps
    /// loop over the rows) instead of the planner's, for a benchmark that measures which
    /// split a shape wants; `None` for `RowsBlock`, whose split is not free, for a split of 0
    /// (or no power of two for `RowsWarp`), for no rows or columns (`RowsWarp` excepted: its
    /// one block then finds no row, whatever its lanes), and where the grid would pass the
    /// launch limit. A plan's partials are `split` × its columns (`Columns`) or rows
    /// (`RowsSplit`), which is how the new count is found.
    ///
    /// ```
    /// use reduce_rs::{OpKind, Shape};
    /// use reduce_rs::plan::{Sizes, shapes::{ShapeKernel, plan_shape}};
    /// let f32 = Sizes { element: 4, accumulator: 4 };
    /// let plan = plan_shape(&Shape::columns(4096, 4096), OpKind::Sum, f32, |_| 132 * 3);
    /// assert_eq!((plan.kernel, plan.counters, plan.split), (ShapeKernel::Columns, 16, 22));
    /// let wider = plan.with_split(99).unwrap();
    /// assert_eq!((wider.launch.grid, wider.partials), (16 * 99, 99 * 4096));
    /// let few_rows = plan_shape(&Shape::rows(16, 1 << 22), OpKind::Sum, f32, |_| 132 * 2);
    /// assert_eq!((few_rows.kernel, few_rows.split), (ShapeKernel::RowsSplit, 256));
    /// let more = few_rows.with_split(64).unwrap();
    /// assert_eq!((more.launch.grid, more.partials, more.counters), (16 * 64, 16 * 64, 16));
    /// let short = plan_shape(&Shape::rows(65536, 512), OpKind::Sum, f32, |_| 132 * 8);
    /// assert_eq!((short.kernel, short.split), (ShapeKernel::RowsWarp, 16));
    /// let fewer_lanes = short.with_split(8).unwrap();
    /// assert_eq!((fewer_lanes.split, fewer_lanes.launch), (8, short.launch));
    /// assert!(short.with_split(6).is_none() && short.with_split(64).is_none());
    /// assert!(plan_shape(&Shape::rows(0, 512), OpKind::Sum, f32, |_| 132 * 2).with_split(2).is_none());
    /// assert!(plan_shape(&Shape::rows(64, 8192), OpKind::Sum, f32, |_| 132 * 8).with_split(2).is_none());
    /// ```
    pub fn with_split(self, split: usize) -> Option<ShapePlan> {
        if self.kernel == ShapeKernel::RowsWarp {
            let lanes = split.is_power_of_two() && split <= WARP_SIZE as usize;
            return (lanes && self.launch.grid > 0).then_some(ShapePlan { split, ..self });
        }
        let free = matches!(self.kernel, ShapeKernel::Columns | ShapeKernel::RowsSplit);
        let grid = self.counters.checked_mul(split)?;
        if !free || split == 0 || grid == 0 || grid as u64 > MAX_GRID {
            return None;
        }
        // Partials: one row of columns per band (`Columns`), one per block of a row
        // (`RowsSplit`).
        let per_split = self.partials / self.split.max(1);
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

/// Chooses the kernel and launch for reducing `shape` with `op` over elements of `sizes`, on
/// a GPU that runs `resident(kernel)` blocks of a kernel at once.
///
/// ```
/// use reduce_rs::plan::{Sizes, shapes::{ShapeKernel, plan_shape}};
/// use reduce_rs::{OpKind, Shape};
/// let f32 = Sizes { element: 4, accumulator: 4 };
/// let h100 = |kernel: ShapeKernel| 132 * u64::from(2048 / kernel.block());
/// // Rows of 8 KiB: a block each for sums, a warp each for max.
/// let rows = Shape::rows(32768, 2048);
/// assert_eq!(plan_shape(&rows, OpKind::Sum, f32, h100).kernel, ShapeKernel::RowsBlock);
/// assert_eq!(plan_shape(&rows, OpKind::Max, f32, h100).kernel, ShapeKernel::RowsWarp);
/// ```
pub fn plan_shape(
    shape: &Shape<'_>,
    op: OpKind,
    sizes: Sizes,
    resident: impl Fn(ShapeKernel) -> u64,
) -> ShapePlan {
    plan_layout(
        Layout::of(shape),
        op,
        sizes,
        Family::Plain,
        |k| k.block(),
        resident,
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
/// use reduce_rs::{DType, Shape, plan::reproducible, plan::shapes::{ShapeKernel, plan_reproducible}};
/// let sizes = reproducible::sizes(DType::F32);
/// let h100 = |_| 132 * 8;
/// let plan = plan_reproducible(&Shape::rows(8192, 8192), sizes, |_| 256, h100, None).unwrap();
/// assert_eq!((plan.kernel, plan.split), (ShapeKernel::RowsWarp, 32)); // a warp per row
/// let plan = plan_reproducible(&Shape::rows(16, 1 << 22), sizes, |_| 256, h100, None).unwrap();
/// assert_eq!((plan.kernel, plan.split), (ShapeKernel::RowsSplit, 66)); // 66 blocks per row
/// ```
pub fn plan_reproducible(
    shape: &Shape<'_>,
    sizes: Sizes,
    block: impl Fn(ShapeKernel) -> u32,
    resident: impl Fn(ShapeKernel) -> u64,
    forced: Option<ShapeKernel>,
) -> Option<ShapePlan> {
    if let Some(kernel) = forced
        && !fits(kernel, shape)
    {
        return None;
    }
    Some(plan_layout(
        Layout::of(shape),
        OpKind::Sum,
        sizes,
        Family::Reproducible,
        block,
        resident,
        forced,
    ))
}

/// Whether `kernel` can reduce `shape`: the row kernels take rows and segments (`RowsSplit`
/// only rows of equal length), `Columns` takes columns.
pub(crate) fn fits(kernel: ShapeKernel, shape: &Shape<'_>) -> bool {
    matches!(
        (kernel, shape),
        (ShapeKernel::Columns, Shape::Columns { .. })
            | (
                ShapeKernel::RowsWarp | ShapeKernel::RowsBlock,
                Shape::Rows { .. } | Shape::Segments(_)
            )
            | (ShapeKernel::RowsSplit, Shape::Rows { .. })
    )
}

/// The launch of `kernel` for `shape`, if that kernel can reduce it (the benchmark times every
/// kernel a shape could use): the row kernels take rows and segments (`RowsSplit` only rows of
/// equal length), `Columns` takes columns.
///
/// ```
/// use reduce_rs::plan::{Sizes, shapes::{ShapeKernel, plan_for}};
/// use reduce_rs::{OpKind, Shape};
/// let f32 = Sizes { element: 4, accumulator: 4 };
/// let rows = Shape::rows(1000, 64);
/// let plan = plan_for(ShapeKernel::RowsBlock, &rows, OpKind::Sum, f32, |_| 132 * 8).unwrap();
/// assert_eq!((plan.kernel, plan.launch.grid), (ShapeKernel::RowsBlock, 1000));
/// assert!(plan_for(ShapeKernel::Columns, &rows, OpKind::Sum, f32, |_| 132 * 8).is_none());
/// ```
pub fn plan_for(
    kernel: ShapeKernel,
    shape: &Shape<'_>,
    op: OpKind,
    sizes: Sizes,
    resident: impl Fn(ShapeKernel) -> u64,
) -> Option<ShapePlan> {
    fits(kernel, shape).then(|| {
        plan_layout(
            Layout::of(shape),
            op,
            sizes,
            Family::Plain,
            |k| k.block(),
            resident,
            Some(kernel),
        )
    })
}

/// What the planner needs to know of a [`Shape`]: the matrix, or the segments' count and
/// their total length (segment offsets on the GPU are not read to plan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    Rows { rows: usize, cols: usize },
    Columns { rows: usize, cols: usize },
    Segments { count: usize, total: usize },
}

impl Layout {
    pub(crate) fn of(shape: &Shape<'_>) -> Layout {
        match *shape {
            Shape::Rows { rows, cols } => Layout::Rows { rows, cols },
            Shape::Columns { rows, cols } => Layout::Columns { rows, cols },
            Shape::Segments(offsets) => Layout::Segments {
                count: shape.results(),
                total: offsets.last().copied().unwrap_or(0) - offsets.first().copied().unwrap_or(0),
            },
        }
    }
}

/// The launch for `layout` (see [`plan_shape`]) of a kernel of `family` (`sizes.accumulator`
/// is a state's bytes for [`Family::Reproducible`]), `block(kernel)` threads per block;
/// `forced` names the kernel instead of choosing.
pub(crate) fn plan_layout(
    layout: Layout,
    op: OpKind,
    sizes: Sizes,
    family: Family,
    block: impl Fn(ShapeKernel) -> u32,
    resident: impl Fn(ShapeKernel) -> u64,
    forced: Option<ShapeKernel>,
) -> ShapePlan {
    // The warps of `kernel` the device holds at once.
    let warps_of = |kernel: ShapeKernel| {
        resident(kernel).max(1) as usize * (block(kernel) / WARP_SIZE) as usize
    };
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
    // Groups of `lanes_per_row` lanes, `32 / lanes_per_row` rows per warp at a time; a grid of
    // at most four waves, whose warps then take the next rows.
    let rows_warp = |rows: usize, row_bytes: usize| {
        let kernel = ShapeKernel::RowsWarp;
        let lanes = family.lanes_per_row(op, sizes.element, row_bytes);
        let rows_per_block =
            (block(kernel) as usize / WARP_SIZE as usize) * (WARP_SIZE as usize / lanes);
        let grid = (rows.div_ceil(rows_per_block) as u64).min(resident(kernel).max(1) * 4);
        plan(kernel, grid, lanes, 0, 0)
    };
    match layout {
        Layout::Columns { rows, cols } => {
            let kernel = ShapeKernel::Columns;
            let block = block(kernel);
            let groups = columns::groups_per_tile(cols, sizes.element, block);
            let tiles = cols
                .div_ceil(elements_per_vector(sizes.element))
                .div_ceil(groups)
                .max(1);
            let rows_per_step = block as usize / groups;
            // Bands of `RUNS_PER_BAND` runs each (fewer where that leaves too few blocks); more
            // where the grid would pass one wave, or where the tile's last block would add up
            // more than `MAX_BANDS_PER_THREAD` bands per thread.
            let runs = columns::whole_runs(rows, rows_per_step).1.max(1);
            let wave = resident(kernel).max(1) as usize;
            let runs_per_band = if runs.div_ceil(RUNS_PER_BAND) * tiles >= wave / 4 {
                RUNS_PER_BAND
            } else {
                FEW_RUNS_PER_BAND
            }
            .max(runs.div_ceil((wave / tiles).max(1)))
            .max(runs.div_ceil(rows_per_step * MAX_BANDS_PER_THREAD));
            let split = runs.div_ceil(runs_per_band);
            plan(kernel, (tiles * split) as u64, split, split * cols, tiles)
        }
        Layout::Rows { rows, cols } => {
            let row_bytes = cols * sizes.element;
            let resident_blocks = resident(ShapeKernel::RowsBlock).max(1) as usize;
            let split_wave = resident(ShapeKernel::RowsSplit).max(1) as usize;
            // Fewer rows than half a wave of `RowsSplit`'s blocks: cut them over several blocks
            // each if they are long, else a block each (below). Otherwise by row length (the
            // reproducible mode: a warp per row also when every resident warp gets a row).
            let warp = match family {
                Family::Plain => warp_per_row(op, row_bytes, rows, warps_of(ShapeKernel::RowsWarp)),
                Family::Reproducible => {
                    row_bytes <= REPRODUCIBLE_WARP_ROW_BYTES
                        || rows >= warps_of(ShapeKernel::RowsBlock)
                }
            };
            // Measured on the H100, where a wave of `rows_split_f32_sum` is 528 blocks: 128 rows
            // of 2 MiB, split 91.4 µs, a block each 104.2; 512 rows of 512 KiB, split 91.8, a
            // block each 89.7. The reproducible twins keep their line at a wave of `RowsBlock`.
            let split_below = match family {
                Family::Plain => (split_wave / 2).max(1),
                Family::Reproducible => resident_blocks,
            };
            let split = family.blocks_per_row(
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
                (None, Family::Plain) => {
                    warp_per_row(op, average_bytes, count, warps_of(ShapeKernel::RowsWarp))
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    const F32: Sizes = Sizes {
        element: 4,
        accumulator: 4,
    };
    fn h100(kernel: ShapeKernel) -> u64 {
        132 * u64::from(2048 / kernel.block())
    }

    #[test]
    fn a_warp_per_row_by_operator() {
        use OpKind::*;
        let warps = 132 * 64;
        for op in OpKind::ALL {
            let limit = match op {
                Sum | Mean => WARP_ROW_BYTES,
                Min | Max => EXTREME_WARP_ROW_BYTES,
                ArgMin | ArgMax => ARG_WARP_ROW_BYTES,
            };
            for bytes in [4096, 4097, 8192, 8193, 65536, 65537] {
                let many = warp_per_row(op, bytes, warps, warps);
                assert_eq!(many, bytes <= limit, "{op:?}, rows of {bytes} bytes");
            }
        }
        // Past 8 KiB, the arg operators need a quarter of the warps in rows.
        for op in [ArgMin, ArgMax] {
            assert!(warp_per_row(op, 16384, warps / 4, warps));
            assert!(!warp_per_row(op, 16384, warps / 4 - 1, warps));
            assert!(warp_per_row(op, 8192, 1, warps));
        }
    }

    #[test]
    fn chooses_the_kernel_by_shape() {
        // Sums: 8 vectors a lane (`lane_vectors`); max: 4; the arg operators: 16 (128 for
        // the 16-bit floats).
        let short = plan_shape(&Shape::rows(65536, 512), OpKind::Sum, F32, h100);
        assert_eq!((short.kernel, short.split), (ShapeKernel::RowsWarp, 16));
        let short_max = plan_shape(&Shape::rows(65536, 512), OpKind::Max, F32, h100);
        assert_eq!(
            (short_max.kernel, short_max.split),
            (ShapeKernel::RowsWarp, 32)
        );
        let short_argmax = plan_shape(&Shape::rows(65536, 512), OpKind::ArgMax, F32, h100);
        assert_eq!(short_argmax.split, 8);
        let bf16 = Sizes {
            element: 2,
            accumulator: 16,
        };
        let vocabulary_like = plan_shape(&Shape::rows(32768, 4096), OpKind::ArgMax, bf16, h100);
        assert_eq!(
            (vocabulary_like.kernel, vocabulary_like.split),
            (ShapeKernel::RowsWarp, 4)
        );
        let tiny = plan_shape(&Shape::rows(1 << 21, 32), OpKind::Sum, F32, h100);
        assert_eq!((tiny.kernel, tiny.split), (ShapeKernel::RowsWarp, 1));
        let tiny_max = plan_shape(&Shape::rows(1 << 21, 32), OpKind::Max, F32, h100);
        assert_eq!(
            (tiny_max.kernel, tiny_max.split),
            (ShapeKernel::RowsWarp, 2)
        );
        // Few rows of at most 64 KiB (`SPLIT_ROW_BYTES`): a block each; longer ones are cut.
        let few_short = plan_shape(&Shape::rows(64, 512), OpKind::Sum, F32, h100);
        assert_eq!(
            (few_short.kernel, few_short.split),
            (ShapeKernel::RowsBlock, 1)
        );
        let few_64k = plan_shape(&Shape::rows(16, 16384), OpKind::Sum, F32, h100);
        assert_eq!(few_64k.kernel, ShapeKernel::RowsBlock);
        let few_longer = plan_shape(&Shape::rows(64, 32768), OpKind::Sum, F32, h100);
        assert_eq!(
            (few_longer.kernel, few_longer.split),
            (ShapeKernel::RowsSplit, 8)
        );
        let up_to_4k = plan_shape(&Shape::rows(32768, 1024), OpKind::Sum, F32, h100);
        assert_eq!(up_to_4k.kernel, ShapeKernel::RowsWarp);
        let rows_of_8k = plan_shape(&Shape::rows(32768, 2048), OpKind::Sum, F32, h100);
        assert_eq!(rows_of_8k.kernel, ShapeKernel::RowsBlock);
        // Max and argmax keep a warp per row further (`warp_per_row`).
        let kernel = |op, rows, cols| plan_shape(&Shape::rows(rows, cols), op, F32, h100).kernel;
        assert_eq!(kernel(OpKind::Max, 32768, 2048), ShapeKernel::RowsWarp);
        assert_eq!(kernel(OpKind::Max, 16384, 4096), ShapeKernel::RowsBlock);
        assert_eq!(kernel(OpKind::ArgMax, 16384, 4096), ShapeKernel::RowsWarp);
        assert_eq!(kernel(OpKind::ArgMin, 4096, 16384), ShapeKernel::RowsWarp);
        assert_eq!(kernel(OpKind::ArgMax, 1024, 16384), ShapeKernel::RowsBlock);
        assert_eq!(kernel(OpKind::ArgMax, 2048, 32768), ShapeKernel::RowsBlock);
        let offsets: Vec<usize> = (0..=1000).map(|i| i * 2048).collect();
        let segments = |op| plan_shape(&Shape::segments(&offsets), op, F32, h100).kernel;
        assert_eq!(segments(OpKind::Sum), ShapeKernel::RowsBlock);
        assert_eq!(segments(OpKind::Min), ShapeKernel::RowsWarp);
        let many_long = plan_shape(&Shape::rows(8192, 8192), OpKind::Sum, F32, h100);
        assert_eq!(
            (many_long.kernel, many_long.launch.grid),
            (ShapeKernel::RowsBlock, 8192)
        );
        let few_long = plan_shape(&Shape::rows(16, 1 << 22), OpKind::Sum, F32, h100);
        assert_eq!(few_long.kernel, ShapeKernel::RowsSplit);
        assert_eq!(few_long.launch.grid as usize, 16 * few_long.split);
        assert_eq!(few_long.counters, 16);
        let columns = plan_shape(&Shape::columns(8192, 8192), OpKind::Sum, F32, h100);
        assert_eq!(columns.kernel, ShapeKernel::Columns);
        // Tiles of 64 groups × 4 columns (one f32 vector each): 256 columns.
        assert_eq!(columns.counters, 32);
        assert!(columns.split > 1 && columns.partials == columns.split * 8192);
        let offsets = [0, 10, 10, 500];
        assert_eq!(
            plan_shape(&Shape::segments(&offsets), OpKind::Sum, F32, h100).kernel,
            ShapeKernel::RowsWarp
        );
    }

    #[test]
    fn columns_are_planned_by_the_measured_rules() {
        // The H100's wave of `columns_f32_sum` (62 registers: 4 blocks of 256 per SM).
        let wave = |_| 528;
        let plan = |rows, cols, sizes| {
            let plan = plan_shape(&Shape::columns(rows, cols), OpKind::Sum, sizes, wave);
            (plan.counters, plan.split)
        };
        let bf16 = Sizes {
            element: 2,
            accumulator: 4,
        };
        // (tiles, bands): four runs per band within one wave.
        assert_eq!(plan(4096, 4096, F32), (16, 32));
        assert_eq!(plan(1 << 20, 8, F32), (1, 256));
        assert_eq!(plan(16384, 1024, F32), (8, 64)); // tiles of 32 groups (√(8 · 256))
        assert_eq!(plan(65536, 256, F32), (4, 128)); // tiles of 16 groups (√(8 · 64))
        assert_eq!(plan(262144, 64, F32), (2, 256));
        // Two runs per band where four would leave under a block per SM.
        assert_eq!(plan(2048, 2048, F32), (8, 32));
        assert_eq!(plan(1 << 20, 2, F32), (1, 256));
        // More runs per band where four would pass one wave.
        assert_eq!(plan(8192, 8192, F32), (32, 16));
        assert_eq!(plan(8192, 8192, bf16), (16, 32));
    }

    #[test]
    fn splits_rows_by_the_measured_rules() {
        let bf16 = Sizes {
            element: 2,
            accumulator: 8,
        };
        // 132 SMs × 2 blocks of 512 threads (the bf16 argmax's registers; 4 for an f32 sum).
        let resident = |_| 264;
        let split = |rows, cols, sizes| {
            plan_shape(&Shape::rows(rows, cols), OpKind::Sum, sizes, resident).split
        };
        // One vocabulary row: a vector per thread (128256 / 4096 elements → 32 blocks), not
        // the 264 blocks of a wave.
        assert_eq!(split(1, 128256, bf16), 32);
        assert_eq!(split(8, 128256, bf16), 32);
        // 64 rows: one wave, 4 blocks each (each thread about 8 vectors: no more tiles).
        assert_eq!(split(64, 128256, bf16), 4);
        // 16 rows of 2^22 f32: tiles of 8 vectors per thread (16384 elements), 256 per row.
        assert_eq!(split(16, 1 << 22, F32), 256);
        // Rows shorter than one vector per thread of one block: one block each, `RowsBlock`.
        assert_eq!(split(4, 1000, F32), 1);
        let short = plan_shape(&Shape::rows(4, 1000), OpKind::Sum, F32, resident);
        assert_eq!(short.kernel, ShapeKernel::RowsBlock);
    }

    #[test]
    fn the_reproducible_twins_give_each_lane_more_of_a_row() {
        let sizes = crate::plan::reproducible::sizes(crate::element::DType::F32);
        let block = |_| 256;
        // 132 SMs × 8 blocks of 256 threads.
        let resident = |_| 132 * 8;
        let plan = |shape: &Shape<'_>| {
            plan_reproducible(shape, sizes, block, resident, None).expect("no forced kernel")
        };
        // 512 f32: 4 lanes of 32 vectors (the plain kernel gives 16 lanes of 8), 8 rows a
        // warp.
        let short = plan(&Shape::rows(65536, 512));
        assert_eq!((short.kernel, short.split), (ShapeKernel::RowsWarp, 4));
        assert_eq!(short.launch.grid, 65536 / 64);
        assert_eq!((short.launch.block, short.launch.shared_bytes), (256, 0));
        // 32 KiB rows: still a warp each (the plain kernels take a block of 256).
        let long = plan(&Shape::rows(8192, 8192));
        assert_eq!((long.kernel, long.split), (ShapeKernel::RowsWarp, 32));
        // 256 KiB rows, fewer than the GPU holds warps: a block each, one state per warp of
        // shared memory.
        let longer = plan(&Shape::rows(2000, 65536));
        assert_eq!(longer.kernel, ShapeKernel::RowsBlock);
        assert_eq!(longer.launch.shared_bytes, 8 * 28);
        // More rows than warps: a warp each, however long.
        assert_eq!(
            plan(&Shape::rows(9000, 65536)).kernel,
            ShapeKernel::RowsWarp
        );
        // Few long rows: 66 blocks per row, a state of scratch each.
        let few = plan(&Shape::rows(16, 1 << 22));
        assert_eq!((few.kernel, few.split), (ShapeKernel::RowsSplit, 66));
        assert_eq!((few.partials, few.counters), (16 * 66, 16));
        // Few short rows: as many blocks as give each thread four batches.
        let few_short = plan(&Shape::rows(4, 40_000));
        assert_eq!(
            (few_short.kernel, few_short.split),
            (ShapeKernel::RowsSplit, 3)
        );
        // Columns: tiles of 64 groups of 4 (`MAX_TILE_GROUPS`), half a state per thread of
        // shared memory where a block walks several rows at once (4 here).
        let wide = plan(&Shape::columns(8192, 8192));
        assert_eq!((wide.kernel, wide.counters), (ShapeKernel::Columns, 32));
        assert_eq!(wide.partials, wide.split * 8192);
        assert_eq!(wide.launch.shared_bytes, 128 * 28 + 4);
        let narrow = plan(&Shape::columns(100_000, 24));
        assert_eq!(narrow.launch.shared_bytes, 128 * 28 + 4);
        // Segments: by their average length.
        let offsets = [0, 10, 10, 500];
        assert_eq!(
            plan(&Shape::segments(&offsets)).kernel,
            ShapeKernel::RowsWarp
        );
        let offsets = [0, 100_000, 200_000];
        assert_eq!(
            plan(&Shape::segments(&offsets)).kernel,
            ShapeKernel::RowsBlock
        );
        // A forced kernel that cannot reduce the shape.
        let forced = Some(ShapeKernel::RowsSplit);
        assert!(plan_reproducible(&Shape::columns(4, 4), sizes, block, resident, forced).is_none());
        assert_eq!(
            Family::Reproducible.entry(ShapeKernel::RowsSplit, "f64", "sum"),
            "reproducible_rows_split_f64_sum"
        );
    }
}
