//! The warp width and the lane vector clocks: plain definitions that the scheduler, the warp
//! operations and both memory checkers share. They live in this leaf module so that those
//! modules depend on it rather than on each other.

pub(crate) const WARP_SIZE: u32 = 32;

/// A thread's vector clock over the lanes of its warp (see the crate docs).
pub(crate) type LaneClocks = [u32; WARP_SIZE as usize];

/// The bytes the race and initialisation checks track as one unit: 2, the smallest value the
/// kernels store (`f16`, `bf16`), so that two threads writing neighbouring 2-byte values of one
/// 4-byte word are not reported as racing (CUDA's memory is byte-addressable: they do not).
pub(crate) const UNIT: usize = 2;
