//! # Reproducible columns: each column's binned sum, whatever shares the batch
//!
//! The column kernel of [`crate::shapes::columns`] with a [`Binned`] state per column where
//! that keeps a float: each thread owns a group of neighbouring columns (one 16-byte vector's
//! worth: 4 `f32`, 2 `f64`, 8 `bf16`; dealt out lane by lane where rows are no whole number
//! of vectors, as there: [`GroupPlace::column`]) and walks down them, four rows in flight; each column's
//! values of those rows are one batch (one update to their largest magnitude, then each
//! deposited). The rows a block walks at once (narrow matrices) and the bands of rows (tall
//! ones, one block each per tile of columns) meet by [`Binned::merge`]: a tree over the row
//! offsets in shared memory, and the tile's last block (fence and ticket, as v8) merging the
//! bands' states. Merges are exact, so a column's result is the bits of the whole-array
//! kernel's for that column alone, whatever the grid, block, tiles and bands.
//!
//! ```text
//! block (tile t, band k), thread c: group t·groups + c % groups, rows band k from c / groups
//!   per column: 4 rows → max|x| → update → 4 deposits          (every ENDURANCE: renorm)
//!   row offsets: tree in shared memory (one column of the group at a time) → partials[k][col]
//! last band of tile t: bands c / groups, + rows_per_step, … merged → tree → output[col]
//! ```
//!
//! # Thread Mapping
//! As the plain column kernel, with the block size read at run time (`blockDim.x`).
//!
//! # Output contract
//! `output[c]`: column `c`'s conclusion (the sum, or the mean; `+0.0` and NaN when there are no
//! rows). Scratch: `partials` holds `split·cols` states, `retired` one counter per tile, 0
//! before the launch and set back to 0 (a launch of one band uses neither). Shared memory:
//! [`shared_states`] states, then the ticket.

use super::binned::{Binned, BinnedFloat};
use super::conclusion::{Conclusion, Reproducible};
use super::kernel::each_vector;
use crate::device::{
    GlobalSlice, GlobalSliceMut, SharedArray, block_dim_x, block_idx_x, shared_array, sync_threads,
    thread_fence, thread_idx_x,
};
use crate::element::Vector16;
use crate::launch::{MAX_LANES, elements_per_vector};
use crate::params::Scratch;
use crate::shapes::columns::{
    ColumnSource, GroupPlace, ScalarColumns, VectorColumns, band_rows, groups_per_tile,
};

/// Rows of its columns each thread loads before it deposits them (one batch per column). The
/// bands are the plain kernel's ([`band_rows`]): whole runs of its 8 rows in flight, two
/// batches of these.
pub const ROWS_IN_FLIGHT: usize = 4;
const _: () = assert!(crate::shapes::columns::LOADS_IN_FLIGHT.is_multiple_of(ROWS_IN_FLIGHT));

/// States of shared memory a block of `block` threads needs for a matrix of `cols` columns of
/// `element`-byte elements: half a state per thread when the block walks several rows at once
/// (the tree over them), none otherwise. The host plans the launch with the same function.
#[inline(always)]
pub const fn shared_states(cols: usize, element: usize, block: u32) -> usize {
    if groups_per_tile(cols, element, block) < block as usize {
        block as usize / 2
    } else {
        0
    }
}

/// Every column's conclusion (see the module docs). Inlined into its entry point, as the
/// whole-array kernel (left to itself, LLVM calls one instance per type from its entry point).
#[inline(always)]
pub fn reproducible_columns<T: Reproducible, C: Conclusion<T::Fold>>(
    input: GlobalSlice<T>,
    cols: usize,
    rows: usize,
    split: usize,
    scratch: Scratch<Binned<T::Fold>>,
    output: GlobalSliceMut<C::Out>,
) {
    let block = block_dim_x();
    let lanes = elements_per_vector(size_of::<T>());
    // Never 0 (a power of two); `max` tells the compiler so, with no division check.
    let groups = groups_per_tile(cols, size_of::<T>(), block).max(1);
    let rows_per_step = block as usize / groups;
    let tid = thread_idx_x() as usize;
    let shared = shared_array![Binned<T::Fold>; shared_states(cols, size_of::<T>(), block).max(1)];
    let ticket = shared_array![u32; 1; after shared];
    // At least one band (the host never passes 0; the kernel must not divide by it either).
    let split = split.max(1);
    let (tile, band) = (
        block_idx_x() as usize / split,
        block_idx_x() as usize % split,
    );
    let place = GroupPlace::of(tile, groups, tid % groups, lanes);
    let row_offset = tid / groups;
    let (band_start, band_end) = band_rows(band, split, rows, rows_per_step);

    // This thread's rows of the band: one state per column of its group.
    let (head, vectors, _) = input.split_vectors();
    let row = band_start + row_offset;
    let step = rows_per_step;
    let whole_vectors = head == 0 && cols.is_multiple_of(lanes);
    let column = |k: usize| place.column(whole_vectors, k);
    let mut states = if whole_vectors {
        match VectorColumns::new(vectors, cols, place) {
            Some(source) => walk_rows::<T, _, ROWS_IN_FLIGHT>(source, row, band_end, step),
            None => [Binned::<T::Fold>::EMPTY; MAX_LANES],
        }
    } else {
        match ScalarColumns::new(input, cols, column) {
            Some(source) => walk_rows::<T, _, ROWS_IN_FLIGHT>(source, row, band_end, step),
            None => [Binned::<T::Fold>::EMPTY; MAX_LANES],
        }
    };
    T::Vector16::for_lanes(|k| states[k].renorm());

    // The block's rows meet: one state per column of the tile, in the threads of row offset 0.
    gather_rows::<T>(&mut states, tid, groups, rows_per_step, &shared);
    if split == 1 {
        // The whole column: nothing to hand over.
        if row_offset == 0 {
            conclude_columns::<T, C>(&states, column, cols, rows, output);
        }
        return;
    }
    if row_offset == 0 {
        T::Vector16::for_lanes(|k| {
            let column = column(k);
            if column < cols {
                scratch.partials.store(band * cols + column, states[k]);
            }
        });
    }
    sync_threads();
    let retired = scratch.retired.at(tile);
    if tid == 0 {
        // Release: the barrier orders every thread's states before this fence, which makes
        // them visible device-wide before the ticket is drawn (fences are cumulative).
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) as usize != split - 1 {
        return;
    }

    // The tile's last band: every band's states were fenced before its ticket. Thread `c`
    // merges bands `row_offset`, `+ rows_per_step`, … of its columns; the row offsets
    // then meet as above.
    thread_fence();
    let mut totals = [Binned::<T::Fold>::EMPTY; MAX_LANES];
    let mut band = row_offset;
    while band < split {
        T::Vector16::for_lanes(|k| {
            let column = column(k);
            if column < cols {
                totals[k].merge(&scratch.partials.load(band * cols + column));
            }
        });
        band += step;
    }
    gather_rows::<T>(&mut totals, tid, groups, rows_per_step, &shared);
    if row_offset == 0 {
        conclude_columns::<T, C>(&totals, column, cols, rows, output);
    }
    if tid == 0 {
        retired.reset();
    }
}

/// Renormalises every column's state first if `deposits` more would pass the endurance (each
/// column of the group takes the same number of deposits).
#[inline(always)]
fn make_room<T: Reproducible>(
    states: &mut [Binned<T::Fold>; MAX_LANES],
    pending: &mut u32,
    deposits: u32,
) {
    if *pending + deposits > T::Fold::ENDURANCE {
        T::Vector16::for_lanes(|k| states[k].renorm());
        *pending = 0;
    }
    *pending += deposits;
}

/// Deposits one column's values of `K` rows into its state: one update to their largest
/// magnitude, then each value. A NaN or an infinity among them leaves a non-finite top fold:
/// then the non-finite values go to the special sum, which is now the result, and the folds
/// are dropped (as the whole-array kernel's rescan does).
#[inline(always)]
fn deposit_rows<F: BinnedFloat, const K: usize>(state: &mut Binned<F>, xs: [F; K]) {
    let mut largest = F::ZERO;
    each_vector::<K>(|j| largest = largest.max_abs(xs[j]));
    state.update(F::index_for(largest));
    if state.in_top_bin() {
        // Magnitudes near the type's largest: bin 0 takes its deposits scaled (rare).
        each_vector::<K>(|j| state.deposit_any(xs[j]));
    } else {
        let bit = state.last_bit();
        each_vector::<K>(|j| state.deposit_with(xs[j], bit));
    }
    if !state.top_is_finite() {
        each_vector::<K>(|j| {
            if !xs[j].is_finite() {
                state.add_special(xs[j]);
            }
        });
        *state = state.only_special();
    }
}

/// The thread's columns' states over rows `row, row + step, …` below `end_row`: `K` rows at
/// a time (`ROWS_IN_FLIGHT` or a divisor of it), then the rows left one by one (not
/// renormalised after).
#[inline(always)]
fn walk_rows<T: Reproducible, S: ColumnSource<T>, const K: usize>(
    source: S,
    mut row: usize,
    end_row: usize,
    step: usize,
) -> [Binned<T::Fold>; MAX_LANES] {
    let mut states = [Binned::<T::Fold>::EMPTY; MAX_LANES];
    let mut pending = 0;
    while row + (K - 1) * step < end_row {
        let loaded = source.rows::<K>(row, step);
        make_room::<T>(&mut states, &mut pending, K as u32);
        T::Vector16::for_lanes(|k| {
            let mut xs = [<T::Fold as BinnedFloat>::ZERO; K];
            each_vector::<K>(|j| xs[j] = loaded[j].lanes()[k].to_fold());
            deposit_rows(&mut states[k], xs);
        });
        row += K * step;
    }
    while row < end_row {
        let [vector] = source.rows::<1>(row, step);
        make_room::<T>(&mut states, &mut pending, 1);
        T::Vector16::for_lanes(|k| deposit_rows(&mut states[k], [vector.lanes()[k].to_fold()]));
        row += step;
    }
    states
}

/// Merges the states of the block's `rows_per_step` row offsets, column by column of the
/// group, as a tree in shared memory: the result is in the threads of row offset 0. Every
/// thread must call it (it has barriers).
#[inline(always)]
fn gather_rows<T: Reproducible>(
    states: &mut [Binned<T::Fold>; MAX_LANES],
    tid: usize,
    groups: usize,
    rows_per_step: usize,
    shared: &SharedArray<Binned<T::Fold>>,
) {
    if rows_per_step == 1 {
        return;
    }
    let (row_offset, group) = (tid / groups, tid % groups);
    T::Vector16::for_lanes(|k| {
        let mut half = rows_per_step / 2;
        while half > 0 {
            // The previous round's (or column's) reads are done before these stores.
            sync_threads();
            if row_offset >= half && row_offset < 2 * half {
                shared.store((row_offset - half) * groups + group, states[k]);
            }
            sync_threads();
            if row_offset < half {
                states[k].merge(&shared.load(row_offset * groups + group));
            }
            half /= 2;
        }
    });
}

/// Writes the conclusion of every column of the group that exists (`count` rows each).
#[inline(always)]
fn conclude_columns<T: Reproducible, C: Conclusion<T::Fold>>(
    states: &[Binned<T::Fold>; MAX_LANES],
    column: impl Fn(usize) -> usize,
    cols: usize,
    count: usize,
    output: GlobalSliceMut<C::Out>,
) {
    T::Vector16::for_lanes(|k| {
        let column = column(k);
        if column < cols {
            output.store(column, C::conclude(states[k], count));
        }
    });
}
