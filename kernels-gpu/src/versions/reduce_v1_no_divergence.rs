//! # v1 — no divergence: strided index, bank conflicts
//! (the tutorial series' chapter `reduce_v1_no_divergence_branch`; "V2" in its diagrams and in Harris's slides)
//!
//! Changes against v0: instead of picking scattered threads with `tid % (2s) == 0`, thread
//! `tid` works on slot `index = 2 * s * tid`. The same pairs are added, but by the *first*
//! `blockDim / 2s` threads, so whole warps are either all active or all idle (no divergence
//! until fewer than 32 threads remain) and the `%` is gone.
//!
//! ```text
//! tid:        0       1       2       3
//! s = 1:   [0]+=[1] [2]+=[3] [4]+=[5] [6]+=[7]
//! s = 2:   [0]+=[2] [4]+=[6]
//! s = 4:   [0]+=[4]
//! ```
//!
//! The new cost: lanes of a warp now touch shared-memory words `2s` apart, so for `s = 1`
//! lanes 0 and 16 both hit bank 0 (2-way conflict), 4-way for `s = 2`, and so on (the tutorial
//! has the bank tables). Kept on purpose — v2 fixes it.
//!
//! # Thread Mapping, output contract, any length
//! As v0: one element per thread, one partial per block, identity past the end.

use crate::device::{
    GlobalSlice, GlobalSliceMut, block_dim_x, block_idx_x, shared_array,
    sync_threads, thread_idx_x,
};
use crate::element::Element;
use crate::ops::ReduceOp;
use crate::params::Scratch;
use crate::versions::reduce_v0_baseline::load_or_identity;

pub fn reduce_v1<T: Element, Op: ReduceOp<T>>(
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

    let mut stride = 1;
    while stride < block {
        let index = 2 * stride * tid;
        if index < block {
            let (left, right) = (index as usize, (index + stride) as usize);
            shared.store(left, Op::combine(shared.load(left), shared.load(right)));
        }
        sync_threads();
        stride *= 2;
    }

    if tid == 0 {
        output.store(block_idx_x() as usize, shared.load(0));
    }
}
