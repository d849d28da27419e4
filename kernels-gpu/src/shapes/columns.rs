//! # Columns: one result per column of a row-major matrix
//!
//! Reduces every column of a `rows × cols` row-major matrix. Neighbouring threads take
//! neighbouring columns, so a warp reads 32 consecutive elements of a row at a time — whole
//! cache lines — and each thread walks down its column, several rows in flight. Tall matrices
//! are cut into `split` bands of rows, one block each per tile of columns; the bands of a tile
//! meet as v8's blocks meet: partials, fence, a ticket per tile, and the tile's last block adds
//! the bands up. No block reduction is needed: every thread owns its column.
//!
//! ```text
//! tile t = columns [t·BLOCK, (t+1)·BLOCK);  band k = rows [k·rows/split, (k+1)·rows/split)
//! block (t, k), thread c:   column t·BLOCK + c over band k  →  partials[k·cols + column]
//!                           barrier; thread 0: fence, ticket = retired[t]++
//! last block of tile t:     thread c adds partials[·][column] over the bands  →  output[column]
//! ```
//!
//! # Thread Mapping
//! Block `b` is band `b % split` of tile `b / split`; thread `c` owns column
//! `(b / split)·BLOCK + c`, reading rows of its band, `LOADS_IN_FLIGHT` at a time.
//!
//! # Output contract
//! `output[c]` = the finished result of column `c` over all rows (`EMPTY` when there are no
//! rows); the arg operators' index is the row. Scratch: `partials` holds `split·cols`
//! accumulators, `retired` one counter per tile, 0 before the launch and set back to 0.

use crate::device::{GlobalSlice, GlobalSliceMut, block_idx_x, require_block_dim, shared_array, sync_threads, thread_fence, thread_idx_x};
use crate::element::Element;
use crate::ops::Reduction;
use crate::params::Scratch;

/// Rows each thread loads before combining them.
const LOADS_IN_FLIGHT: usize = 8;

pub fn reduce_columns<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    cols: usize,
    rows: usize,
    split: usize,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x() as usize;
    let ticket = shared_array![u32; 1];
    // At least one piece (the host never passes 0; the kernel must not divide by it either).
    let split = split.max(1);
    let (tile, band) = (block_idx_x() as usize / split, block_idx_x() as usize % split);
    let column = tile * BLOCK as usize + tid;
    let (first_row, end_row) = (band * rows / split, (band + 1) * rows / split);

    if column < cols {
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
        scratch.partials.store(band * cols + column, R::settle(running));
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
    if column < cols {
        let mut acc = R::IDENTITY;
        for k in 0..split {
            acc = R::combine(acc, scratch.partials.load(k * cols + column));
        }
        output.store(column, if rows == 0 { R::EMPTY } else { R::finish(acc, rows) });
    }
    if tid == 0 {
        retired.reset();
    }
}
