//! What the tests share: the column tests' data and references (`columns`); for the
//! reproducible mode's, a reducer in the mode with a given block size, grid limit and schedule,
//! the launch grids to try, and values of a wide range of magnitudes.

#![allow(dead_code)] // each test binary uses part of this module

pub mod bottom;
pub mod columns;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use reduce_rs::{Reducer, Schedule};

/// Launch grids: block sizes × grid limits (None: the simulated GPU's resident blocks).
pub fn launch_grids() -> Vec<(u32, Option<u32>)> {
    let mut grids = Vec::new();
    for block in [64, 128, 256, 512, 1024] {
        for grid in [Some(1), Some(2), Some(3), Some(7), None] {
            grids.push((block, grid));
        }
    }
    grids
}

pub fn reducer(block: u32, grid: Option<u32>, schedule: Schedule) -> Reducer {
    let mut reducer = Reducer::simulator_with(schedule)
        .with_reproducible(true)
        .with_block_size(block)
        .unwrap();
    reducer.set_max_blocks(grid);
    reducer
}

/// Values over a wide range of magnitudes and both signs: rounding order would show.
pub fn wide_f32(rng: &mut ChaCha8Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-20..20)))
        .collect()
}
