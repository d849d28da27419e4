//! # The bandwidth ceiling: a kernel that only reads
//!
//! Not a reduction version: it loads every element once with v8's 16-byte loads and grid
//! size, folds them into a register and writes nothing unless that value is impossible, so
//! the loads cannot be optimized away. Its time over the input is the fastest any reduction
//! can be on this device; the benchmark reports every version as a percentage of it.
//!
//! # Output contract
//! `partials[0]` is written only if the fold's bits equal `partials_len + 0x9E37_79B9_7F4A_7C15`
//! — never, in practice (the host passes a one-element `partials`).

use crate::device::{
    GlobalCounter, GlobalSlice, GlobalSliceMut, block_idx_x, grid_dim_x, thread_idx_x,
};
use crate::element::{Element, ReduceOp, Sum, Vector16};

pub fn read_probe<T: Element, const BLOCK: u32>(
    input: GlobalSlice<T>,
    partials: GlobalSliceMut<T>,
    retired: GlobalCounter,
) {
    let thread = block_idx_x() as usize * BLOCK as usize + thread_idx_x() as usize;
    let threads = BLOCK as usize * grid_dim_x() as usize;
    let (_, vectors, _) = input.split_vectors();
    let mut acc = <Sum as ReduceOp<T>>::IDENTITY;
    let mut vector = thread;
    while vector + 3 * threads < vectors.len() {
        for loaded in vectors.load_strided::<4>(vector, threads) {
            for &x in loaded.lanes() {
                acc = Sum::combine(acc, x);
            }
        }
        vector += 4 * threads;
    }
    while vector < vectors.len() {
        for &x in vectors.load(vector).lanes() {
            acc = Sum::combine(acc, x);
        }
        vector += threads;
    }
    // The tail and head are at most 2 × 3 elements: not worth reading for a bandwidth probe.
    // The store depends on a value only known at run time, so the compiler cannot drop the
    // loads; the host makes it impossible in practice (see the output contract).
    if acc.to_bits64() == impossible_bits(partials.len()) {
        partials.store(0, acc);
        retired.reset();
    }
}

/// A bit pattern no fold produces in practice, derived from a launch argument.
#[inline(always)]
fn impossible_bits(partials_len: usize) -> u64 {
    (partials_len as u64).wrapping_add(0x9E37_79B9_7F4A_7C15)
}
