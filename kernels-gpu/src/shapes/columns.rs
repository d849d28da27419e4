//! # Columns: one result per column of a row-major matrix
//!
//! Reduces every column of a `rows × cols` row-major matrix. Each thread owns a few
//! neighbouring columns — as many as one 16-byte vector holds (4 `f32`, 8 `bf16`, 2 `f64`) —
//! and walks down them, loading one vector per row, several rows in flight: a warp reads 512
//! consecutive bytes of a row per load and a block 4 KiB, long runs the memory serves well,
//! and every lane of a vector is added into its own column's running value. No block
//! reduction is needed: every thread owns its columns.
//!
//! Tall matrices are cut into `split` bands of rows, one block each per tile of columns; the
//! bands of a tile meet as v8's blocks meet: partials, fence, a ticket per tile, and the tile's
//! last block adds the bands up.
//!
//! When the rows do not start on 16-byte boundaries (a column count that is no multiple of a
//! vector's lanes, or an input that starts mid-vector), the same tile is read with scalar
//! loads instead: thread `t` then owns columns `t, t + BLOCK, …` of the tile, still whole
//! 128-byte lines per warp.
//!
//! ```text
//! tile t = columns [t·W, (t+1)·W), W = BLOCK·L (L lanes per vector);  band k = rows of band k
//! block (t, k), thread c:  vector of columns t·W + c·L … + L-1 in every row of band k
//!                          → partials[k·cols + column], L of them
//!                          barrier; thread 0: fence, ticket = retired[t]++
//! last block of tile t:    each column's partials over the bands  →  output[column]
//! ```
//!
//! # Thread Mapping
//! Block `b` is band `b % split` of tile `b / split`. Vector path: thread `c` owns columns
//! `tile·W + c·L + k`, k < L. Scalar path and the final sum over bands: thread `c` owns columns
//! `tile·W + k·BLOCK + c`, k < L.
//!
//! # Output contract
//! `output[c]` = the finished result of column `c` over all rows (`EMPTY` when there are no
//! rows); the arg operators' index is the row. Scratch: `partials` holds `split·cols`
//! accumulators, `retired` one counter per tile (`ceil(cols / W)`), 0 before the launch and set
//! back to 0.

use crate::device::{GlobalSlice, GlobalSliceMut, block_idx_x, require_block_dim, shared_array, sync_threads, thread_fence, thread_idx_x};
use crate::element::{Element, Vector16};
use crate::launch::elements_per_vector;
use crate::ops::Reduction;
use crate::params::Scratch;

/// Rows each thread loads before combining them.
const LOADS_IN_FLIGHT: usize = 8;

/// The most lanes a 16-byte vector has (8 of a 16-bit type): the size of a thread's array of
/// running values, of which the first `L` are used (the rest are never touched, and vanish).
const MAX_LANES: usize = 8;

pub fn reduce_columns<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    cols: usize,
    rows: usize,
    split: usize,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    let lanes = elements_per_vector(size_of::<T>());
    let tid = thread_idx_x() as usize;
    let ticket = shared_array![u32; 1];
    // At least one piece (the host never passes 0; the kernel must not divide by it either).
    let split = split.max(1);
    let (tile, band) = (block_idx_x() as usize / split, block_idx_x() as usize % split);
    let tile_start = tile * BLOCK as usize * lanes;
    let (first_row, end_row) = (band * rows / split, (band + 1) * rows / split);

    let (head, vectors, _) = input.split_vectors();
    if head == 0 && cols % lanes == 0 {
        // Every row starts on a 16-byte boundary: one vector of `lanes` columns per row.
        let first_column = tile_start + tid * lanes;
        if first_column < cols {
            let per_row = cols / lanes;
            let column_vector = first_column / lanes;
            let mut running = [R::START; MAX_LANES];
            let mut row = first_row;
            while row + LOADS_IN_FLIGHT <= end_row {
                let loaded = vectors.load_strided::<LOADS_IN_FLIGHT>(row * per_row + column_vector, per_row);
                T::Vector16::for_lanes(|k| {
                    // A constant trip count: unrolled, every value in a register.
                    let mut group = R::IDENTITY;
                    let mut j = 0;
                    while j < LOADS_IN_FLIGHT {
                        group = R::combine(group, R::lift(loaded[j].lanes()[k], row + j));
                        j += 1;
                    }
                    running[k] = R::accumulate(running[k], group);
                });
                row += LOADS_IN_FLIGHT;
            }
            while row < end_row {
                let vector = vectors.load(row * per_row + column_vector);
                T::Vector16::for_lanes(|k| running[k] = R::accumulate(running[k], R::lift(vector.lanes()[k], row)));
                row += 1;
            }
            T::Vector16::for_lanes(|k| scratch.partials.store(band * cols + first_column + k, R::settle(running[k])));
        }
    } else {
        // Scalar loads, `lanes` columns one after the other, `BLOCK` apart.
        for k in 0..lanes {
            let column = tile_start + k * BLOCK as usize + tid;
            if column < cols {
                let settled = R::settle(walk_column::<T, R>(&input, cols, column, first_row, end_row));
                scratch.partials.store(band * cols + column, settled);
            }
        }
    }
    sync_threads();
    let retired = scratch.retired.at(tile);
    if tid == 0 {
        // Release: the barrier orders every thread's partial before this fence, which makes
        // them visible device-wide before the ticket is drawn (fences are cumulative).
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) as usize != split - 1 {
        return;
    }

    // The tile's last band: every band's partials were fenced before its ticket.
    thread_fence();
    for k in 0..lanes {
        let column = tile_start + k * BLOCK as usize + tid;
        if column < cols {
            let mut acc = R::IDENTITY;
            for band in 0..split {
                acc = R::combine(acc, scratch.partials.load(band * cols + column));
            }
            output.store(column, if rows == 0 { R::EMPTY } else { R::finish(acc, rows) });
        }
    }
    if tid == 0 {
        retired.reset();
    }
}

/// Column `column` over rows `first_row..end_row`, `LOADS_IN_FLIGHT` rows at a time.
#[inline(always)]
fn walk_column<T: Element, R: Reduction<T>>(
    input: &GlobalSlice<T>,
    cols: usize,
    column: usize,
    first_row: usize,
    end_row: usize,
) -> R::Running {
    let mut running = R::START;
    let mut row = first_row;
    while row + LOADS_IN_FLIGHT <= end_row {
        let loaded = input.load_strided::<LOADS_IN_FLIGHT>(row * cols + column, cols);
        // A constant trip count: unrolled, every value in a register.
        let mut group = R::IDENTITY;
        let mut k = 0;
        while k < LOADS_IN_FLIGHT {
            group = R::combine(group, R::lift(loaded[k], row + k));
            k += 1;
        }
        running = R::accumulate(running, group);
        row += LOADS_IN_FLIGHT;
    }
    while row < end_row {
        running = R::accumulate(running, R::lift(input.load(row * cols + column), row));
        row += 1;
    }
    running
}
