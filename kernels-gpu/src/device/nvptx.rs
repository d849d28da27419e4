//! The GPU backend: NVPTX intrinsics and single PTX instructions.

use super::Fault;
use core::arch::asm;
use core::arch::nvptx;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
    fn read_laneid() -> u32;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_sync_down_i32(mask: u32, value: i32, delta: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.membar.gl"]
    fn membar_gl();
}

#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reads a special register; no memory is touched.
    unsafe { nvptx::_thread_idx_x() }
}
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: reads a special register.
    unsafe { nvptx::_block_idx_x() }
}
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: reads a special register.
    unsafe { nvptx::_block_dim_x() }
}
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: reads a special register.
    unsafe { nvptx::_grid_dim_x() }
}
#[inline(always)]
pub fn lane_id() -> u32 {
    // SAFETY: reads a special register.
    unsafe { read_laneid() }
}

#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0`; every thread of the block reaching it is the kernels' contract
    // (the simulator checks it).
    unsafe { nvptx::_syncthreads() }
}

#[inline(always)]
pub fn sync_warp(mask: u32) {
    // SAFETY: `bar.warp.sync mask`; the lanes named in `mask` all execute it (checked by the
    // simulator).
    unsafe { bar_warp_sync(mask) }
}

/// `shfl.sync.down.b32` of one 32-bit word.
#[inline(always)]
pub fn shuffle_down(mask: u32, word: u32, delta: u32, width: u32) -> (u32, bool) {
    // The `c` operand packs the segment mask and the clamp lane (PTX ISA, shfl.sync).
    let clamp = ((super::WARP_SIZE - width) << 8) | 0x1f;
    let in_range = lane_id() % width + delta < width;
    // SAFETY: a register exchange among the lanes of `mask`, which all execute it.
    let word = unsafe { shfl_sync_down_i32(mask, word as i32, delta, clamp) } as u32;
    (word, in_range)
}

/// `%globaltimer`: nanoseconds, the same clock for every SM.
#[inline(always)]
pub fn global_timer_ns() -> u64 {
    let now: u64;
    // SAFETY: reads a special register; `volatile` by default (no `pure`), so every call reads
    // it anew.
    unsafe { asm!("mov.u64 {0}, %globaltimer;", out(reg64) now, options(nomem, nostack)) };
    now
}

#[inline(always)]
pub fn thread_fence() {
    // An experiment (`cargo xtask build-ptx --cfg reduce_exp_fence`): the release/acquire
    // fence, lighter than `membar.gl` (which PTX defines as `fence.sc.gpu`).
    #[cfg(reduce_exp_fence)]
    // SAFETY: a fence; touches no memory itself.
    unsafe {
        asm!("fence.acq_rel.gpu;", options(nostack))
    };
    #[cfg(not(reduce_exp_fence))]
    // SAFETY: `membar.gl`, a fence; touches no memory itself.
    unsafe {
        membar_gl()
    }
}

/// One 16-byte vector of the input.
///
/// # Safety
/// `ptr` is 16-byte aligned and readable, and nothing writes it during the launch.
#[inline(always)]
pub unsafe fn load_vector16<V: Copy>(ptr: *const V) -> V {
    const { assert!(size_of::<V>() == 16) };
    // An experiment (`--cfg reduce_exp_nc`): the non-coherent read-only path, `ld.global.nc`,
    // which the input allows (nothing writes it during the launch).
    #[cfg(reduce_exp_nc)]
    {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: the caller's promise; the asm reads 16 bytes at `ptr` and nothing else.
        unsafe {
            asm!(
                "ld.global.nc.v4.u32 {{{0}, {1}, {2}, {3}}}, [{4}];",
                out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d,
                in(reg64) ptr,
                options(pure, readonly, nostack)
            );
            core::mem::transmute_copy(&[a, b, c, d])
        }
    }
    #[cfg(not(reduce_exp_nc))]
    // SAFETY: the caller's promise.
    unsafe {
        ptr.read()
    }
}

#[inline(always)]
pub fn atomic_add_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: `GlobalCounter::from_raw` requires a valid global u32 accessed only by atomics.
    let counter = unsafe { core::sync::atomic::AtomicU32::from_ptr(ptr) };
    counter.fetch_add(value, core::sync::atomic::Ordering::Relaxed)
}

#[inline(always)]
pub fn atomic_exchange_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: as in `atomic_add_u32`.
    let counter = unsafe { core::sync::atomic::AtomicU32::from_ptr(ptr) };
    counter.swap(value, core::sync::atomic::Ordering::Relaxed)
}

/// The block's dynamic shared memory and its size in bytes (`%dynamic_smem_size`).
#[inline(always)]
pub fn dynamic_shared_memory() -> (*mut u8, usize) {
    /// Declares the dynamic shared memory 16-byte aligned, enough for any element and vector.
    #[repr(C, align(16))]
    struct Aligned16([u8; 16]);
    let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Aligned16>().cast::<u8>();
    let bytes: u32;
    // SAFETY: reads a special register.
    unsafe {
        asm!("mov.u32 {0}, %dynamic_smem_size;", out(reg32) bytes, options(pure, nomem, nostack))
    };
    (base, bytes as usize)
}

/// The GPU backend has nothing to record: accesses are plain loads and stores.
#[inline(always)]
pub fn shared_access(_byte_offset: usize, _bytes: usize, _write: bool) {}
#[inline(always)]
pub fn global_access(_addr: usize, _bytes: usize, _write: bool) {}

/// `index` clamped to `len - 1` (`len ≥ 1`): shared-memory accesses stay inside the array
/// without a branch (see `SharedArray`). In 32 bits, as shared memory is far smaller than
/// 4 GiB: an index truncated to 32 bits is still clamped into the array.
#[inline(always)]
pub fn shared_index(index: usize, len: usize, _fault: impl FnOnce() -> Fault) -> usize {
    (index as u32).min((len - 1) as u32) as usize
}

/// A launch-contract check (see `SharedArray::dynamic`): the GPU trusts the launch, as it
/// trusts the pointers and lengths it is given; the simulator checks.
#[inline(always)]
pub fn check_launch(_ok: bool, _fault: impl FnOnce() -> Fault) {}

/// `@!ok trap`: ends the kernel when `ok` is false; the launch then fails with an error the
/// host reports. Inline asm, not `if !ok { trap() }`, so LLVM sees no branch and the check
/// costs one compare and one predicated instruction.
#[inline(always)]
pub fn ensure(ok: bool, _fault: impl FnOnce() -> Fault) {
    // SAFETY: `trap` aborts the kernel and touches no memory otherwise; the asm block is not
    // `pure`, so the accesses it guards are not moved above it.
    unsafe {
        asm!(
            "{{ .reg .pred %fail; setp.eq.u32 %fail, {ok}, 0; @%fail trap; }}",
            ok = in(reg32) u32::from(ok),
            options(nostack)
        )
    }
}
