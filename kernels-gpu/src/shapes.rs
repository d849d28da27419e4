//! The library's kernels for reductions of a shape: every row of a matrix, every column, every
//! segment of a CSR-style list of offsets. They build on v8 (its vectorised per-thread loop, its
//! shuffles, its last-block hand-over), one file each, declared once below like the versions.
//!
//! Which one runs is the host's choice, by shape, as fast libraries do:
//!
//! | kernel | for | each |
//! |---|---|---|
//! | [`rows_warp`] | short rows (4 KiB for sums, 8 for min and max and argmax; up to 16 for the argmax of 4- and 8-byte values and 64 for the 16-bit floats' where rows are many: from 32 KiB, at least one a resident warp) | warp reduces one row |
//! | [`rows_block`] | long rows, many of them; few rows up to 64 KiB | block reduces one row |
//! | [`rows_split`] | long rows, few of them | row is cut over several blocks |
//! | [`columns`] | columns of a row-major matrix | thread walks down one column |
//! | [`columns_narrow`] | 1 to 32 columns (powers of two, 3, 6, 12, 24, …) | thread reads the matrix flat, a column per lane |
//!
//! The row kernels read their rows from [`crate::params::Segments`]: rows of equal length, or
//! CSR offsets (segments, possibly empty). Each but `columns_narrow` has a binned twin for the
//! reproducible mode ([`crate::reproducible::rows`], [`crate::reproducible::columns`]): the
//! same mapping, each row's result the bits of that row's reproducible sum alone.

use crate::policy::{ShapeGrid, Shared};

// Blocks: 256 threads for a block per row, 512 for a row split over blocks. Measured on the
// H100 (`reduce-rs bench --shapes`, `shapes/PROFILES.md`): a block of 256 per row of 8 or 16
// KiB reads at the read-only kernel's speed (f32 max of 32768 rows × 4096: 173 µs, 235 with
// 512 threads), and rows of 32 KiB lose 1 % with it. The split rows keep 512 (not measured at
// 256 since their split rule changed).
declare_shapes! {
    /// A warp (or a group of its lanes) per row: short rows and segments.
    RowsWarp = rows_warp: rows_warp::reduce_rows_warp {
        family: segments, block: Fixed(256), shared: Shared::Nothing, grid: ShapeGrid::LaneGroupsPerRow,
    },
    /// A block per row: long rows, enough of them to fill the GPU.
    RowsBlock = rows_block: rows_block::reduce_rows_block {
        family: segments, block: Fixed(256), shared: Shared::PerWarp, grid: ShapeGrid::BlockPerRow,
    },
    /// Several blocks per row, the last to finish combining them: a few long rows.
    RowsSplit = rows_split: rows_split::reduce_rows_split {
        family: segments, block: Fixed(512), shared: Shared::PerWarpAndTicket, grid: ShapeGrid::BlocksPerRow,
    },
    /// A thread per vector of columns, tall matrices cut into bands of rows.
    Columns = columns: columns::reduce_columns {
        family: columns, block: Fixed(256), shared: Shared::ColumnTileAndTicket, grid: ShapeGrid::ColumnTilesAndBands,
    },
    /// A handful of columns read as the flat array they are, a column per lane.
    ColumnsNarrow = columns_narrow: columns_narrow::reduce_columns_narrow {
        family: columns, block: Fixed(256), shared: Shared::PerThreadAndTicket, grid: ShapeGrid::FlatVectors,
    },
}

impl ShapeKernel {
    /// The entry points' prefix (`rows_warp`).
    pub const fn name(self) -> &'static str {
        self.info().name
    }

    /// Threads per block: the kernels are built for this size.
    pub const fn block(self) -> u32 {
        self.info().block
    }
}
