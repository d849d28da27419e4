//! # Rows, several blocks each: few long rows
//!
//! Reduces every row to one result when there are too few rows for a block each to keep the
//! GPU reading (16 rows of 4 million elements, the 64 rows of an LLM's 128k-token
//! vocabulary): each row is cut into `split` consecutive pieces, one block each, and the
//! blocks of a row meet as v8's blocks meet — each writes its partial, fences, and draws a
//! ticket from the row's own counter; the block that draws the row's last ticket combines the
//! row's partials and writes its result. Rows finish independently: one launch for all.
//!
//! ```text
//! grid = rows × split;  block (r, k): piece k of row r  →  partials[r·split + k]
//!                       fence; ticket = retired[r]++
//! last block of row r:  partials[r·split .. r·split + split]  →  output[r];  retired[r] = 0
//! ```
//!
//! # Thread Mapping
//! Block `b` handles piece `b % split` of row `b / split`: elements
//! `[k·len/split, (k+1)·len/split)` of the row; thread `t` reads its vectors `t + j·BLOCK`.
//!
//! # Output contract
//! `output[r]` = the finished result of row `r` (`EMPTY` for an empty row). Scratch: `partials`
//! holds `rows·split` accumulators, `retired` one counter per row, 0 before the launch and set
//! back to 0 by each row's last block.

use crate::device::{
    GlobalSlice, GlobalSliceMut, WARP_SIZE, block_idx_x, require_block_dim, shared_array,
    sync_threads, thread_fence, thread_idx_x,
};
use crate::element::Element;
use crate::ops::Reduction;
use crate::params::{Scratch, Segments};
use crate::versions::reduce_v7_warp_shuffle::block_reduce_shuffle;
use crate::versions::reduce_v8_single_pass::thread_reduce_vectorized;

pub fn reduce_rows_split<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    rows: Segments,
    split: usize,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x();
    let warp_partials = shared_array![R::Acc; (BLOCK / WARP_SIZE) as usize];
    let ticket = shared_array![u32; 1; after warp_partials];
    // At least one piece (the host never passes 0; the kernel must not divide by it either).
    let split = split.max(1);
    let (row, piece) = (
        block_idx_x() as usize / split,
        block_idx_x() as usize % split,
    );
    if row >= rows.count() {
        return;
    }
    let (start, end) = rows.bounds(row);
    let len = end - start;
    // Piece k: [k·len/split, (k+1)·len/split), so the pieces differ by at most one element.
    let (from, to) = (piece * len / split, (piece + 1) * len / split);
    let values = input.sub(start + from, to - from);
    // Many groups a thread, each taken as it comes, the next group's loads issued before this
    // one is folded where the operator asks (the 16-bit arg operators). Its registers (32 → 47)
    // halve the blocks an SM holds, and the planner's waves with them; every plan, moved or
    // not, gained or held on the H100 (call 72, µs): 16 vocabulary rows 13.17 → 11.06 (16
    // blocks a row where 32), 64 rows 16.34 → 15.76, 2 × 2^20 12.51 → 11.36, 8 rows 9.79 →
    // 9.81; 150 rows of 128 KiB now get a block each, 19.12 → 14.50 (`shapes/PROFILES.md`,
    // "Loads in flight for the row kernels").
    const BY_BEST_KEY: bool = false;
    const MAY_PREFETCH: bool = true;
    let acc = thread_reduce_vectorized::<T, R, BY_BEST_KEY, MAY_PREFETCH>(
        &values,
        from,
        tid as usize,
        BLOCK as usize,
    );
    let block_value = block_reduce_shuffle::<T, R>(acc, tid, BLOCK, &warp_partials);

    let retired = scratch.retired.at(row);
    if tid == 0 {
        scratch.partials.store(row * split + piece, block_value);
        // Release: this partial is visible device-wide before the ticket is drawn.
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) as usize != split - 1 {
        return;
    }

    // The row's last block: every other piece's partial was fenced before its ticket.
    thread_fence();
    let mut acc = R::IDENTITY;
    let mut k = tid as usize;
    while k < split {
        acc = R::combine(acc, scratch.partials.load(row * split + k));
        k += BLOCK as usize;
    }
    let total = block_reduce_shuffle::<T, R>(acc, tid, BLOCK, &warp_partials);
    if tid == 0 {
        output.store(
            row,
            if len == 0 {
                R::EMPTY
            } else {
                R::finish(total, len)
            },
        );
        retired.reset();
    }
}
