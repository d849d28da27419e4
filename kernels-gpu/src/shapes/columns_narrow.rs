//! # Narrow columns: a handful of columns read as the flat array they are
//!
//! Changes against [`super::columns`], for matrices of 1 to [`MAX_NARROW_COLUMNS`] columns (a
//! power of two): instead of a thread per group of columns walking down its rows in bands, the
//! matrix is read as v8 reads a whole array — thread `g` of `T` loads vectors `g`, `g + T`,
//! `g + 2T`, …, four in flight — and each lane of a thread's vectors keeps its own running
//! value. Because `T · lanes` is a multiple of the column count, lane `k` of every vector a
//! thread loads lies in the same column: `(head + g · lanes + k) % cols`. So no thread reads
//! a byte another thread reads, every warp load is 512 consecutive bytes, and there are no
//! bands to hand over: one partial per column and block, and v8's last block.
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
//! block: the warps' columns in shared memory → partials[block][cols]; fence; ticket
//! last block: thread t adds partials[t / cols, + 256 / cols, …][t % cols], the threads of a
//!   column meet (shuffles, shared memory); head and tail scalars; output[cols]
//! ```
//!
//! # Thread Mapping
//! Global thread `g = b·BLOCK + t` of `T` loads vectors `g, g + T, …`; its lane `k` is column
//! `(head + g·lanes + k) % cols`. In the last block thread `t` adds the partials of slot
//! `t % cols` of blocks `t / cols`, `t / cols + BLOCK / cols`, …; slot `q` is column
//! `(head + q) % cols`.
//!
//! # Output contract
//! `output[c]` = the finished result of column `c` over all rows (`EMPTY` when there are no
//! rows); the arg operators' index is the row. `cols` must satisfy [`is_narrow`] (else the
//! kernel writes nothing). Scratch: `partials` holds `gridDim · cols` accumulators, `retired[0]`
//! is 0 before the launch and set back to 0. Shared memory: [`shared_accumulators`]
//! accumulators and the ticket.

use crate::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, SharedArray, WARP_SIZE, block_idx_x, grid_dim_x,
    require_block_dim, shared_array, sync_threads, sync_warp, thread_fence, thread_idx_x,
    warp_shuffle_down,
};
use crate::element::{Element, Vector16};
use crate::launch::{VECTORS_IN_FLIGHT, elements_per_vector};
use crate::ops::{Reduction, fold};
use crate::params::Scratch;

/// The most columns this kernel reduces: a warp's lanes then hold every column of a block's
/// partial between them (`32 · lanes` is a multiple of the column count, and the block's
/// warps' columns fit one accumulator per thread of shared memory).
pub const MAX_NARROW_COLUMNS: usize = WARP_SIZE as usize;

/// The most lanes a 16-byte vector has (8 of a 16-bit type).
const MAX_LANES: usize = 8;

/// Partials each thread of the last block loads at once (as v8).
const PARTIALS_IN_FLIGHT: usize = 8;

/// Whether this kernel reduces a matrix of `cols` columns: a power of two up to
/// [`MAX_NARROW_COLUMNS`].
#[inline(always)]
pub const fn is_narrow(cols: usize) -> bool {
    cols.is_power_of_two() && cols <= MAX_NARROW_COLUMNS
}

/// Accumulators of shared memory a block of `block` threads needs: one per thread (the last
/// block's threads meet there; the warps' columns, `block / 32 · cols`, take no more), as
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
    if !is_narrow(cols) {
        return;
    }
    let lanes = elements_per_vector(size_of::<T>());
    let tid = thread_idx_x() as usize;
    let grid = grid_dim_x() as usize;
    let threads = BLOCK as usize * grid;
    let shared = shared_array![R::Acc; shared_accumulators(BLOCK)];
    let ticket = shared_array![u32; 1; after shared];
    // Element `e` is row `e >> shift` of column `e & (cols - 1)`.
    let shift = cols.trailing_zeros();
    let (head, vectors, tail_start) = input.split_vectors();

    // This thread's vectors: a running value per lane, each lane one column throughout.
    let mut running = [R::START; MAX_LANES];
    let mut vector = block_idx_x() as usize * BLOCK as usize + tid;
    let in_flight = VECTORS_IN_FLIGHT * threads;
    while vector + in_flight - threads < vectors.len() {
        let loaded = vectors.load_strided::<VECTORS_IN_FLIGHT>(vector, threads);
        let first = head + vector * lanes;
        T::Vector16::for_lanes(|k| {
            let acc = R::column_group(&loaded, k, |j| (first + j * threads * lanes + k) >> shift);
            running[k] = R::accumulate(running[k], acc);
        });
        vector += in_flight;
    }
    while vector < vectors.len() {
        let loaded = vectors.load(vector);
        let first = head + vector * lanes;
        T::Vector16::for_lanes(|k| {
            let value = R::lift(loaded.lanes()[k], (first + k) >> shift);
            running[k] = R::accumulate(running[k], value);
        });
        vector += threads;
    }
    let mut values = [R::IDENTITY; MAX_LANES];
    T::Vector16::for_lanes(|k| values[k] = R::settle(running[k]));
    let slots = fold_lanes::<T, R>(&mut values, cols, lanes);

    // The warp: threads `period` apart hold the same columns; lanes below `period` keep them.
    let period = if cols > lanes { cols / lanes } else { 1 };
    let mut offset = WARP_SIZE as usize / 2;
    while offset >= period {
        T::Vector16::for_lanes(|k| {
            // Only the slots hold values (the same `k` in every lane: the warp stays together).
            // Skipping the others paid for accumulators of 8 bytes and more (the f32 column
            // argmax of 2^20 × 2 16.3 → 14.7 µs, bf16 18.6 → 15.0) but cost 4-byte ones more
            // in branches than it saved in shuffles (2^20 × 2 bf16 sums 8.5 → 9.0, 2^18 × 8
            // 8.3 → 9.3): measured in one binary, `docs/runs/2026-11-27/call8_against.log`.
            if k < slots || size_of::<R::Acc>() <= 4 {
                let (other, _) =
                    warp_shuffle_down(FULL_MASK, values[k], offset as u32, WARP_SIZE);
                values[k] = R::combine(values[k], other);
            }
        });
        offset /= 2;
    }
    // The block: warp `w` leaves slot `q = lane · slots + k` at `w · cols + q`; thread `q`
    // adds the warps up in order.
    let (warp, lane) = (tid / WARP_SIZE as usize, tid % WARP_SIZE as usize);
    if lane < period {
        T::Vector16::for_lanes(|k| {
            if k < slots {
                shared.store(warp * cols + lane * slots + k, values[k]);
            }
        });
    }
    sync_threads();
    let block_value = add_warps::<T, R>(&shared, tid, cols, BLOCK);

    let total = if grid == 1 {
        block_value
    } else {
        if tid < cols {
            scratch.partials.store(block_idx_x() as usize * cols + tid, block_value);
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
        // The last block: every block's partials were fenced before its ticket.
        thread_fence();
        // Shifts, not divisions: `cols` is a power of two (no division check to pull in a panic).
        let (slot, step) = (tid & (cols - 1), BLOCK as usize >> shift);
        let mut acc = R::IDENTITY;
        let mut from = tid >> shift;
        while from + (PARTIALS_IN_FLIGHT - 1) * step < grid {
            let loaded = scratch
                .partials
                .load_strided::<PARTIALS_IN_FLIGHT>(from * cols + slot, step * cols);
            acc = fold(acc, loaded, R::combine);
            from += PARTIALS_IN_FLIGHT * step;
        }
        while from < grid {
            acc = R::combine(acc, scratch.partials.load(from * cols + slot));
            from += step;
        }
        if tid == 0 {
            retired.reset();
        }
        gather_slots::<T, R>(acc, tid, cols, BLOCK, &shared)
    };

    // Thread `q` below `cols`: slot `q` is column `(head + q) % cols`; the scalars before the
    // first whole vector and after the last are that column's too.
    if tid < cols {
        let column = (head + tid) & (cols - 1);
        let mut total = total;
        let mut element = column;
        while element < head {
            total = R::combine(total, R::lift(input.load(element), element >> shift));
            element += cols;
        }
        let mut element = tail_start + ((column + cols - (tail_start & (cols - 1))) & (cols - 1));
        while element < input.len() {
            total = R::combine(total, R::lift(input.load(element), element >> shift));
            element += cols;
        }
        output.store(column, if rows == 0 { R::EMPTY } else { R::finish(total, rows) });
    }
}

/// Lanes `cols` apart hold the same column when there are fewer columns than lanes: folds them
/// into the first `cols` (halving, so that every index is a constant once unrolled: an index
/// known only at run time would put the array in local memory). Returns the slots left per
/// thread: `cols` or every lane.
#[inline(always)]
fn fold_lanes<T: Element, R: Reduction<T>>(
    values: &mut [R::Acc; MAX_LANES],
    cols: usize,
    lanes: usize,
) -> usize {
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
    if cols < lanes { cols } else { lanes }
}

/// Each thread's value of slot `tid % cols` combined with those of the other threads of that
/// slot: valid in threads below `cols`. Every thread must call it (it has a barrier). Within a
/// warp by shuffles (threads `cols` apart share a slot), then lanes below `cols` of each warp
/// leave their values in shared memory, which the threads of the slots add up in warp order.
#[inline(always)]
fn gather_slots<T: Element, R: Reduction<T>>(
    value: R::Acc,
    tid: usize,
    cols: usize,
    block: u32,
    shared: &SharedArray<R::Acc>,
) -> R::Acc {
    // The threads left the partials' loops after different numbers of loads: bring the warp
    // together before its shuffles (a diverged warp takes ptxas's slow emulation of them).
    sync_warp(FULL_MASK);
    let mut value = value;
    let mut offset = WARP_SIZE as usize / 2;
    while offset >= cols {
        let (other, _) = warp_shuffle_down(FULL_MASK, value, offset as u32, WARP_SIZE);
        value = R::combine(value, other);
        offset /= 2;
    }
    let (warp, lane) = (tid / WARP_SIZE as usize, tid % WARP_SIZE as usize);
    // The block's first phase read its slots from shared memory before the barriers around the
    // ticket: these stores cannot overtake those loads.
    if lane < cols {
        shared.store(warp * cols + lane, value);
    }
    sync_threads();
    add_warps::<T, R>(shared, tid, cols, block)
}

/// In threads below `cols`: the values the block's warps left at `warp · cols + tid`, in warp
/// order (the identity elsewhere).
#[inline(always)]
fn add_warps<T: Element, R: Reduction<T>>(
    shared: &SharedArray<R::Acc>,
    tid: usize,
    cols: usize,
    block: u32,
) -> R::Acc {
    let mut total = R::IDENTITY;
    if tid < cols {
        let mut warp = 0;
        while warp < block as usize / WARP_SIZE as usize {
            total = R::combine(total, shared.load(warp * cols + tid));
            warp += 1;
        }
    }
    total
}
