//! A CPU simulator of the CUDA SIMT execution model that runs GPU kernels written in Rust and
//! reports the bugs a GPU would hide: data races, out-of-bounds accesses, reads of
//! uninitialised shared memory, barriers not every thread reaches, and bad warp shuffles.
//!
//! # How a launch runs
//! [`launch`] runs the kernel closure once per simulated thread of a 1-D grid of 1-D blocks.
//! Blocks run one after another on the calling OS thread. Inside a block every thread is a
//! stackful coroutine (`corosensei`); a scheduler resumes each runnable thread until it ends or
//! blocks at [`sync_threads`], [`sync_warp`] or [`shuffle_down`]. The order is by thread index
//! ([`Schedule::InOrder`]) or a seeded permutation per round ([`Schedule::Shuffled`], which also
//! permutes the blocks). Device functions find "their" thread through a thread-local context and
//! panic when called outside a launch.
//!
//! A barrier is released when every thread of the block waits at it, at the same call site. A
//! warp operation completes when every non-exited lane named in its mask has arrived at the same
//! operation with the same mask. When nothing can run, the scheduler reports why (threads that
//! exited before a barrier, barriers at different call sites, a warp operation waiting for a lane
//! that is elsewhere) instead of hanging.
//!
//! # Memory model
//! Every access is reported by the kernel's memory wrappers *before* it happens
//! ([`shared_access`], [`global_access`]), so the simulator sees each one with its source
//! location (`#[track_caller]`). Two accesses of different threads to the same 2-byte unit, at
//! least one a write, race unless *happens-before* orders them:
//!
//! - **Barrier.** Each released `sync_threads` starts a new *epoch* of the block; an access of an
//!   earlier epoch is ordered before every access of a later one. A race needs two accesses in
//!   the same epoch, so each unit only keeps its accesses of the current epoch.
//! - **`sync_warp`.** Each thread carries a vector clock over the 32 lanes of its warp. A
//!   completed `sync_warp` joins the clocks of its lanes and ticks each lane's own entry, so an
//!   access by lane `a` at clock `c` is ordered before a later access by lane `b` of the same
//!   warp exactly when `b`'s clock knows `c` of `a`. Exited lanes named in the mask take no part.
//!   Shuffles exchange registers only and order no memory.
//! - Per unit the simulator keeps the last write and the reads since it in the current epoch:
//!   the latest read of each lane of one warp, or, once a second warp has read the unit, one
//!   read of each warp (every later write of the epoch races with one of them). A write ordered
//!   after all of them replaces them. So read-after-write, write-after-read and
//!   write-after-write races are found whichever of the two accesses ran first.
//!
//! Shared memory is [`LaunchConfig::shared_bytes`] bytes per block, filled with `0xAB` at the
//! start of every block; reading a unit no thread of the block has written is an error. Global
//! memory is the host buffers registered as [`Region`]s: every access must lie inside one, and
//! its [`Access`] mode says what is allowed. Words of `ReadWrite` regions get the race checks
//! above within a block, and between blocks, which run concurrently on a GPU:
//!
//! - **Across blocks** an access races with an earlier access of another block (at least one a
//!   write) unless it is ordered by the pattern of CUDA's `threadFenceReduction` sample: the
//!   earlier access is followed, in its thread, by [`thread_fence`] and then an atomic on a
//!   counter (release); the later thread's own atomic on the same counter comes after it in the
//!   counter's modification order (acquire), and other threads of the later block are ordered
//!   after that atomic by a following `sync_threads`. An access made by another thread of the
//!   earlier block is released too if a `sync_threads` separates it from the fence.
//! - Simplifications, all on the side of reporting: ordering is not transitive across blocks
//!   (data that reaches block C from block A only through block B's release is a race);
//!   `sync_warp` does not carry a release or an acquire to other lanes; every atomic acts as
//!   acquire-release (CUDA's are relaxed, but the sample relies on the fence around them); and
//!   accesses narrower than a 2-byte unit (bytes) are tracked as the whole unit. Units are 2
//!   bytes, the smallest value the kernels store: two threads writing neighbouring `f16`s of
//!   one 4-byte word do not race, as on a GPU, whose memory is byte-addressable.
//!
//! The first error ends the launch: the suspended threads are unwound and [`launch`] returns
//! it as a [`SimError`] whose message is a complete report (kernel, block, threads, bytes and
//! source locations).

mod driver;
mod global;
mod lanes;
mod report;
mod rng;
mod shared;
mod sim;
mod types;
mod warp;

pub use types::{
    Access, ErrorKind, FaultKind, LaunchConfig, LaunchStats, Region, Schedule, SimError,
};

use core::fmt;

/// Runs `kernel` once per thread of the grid `config` describes, with `regions` as the global
/// memory it may touch, and returns what it did or the first bug found.
pub fn launch(
    kernel_name: &str,
    config: &LaunchConfig,
    regions: &[Region],
    kernel: &dyn Fn(),
) -> Result<LaunchStats, SimError> {
    driver::launch(kernel_name, config, regions, kernel)
}

/// `threadIdx.x`
#[track_caller]
pub fn thread_idx_x() -> u32 {
    sim::with_thread("thread_idx_x", |sim| sim.current)
}
/// `blockIdx.x`
#[track_caller]
pub fn block_idx_x() -> u32 {
    sim::with_thread("block_idx_x", |sim| sim.block)
}
/// `blockDim.x`
#[track_caller]
pub fn block_dim_x() -> u32 {
    sim::with_thread("block_dim_x", |sim| sim.block_dim)
}
/// `gridDim.x`
#[track_caller]
pub fn grid_dim_x() -> u32 {
    sim::with_thread("grid_dim_x", |sim| sim.grid_dim)
}
/// `%laneid`: `threadIdx.x % 32`.
#[track_caller]
pub fn lane_id() -> u32 {
    sim::with_thread("lane_id", |sim| sim.current % lanes::WARP_SIZE)
}

/// `__syncthreads()`: blocks until every thread of the block waits here (the same call site).
#[track_caller]
pub fn sync_threads() {
    sim::sync_threads(core::panic::Location::caller())
}

/// `__syncwarp(mask)`: blocks until every non-exited lane of `mask` (which must contain the
/// caller) arrives, and orders their memory accesses.
#[track_caller]
pub fn sync_warp(mask: u32) {
    sim::sync_warp(mask, core::panic::Location::caller())
}

/// `__shfl_down_sync(mask, bits, delta, width)`: `bits` of lane `lane + delta` if that lane is in
/// this lane's `width`-wide segment (and `true`), else this lane's own `bits` (and `false`).
#[track_caller]
pub fn shuffle_down(mask: u32, bits: u64, delta: u32, width: u32) -> (u64, bool) {
    sim::shuffle_down(mask, bits, delta, width, core::panic::Location::caller())
}

/// `__threadfence()`: the calling thread's earlier global accesses are released by its next
/// atomic.
#[track_caller]
pub fn thread_fence() {
    sim::thread_fence()
}

/// `atomicAdd` on a `u32` in an [`Access::Atomic`] region; returns the old value.
#[track_caller]
pub fn atomic_add_u32(ptr: *mut u32, value: u32) -> u32 {
    sim::atomic(ptr, core::panic::Location::caller(), |old| {
        old.wrapping_add(value)
    })
}

/// `atomicExch` on a `u32` in an [`Access::Atomic`] region; returns the old value.
#[track_caller]
pub fn atomic_exchange_u32(ptr: *mut u32, value: u32) -> u32 {
    sim::atomic(ptr, core::panic::Location::caller(), |_| value)
}

/// The current block's dynamic shared memory: 16-byte aligned start and length in bytes.
#[track_caller]
pub fn dynamic_shared_memory() -> (*mut u8, usize) {
    sim::with_thread("dynamic_shared_memory", |sim| sim.shared.memory())
}

/// Announces an access of `bytes` bytes at `byte_offset` into the block's shared memory; call
/// it just before the access.
#[track_caller]
pub fn shared_access(byte_offset: usize, bytes: usize, write: bool) {
    sim::shared_access(byte_offset, bytes, write, core::panic::Location::caller())
}

/// Announces an access of `bytes` bytes at host address `addr` (global memory); call it just
/// before the access.
#[track_caller]
pub fn global_access(addr: usize, bytes: usize, write: bool) {
    sim::global_access(addr, bytes, write, core::panic::Location::caller())
}

/// The kernel found an error and stops (`trap` on the GPU): the launch fails with the
/// [`ErrorKind`] of `kind` and a report that ends with `message`.
#[track_caller]
pub fn fault(kind: FaultKind, message: fmt::Arguments<'_>) -> ! {
    sim::fault(kind, message, core::panic::Location::caller())
}
