//! # v3 — add during load: two elements per thread, half the blocks
//! (the tutorial series' chapter `reduce_v3_add_during_load`; "V4" in its diagrams and in Harris's slides)
//!
//! Changes against v2: each block covers `2 * blockDim` elements, and every thread adds its
//! two elements while copying them to shared memory — the tree's first round, done by all
//! threads at once instead of half of them, with half as many blocks:
//!
//! ```text
//! block b:   [ b*2B .. b*2B+B )      [ b*2B+B .. b*2B+2B )
//!                 │ tid                    │ tid + B
//!                 └────────── + ───────────┘
//!                             ▼
//!                       shared[tid]   then v2's tree over B slots
//! ```
//!
//! # Thread Mapping
//! Thread `tid` of block `b` loads elements `b * 2B + tid` and `b * 2B + B + tid`
//! (`B = blockDim`, `ADD_DURING_LOAD = 2` in [`crate::launch`]).
//!
//! # Output contract
//! One partial per block: `output[b]` = reduction of the block's `2 * blockDim` elements.
//!
//! # Any length
//! Either load past the end gives the identity, so a partial last block is fine.

use crate::device::{
    GlobalSlice, GlobalSliceMut, block_dim_x, block_idx_x, shared_array,
    sync_threads, thread_idx_x,
};
use crate::element::Element;
use crate::ops::ReduceOp;
use crate::params::Scratch;
use crate::launch::ADD_DURING_LOAD;
use crate::versions::reduce_v0_baseline::load_or_identity;
use crate::versions::reduce_v2_no_bank_conflict::tree_reduce_shared;

/// The first reduction step fused with the load: `input[first + tid] ⊕ input[first + B + tid]`.
#[inline(always)]
pub(crate) fn load_pair<T: Element, Op: ReduceOp<T>>(
    input: &GlobalSlice<T>,
    tid: u32,
    block: u32,
) -> T {
    let first = block_idx_x() as usize * (ADD_DURING_LOAD * block) as usize + tid as usize;
    Op::combine(
        load_or_identity::<T, Op>(input, first),
        load_or_identity::<T, Op>(input, first + block as usize),
    )
}

pub fn reduce_v3<T: Element, Op: ReduceOp<T>>(
    input: GlobalSlice<T>,
    _scratch: Scratch<T>,
    output: GlobalSliceMut<T>,
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let shared = shared_array![T; block as usize];

    shared.store(tid as usize, load_pair::<T, Op>(&input, tid, block));
    sync_threads();

    tree_reduce_shared::<T, Op>(&shared, tid, block / 2, 0);

    if tid == 0 {
        output.store(block_idx_x() as usize, shared.load(0));
    }
}
