//! Running the kernels on the CPU simulator (every target but `nvptx64`): the safe entry the
//! host uses, and the lookup from (version, block size) to the monomorphized kernel function.

use crate::device::{GlobalCounter, GlobalSlice, GlobalSliceMut};
use crate::element::{Element, ReduceOp};

pub use simt::{LaunchConfig, LaunchStats, Schedule, SimError};

/// Every kernel's signature, the same for all versions.
pub type Kernel<T> = fn(GlobalSlice<T>, GlobalSliceMut<T>, GlobalCounter);

/// The kernel of version `version` (0–8) for `block` threads per block, or `None` if that
/// version has no build for that block size (see [`crate::launch::BLOCK_SIZES`]).
pub fn kernel<T: Element, Op: ReduceOp<T>>(version: u8, block: u32) -> Option<Kernel<T>> {
    macro_rules! by_block {
        ($kernel:ident) => {
            match block {
                64 => Some(crate::$kernel::<T, Op, 64> as Kernel<T>),
                128 => Some(crate::$kernel::<T, Op, 128>),
                256 => Some(crate::$kernel::<T, Op, 256>),
                512 => Some(crate::$kernel::<T, Op, 512>),
                1024 => Some(crate::$kernel::<T, Op, 1024>),
                _ => None,
            }
        };
    }
    match version {
        0 => Some(crate::reduce_v0::<T, Op>),
        1 => Some(crate::reduce_v1::<T, Op>),
        2 => Some(crate::reduce_v2::<T, Op>),
        3 => Some(crate::reduce_v3::<T, Op>),
        4 => Some(crate::reduce_v4::<T, Op>),
        5 => by_block!(reduce_v5),
        6 => by_block!(reduce_v6),
        7 => by_block!(reduce_v7),
        8 => by_block!(reduce_v8),
        _ => None,
    }
}

/// Runs `kernel` on the simulator over host buffers standing for global memory: `input`
/// (read-only), `partials` (read-write) and the `retired` counter (atomics only).
pub fn simulate<T: Element>(
    name: &str,
    kernel: Kernel<T>,
    config: &LaunchConfig,
    input: &[T],
    partials: &mut [T],
    retired: &mut u32,
) -> Result<LaunchStats, SimError> {
    let regions = [
        simt::Region {
            name: "input",
            addr: input.as_ptr() as usize,
            bytes: size_of_val(input),
            access: simt::Access::ReadOnly,
        },
        simt::Region {
            name: "partials",
            addr: partials.as_mut_ptr() as usize,
            bytes: size_of_val(partials),
            access: simt::Access::ReadWrite,
        },
        simt::Region {
            name: "retired",
            addr: retired as *mut u32 as usize,
            bytes: size_of::<u32>(),
            access: simt::Access::Atomic,
        },
    ];
    // SAFETY: the three buffers are borrowed (input shared, the others exclusively) for the
    // whole call, so they stay valid and nothing else touches them while the kernel runs; the
    // wrappers made here are used only inside `simt::launch`, which checks every access they
    // make against the regions above.
    let (input, partials, retired) = unsafe {
        (
            GlobalSlice::from_raw(input.as_ptr(), input.len()),
            GlobalSliceMut::from_raw(partials.as_mut_ptr(), partials.len()),
            GlobalCounter::from_raw(retired),
        )
    };
    simt::launch(name, config, &regions, &|| kernel(input, partials, retired))
}
