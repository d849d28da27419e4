//! # v0 — baseline: interleaved addressing with divergent warps
//! (the tutorial series' chapter `reduce_v0_baseline`; Harris's slides and the series' diagrams number it "V1")
//!
//! Each block copies `blockDim` elements into shared memory, then halves them in
//! `log2(blockDim)` rounds. In round `k` (stride `s = 2^k`) the threads with
//! `tid % (2s) == 0` add their right-hand neighbour at distance `s`:
//!
//! ```text
//! tid:        0     1     2     3     4     5     6     7
//! s = 1:    [0+1]   .   [2+3]   .   [4+5]   .   [6+7]   .
//! s = 2:    [0..3]  .     .     .   [4..7]  .     .     .
//! s = 4:    [0..7]  .     .     .     .     .     .     .
//! ```
//!
//! Why it is slow: the active threads are scattered across every warp (`tid % 2s`), so all
//! warps stay busy with a branch that only some of their lanes take (divergence), and `%` is
//! an expensive instruction. Kept on purpose — v1 fixes it.
//!
//! # Thread Mapping
//! Thread `tid` of block `b` loads element `b * blockDim + tid`.
//!
//! # Output contract
//! One partial per block: `output[b]` = reduction of the block's `blockDim` elements.
//!
//! # Any length
//! Threads past the end load the operator's identity, so the last block may be partial.

use crate::device::{
    GlobalSlice, GlobalSliceMut, block_dim_x, block_idx_x, shared_array,
    sync_threads, thread_idx_x,
};
use crate::element::Element;
use crate::ops::ReduceOp;
use crate::params::Scratch;

/// Element `index` of `input`, or the operator's identity past the end (padding for the
/// tail of the last block).
#[inline(always)]
pub(crate) fn load_or_identity<T: Element, Op: ReduceOp<T>>(
    input: &GlobalSlice<T>,
    index: usize,
) -> T {
    if index < input.len() {
        input.load(index)
    } else {
        Op::IDENTITY
    }
}

pub fn reduce_v0<T: Element, Op: ReduceOp<T>>(
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
        // The tutorial's `%`, kept: this test is what makes v0 divergent.
        #[allow(clippy::manual_is_multiple_of)]
        if tid % (2 * stride) == 0 {
            let (left, right) = (tid as usize, (tid + stride) as usize);
            shared.store(left, Op::combine(shared.load(left), shared.load(right)));
        }
        sync_threads();
        stride *= 2;
    }

    if tid == 0 {
        output.store(block_idx_x() as usize, shared.load(0));
    }
}
