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

/// The launch over `len` items: elements of `element_bytes` read as 16-byte vectors
/// (`vectors: true`, at least `MIN_VECTORS_PER_THREAD` per thread), or states read one per
/// thread; at most `resident` blocks.
pub(crate) fn launch(
    len: usize,
    element_bytes: usize,
    vectors: bool,
    state_bytes: usize,
    block: u32,
    resident: u64,
) -> LaunchGrid {
    let per_thread = if vectors {
        u64::from(MIN_VECTORS_PER_THREAD) * elements_per_vector(element_bytes) as u64
    } else {
        1
    };
    let grid = (len as u64)
        .div_ceil(per_thread * u64::from(block))
        .clamp(1, resident.max(1))
        .min(MAX_GRID);
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
        assert_eq!(launch(0, 8, true, 56, 64, 528).grid, 1);
        assert_eq!(launch(3, 56, false, 56, 64, 528).grid, 1);
    }
}
