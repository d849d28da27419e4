//! # Rows, a warp or a part of one each: short rows
//!
//! Reduces every row (segment) of the input to one result, for rows short enough that a few
//! lanes read a whole row with a handful of loads each. The warp is cut into groups of
//! `lanes_per_row` lanes (a power of two, 1 … 32, chosen by the host from the row length and
//! the operator: from one group of vector loads per lane for min and max to about 32 for the
//! 16-bit argmax, `plan::shapes::lane_vectors`); each group takes one row at
//! a time. The lanes of a group walk their row with v8's vectorised loop (16-byte loads, head
//! and tail scalars where the row does not start on a 16-byte boundary) and combine with
//! shuffles, with no shared memory and no barrier. The group's first lane writes the row's
//! result.
//!
//! Why groups: a warp that took a whole 128-element row would give each lane one vector — one
//! load in flight, then five shuffle steps and a store for 512 bytes. Eight lanes per row give
//! each lane four vectors in flight and let the warp work on four rows at once.
//!
//! ```text
//! lanes_per_row = 8:   warp w = | group 0 | group 1 | group 2 | group 3 |   (8 lanes each)
//!                               row r      row r+1   row r+2   row r+3
//! lane l of a group:   vectors l, l+8, l+16, … of its row  →  shuffles over 8 lanes  →  output
//! next rows:           r + (warps in the grid)·4, …
//! ```
//!
//! # Thread Mapping
//! Group `g` (of `G = 32 / lanes_per_row`) of warp `w` of block `b` reduces rows
//! `(b·W + w)·G + g + k·gridDim·W·G` (W = warps per block).
//!
//! # Output contract
//! `output[r]` = the finished result of row `r` (the operator's `EMPTY` for an empty row).
//! The launch's `split` is `lanes_per_row` (0 counts as 32). No scratch memory.

use crate::device::{
    GlobalSlice, GlobalSliceMut, WARP_SIZE, block_idx_x, grid_dim_x, require_block_dim,
    thread_idx_x,
};
use crate::element::Element;
use crate::ops::Reduction;
use crate::params::{Scratch, Segments};
use crate::versions::reduce_v7_warp_shuffle::warp_reduce_shuffle;
use crate::versions::reduce_v8_single_pass::thread_reduce_vectorized;

pub fn reduce_rows_warp<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    rows: Segments,
    lanes_per_row: usize,
    _scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    // A power of two that divides the warp (the host sends one; anything else is rounded
    // down, so that groups never straddle a shuffle segment).
    let lanes_per_row = match lanes_per_row {
        0 => WARP_SIZE,
        n => 1 << (n.min(WARP_SIZE as usize).ilog2()),
    };
    let groups = WARP_SIZE / lanes_per_row;
    let warps = BLOCK / WARP_SIZE;
    let (warp, lane) = (thread_idx_x() / WARP_SIZE, thread_idx_x() % WARP_SIZE);
    let (group, lane_in_group) = (lane / lanes_per_row, lane % lanes_per_row);
    // The warp's first row, and how far the warps of the grid move on together. The loop
    // runs while the warp has any row left, so every lane reaches every shuffle.
    let mut first = ((block_idx_x() * warps + warp) * groups) as usize;
    let stride = (grid_dim_x() * warps * groups) as usize;
    while first < rows.count() {
        let row = first + group as usize;
        let (acc, len) = if row < rows.count() {
            let (start, end) = rows.bounds(row);
            let values = input.sub(start, end - start);
            // A lane reads few groups of its row: every type's taken by its best key, the winner
            // searched at once (the 16-bit floats skip groups either way). On the H100 (call 73,
            // µs): f32 argmax of segments of ~300 62.37 → 51.92, 65536 × 100 16.29 → 15.26, rows
            // of 2–8 KiB 1–2 % faster, f64 argmin of 8 KiB rows 51.66 → 50.18; i32/i64 level.
            // No loads issued early: the prefetch's registers (the 16-bit arg kernels' 48 → 95)
            // leave 2 blocks an SM where 5 fitted, and short rows lost more by that than the
            // loads in flight gained (bf16 argmax of segments of ~300: 41.9 → 46.8 µs).
            const BY_BEST_KEY: bool = true;
            const MAY_PREFETCH: bool = false;
            let acc = thread_reduce_vectorized::<T, R, BY_BEST_KEY, MAY_PREFETCH>(
                &values,
                0,
                lane_in_group as usize,
                lanes_per_row as usize,
            );
            (acc, values.len())
        } else {
            (R::IDENTITY, 0)
        };
        let total = warp_reduce_shuffle::<T, R>(acc, lanes_per_row);
        if lane_in_group == 0 && row < rows.count() {
            let result = if len == 0 {
                R::EMPTY
            } else {
                R::finish(total, len)
            };
            output.store(row, result);
        }
        first += stride;
    }
}
