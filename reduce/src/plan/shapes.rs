//! Which kernel reduces a [`Shape`] and how it is launched: a warp (or a group of its lanes)
//! per short row, a block per long row, several blocks per row for few long rows, bands of
//! rows for columns, by the shape and the GPU's occupancy.

use super::launch::{LaunchShape, MAX_GRID, Sizes, shared_bytes_of};
use crate::shape::Shape;
use kernels_gpu::launch::WARP_SIZE;
use kernels_gpu::shapes::columns;

/// The kernels that reduce shapes, as `kernels_gpu::shapes` declares them (block, shared
/// memory, grid).
pub use kernels_gpu::shapes::ShapeKernel;

/// Rows of at most this many bytes go to a warp (or a group of its lanes) each; longer rows
/// get a block or more. On the H100 a warp per row still beats a block per row at 16 KiB
/// (4096 `f32`: 2.94 against 2.53 TB/s) and loses at 32 KiB (2.94 against 3.06 TB/s).
pub const WARP_ROW_BYTES: usize = 16 * 1024;

/// Rows each thread of a column reduction walks at least: two groups of loads, so that the
/// partials its band writes and the last block reads back stay a small part of the traffic.
pub const MIN_ROWS_PER_THREAD: usize = 16;

/// Bands each thread of a column tile's last block adds up at most (four rounds of eight
/// loads in flight): more bands would make that one block the kernel's tail.
pub const MAX_BANDS_PER_THREAD: usize = 32;

/// Lanes that share one row of `row_bytes` bytes in `rows_warp`: a power of two from 1 to 32,
/// so that each lane has about one group of vector loads (`VECTORS_IN_FLIGHT`) to issue.
///
/// ```
/// use reduce_rs::plan::shapes::lanes_per_row;
/// assert_eq!(lanes_per_row(128 * 4), 8); // 128 f32: 8 lanes of 4 vectors, 4 rows per warp
/// assert_eq!(lanes_per_row(4096 * 4), 32); // a whole warp
/// assert_eq!(lanes_per_row(12), 1);
/// ```
pub fn lanes_per_row(row_bytes: usize) -> usize {
    let vectors = row_bytes.div_ceil(16);
    vectors
        .div_ceil(kernels_gpu::launch::VECTORS_IN_FLIGHT)
        .max(1)
        .next_power_of_two()
        .min(WARP_SIZE as usize)
}

/// One launch of a shape kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapePlan {
    /// The kernel that runs.
    pub kernel: ShapeKernel,
    /// Its launch shape.
    pub launch: LaunchShape,
    /// Blocks per row (`RowsSplit`), bands of rows (`Columns`), lanes per row (`RowsWarp`);
    /// 1 for `RowsBlock`.
    pub split: usize,
    /// Accumulators of scratch the launch needs, and ticket counters.
    pub partials: usize,
    /// Ticket counters (`u32`): one per row (`RowsSplit`) or tile of columns (`Columns`).
    pub counters: usize,
}

/// Chooses the kernel and launch for `shape` over elements of `sizes`, on a GPU that runs
/// `resident(kernel)` blocks of a kernel at once.
pub fn plan_shape(
    shape: &Shape<'_>,
    sizes: Sizes,
    resident: impl Fn(ShapeKernel) -> u64,
) -> ShapePlan {
    plan_with(shape, sizes, resident, None)
}

/// The launch of `kernel` for `shape`, if that kernel can reduce it (the benchmark times every
/// kernel a shape could use): the row kernels take rows and segments (`RowsSplit` only rows of
/// equal length), `Columns` takes columns.
pub fn plan_for(
    kernel: ShapeKernel,
    shape: &Shape<'_>,
    sizes: Sizes,
    resident: impl Fn(ShapeKernel) -> u64,
) -> Option<ShapePlan> {
    let fits = matches!(
        (kernel, shape),
        (ShapeKernel::Columns, Shape::Columns { .. })
            | (
                ShapeKernel::RowsWarp | ShapeKernel::RowsBlock,
                Shape::Rows { .. } | Shape::Segments(_)
            )
            | (ShapeKernel::RowsSplit, Shape::Rows { .. })
    );
    fits.then(|| plan_with(shape, sizes, resident, Some(kernel)))
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

fn plan_with(
    shape: &Shape<'_>,
    sizes: Sizes,
    resident: impl Fn(ShapeKernel) -> u64,
    forced: Option<ShapeKernel>,
) -> ShapePlan {
    plan_layout(Layout::of(shape), sizes, resident, forced)
}

/// The launch for `layout` (see [`plan_shape`]); `forced` names the kernel instead of choosing.
pub(crate) fn plan_layout(
    layout: Layout,
    sizes: Sizes,
    resident: impl Fn(ShapeKernel) -> u64,
    forced: Option<ShapeKernel>,
) -> ShapePlan {
    let plan = |kernel: ShapeKernel, grid: u64, split: usize, partials: usize, counters: usize| {
        let block = kernel.block();
        let tile_accumulators = match layout {
            Layout::Columns { cols, .. } => {
                columns::shared_accumulators(cols, sizes.element, block)
            }
            _ => 0,
        };
        let shared_bytes = shared_bytes_of(kernel.info().shared, block, sizes, tile_accumulators);
        ShapePlan {
            kernel,
            launch: LaunchShape {
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
        let lanes = lanes_per_row(row_bytes);
        let rows_per_block =
            (kernel.block() as usize / WARP_SIZE as usize) * (WARP_SIZE as usize / lanes);
        let grid = (rows.div_ceil(rows_per_block) as u64).min(resident(kernel).max(1) * 4);
        plan(kernel, grid, lanes, 0, 0)
    };
    match layout {
        Layout::Columns { rows, cols } => {
            let kernel = ShapeKernel::Columns;
            let block = kernel.block();
            let groups = columns::groups_per_tile(cols, sizes.element, block);
            let tiles = cols
                .div_ceil(kernels_gpu::launch::elements_per_vector(sizes.element))
                .div_ceil(groups)
                .max(1);
            let rows_per_step = block as usize / groups;
            // As many bands as fill the GPU in one wave; each thread walks at least
            // `MIN_ROWS_PER_THREAD` rows of its band, and the tile's last block adds up at
            // most `MAX_BANDS_PER_THREAD` bands per thread.
            let split = (resident(kernel) as usize / tiles)
                .min(rows / (rows_per_step * MIN_ROWS_PER_THREAD))
                .min(rows_per_step * MAX_BANDS_PER_THREAD)
                .max(1);
            plan(kernel, (tiles * split) as u64, split, split * cols, tiles)
        }
        Layout::Rows { rows, cols } => {
            let row_bytes = cols * sizes.element;
            let resident_blocks = resident(ShapeKernel::RowsBlock).max(1) as usize;
            // Fewer rows than the GPU holds blocks: cut them over several blocks each (short
            // rows get one block, which still beats one warp). Otherwise by row length.
            let choice = forced.unwrap_or(if rows < resident_blocks {
                ShapeKernel::RowsSplit
            } else if row_bytes <= WARP_ROW_BYTES {
                ShapeKernel::RowsWarp
            } else {
                ShapeKernel::RowsBlock
            });
            if choice == ShapeKernel::RowsWarp {
                rows_warp(rows, row_bytes)
            } else {
                if choice == ShapeKernel::RowsBlock {
                    plan(ShapeKernel::RowsBlock, rows as u64, 1, 0, 0)
                } else {
                    let kernel = ShapeKernel::RowsSplit;
                    // Each block at least one group of vector loads per thread.
                    let per_block = kernel.block() as usize
                        * kernels_gpu::launch::VECTORS_IN_FLIGHT
                        * kernels_gpu::launch::elements_per_vector(sizes.element);
                    // As many blocks per row as fill the GPU in one wave (a second, partial wave
                    // would cost as much as the first).
                    let split = (resident(kernel) / rows.max(1) as u64)
                        .max(1)
                        .min(cols.div_ceil(per_block).max(1) as u64)
                        as usize;
                    plan(kernel, (rows * split) as u64, split, rows * split, rows)
                }
            }
        }
        Layout::Segments { count, total } => {
            let average_bytes = total.div_ceil(count.max(1)) * sizes.element;
            let warp = match forced {
                Some(kernel) => kernel == ShapeKernel::RowsWarp,
                None => average_bytes <= WARP_ROW_BYTES,
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
    fn chooses_the_kernel_by_shape() {
        let short = plan_shape(&Shape::rows(65536, 512), F32, h100);
        assert_eq!((short.kernel, short.split), (ShapeKernel::RowsWarp, 32));
        let tiny = plan_shape(&Shape::rows(1 << 21, 32), F32, h100);
        assert_eq!((tiny.kernel, tiny.split), (ShapeKernel::RowsWarp, 2));
        let few_short = plan_shape(&Shape::rows(64, 512), F32, h100);
        assert_eq!(few_short.kernel, ShapeKernel::RowsSplit);
        let up_to_16k = plan_shape(&Shape::rows(32768, 4096), F32, h100);
        assert_eq!(up_to_16k.kernel, ShapeKernel::RowsWarp);
        let many_long = plan_shape(&Shape::rows(8192, 8192), F32, h100);
        assert_eq!(
            (many_long.kernel, many_long.launch.grid),
            (ShapeKernel::RowsBlock, 8192)
        );
        let few_long = plan_shape(&Shape::rows(16, 1 << 22), F32, h100);
        assert_eq!(few_long.kernel, ShapeKernel::RowsSplit);
        assert_eq!(few_long.launch.grid as usize, 16 * few_long.split);
        assert_eq!(few_long.counters, 16);
        let columns = plan_shape(&Shape::columns(8192, 8192), F32, h100);
        assert_eq!(columns.kernel, ShapeKernel::Columns);
        // Tiles of 256 threads × 4 columns (one f32 vector each).
        assert_eq!(columns.counters, 8);
        assert!(columns.split > 1 && columns.partials == columns.split * 8192);
        let offsets = [0, 10, 10, 500];
        assert_eq!(
            plan_shape(&Shape::segments(&offsets), F32, h100).kernel,
            ShapeKernel::RowsWarp
        );
    }
}
