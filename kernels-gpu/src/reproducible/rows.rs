//! # Reproducible rows and segments: each row's binned sum, whatever shares the batch
//!
//! The row kernels of [`crate::shapes`] (a group of lanes, a block, or several blocks per
//! row), with a [`Binned`] state where those keep a float: each thread deposits its share of a
//! row as the whole-array kernel does ([`super::kernel`]: 16-byte loads, four in flight, one
//! update per batch, renormalisation every `ENDURANCE` deposits, two states per thread), and
//! the threads' states meet by exact merges instead of additions: warp shuffles, the block's
//! warps, and, for a row cut over several blocks, the partial states of its pieces, added by
//! the row's last block (as counts, [`super::binned::counts::Counts`], but in `rows_warp`,
//! whose shuffles keep one [`Binned::merge`] a level for its registers' sake).
//!
//! # Why every result is the bits of the row's sum alone
//! The state of a set of values does not depend on how they were cut up or in which order
//! they were deposited and merged (see [`super::binned`]). So a row's state — however many
//! lanes or blocks share it, whatever the block size, the grid, the rows beside it in the
//! batch, the schedule or the GPU — is the state the whole-array kernel reaches for that row
//! alone, and [`Conclusion::conclude`] turns it into the same bits: the sum, or the sum divided
//! by the row's length. This is *batch invariance*: a row's result does not change when other
//! rows (other requests) join the batch, or when that changes the kernel.
//!
//! ```text
//! rows_warp:  lanes_per_row lanes per row (1 … 32), 32/lanes_per_row rows per warp at a time
//!             lane l: vectors l, l+lanes, … of its row → state → shuffles over its lanes
//! rows_block: block b: rows b, b+gridDim, …; thread t: vectors t, t+blockDim, …
//!             → shuffles → one state per warp in shared memory → warp 0 → output[row]
//! rows_split: block (r, k): piece k of row r → partials[r·split + k]; fence; ticket
//!             last block of row r: merges partials[r·split ..][..split] → output[r]
//! ```
//!
//! # Thread Mapping
//! As the plain kernels ([`crate::shapes::rows_warp`], [`crate::shapes::rows_block`],
//! [`crate::shapes::rows_split`]), with the block size read at run time (`blockDim.x`, a power
//! of two from 64 to 1024).
//!
//! # Output contract
//! `output[r]`: row `r`'s conclusion (sum, or mean) — `+0.0` for the sum of an empty row, NaN
//! for its mean. `rows_split`'s scratch: `partials` holds `rows·split` states, `retired` one
//! counter per row, 0 before the launch and set back to 0 by each row's last block. Shared
//! memory: one state per warp and the ticket (`rows_block`, `rows_split`); none for
//! `rows_warp`.

use super::binned::{Binned, BinnedFloat};
use super::conclusion::{Conclusion, Reproducible};
use super::kernel::{block_merge, last_block_sum, thread_counts};
use crate::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, WARP_SIZE, block_dim_x, block_idx_x, grid_dim_x,
    shared_array, sync_threads, thread_fence, thread_idx_x, warp_shuffle_down,
};
use crate::params::{Scratch, Segments};

/// A warp, or a group of its lanes, per row: short rows and segments. `lanes_per_row` is the
/// launch's `split` (a power of two; 0 counts as 32, anything else is rounded down).
#[inline(always)]
pub fn reproducible_rows_warp<T: Reproducible, C: Conclusion<T::Fold>>(
    input: GlobalSlice<T>,
    rows: Segments,
    lanes_per_row: usize,
    _scratch: Scratch<Binned<T::Fold>>,
    output: GlobalSliceMut<C::Out>,
) {
    let lanes_per_row = match lanes_per_row {
        0 => WARP_SIZE,
        n => 1 << (n.min(WARP_SIZE as usize).ilog2()),
    };
    let groups = WARP_SIZE / lanes_per_row;
    let warps = block_dim_x() / WARP_SIZE;
    let (warp, lane) = (thread_idx_x() / WARP_SIZE, thread_idx_x() % WARP_SIZE);
    let (group, lane_in_group) = (lane / lanes_per_row, lane % lanes_per_row);
    // The warp's first row, and how far the warps of the grid move on together; the loop runs
    // while the warp has any row left, so every lane reaches every shuffle.
    let mut first = ((block_idx_x() * warps + warp) * groups) as usize;
    let stride = (grid_dim_x() * warps * groups) as usize;
    while first < rows.count() {
        let row = first + group as usize;
        let (state, len) = if row < rows.count() {
            let (start, end) = rows.bounds(row);
            let values = input.sub(start, end - start);
            let counts = thread_counts(&values, lane_in_group as usize, lanes_per_row as usize);
            (counts.to_state(), values.len())
        } else {
            (Binned::EMPTY, 0)
        };
        // Lane 0 of each group ends up with its group's state (the other lanes' merges, across
        // groups, are not used).
        let total = warp_merge_by_states(state, lanes_per_row);
        if lane_in_group == 0 && row < rows.count() {
            output.store(row, C::conclude(total, len));
        }
        first += stride;
    }
}

/// Merges the states of the first `lanes` lanes of each group into its lane 0, one
/// [`Binned::merge`] a level: the tree of [`super::kernel::warp_merge`] without its counts. Its
/// levels cost more instructions, but it keeps fewer registers live: in this kernel, whose loop
/// over rows holds the deposit loop at its register peak, the counts took it from 64 to 72
/// registers a thread (occupancy 50% → 37.5%) and the sums of 100000 segments of ~300 `f32`
/// from 68.9 to 74.6 µs on the H100, where the whole-array kernel gained up to a third (2^14
/// `f32`: 13.9 → 9.5 µs).
#[inline(always)]
fn warp_merge_by_states<F: BinnedFloat>(mut state: Binned<F>, lanes: u32) -> Binned<F> {
    let mut offset = lanes / 2;
    while offset > 0 {
        let (other, _) = warp_shuffle_down(FULL_MASK, state, offset, WARP_SIZE);
        state.merge(&other);
        offset /= 2;
    }
    state
}

/// A block per row: long rows, enough of them to fill the GPU.
#[inline(always)]
pub fn reproducible_rows_block<T: Reproducible, C: Conclusion<T::Fold>>(
    input: GlobalSlice<T>,
    rows: Segments,
    _split: usize,
    _scratch: Scratch<Binned<T::Fold>>,
    output: GlobalSliceMut<C::Out>,
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let warp_states = shared_array![Binned<T::Fold>; (block / WARP_SIZE) as usize];
    let mut row = block_idx_x() as usize;
    while row < rows.count() {
        let (start, end) = rows.bounds(row);
        let values = input.sub(start, end - start);
        let counts = thread_counts(&values, tid as usize, block as usize);
        let total = block_merge(counts, tid, block, &warp_states);
        if tid == 0 {
            output.store(row, C::conclude(total, values.len()));
        }
        // The next row's warp states overwrite these: warp 0 must have read them first.
        sync_threads();
        row += grid_dim_x() as usize;
    }
}

/// Several blocks per row, the row's last block merging their states: a few long rows.
#[inline(always)]
pub fn reproducible_rows_split<T: Reproducible, C: Conclusion<T::Fold>>(
    input: GlobalSlice<T>,
    rows: Segments,
    split: usize,
    scratch: Scratch<Binned<T::Fold>>,
    output: GlobalSliceMut<C::Out>,
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let warp_states = shared_array![Binned<T::Fold>; (block / WARP_SIZE) as usize];
    let ticket = shared_array![u32; 1; after warp_states];
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
    let counts = thread_counts(&values, tid as usize, block as usize);
    let block_state = block_merge(counts, tid, block, &warp_states);

    let retired = scratch.retired.at(row);
    if tid == 0 {
        scratch.partials.store(row * split + piece, block_state);
        // Release: this state is visible device-wide before the ticket is drawn.
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) as usize != split - 1 {
        return;
    }

    // The row's last block: every other piece's state was fenced before its ticket.
    thread_fence();
    let partials = scratch.partials;
    let total = last_block_sum(split, tid, block, &warp_states, |k| {
        partials.load(row * split + k)
    });
    if tid == 0 {
        output.store(row, C::conclude(total, len));
        retired.reset();
    }
}
