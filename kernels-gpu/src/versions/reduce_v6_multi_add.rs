//! # v6 — multiple adds per thread: a grid sized to the GPU
//! (Harris's "V7"; the tutorial's `NUM_PER_THREAD` idea)
//!
//! Changes against v5: instead of one block per `2 * BLOCK` elements (65 536 blocks for
//! 2^25 elements), the host launches only as many blocks as the GPU keeps resident
//! (multiprocessors × `RESIDENT_THREADS_PER_SM / BLOCK`), and each thread walks the input in
//! a grid-stride loop, combining two elements per step in a register. The shared-memory tree
//! (v5's, unrolled) then runs once per block over many elements instead of once per 512:
//! per element, almost all the work left is the load.
//!
//! ```text
//! grid stride G = 2 * BLOCK * gridDim
//! thread t of block b:  acc = x[i] ⊕ x[i+BLOCK] ⊕ x[i+G] ⊕ x[i+G+BLOCK] ⊕ …,  i = b*2*BLOCK + t
//! then v5's tree over the block's accumulators
//! ```
//!
//! # Thread Mapping
//! Thread `t` of block `b` combines elements `b*2*BLOCK + t + k*G` and `… + BLOCK`, k = 0, 1, …
//!
//! # Output contract
//! One partial per block (`gridDim` of them in `output`, a few per multiprocessor).
//!
//! # Any length
//! The loop bound is the length; the second load of a pair is guarded. The unrolled part of the
//! loop runs while all eight loads are in bounds, the rolled remainder after it.

use crate::device::{
    GlobalSlice, GlobalSliceMut, block_idx_x, grid_dim_x, require_block_dim,
    shared_array, sync_threads, thread_idx_x,
};
use crate::element::Element;
use crate::ops::ReduceOp;
use crate::params::Scratch;
use crate::launch::ADD_DURING_LOAD;
use crate::versions::reduce_v5_complete_unroll::block_reduce_unrolled;

/// Pairs of loads each thread issues before adding them.
const PAIRS_IN_FLIGHT: usize = 4;

pub fn reduce_v6<T: Element, Op: ReduceOp<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    _scratch: Scratch<T>,
    output: GlobalSliceMut<T>,
) {
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x();
    let shared = shared_array![T; BLOCK as usize];

    let pair = (ADD_DURING_LOAD * BLOCK) as usize;
    let grid_stride = pair * grid_dim_x() as usize;
    let len = input.len();
    let mut index = block_idx_x() as usize * pair + tid as usize;
    let mut acc = Op::IDENTITY;
    // Four grid strides at a time: eight independent loads in flight before the first add
    // (what nvcc's unroller does to Harris's loop; rustc's leaves it rolled).
    while index + 3 * grid_stride + (BLOCK as usize) < len {
        let firsts = input.load_strided::<PAIRS_IN_FLIGHT>(index, grid_stride);
        let seconds = input.load_strided::<PAIRS_IN_FLIGHT>(index + BLOCK as usize, grid_stride);
        for k in 0..PAIRS_IN_FLIGHT {
            acc = Op::combine(Op::combine(acc, firsts[k]), seconds[k]);
        }
        index += PAIRS_IN_FLIGHT * grid_stride;
    }
    while index < len {
        acc = Op::combine(acc, input.load(index));
        let second = index + BLOCK as usize;
        if second < len {
            acc = Op::combine(acc, input.load(second));
        }
        index += grid_stride;
    }
    shared.store(tid as usize, acc);
    sync_threads();

    block_reduce_unrolled::<T, Op, BLOCK>(&shared, tid);

    if tid == 0 {
        output.store(block_idx_x() as usize, shared.load(0));
    }
}
