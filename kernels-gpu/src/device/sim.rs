//! The CPU backend: every call goes to the [`simt`] simulator, which runs each kernel thread
//! as a coroutine and checks each barrier, shuffle and memory access.

use super::{Fault, Space};
use simt::FaultKind;

pub use simt::{
    block_dim_x, block_idx_x, dynamic_shared_memory, global_access, grid_dim_x, lane_id,
    shared_access, sync_threads, sync_warp, thread_fence, thread_idx_x,
};

#[inline(always)]
#[track_caller]
pub fn shuffle_down(mask: u32, word: u32, delta: u32, width: u32) -> (u32, bool) {
    let (bits, in_range) = simt::shuffle_down(mask, u64::from(word), delta, width);
    (bits as u32, in_range)
}

/// One 16-byte vector of the input.
///
/// # Safety
/// `ptr` is 16-byte aligned and readable.
#[inline(always)]
pub unsafe fn load_vector16<V: Copy>(ptr: *const V) -> V {
    // SAFETY: the caller's promise.
    unsafe { ptr.read() }
}

#[inline(always)]
#[track_caller]
pub fn atomic_add_u32(ptr: *mut u32, value: u32) -> u32 {
    simt::atomic_add_u32(ptr, value)
}

#[inline(always)]
#[track_caller]
pub fn atomic_exchange_u32(ptr: *mut u32, value: u32) -> u32 {
    simt::atomic_exchange_u32(ptr, value)
}

#[inline(always)]
#[track_caller]
pub fn ensure(ok: bool, fault: impl FnOnce() -> Fault) {
    if !ok {
        report(fault())
    }
}

/// A launch-contract check (see `SharedArray::dynamic`): reported like any other fault.
#[inline(always)]
#[track_caller]
pub fn check_launch(ok: bool, fault: impl FnOnce() -> Fault) {
    ensure(ok, fault)
}

/// `index`, after reporting it if it is past the end.
#[inline(always)]
#[track_caller]
pub fn shared_index(index: usize, len: usize, fault: impl FnOnce() -> Fault) -> usize {
    ensure(index < len, fault);
    index
}

#[cold]
#[inline(never)]
#[track_caller]
fn report(fault: Fault) -> ! {
    let space = |s: Space| match s {
        Space::Global => "global",
        Space::Shared => "shared",
    };
    match fault {
        Fault::OutOfBounds {
            space: s,
            index,
            len,
        } => simt::fault(
            FaultKind::OutOfBounds,
            format_args!(
                "out-of-bounds {} memory access: index {index} of an array of {len} elements",
                space(s)
            ),
        ),
        Fault::BlockSizeMismatch { compiled, launched } => simt::fault(
            FaultKind::Other,
            format_args!(
                "the kernel was compiled for {compiled} threads per block but launched with {launched}"
            ),
        ),
        Fault::SharedTooSmall { wanted, available } => simt::fault(
            FaultKind::Other,
            format_args!(
                "the kernel wants {wanted} bytes of shared memory but the launch gave {available}"
            ),
        ),
    }
}
