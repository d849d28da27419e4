//! Plans: which kernel a reduction runs, with how many blocks of how many threads and how much
//! shared memory — pure functions of the reduction and of what the device can run at once
//! (its occupancy, asked of the backend), testable without a GPU. A plan is a [`Job`], which
//! either backend runs.
//!
//! - [`whole`](mod@whole): the versions' passes over a whole array;
//! - [`launch`]: what every plan is made of (a launch's grid, a pass, sizes);
//! - [`shapes`]: rows, columns and segments;
//! - [`reproducible`]: the reproducible sums;
//! - [`job`]: what a plan hands to a backend.
pub mod job;
pub mod launch;
pub mod reproducible;
pub mod shapes;
pub mod whole;

pub use job::{Job, SegmentOffsets, Work};
pub use launch::{
    LaunchGrid, MAX_GRID, Pass, Sizes, Wave, resident_blocks, shared_bytes_of, vector_grid,
};
pub use whole::{
    additions_per_element, block_in_name, check_block, entry_name, launch_grid, passes,
    runnable_block, shared_bytes, whole,
};
