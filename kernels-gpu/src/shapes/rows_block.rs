//! # Rows, a block each: long rows, many of them
//!
//! Reduces every row (segment) to one result, for rows long enough to keep a whole block busy
//! and numerous enough to fill the GPU with blocks, and for a few rows too short to be worth
//! cutting over several blocks (`rows_split`'s hand-over costs more than it saves up to 64
//! KiB). Each block takes one row at a time and
//! reduces it as v8 reduces a whole input — 16-byte loads, several in flight per thread, then
//! shuffles within each warp and once more across the warps — and thread 0 writes the row's
//! result. No block hands anything to another, so there is no fence, ticket or second pass.
//!
//! Its threads read few groups of loads each (a 16 KiB row: one), so the arg operators take
//! every type's groups by their best key and search the winner's lane at once
//! (`thread_reduce_vectorized`'s `BY_BEST_KEY`), as a warp per row does, where v8 and a split
//! row, whose threads walk many groups, keep the tree for all but the 16-bit floats: the `f32`
//! argmax of 32768 rows of 16 KiB took 196.8 µs by the tree and takes 173.7 (H100,
//! `docs/runs/2026-11-28/`).
//!
//! ```text
//! block b:  rows b, b + gridDim, …      thread t: vectors t, t+BLOCK, … of the row
//!           → warp shuffles → one value per warp in shared memory → warp 0 → output[row]
//! ```
//!
//! # Thread Mapping
//! Block `b` reduces rows `b + k·gridDim`; thread `t` reads vectors `t + j·BLOCK` of each.
//!
//! # Output contract
//! `output[r]` = the finished result of row `r` (the operator's `EMPTY` for an empty row).
//! No scratch memory. Shared memory: one accumulator per warp.

use crate::device::{
    GlobalSlice, GlobalSliceMut, WARP_SIZE, block_idx_x, grid_dim_x, require_block_dim,
    shared_array, sync_threads, thread_idx_x,
};
use crate::element::Element;
use crate::ops::Reduction;
use crate::params::{Scratch, Segments};
use crate::versions::reduce_v7_warp_shuffle::block_reduce_shuffle;
use crate::versions::reduce_v8_single_pass::thread_reduce_vectorized;

pub fn reduce_rows_block<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    rows: Segments,
    _split: usize,
    _scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x();
    let warp_partials = shared_array![R::Acc; (BLOCK / WARP_SIZE) as usize];
    let mut row = block_idx_x() as usize;
    while row < rows.count() {
        let (start, end) = rows.bounds(row);
        let values = input.sub(start, end - start);
        // A row's threads read few groups each: every type's by its best key (see the
        // module's docs). No loads issued early: with them (registers 40 → 55) the 16-bit arg
        // kernels gained on rows of 32 KiB and longer where rows outnumber the resident
        // blocks (H100, calls 72–73, µs: 1024 × 32768 35.02 → 30.32, 1024 × 16384 20.34 →
        // 19.01) but lost on 16 KiB rows (1000 × 8192 12.51 → 13.02, 16384 × 8192 113.41 →
        // 119.55) and on rows that fit one wave (512 × 16384 12.42 → 12.83): one kernel cannot
        // have both.
        const BY_BEST_KEY: bool = true;
        const MAY_PREFETCH: bool = false;
        let acc = thread_reduce_vectorized::<T, R, BY_BEST_KEY, MAY_PREFETCH>(
            &values,
            0,
            tid as usize,
            BLOCK as usize,
        );
        let total = block_reduce_shuffle::<T, R>(acc, tid, BLOCK, &warp_partials);
        if tid == 0 {
            let result = if values.is_empty() {
                R::EMPTY
            } else {
                R::finish(total, values.len())
            };
            output.store(row, result);
        }
        // The next row's warp partials overwrite these: warp 0 must have read them first.
        sync_threads();
        row += grid_dim_x() as usize;
    }
}
