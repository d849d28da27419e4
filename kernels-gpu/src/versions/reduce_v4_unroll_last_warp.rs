//! # v4 — unroll the last warp
//! (the tutorial series' chapter `reduce_v4_unroll_last_warp`; "V5" in its diagrams and in Harris's slides)
//!
//! Changes against v3: the tree runs with barriers only while more than one warp is active
//! (`s > 32`); the last six rounds (`s = 32 … 1`) are done by warp 0 alone, unrolled, with no
//! `sync_threads` and no `if tid < s` — lanes whose result nobody needs compute it anyway.
//!
//! ```text
//! s = B/2 … 64:  sync_threads tree (v2/v3)
//! warp 0:        [t] ⊕= [t+32]; [t] ⊕= [t+16]; [t] ⊕= [t+8]; [t] ⊕= [t+4]; [t] ⊕= [t+2]; [t] ⊕= [t+1]
//! ```
//!
//! # Correction against the tutorial
//! The tutorial relies on the warp running in lockstep and marks `cache` `volatile`; it states no
//! `__syncwarp()` is needed. Since Volta (independent thread scheduling) that is a data race:
//! lane 16 may write `cache[16]` before lane 0 has read it. This port keeps the technique —
//! one warp, unrolled, shared memory, no block barrier — and makes it correct: each step
//! reads both operands into a register, `sync_warp`s, then writes, and `sync_warp`s again.
//! (The tutorial's literal code is kept in the simulator tests, where it is reported as a race;
//! compute-sanitizer's racecheck on the H100 reports it too, as a warning.)
//!
//! # Thread Mapping, output contract, any length
//! As v3: two elements per thread, one partial per block, identity past the end.
//! Needs `blockDim >= 64` (the first step reads `tid + 32`).

use crate::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, SharedArray, block_dim_x, block_idx_x,
    shared_array, sync_threads, sync_warp, thread_idx_x,
};
use crate::element::Element;
use crate::ops::ReduceOp;
use crate::params::Scratch;
use crate::versions::reduce_v2_no_bank_conflict::tree_reduce_shared;
use crate::versions::reduce_v3_add_during_load::load_pair;

/// Reduces `shared[0..64]` into `shared[0]` with the 32 lanes of warp 0, unrolled.
/// Every step reads, syncs the warp, writes and syncs again, so no lane reads a word another
/// lane is writing in the same step.
#[inline(always)]
pub(crate) fn warp_reduce_shared<T: Element, Op: ReduceOp<T>>(shared: &SharedArray<T>, lane: u32) {
    let lane = lane as usize;
    let mut value = shared.load(lane);
    // A constant trip count: the compiler unrolls it into the tutorial's six statements.
    let mut offset = 32;
    while offset > 0 {
        value = Op::combine(value, shared.load(lane + offset));
        sync_warp(FULL_MASK);
        shared.store(lane, value);
        sync_warp(FULL_MASK);
        offset /= 2;
    }
}

pub fn reduce_v4<T: Element, Op: ReduceOp<T>>(
    input: GlobalSlice<T>,
    _scratch: Scratch<T>,
    output: GlobalSliceMut<T>,
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let shared = shared_array![T; block as usize];

    shared.store(tid as usize, load_pair::<T, Op>(&input, tid, block));
    sync_threads();

    tree_reduce_shared::<T, Op>(&shared, tid, block / 2, 32);
    if tid < 32 {
        warp_reduce_shared::<T, Op>(&shared, tid);
    }

    if tid == 0 {
        output.store(block_idx_x() as usize, shared.load(0));
    }
}
