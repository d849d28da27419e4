//! The reproducible sums' kernels and launches: which kernel a reduction runs in the mode, the
//! kernels that write and merge partial sums, and a launch over elements or states.

use super::launch::{LaunchGrid, MAX_GRID, Sizes};
use crate::element::DType;
use crate::op::OpKind;
use crate::reproducible::{STATE_BYTES_F32, STATE_BYTES_F64, SumFloat};
use kernels_gpu::launch::{WARP_SIZE, elements_per_vector};
use kernels_gpu::reproducible::{DEFAULT_BLOCK, MIN_VECTORS_PER_THREAD};

/// The reproducible kernel for `dtype` and `op`, if the mode changes that reduction: sums of
/// the float types, means of every type (`reproducible_f32_sum`).
///
/// ```
/// use reduce_rs::{DType, OpKind, plan::reproducible::kernel_for};
/// assert_eq!(kernel_for(DType::F64, OpKind::Sum).as_deref(), Some("reproducible_f64_sum"));
/// assert_eq!(kernel_for(DType::I32, OpKind::Sum), None); // exact in any order already
/// ```
pub fn kernel_for(dtype: DType, op: OpKind) -> Option<String> {
    match op {
        OpKind::Sum if dtype.is_float() => Some(format!("reproducible_{dtype}_sum")),
        OpKind::Mean => Some(format!("reproducible_{dtype}_mean")),
        _ => None,
    }
}

/// The kernel that writes the partial sum of an input of `dtype`.
pub(crate) fn state_kernel(dtype: DType) -> String {
    format!("reproducible_state_{dtype}_sum")
}

/// The kernel that merges partial sums kept in `F`.
pub(crate) fn merge_kernel<F: SumFloat>() -> String {
    format!("reproducible_merge_{}_sum", F::DTYPE)
}

/// Bytes of the state a reduction of `dtype` keeps: `f32`'s for the 32- and 16-bit floats,
/// `f64`'s for the rest.
pub(crate) fn state_bytes(dtype: DType) -> usize {
    match dtype {
        DType::F32 | DType::F16 | DType::Bf16 => STATE_BYTES_F32,
        _ => STATE_BYTES_F64,
    }
}

/// The sizes a reproducible shape kernel's launch depends on: the element's, and the state's
/// in place of an accumulator's (the partials of a row or column cut over several blocks).
///
/// ```
/// use reduce_rs::{DType, plan::reproducible::sizes};
/// assert_eq!((sizes(DType::Bf16).element, sizes(DType::Bf16).accumulator), (2, 28));
/// ```
pub fn sizes(dtype: DType) -> Sizes {
    Sizes {
        element: dtype.size(),
        accumulator: state_bytes(dtype),
    }
}

/// Threads per block, unless the user chose.
pub(crate) fn block(chosen: Option<u32>) -> u32 {
    chosen.unwrap_or(DEFAULT_BLOCK)
}

/// Dynamic shared memory of a block: one state per warp, then the ticket.
pub(crate) fn shared_bytes(block: u32, state_bytes: usize) -> usize {
    ((block / WARP_SIZE) as usize * state_bytes).next_multiple_of(align_of::<u32>())
        + size_of::<u32>()
}

/// Vectors a thread of the resident grid reads at least before the grid keeps every resident
/// block. Below, it stops at `block` blocks, a partial for each thread of the last block, and
/// each thread's vectors come in whole batches more often: measured on the H100 with `bench
/// --splits` (`docs/runs/2026-11-26-f/call1_caps.log`, `call5_caps_final.log`), 256 blocks
/// against the resident 528 (396 for `f64`, 264 for `bf16`): `f32` 2^22 15.6 against 18.2 µs,
/// 2^24 32.5 against 34.4, `bf16` 2^24 23.0 against 24.8, `f64` 2^20 14.1 against 15.6; and the
/// resident grid where each thread reads more: `f32` 2^26 (124 a thread) 97.4 against 101.7,
/// `f64` 2^24 (83 a thread) 56.9 against 59.0.
pub(crate) const MANY_VECTORS_PER_THREAD: u64 = 64;

/// Vectors a thread of one block reads at most where the input is given to that block alone:
/// no partials, no ticket, no last block. Measured on the H100 with `bench --splits`
/// (`docs/runs/2026-11-27/`): `f32` 2^13 (8 a thread) one block 6.46 against two 7.52 µs, but
/// 2^14 (16 a thread) one block 7.97 against four 7.52, and `f64` 2^14 (32) 12.19 against 8.58.
pub(crate) const SINGLE_BLOCK_VECTORS_PER_THREAD: u64 = 8;

/// The launch over `len` items: elements of `element_bytes` read as 16-byte vectors
/// (`vectors: true`, at least `MIN_VECTORS_PER_THREAD` per thread), or states read one per
/// thread; at most `resident` blocks, and at most `block` of them (blocks of the default size
/// or larger) where the resident grid would give each thread fewer than
/// [`MANY_VECTORS_PER_THREAD`] vectors; one block (of the default size or larger) where its
/// threads read at most [`SINGLE_BLOCK_VECTORS_PER_THREAD`] each.
pub(crate) fn launch(
    len: usize,
    element_bytes: usize,
    vectors: bool,
    state_bytes: usize,
    block: u32,
    resident: u64,
) -> LaunchGrid {
    // A state counts as one "vector" of one element.
    let (per_vector, min_vectors) = if vectors {
        (
            elements_per_vector(element_bytes) as u64,
            u64::from(MIN_VECTORS_PER_THREAD),
        )
    } else {
        (1, 1)
    };
    let min_per_thread = min_vectors * per_vector;
    let threads_per_block = u64::from(block);
    let mut grid = (len as u64)
        .div_ceil(min_per_thread * threads_per_block)
        .clamp(1, resident.max(1));
    let vectors_in_all = (len as u64).div_ceil(per_vector);
    // Measured with the default block: a smaller one would leave the GPU too few threads.
    if vectors && threads_per_block >= u64::from(DEFAULT_BLOCK) {
        if vectors_in_all <= SINGLE_BLOCK_VECTORS_PER_THREAD * threads_per_block {
            grid = 1;
        } else if grid > threads_per_block
            && vectors_in_all < MANY_VECTORS_PER_THREAD * grid * threads_per_block
        {
            grid = threads_per_block;
        }
    }
    let grid = grid.min(MAX_GRID);
    LaunchGrid {
        grid: grid as u32,
        block,
        shared_bytes: shared_bytes(block, state_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_covers_float_sums_and_every_mean() {
        assert_eq!(
            kernel_for(DType::Bf16, OpKind::Sum).as_deref(),
            Some("reproducible_bf16_sum")
        );
        assert_eq!(kernel_for(DType::I32, OpKind::Sum), None);
        assert_eq!(
            kernel_for(DType::U64, OpKind::Mean).as_deref(),
            Some("reproducible_u64_mean")
        );
        assert_eq!(kernel_for(DType::F32, OpKind::ArgMax), None);
        assert_eq!(state_bytes(DType::F16), 28);
        assert_eq!(state_bytes(DType::I64), 56);
    }

    #[test]
    fn launches_fill_the_device_with_at_least_four_vectors_per_thread() {
        // 2^28 f32 on 132 SMs × 4 resident blocks of 256: the resident blocks.
        let planned = launch(1 << 28, 4, true, 28, 256, 528);
        assert_eq!((planned.grid, planned.block), (528, 256));
        // 8 warps × 28 bytes, then the ticket.
        assert_eq!(planned.shared_bytes, 8 * 28 + 4);
        assert_eq!(launch(5000, 4, true, 28, 64, 528).grid, 5);
        // Small inputs: one block where each of its threads reads at most 8 vectors (f32 2^13,
        // bf16 2^14), else four or more vectors a thread (f32 2^14: 4 blocks, f64 2^14: 8).
        assert_eq!(launch(1 << 13, 4, true, 28, 256, 528).grid, 1);
        assert_eq!(launch(1 << 14, 2, true, 28, 256, 528).grid, 1);
        assert_eq!(launch((1 << 13) + 4, 4, true, 28, 256, 528).grid, 3);
        assert_eq!(launch(1 << 14, 4, true, 28, 256, 528).grid, 4);
        assert_eq!(launch(1 << 14, 8, true, 56, 256, 396).grid, 8);
        assert_eq!(launch(1 << 13, 4, true, 28, 128, 1056).grid, 4);
        // Mid sizes: a block for each thread of the last block, where the resident grid would
        // give each thread fewer than 64 vectors (f32 2^22 and 2^24, bf16 2^24, f64 2^20).
        assert_eq!(launch(1 << 22, 4, true, 28, 256, 528).grid, 256);
        assert_eq!(launch(1 << 24, 4, true, 28, 256, 528).grid, 256);
        assert_eq!(launch(1 << 24, 2, true, 28, 256, 264).grid, 256);
        assert_eq!(launch(1 << 20, 8, true, 56, 256, 396).grid, 256);
        // ... and every resident block where each reads more (f32 2^26: 124 vectors a thread,
        // f64 2^24: 83), or where the grid is at most a block's threads anyway.
        assert_eq!(launch(1 << 26, 4, true, 28, 256, 528).grid, 528);
        assert_eq!(launch(1 << 24, 8, true, 56, 256, 396).grid, 396);
        assert_eq!(launch(1 << 20, 4, true, 28, 256, 528).grid, 256);
        assert_eq!(launch(1 << 18, 4, true, 28, 256, 528).grid, 64);
        // Smaller blocks than the default keep every resident block: 64 of 64 threads would
        // leave most of the GPU idle.
        assert_eq!(launch(1 << 24, 4, true, 28, 64, 4224).grid, 4224);
        assert_eq!(launch(1 << 22, 4, true, 28, 128, 1056).grid, 1056);
        // The merge kernel reads states, one a thread: every resident block.
        assert_eq!(launch(1 << 20, 28, false, 28, 256, 528).grid, 528);
        assert_eq!(launch(0, 8, true, 56, 64, 528).grid, 1);
        assert_eq!(launch(3, 56, false, 56, 64, 528).grid, 1);
    }
}
