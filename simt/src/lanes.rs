//! The warp width and the lane vector clocks: plain definitions that the scheduler, the warp
//! operations and both memory checkers share. They live in this leaf module so that those
//! modules depend on it rather than on each other.

pub(crate) const WARP_SIZE: u32 = 32;

/// A thread's vector clock over the lanes of its warp (see the crate docs).
pub(crate) type LaneClocks = [u32; WARP_SIZE as usize];
