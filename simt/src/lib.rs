//! STUB — to be replaced by the real simulator. The public API below is the contract that
//! `kernels-gpu/src/device/sim.rs` and the host use; keep every signature.

use core::fmt;

/// How the threads of a block are interleaved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Thread 0, 1, 2, … each run until it blocks (barrier, warp op) or ends. Deterministic.
    #[default]
    InOrder,
    /// A permutation drawn from the seed at every scheduling round (and the block order too).
    Shuffled { seed: u64 },
}

/// The launch: a 1-D grid of 1-D blocks.
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig {
    pub grid_dim: u32,
    pub block_dim: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: usize,
    pub schedule: Schedule,
}

/// How a launch may use a host buffer that stands for global memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
    /// Touched only through the atomics.
    Atomic,
}

/// A host buffer that stands for global memory during one launch.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub name: &'static str,
    pub addr: usize,
    pub bytes: usize,
    pub access: Access,
}

/// Counts of what one launch did.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchStats {
    pub blocks: u64,
    pub threads: u64,
    pub barriers: u64,
    pub warp_syncs: u64,
    pub shuffles: u64,
    pub shared_accesses: u64,
    pub global_accesses: u64,
}

/// A bug the simulator found. `Display` gives a complete, one-paragraph report.
#[derive(Clone, Debug)]
pub struct SimError {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    SharedRace,
    GlobalRace,
    OutOfBounds,
    UninitializedSharedRead,
    BarrierNotReached,
    DivergentBarrier,
    InvalidWarpMask,
    InactiveShuffleSource,
    Deadlock,
    Fault,
    Panic,
    InvalidLaunch,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for SimError {}

pub fn launch(
    _kernel_name: &str,
    _config: &LaunchConfig,
    _regions: &[Region],
    _kernel: &dyn Fn(),
) -> Result<LaunchStats, SimError> {
    todo!("simulator")
}

pub fn thread_idx_x() -> u32 {
    todo!()
}
pub fn block_idx_x() -> u32 {
    todo!()
}
pub fn block_dim_x() -> u32 {
    todo!()
}
pub fn grid_dim_x() -> u32 {
    todo!()
}
pub fn lane_id() -> u32 {
    todo!()
}
#[track_caller]
pub fn sync_threads() {
    todo!()
}
#[track_caller]
pub fn sync_warp(_mask: u32) {
    todo!()
}
#[track_caller]
pub fn shuffle_down(_mask: u32, _bits: u64, _delta: u32, _width: u32) -> (u64, bool) {
    todo!()
}
#[track_caller]
pub fn thread_fence() {
    todo!()
}
#[track_caller]
pub fn atomic_add_u32(_ptr: *mut u32, _value: u32) -> u32 {
    todo!()
}
#[track_caller]
pub fn atomic_exchange_u32(_ptr: *mut u32, _value: u32) -> u32 {
    todo!()
}
pub fn dynamic_shared_memory() -> (*mut u8, usize) {
    todo!()
}
#[track_caller]
pub fn shared_access(_byte_offset: usize, _bytes: usize, _write: bool) {
    todo!()
}
#[track_caller]
pub fn global_access(_addr: usize, _bytes: usize, _write: bool) {
    todo!()
}
#[track_caller]
pub fn fault(_message: fmt::Arguments<'_>) -> ! {
    todo!()
}
