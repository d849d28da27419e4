//! # Narrow columns: a handful of columns read as the flat array they are
//!
//! Changes against [`super::columns`], for matrices of 1 to [`MAX_NARROW_COLUMNS`] columns:
//! instead of a thread per group of columns walking down its rows in bands, the matrix is read
//! as v8 reads a whole array — thread `g` of `T` loads vectors `g`, `g + T`, `g + 2T`, …, four
//! in flight — and each lane of a thread's vectors keeps its own running value. Because
//! `T · lanes` is a multiple of the column count (the host rounds the grid to
//! [`grid_multiple`]), lane `k` of every vector a thread loads lies in the same column:
//! `(head + g · lanes + k) % cols`. So no thread reads a byte another thread reads, every warp
//! load is 512 consecutive bytes, and there are no bands to hand over: one partial per column
//! and block, and v8's last block.
//!
//! Why: the column kernel costs about 6 µs more than the read-only kernel over 8 MiB at any
//! width (2^20 × 2 `f32` as 2^19 × 4 … 2^16 × 32: 12.2–14.6 µs on the H100, the read-only
//! kernel 6.5, `docs/runs/2026-11-27/`), and PyTorch, which reads a narrow matrix flat,
//! was faster there: 11.5 µs for the sum, 14.3 against 23.8 for the argmax.
//!
//! ```text
//! 2 f32 columns (4 lanes): element e = head + 4v + k is column e % 2 of row e / 2
//!   x: [head | r0c0 r0c1 r1c0 r1c1 | r2c0 r2c1 r3c0 r3c1 | … | tail]
//!   thread g: vectors g, g+T, …  → 4 running values; lanes k and k+2 hold one column: folded
//!   warp: threads 1 apart hold the same columns (4·1 % 2 = 0): a whole shuffle tree
//! 16 f32 columns: threads 4 apart hold the same columns: shuffles 16, 8, 4; lanes 0–3 keep
//!   the warp's 16 columns
//! 3 f32 columns (no power of two): T a multiple of 3; lanes k and k+3 of a thread hold one
//!   column but are not folded (3 does not divide 4); threads 3 apart hold the same columns:
//!   shuffles 24, 12, 6, 3 (a lane whose source is past the warp adds nothing); lanes 0–2
//!   keep 12 values, 4 of each column
//! block: each warp's values in shared memory, placed so that position p holds column
//!   p % cols → thread c adds positions c, c + cols, … → partials[block][cols]; fence; ticket
//! last block: thread t adds column t % cols of blocks t / cols, + 256 / cols, …; threads
//!   cols apart meet (shuffles, shared memory); head and tail scalars; output[cols]
//! ```
//!
//! # Thread Mapping
//! Global thread `g = b·BLOCK + t` of `T` loads vectors `g, g + T, …`; its lane `k` is column
//! `(head + g·lanes + k) % cols`. In the last block thread `t` below `cols · ⌊BLOCK / cols⌋`
//! adds column `t % cols` of blocks `t / cols`, `t / cols + ⌊BLOCK / cols⌋`, ….
//!
//! # Output contract
//! `output[c]` = the finished result of column `c` over all rows (`EMPTY` when there are no
//! rows); the arg operators' index is the row. `cols` must satisfy [`is_narrow`] and the
//! grid's threads times the vector's lanes must be a multiple of `cols` (else the kernel
//! writes nothing). Scratch: `partials` holds `gridDim · cols` accumulators, `retired[0]` is 0
//! before the launch and set back to 0. Shared memory: [`shared_accumulators`] accumulators and
//! the ticket.

use crate::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, SharedArray, WARP_SIZE, block_idx_x, grid_dim_x,
    require_block_dim, shared_array, sync_threads, sync_warp, thread_fence, thread_idx_x,
    warp_shuffle_down,
};
use crate::element::{Element, Vector16};
use crate::launch::{
    LARGEST_ELEMENT, MAX_LANES, PARTIALS_IN_FLIGHT, SMALLEST_ELEMENT, VECTORS_IN_FLIGHT,
    elements_per_vector,
};
use crate::ops::{Reduction, fold};
use crate::params::Scratch;
use core::num::NonZeroU32;

/// The most columns this kernel reduces: a warp's lanes then hold every column of a block's
/// partial between them.
pub const MAX_NARROW_COLUMNS: usize = WARP_SIZE as usize;

/// `cols / gcd(cols, 2^power)`: `cols` without the factors of two that `2^power` shares.
#[inline(always)]
const fn without_twos(cols: usize, power: u32) -> usize {
    if cols == 0 {
        return 1;
    }
    let shared = if cols.trailing_zeros() < power {
        cols.trailing_zeros()
    } else {
        power
    };
    cols >> shared
}

/// Whether a thread folds its lanes into one value per column before the warp's shuffles:
/// where the column count divides the lanes (lanes `cols` apart then hold the same column).
#[inline(always)]
const fn folds_lanes(cols: usize, lanes: usize) -> bool {
    // `lanes` is a power of two: its divisors are the powers of two up to it.
    cols.is_power_of_two() && cols <= lanes
}

/// Threads apart that hold the same columns: `cols / gcd(cols, lanes)`.
#[inline(always)]
const fn thread_period(cols: usize, lanes: usize) -> usize {
    without_twos(cols, lanes.trailing_zeros())
}

/// Values a thread keeps after [`folds_lanes`]: one per column, or every lane.
#[inline(always)]
const fn slots(cols: usize, lanes: usize) -> usize {
    if folds_lanes(cols, lanes) {
        cols
    } else {
        lanes
    }
}

/// Values a warp keeps after its shuffles: [`slots`] in each of its first [`thread_period`]
/// lanes (`cols`, or the least common multiple of `cols` and `lanes`).
#[inline(always)]
const fn warp_values(cols: usize, lanes: usize) -> usize {
    thread_period(cols, lanes) * slots(cols, lanes)
}

/// Whether this kernel reduces a matrix of `cols` columns of `element`-byte elements: 1 to
/// [`MAX_NARROW_COLUMNS`] columns whose warp values fit a warp's share of the block's shared
/// memory (32): every power of two, 3, 6, 12 and 24 for every type; 5, 7, 10, 14, 20 and 28
/// for 4- and 8-byte elements; 9 and 18 as well for 8-byte ones.
///
/// ```
/// use kernels_gpu::shapes::columns_narrow::is_narrow;
/// assert!(is_narrow(2, 4) && is_narrow(32, 2) && is_narrow(3, 2) && is_narrow(12, 4));
/// assert!(is_narrow(5, 4) && !is_narrow(5, 2) && is_narrow(9, 8) && !is_narrow(9, 4));
/// assert!(!is_narrow(0, 4) && !is_narrow(33, 4));
/// // No element type has 1, 3 or 16 bytes.
/// assert!(!is_narrow(2, 1) && !is_narrow(2, 3) && !is_narrow(2, 16));
/// ```
#[inline(always)]
pub const fn is_narrow(cols: usize, element: usize) -> bool {
    element.is_power_of_two()
        && element >= SMALLEST_ELEMENT
        && element <= LARGEST_ELEMENT
        && narrow_with_lanes(cols, elements_per_vector(element))
}

/// [`is_narrow`] for vectors of `lanes` elements.
#[inline(always)]
const fn narrow_with_lanes(cols: usize, lanes: usize) -> bool {
    cols >= 1 && cols <= MAX_NARROW_COLUMNS && warp_values(cols, lanes) <= WARP_SIZE as usize
}

/// The number the grid must be a multiple of for `cols` columns: the odd part of `cols` (its
/// factors of two divide every block's threads, a multiple of 32), 1 for a power of two. The
/// grid's threads times the lanes are then a multiple of `cols`.
///
/// ```
/// use kernels_gpu::shapes::columns_narrow::grid_multiple;
/// assert_eq!((grid_multiple(32), grid_multiple(12), grid_multiple(3), grid_multiple(20)), (1, 3, 3, 5));
/// ```
pub const fn grid_multiple(cols: usize) -> usize {
    without_twos(cols, WARP_SIZE.trailing_zeros())
}

/// Accumulators of shared memory a block of `block` threads needs: one per thread (the warps'
/// values, 32 a warp at most, and the last block's threads meet there), as
/// `Shared::PerThreadAndTicket` declares to the host.
#[inline(always)]
pub const fn shared_accumulators(block: u32) -> usize {
    block as usize
}

/// The columns of the row-major `rows × cols` matrix `input` into `output` (see the module
/// docs for the mapping and the contract).
pub fn reduce_columns_narrow<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    cols: usize,
    rows: usize,
    _split: usize,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    let lanes = elements_per_vector(size_of::<T>());
    let tid = thread_idx_x() as usize;
    let grid = grid_dim_x() as usize;
    let threads = BLOCK as usize * grid;
    // A divisor the compiler knows is not zero (no check, no panic path), of 32-bit numbers
    // (a 64-bit division costs registers); a larger `cols` is refused below.
    let Some(divisor) = NonZeroU32::new(cols as u32) else {
        return;
    };
    let Ok(lanes_in_grid) = u32::try_from(threads * lanes) else {
        return;
    };
    if !narrow_with_lanes(cols, lanes) {
        return;
    }
    let columns = ColumnDivisor::new(divisor);
    if columns.remainder(lanes_in_grid) != 0 {
        return;
    }
    let shared = shared_array![R::Acc; shared_accumulators(BLOCK)];
    let ticket = shared_array![u32; 1; after shared];
    let (head, vectors, tail_start) = input.split_vectors();

    // This thread's vectors: a running value per lane, each lane one column throughout. The
    // arg operators' index of an element is at first its step (vector `g + T·step`): the same
    // in every lane, so the loop keeps no row per lane; a lane's steps become rows at the end.
    let thread = block_idx_x() as usize * BLOCK as usize + tid;
    let mut running = [R::START; MAX_LANES];
    let mut vector = thread;
    let mut steps = 0;
    let in_flight = VECTORS_IN_FLIGHT * threads;
    while vector + in_flight - threads < vectors.len() {
        let loaded = vectors.load_strided::<VECTORS_IN_FLIGHT>(vector, threads);
        T::Vector16::for_lanes(|k| {
            running[k] = R::accumulate_column_group(running[k], &loaded, k, |j| steps + j);
        });
        vector += in_flight;
        steps += VECTORS_IN_FLIGHT;
    }
    while vector < vectors.len() {
        let loaded = vectors.load(vector);
        T::Vector16::for_lanes(|k| {
            let value = R::lift(loaded.lanes()[k], steps);
            running[k] = R::accumulate(running[k], value);
        });
        vector += threads;
        steps += 1;
    }
    // Lane `k` of the first vector is element `first + k`; a step is `T · lanes` elements,
    // `rows_per_step` rows (`T · lanes` is a multiple of `cols`).
    // (`head + thread · lanes` is below `lanes_in_grid + lanes`: 32 bits.)
    let first = head as u32 + thread as u32 * lanes as u32;
    let rows_per_step = columns.quotient(lanes_in_grid) as usize;
    let mut values = [R::IDENTITY; MAX_LANES];
    let (first_row, first_column) = (columns.quotient(first), columns.remainder(first));
    T::Vector16::for_lanes(|k| {
        let lane_row = (first_row + columns.small_quotient(first_column + k as u32)) as usize;
        values[k] = R::map_index(R::settle(running[k]), |step| {
            lane_row + step * rows_per_step
        });
    });
    fold_lanes::<T, R>(&mut values, cols, lanes);
    let slots = slots(cols, lanes);

    // The warp: threads `period` apart hold the same columns; lanes below `period` keep them.
    let period = thread_period(cols, lanes);
    for_tree_offsets(period, |offset| {
        T::Vector16::for_lanes(|k| {
            // Only the slots hold values (the same `k` in every lane: the warp stays together).
            // Skipping the others paid for accumulators of 8 bytes and more (the f32 column
            // argmax of 2^20 × 2 16.3 → 14.7 µs, bf16 18.6 → 15.0) but cost 4-byte ones more
            // in branches than it saved in shuffles (2^20 × 2 bf16 sums 8.5 → 9.0, 2^18 × 8
            // 8.3 → 9.3): measured in one binary, `docs/runs/2026-11-27/call8_against.log`.
            if k < slots || size_of::<R::Acc>() <= 4 {
                values[k] = combine_from_below::<T, R>(values[k], offset);
            }
        });
    });
    // The block: warp `w` puts its value `q = lane · slots + k` at position `w · entries +
    // (q + base) % entries`, where `base` is the column of the warp's first value; an
    // `entries`-long stretch holds each column `entries / cols` times, so position `p` holds
    // column `p % cols`.
    let (warp, lane) = (tid / WARP_SIZE as usize, tid % WARP_SIZE as usize);
    let entries = warp_values(cols, lanes);
    if lane < period {
        // The column of the warp's first lane 0: `lane · lanes` (below 256) before this one's.
        let behind = columns.small_remainder((lane * lanes) as u32);
        let base = columns.small_remainder(first_column + columns.cols - behind) as usize;
        T::Vector16::for_lanes(|k| {
            if k < slots {
                let rotated = lane * slots + k + base;
                let at = if rotated >= entries {
                    rotated - entries
                } else {
                    rotated
                };
                shared.store(warp * entries + at, values[k]);
            }
        });
    }
    sync_threads();
    let block_value = add_positions::<T, R>(&shared, tid, cols, entries, BLOCK);

    let total = if grid == 1 {
        block_value
    } else {
        if tid < cols {
            scratch
                .partials
                .store(block_idx_x() as usize * cols + tid, block_value);
        }
        sync_threads();
        let retired = scratch.retired.at(0);
        if tid == 0 {
            // Release: the barrier orders every thread's partial before this fence, which
            // makes them visible device-wide before the ticket is drawn (fences are cumulative).
            thread_fence();
            ticket.store(0, retired.fetch_add(1));
        }
        sync_threads();
        if ticket.load(0) as usize != grid - 1 {
            return;
        }
        // The last block: every block's partials were fenced before its ticket. Threads past
        // the last whole group of `cols` take none (their column's blocks are taken).
        thread_fence();
        let step = columns.small_quotient(BLOCK) as usize;
        let column = columns.small_remainder(tid as u32) as usize;
        let mut acc = R::IDENTITY;
        let mut from = if tid < step * cols {
            columns.small_quotient(tid as u32) as usize
        } else {
            grid
        };
        while from + (PARTIALS_IN_FLIGHT - 1) * step < grid {
            let loaded = scratch
                .partials
                .load_strided::<PARTIALS_IN_FLIGHT>(from * cols + column, step * cols);
            acc = fold(acc, loaded, R::combine);
            from += PARTIALS_IN_FLIGHT * step;
        }
        while from < grid {
            acc = R::combine(acc, scratch.partials.load(from * cols + column));
            from += step;
        }
        if tid == 0 {
            retired.reset();
        }
        gather_columns::<T, R>(acc, tid, columns, BLOCK, &shared)
    };

    // Thread `c` below `cols` holds column `c`; the scalars before the first whole vector and
    // after the last (fewer than a vector's lanes each) are that column's too. The last
    // element is column `cols - 1` of row `rows - 1`: the tail is counted back from it.
    if tid < cols {
        let mut total = total;
        let mut element = 0;
        while element < head {
            if columns.small_remainder(element as u32) as usize == tid {
                let row = columns.small_quotient(element as u32) as usize;
                total = R::combine(total, R::lift(input.load(element), row));
            }
            element += 1;
        }
        let mut element = tail_start;
        while element < input.len() {
            let from_end = (input.len() - 1 - element) as u32;
            if cols - 1 - columns.small_remainder(from_end) as usize == tid {
                let row = rows - 1 - columns.small_quotient(from_end) as usize;
                total = R::combine(total, R::lift(input.load(element), row));
            }
            element += 1;
        }
        output.store(
            tid,
            if rows == 0 {
                R::EMPTY
            } else {
                R::finish(total, rows)
            },
        );
    }
}

/// Division by the column count: a mask and a shift for a power of two; otherwise, for the
/// small numbers a block works with (a thread index, a column plus a lane: `n · cols < 2^16`,
/// 1024 · 32 at most here) a multiplication by a 16-bit reciprocal and a shift, and for the
/// rest a 32-bit division (a dozen instructions: left out of the powers of two's way, where
/// every instruction before the first load or after the last delays the kernel).
#[derive(Clone, Copy)]
struct ColumnDivisor {
    cols: u32,
    /// `log2(cols)` for a power of two, else 0.
    shift: u32,
    /// `⌈2^16 / cols⌉` for other counts, else 0.
    reciprocal: u32,
}

impl ColumnDivisor {
    const SHIFT: u32 = 16;

    #[inline(always)]
    fn new(cols: NonZeroU32) -> Self {
        let (shift, reciprocal) = if cols.is_power_of_two() {
            (cols.trailing_zeros(), 0)
        } else {
            (0, (1u32 << Self::SHIFT).div_ceil(cols.get()))
        };
        ColumnDivisor {
            cols: cols.get(),
            shift,
            reciprocal,
        }
    }

    /// `n / cols`, for any `n` (see [`Self::small_quotient`] for the small ones).
    #[inline(always)]
    fn quotient(self, n: u32) -> u32 {
        // `cols` is not zero (a `NonZeroU32` made it): `max(1)` tells the compiler so, and the
        // division needs no check (which would pull in a panic).
        self.shift_or(n, |n| n / self.cols.max(1))
    }

    /// `n % cols`, for any `n`.
    #[inline(always)]
    fn remainder(self, n: u32) -> u32 {
        n - self.quotient(n) * self.cols
    }

    /// `n / cols`, for `n · cols < 2^16`.
    #[inline(always)]
    fn small_quotient(self, n: u32) -> u32 {
        self.shift_or(n, |n| {
            debug_assert!(n * self.cols < 1 << Self::SHIFT);
            (n * self.reciprocal) >> Self::SHIFT
        })
    }

    /// `n / cols` by a shift for a power of two, else by `divide`.
    #[inline(always)]
    fn shift_or(self, n: u32, divide: impl FnOnce(u32) -> u32) -> u32 {
        if self.reciprocal == 0 {
            n >> self.shift
        } else {
            divide(n)
        }
    }

    /// `n % cols`, for `n · cols < 2^16`.
    #[inline(always)]
    fn small_remainder(self, n: u32) -> u32 {
        n - self.small_quotient(n) * self.cols
    }
}

/// Calls `step` with the offsets of a shuffle tree that combines lanes `period` apart (a
/// period of at most 32): the largest `period · 2^j` below the warp's size (the period itself
/// if none is: 32 is a step that finds no lane), then halves while the offset is at least
/// `period`. Lanes below `period` then hold the combined values (a
/// period that is no power of two reads lanes past the warp: [`combine_from_below`]).
///
/// ```text
/// period 1: 16 8 4 2 1        period 3: 24 12 6 3        period 4: 16 8 4
/// ```
#[inline(always)]
fn for_tree_offsets(period: usize, mut step: impl FnMut(usize)) {
    let mut offset = period;
    while offset * 2 < WARP_SIZE as usize {
        offset *= 2;
    }
    while offset >= period {
        step(offset);
        offset /= 2;
    }
}

/// `value` combined with that of the lane `offset` above, if the warp has that lane (a lane
/// whose source is past the warp's end keeps its value: a tree whose period is no power of two
/// reads such lanes).
#[inline(always)]
fn combine_from_below<T: Element, R: Reduction<T>>(value: R::Acc, offset: usize) -> R::Acc {
    let (other, in_range) = warp_shuffle_down(FULL_MASK, value, offset as u32, WARP_SIZE);
    if in_range {
        R::combine(value, other)
    } else {
        value
    }
}

/// Lanes `cols` apart hold the same column when the column count divides the lanes
/// ([`folds_lanes`]): folds them into the first `cols` (halving, so that every index is a
/// constant once unrolled: an index known only at run time would put the array in local
/// memory).
#[inline(always)]
fn fold_lanes<T: Element, R: Reduction<T>>(
    values: &mut [R::Acc; MAX_LANES],
    cols: usize,
    lanes: usize,
) {
    if !folds_lanes(cols, lanes) {
        return;
    }
    let mut half = MAX_LANES / 2;
    while half > 0 {
        if half < lanes && half >= cols {
            let mut k = 0;
            while k < half {
                values[k] = R::combine(values[k], values[k + half]);
                k += 1;
            }
        }
        half /= 2;
    }
}

/// Each thread's value of column `tid % cols` combined with those of the other threads of that
/// column: valid in threads below `cols`. Every thread must call it (it has a barrier). Within
/// a warp by shuffles (threads `cols` apart share a column), then lanes below `cols` of each
/// warp leave their values in shared memory, where position `p` holds column `p % cols`, and
/// the threads of the columns add them up in warp order.
#[inline(always)]
fn gather_columns<T: Element, R: Reduction<T>>(
    value: R::Acc,
    tid: usize,
    columns: ColumnDivisor,
    block: u32,
    shared: &SharedArray<R::Acc>,
) -> R::Acc {
    let cols = columns.cols as usize;
    // The threads left the partials' loops after different numbers of loads: bring the warp
    // together before its shuffles (a diverged warp takes ptxas's slow emulation of them).
    sync_warp(FULL_MASK);
    let mut value = value;
    for_tree_offsets(cols, |offset| {
        value = combine_from_below::<T, R>(value, offset);
    });
    let (warp, lane) = (tid / WARP_SIZE as usize, tid % WARP_SIZE as usize);
    // The block's first phase read its values from shared memory before the barriers around
    // the ticket: these stores cannot overtake those loads.
    if lane < cols {
        // Thread `tid` holds column `tid % cols`: `lane + (tid - lane) % cols`, less `cols` if
        // that passes it.
        let column = columns.small_remainder((tid - lane) as u32) as usize + lane;
        let column = if column >= cols {
            column - cols
        } else {
            column
        };
        shared.store(warp * cols + column, value);
    }
    sync_threads();
    add_positions::<T, R>(shared, tid, cols, cols, block)
}

/// In threads below `cols`: the values at positions `tid, tid + cols, …` of `shared`, each of
/// the block's `block / 32` warps having left `per_warp` of them (a multiple of `cols`), in
/// order (the identity elsewhere). Where each warp left one value of each column (every
/// power of two, and counts that the lanes divide), one loop of constant count, unrolled, its
/// loads issued together: a loop within it cost the powers of two about 1 µs a launch on the
/// H100 (`docs/runs/2026-11-27/call14_*`: 2^20 × 2 `f32` 10.88 → 10.51 µs, 2^18 × 8 `bf16`
/// 9.42 → 8.90).
#[inline(always)]
fn add_positions<T: Element, R: Reduction<T>>(
    shared: &SharedArray<R::Acc>,
    tid: usize,
    cols: usize,
    per_warp: usize,
    block: u32,
) -> R::Acc {
    let mut total = R::IDENTITY;
    if tid >= cols {
        return total;
    }
    let warps = block as usize / WARP_SIZE as usize;
    if per_warp == cols {
        let mut warp = 0;
        while warp < warps {
            total = R::combine(total, shared.load(warp * cols + tid));
            warp += 1;
        }
    } else {
        let mut position = tid;
        while position < warps * per_warp {
            total = R::combine(total, shared.load(position));
            position += cols;
        }
    }
    total
}
