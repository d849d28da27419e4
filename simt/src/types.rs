//! The plain data types of the public API: the launch's configuration, regions and counts,
//! and the errors and fault kinds. They live here rather than in the crate root so that the
//! modules implementing the simulator depend on them without depending on the root, which
//! depends on those modules.

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

impl Region {
    /// The memory of `buffer` as a region. The region only records the address range: the
    /// caller keeps the buffer alive, and unaliased by the host, for the launch.
    pub fn of_slice<T>(name: &'static str, buffer: &[T], access: Access) -> Self {
        Self {
            name,
            addr: buffer.as_ptr() as usize,
            bytes: size_of_val(buffer),
            access,
        }
    }
}

/// Counts of what one launch did.
///
/// `barriers`, `warp_syncs` and `shuffles` count completed block- or warp-wide operations
/// (one per barrier release, one per group of lanes); the access counts are per thread, and
/// `global_accesses` includes the atomics.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchStats {
    /// Blocks run.
    pub blocks: u64,
    /// Threads run, in every block.
    pub threads: u64,
    /// Block barriers (`sync_threads`) released.
    pub barriers: u64,
    /// Warp synchronisations (`sync_warp`) completed.
    pub warp_syncs: u64,
    /// Warp shuffles completed.
    pub shuffles: u64,
    /// Shared-memory loads and stores, per thread.
    pub shared_accesses: u64,
    /// Global-memory loads, stores and atomics, per thread.
    pub global_accesses: u64,
}

/// A bug the simulator found. `Display` gives a complete, one-paragraph report.
#[derive(Clone, Debug)]
pub struct SimError {
    /// What kind of bug.
    pub kind: ErrorKind,
    /// The report: the kernel, the block, the threads and the source lines involved.
    pub message: String,
}

/// The kinds of bug the simulator reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Two threads of a block access the same shared-memory word, at least one of them writing,
    /// with no barrier between them.
    SharedRace,
    /// A block accesses global memory another block wrote (or reads what another block then
    /// writes) with no fence-and-atomic-counter ordering between them.
    GlobalRace,
    /// An access outside the memory the launch gives the kernel for it: outside the block's
    /// shared memory or every region, or of a kind its region does not allow (a write to a
    /// `ReadOnly` region, a plain access to an `Atomic` one, an atomic elsewhere).
    OutOfBounds,
    /// A read of shared memory that no thread of the block has written.
    UninitializedSharedRead,
    /// A thread exited while others of its block wait at a barrier.
    BarrierNotReached,
    /// Threads of a block wait at different barriers.
    DivergentBarrier,
    /// A warp operation whose mask leaves out the caller, whose lanes disagree on the mask, or
    /// (shuffles) whose width is not a power of two up to 32.
    InvalidWarpMask,
    /// A shuffle reads a lane that is not in the mask, does not exist or has exited.
    InactiveShuffleSource,
    /// Threads wait for one another at operations that can never complete.
    Deadlock,
    /// The kernel stopped itself with [`fault`](crate::fault) (a check of its own).
    Fault,
    /// The kernel panicked.
    Panic,
    /// The launch cannot run: its shape, shared memory or regions are wrong (or the threads'
    /// stacks could not be allocated).
    InvalidLaunch,
}

/// What a kernel stops itself for with [`fault`](crate::fault). The kind, not the wording of the message,
/// decides the [`ErrorKind`] of the launch's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The kernel's own bounds check caught an index past the end of an array: the launch
    /// fails with [`ErrorKind::OutOfBounds`], as if the simulator had caught the access.
    OutOfBounds,
    /// Any other check the kernel makes (a launch contract, an invariant): the launch fails
    /// with [`ErrorKind::Fault`].
    Other,
}

impl FaultKind {
    pub(crate) fn error_kind(self) -> ErrorKind {
        match self {
            FaultKind::OutOfBounds => ErrorKind::OutOfBounds,
            FaultKind::Other => ErrorKind::Fault,
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for SimError {}
