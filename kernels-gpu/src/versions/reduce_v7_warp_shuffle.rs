//! # v7 — warp shuffles: partial sums in registers, not shared memory
//! (the tutorial series' chapter `reduce_v7_shuffle`; Harris's series ends at v6 — this is the Kepler-era
//! follow-up)
//!
//! Changes against v6: each thread keeps its running value in a register (grid-stride loop,
//! one element per step), and the tree inside a warp is done with `shfl.sync.down`: lanes
//! read each other's registers directly, with no shared memory, no barrier and no bank to
//! conflict on. Shared memory only carries one value per warp to the first warp:
//!
//! ```text
//! 1. thread:  acc = x[i] ⊕ x[i+S] ⊕ x[i+2S] ⊕ …      (S = BLOCK * gridDim, 8 loads in flight)
//! 2. warp:    acc ⊕= shfl_down(acc, 16); … 8; 4; 2; 1 → lane 0 holds the warp's value
//! 3. block:   lane 0 of warp w → warp_partials[w];  sync_threads
//!             warp 0: acc = warp_partials[lane] (identity past BLOCK/32), shuffles over BLOCK/32 lanes
//! ```
//!
//! # Thread Mapping
//! Thread `t` of block `b` combines elements `b*BLOCK + t + k*S`, k = 0, 1, …
//!
//! # Output contract
//! One partial per block (`gridDim` of them in `output`).
//!
//! # Any length
//! The loop bound is the length.

use crate::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, SharedArray, WARP_SIZE, block_idx_x,
    grid_dim_x, require_block_dim, shared_array, sync_threads, thread_idx_x, warp_shuffle_down,
};
use crate::element::Element;
use crate::ops::{ReduceOp, Reduction};
use crate::params::Scratch;

/// Loads each thread issues before adding them (the tutorial's `NUM_PER_THREAD`).
const LOADS_IN_FLIGHT: usize = 8;

/// Reduces `value` over the first `lanes` lanes of the warp (a power of two ≤ 32) with
/// shuffles; lane 0 gets the result, other lanes get partial or meaningless values.
#[inline(always)]
pub(crate) fn warp_reduce_shuffle<T: Element, R: Reduction<T>>(mut value: R::Acc, lanes: u32) -> R::Acc {
    let mut offset = lanes / 2;
    while offset > 0 {
        let (other, _) = warp_shuffle_down(FULL_MASK, value, offset, WARP_SIZE);
        value = R::combine(value, other);
        offset /= 2;
    }
    value
}

/// Reduces one value per thread over a block of `block` threads (a multiple of 32): shuffles
/// within each warp, one value per warp through `warp_partials` (`block / 32` slots), shuffles
/// again in warp 0. The result is valid in thread 0. Every thread must call it (it has a
/// barrier).
#[inline(always)]
pub(crate) fn block_reduce_shuffle<T: Element, R: Reduction<T>>(
    value: R::Acc,
    tid: u32,
    block: u32,
    warp_partials: &SharedArray<R::Acc>,
) -> R::Acc {
    let warps = block / WARP_SIZE;
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let value = warp_reduce_shuffle::<T, R>(value, WARP_SIZE);
    if lane == 0 {
        warp_partials.store(warp as usize, value);
    }
    sync_threads();
    if warp == 0 {
        let value = if lane < warps {
            warp_partials.load(lane as usize)
        } else {
            R::IDENTITY
        };
        warp_reduce_shuffle::<T, R>(value, warps)
    } else {
        R::IDENTITY
    }
}

pub fn reduce_v7<T: Element, Op: ReduceOp<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    _scratch: Scratch<T>,
    output: GlobalSliceMut<T>,
) {
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x();
    let warp_partials = shared_array![T; (BLOCK / WARP_SIZE) as usize];

    let grid_stride = BLOCK as usize * grid_dim_x() as usize;
    let len = input.len();
    let mut index = block_idx_x() as usize * BLOCK as usize + tid as usize;
    let mut acc = Op::IDENTITY;
    // The tutorial's `NUM_PER_THREAD` loads, unrolled: all in flight before the first add.
    while index + (LOADS_IN_FLIGHT - 1) * grid_stride < len {
        acc = input
            .load_strided::<LOADS_IN_FLIGHT>(index, grid_stride)
            .into_iter()
            .fold(acc, Op::combine);
        index += LOADS_IN_FLIGHT * grid_stride;
    }
    while index < len {
        acc = Op::combine(acc, input.load(index));
        index += grid_stride;
    }

    let block_value = block_reduce_shuffle::<T, Op>(acc, tid, BLOCK, &warp_partials);
    if tid == 0 {
        output.store(block_idx_x() as usize, block_value);
    }
}
