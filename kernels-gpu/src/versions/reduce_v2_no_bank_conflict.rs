//! # v2 — no bank conflicts: sequential addressing
//! (the tutorial series' chapter `reduce_v2_no_bank_confict`; "V3" in its diagrams and in Harris's slides)
//!
//! Changes against v1: the stride starts at `blockDim / 2` and halves; thread `tid < s` adds
//! slot `tid + s` into slot `tid`. Consecutive lanes touch consecutive words, so the 32 lanes
//! of a warp hit 32 different banks: no conflicts, and still no divergence above one warp.
//!
//! ```text
//! slot:      0   1   2   3 | 4   5   6   7
//! s = 4:    [0+4 1+5 2+6 3+7]
//! s = 2:    [0+2 1+3]
//! s = 1:    [0+1]
//! ```
//!
//! What is left: in the first round half the threads only loaded an element and now idle.
//! v3 puts them to work during the load.
//!
//! # Thread Mapping, output contract, any length
//! As v0: one element per thread, one partial per block, identity past the end.

use crate::device::{
    GlobalSlice, GlobalSliceMut, SharedArray, block_dim_x, block_idx_x,
    shared_array, sync_threads, thread_idx_x,
};
use crate::element::Element;
use crate::ops::ReduceOp;
use crate::params::Scratch;
use crate::versions::reduce_v0_baseline::load_or_identity;

/// Sequential-addressing tree over `shared[0..2 * from]`, down to `shared[until - 1]` and
/// stopping before stride `until`, with a barrier after every round. v2 and v3 run it to
/// the end (`until = 0`); v4 stops at one warp (`until = 32`).
#[inline(always)]
pub(crate) fn tree_reduce_shared<T: Element, Op: ReduceOp<T>>(
    shared: &SharedArray<T>,
    tid: u32,
    from: u32,
    until: u32,
) {
    let mut stride = from;
    while stride > until {
        if tid < stride {
            let (left, right) = (tid as usize, (tid + stride) as usize);
            shared.store(left, Op::combine(shared.load(left), shared.load(right)));
        }
        sync_threads();
        stride /= 2;
    }
}

pub fn reduce_v2<T: Element, Op: ReduceOp<T>>(
    input: GlobalSlice<T>,
    _scratch: Scratch<T>,
    output: GlobalSliceMut<T>,
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let first = block_idx_x() as usize * block as usize;
    let shared = shared_array![T; block as usize];

    shared.store(
        tid as usize,
        load_or_identity::<T, Op>(&input, first + tid as usize),
    );
    sync_threads();

    tree_reduce_shared::<T, Op>(&shared, tid, block / 2, 0);

    if tid == 0 {
        output.store(block_idx_x() as usize, shared.load(0));
    }
}
