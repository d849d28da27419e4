//! # The bandwidth ceiling: a kernel that only reads
//!
//! Not a reduction version: it loads every element once with v8's 16-byte loads and grid
//! size, folds them into a register and writes nothing unless that value is impossible, so
//! the loads cannot be optimized away. Its time over the input is the fastest any reduction
//! can be on this device; the benchmark reports every version as a percentage of it.
//!
//! # Output contract
//! `partials[0]` is written only when the fold equals the bit pattern passed in `retired`'s
//! place — never, in practice; the host passes a zeroed counter and ignores `partials`.

use crate::device::{
    GlobalCounter, GlobalSlice, GlobalSliceMut, block_idx_x, grid_dim_x, thread_idx_x,
};
use crate::element::{Element, ReduceOp, Sum, Vector16};

pub fn read_probe<T: Element, const BLOCK: u32>(
    input: GlobalSlice<T>,
    partials: GlobalSliceMut<T>,
    retired: GlobalCounter,
) {
    let lanes = <T::Vector16 as Vector16<T>>::LANES;
    let thread = block_idx_x() as usize * BLOCK as usize + thread_idx_x() as usize;
    let threads = BLOCK as usize * grid_dim_x() as usize;
    let head = input.vector_head();
    let vectors = (input.len() - head) / lanes;
    let mut acc = <Sum as ReduceOp<T>>::IDENTITY;
    let mut vector = thread;
    while vector < vectors {
        for &x in input.load_vector(head + vector * lanes).lanes() {
            acc = Sum::combine(acc, x);
        }
        vector += threads;
    }
    // The tail and head are at most 2 × 3 elements: not worth reading for a bandwidth probe.
    if acc.to_bits64() == u64::MAX && thread == 0 {
        partials.store(0, acc);
        retired.reset();
    }
}
