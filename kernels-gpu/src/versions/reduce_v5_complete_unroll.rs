//! # v5 — complete unroll: the block size is a compile-time constant
//! (the tutorial series' chapter `reduce_v5_completely_unroll`; Harris's "V6")
//!
//! Changes against v4: the block size is a const generic `BLOCK`, so the tree's loop is
//! unrolled at compile time: each `if BLOCK >= …` is decided by the compiler, and what is left
//! is a fixed sequence of `if tid < s { … } sync_threads()` steps with constant strides, then
//! v4's last warp. No loop counter, no stride arithmetic.
//!
//! ```text
//! BLOCK = 256:   tid < 128: [t] ⊕= [t+128]   sync
//!                tid <  64: [t] ⊕= [t+64]    sync
//!                warp 0:    v4's unrolled last warp
//! ```
//!
//! The host launches one monomorphized entry point per block size in
//! [`crate::launch::BLOCK_SIZES`]; a launch with another block size faults.
//!
//! # Thread Mapping, output contract, any length
//! As v3: two elements per thread, one partial per block, identity past the end.

use crate::device::{
    GlobalSlice, GlobalSliceMut, SharedArray, block_idx_x, require_block_dim,
    shared_array, sync_threads, thread_idx_x,
};
use crate::element::Element;
use crate::ops::ReduceOp;
use crate::params::Scratch;
use crate::versions::reduce_v3_add_during_load::load_pair;
use crate::versions::reduce_v4_unroll_last_warp::warp_reduce_shared;

/// The whole shared-memory tree of a `BLOCK`-thread block, unrolled: constant strides from
/// `BLOCK / 2` down to 64, then the last warp. Leaves the result in `shared[0]`.
#[inline(always)]
pub(crate) fn block_reduce_unrolled<T: Element, Op: ReduceOp<T>, const BLOCK: u32>(
    shared: &SharedArray<T>,
    tid: u32,
) {
    let step = |stride: u32| {
        if BLOCK >= 2 * stride {
            if tid < stride {
                let (left, right) = (tid as usize, (tid + stride) as usize);
                shared.store(left, Op::combine(shared.load(left), shared.load(right)));
            }
            sync_threads();
        }
    };
    step(512);
    step(256);
    step(128);
    step(64);
    if tid < 32 {
        warp_reduce_shared::<T, Op>(shared, tid);
    }
}

pub fn reduce_v5<T: Element, Op: ReduceOp<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    _scratch: Scratch<T>,
    output: GlobalSliceMut<T>,
) {
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x();
    let shared = shared_array![T; BLOCK as usize];

    shared.store(tid as usize, load_pair::<T, Op>(&input, tid, BLOCK));
    sync_threads();

    block_reduce_unrolled::<T, Op, BLOCK>(&shared, tid);

    if tid == 0 {
        output.store(block_idx_x() as usize, shared.load(0));
    }
}
