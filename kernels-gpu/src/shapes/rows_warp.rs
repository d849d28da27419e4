//! # Rows, a warp each: short rows
//!
//! Reduces every row (segment) of the input to one result, for rows short enough that one warp
//! reads a whole row with a few loads per lane. Each warp of the block takes one row at a time;
//! its 32 lanes walk the row with v8's vectorised loop (16-byte loads, head and tail scalars
//! where the row does not start on a 16-byte boundary) and combine with shuffles, with no
//! shared memory and no barrier. Lane 0 writes the row's result.
//!
//! ```text
//! block b, warp w:   rows r = b*WARPS + w, then r + gridDim*WARPS, …
//! lane l of the warp: vectors l, l+32, l+64, … of row r  →  shuffles  →  output[r]
//! ```
//!
//! # Thread Mapping
//! Warp `w` of block `b` reduces rows `b·W + w + k·gridDim·W` (W = warps per block).
//!
//! # Output contract
//! `output[r]` = the finished result of row `r` (the operator's `EMPTY` for an empty row).
//! No scratch memory.

use crate::device::{GlobalSlice, GlobalSliceMut, WARP_SIZE, block_idx_x, grid_dim_x, require_block_dim, thread_idx_x};
use crate::element::Element;
use crate::ops::Reduction;
use crate::params::{Scratch, Segments};
use crate::versions::reduce_v7_warp_shuffle::warp_reduce_shuffle;
use crate::versions::reduce_v8_single_pass::thread_reduce_vectorized;

pub fn reduce_rows_warp<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    rows: Segments,
    _split: usize,
    _scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    let warps = (BLOCK / WARP_SIZE) as usize;
    let (warp, lane) = ((thread_idx_x() / WARP_SIZE) as usize, thread_idx_x() % WARP_SIZE);
    let mut row = block_idx_x() as usize * warps + warp;
    let stride = grid_dim_x() as usize * warps;
    while row < rows.count() {
        let (start, end) = rows.bounds(row);
        let values = input.sub(start, end - start);
        let acc = thread_reduce_vectorized::<T, R>(&values, 0, lane as usize, WARP_SIZE as usize);
        let total = warp_reduce_shuffle::<T, R>(acc, WARP_SIZE);
        if lane == 0 {
            let result = if values.is_empty() { R::EMPTY } else { R::finish(total, values.len()) };
            output.store(row, result);
        }
        row += stride;
    }
}
