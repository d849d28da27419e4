//! # v8 — single pass: vector loads, and the last block finishes the job
//! (beyond the seeds)
//!
//! Changes against v7, each aimed at what is left between v7 and the memory's bandwidth:
//! - **16-byte vector loads.** Each thread loads four `f32` (two `f64`) per instruction: a
//!   quarter of the load instructions, and more bytes in flight per thread. The slice may
//!   start anywhere, so a scalar *head* runs up to the first 16-byte boundary and a scalar
//!   *tail* covers what is left after the last whole vector.
//! - **Unrolled register accumulation.** Four independent vector loads are issued before any
//!   of them is used, so every thread keeps 64 bytes in flight.
//! - **One launch.** Every block writes its partial, then `thread_fence()` and an atomic
//!   ticket; the block that draws the last ticket knows all partials are visible and reduces
//!   them itself (CUDA's "threadFenceReduction" pattern). No second kernel, no host round trip.
//!   A grid of one block (small inputs) has nothing to hand over and skips fence and ticket:
//!   about 1.5 µs less at 2^10 elements, where the launch is all there is.
//!
//! ```text
//! x: [head ≤3 scalars | vec vec vec … vec | tail ≤3 scalars]
//!          thread t: vectors t, t+T, t+2T, … (T = threads in the grid), 4 at a time
//! block:   v7's shuffle reduction → partials[b];  fence;  ticket = retired++
//! last:    the block with ticket gridDim-1 reduces partials[0..gridDim] → partials[0];  retired = 0
//! ```
//!
//! # Determinism
//! No floating-point atomics: each partial, and the final reduction over the partials in
//! index order, is computed the same way whichever block happens to finish last, so the
//! result is bitwise identical from run to run (for a given grid).
//!
//! # Thread Mapping
//! Global thread `g = b*BLOCK + t` of `T` loads vectors `g, g+T, …`, head element `g` if
//! `g < head`, and tail element `tail_start + g` if it exists.
//!
//! # Output contract
//! The final value, in `partials[0]` (`partials` holds `gridDim` elements). `retired` must be
//! 0 before the launch; the last block sets it back to 0.

use crate::device::{
    GlobalCounter, GlobalSlice, GlobalSliceMut, WARP_SIZE, block_idx_x, grid_dim_x,
    require_block_dim, shared_array, sync_threads, thread_fence, thread_idx_x,
};
use crate::element::{Element, ReduceOp, Vector16};
use crate::reduce_v7_warp_shuffle::block_reduce_shuffle;

/// Vector loads each thread issues before combining them.
const VECTORS_IN_FLIGHT: usize = 4;

/// Partials each thread of the last block loads at once.
const PARTIALS_IN_FLIGHT: usize = 8;

/// This thread's share of the input: head scalar, vectors (four at a time), tail scalar.
#[inline(always)]
fn thread_reduce_vectorized<T: Element, Op: ReduceOp<T>>(
    input: &GlobalSlice<T>,
    thread: usize,
    threads: usize,
) -> T {
    let (head, vectors, tail_start) = input.split_vectors();
    let fold = |acc: T, vector: T::Vector16| {
        vector
            .lanes()
            .iter()
            .fold(acc, |acc, &x| Op::combine(acc, x))
    };

    let mut acc = Op::IDENTITY;
    let mut vector = thread;
    let in_flight = VECTORS_IN_FLIGHT * threads;
    while vector + in_flight - threads < vectors.len() {
        acc = vectors
            .load_strided::<VECTORS_IN_FLIGHT>(vector, threads)
            .into_iter()
            .fold(acc, fold);
        vector += in_flight;
    }
    while vector < vectors.len() {
        acc = fold(acc, vectors.load(vector));
        vector += threads;
    }
    if thread < head {
        acc = Op::combine(acc, input.load(thread));
    }
    if tail_start + thread < input.len() {
        acc = Op::combine(acc, input.load(tail_start + thread));
    }
    acc
}

pub fn reduce_v8<T: Element, Op: ReduceOp<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    partials: GlobalSliceMut<T>,
    retired: GlobalCounter,
) {
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x();
    let grid = grid_dim_x();
    let warp_partials = shared_array![T; (BLOCK / WARP_SIZE) as usize];
    let ticket = shared_array![u32; 1; after warp_partials];

    let thread = block_idx_x() as usize * BLOCK as usize + tid as usize;
    let threads = BLOCK as usize * grid as usize;
    let acc = thread_reduce_vectorized::<T, Op>(&input, thread, threads);
    let block_value = block_reduce_shuffle::<T, Op, BLOCK>(acc, tid, &warp_partials);

    if grid == 1 {
        if tid == 0 {
            partials.store(0, block_value);
        }
        return;
    }
    if tid == 0 {
        partials.store(block_idx_x() as usize, block_value);
        // Release: this partial is visible device-wide before the ticket is drawn.
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) != grid - 1 {
        return;
    }

    // The last block: every other block's partial was fenced before its ticket.
    thread_fence();
    let mut acc = Op::IDENTITY;
    let mut index = tid as usize;
    // All of this thread's partials in flight at once (up to 8 per thread: 2048 partials for
    // 256 threads), not one load latency after another.
    while index + (PARTIALS_IN_FLIGHT - 1) * (BLOCK as usize) < grid as usize {
        acc = partials
            .load_strided::<PARTIALS_IN_FLIGHT>(index, BLOCK as usize)
            .into_iter()
            .fold(acc, Op::combine);
        index += PARTIALS_IN_FLIGHT * BLOCK as usize;
    }
    while index < grid as usize {
        acc = Op::combine(acc, partials.load(index));
        index += BLOCK as usize;
    }
    let total = block_reduce_shuffle::<T, Op, BLOCK>(acc, tid, &warp_partials);
    if tid == 0 {
        partials.store(0, total);
        retired.reset();
    }
}
