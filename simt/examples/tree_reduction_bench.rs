//! Micro-benchmark of the simulator: the reduction series' v3 kernel (two elements added per
//! thread while loading, then a shared-memory tree with a barrier after every step) over 2^20
//! `u32`s in blocks of 256 threads: 2048 blocks, 524 288 simulated threads, 9 barriers per
//! block. Run with `cargo run -p simt --release --example tree_reduction_bench`.

use simt::{Access, LaunchConfig, Region, Schedule};
use std::time::Instant;

const ELEMENTS: usize = 1 << 20;
const BLOCK: u32 = 256;

/// `len` `u32`s of the block's shared memory, every access announced to the simulator.
struct Shared {
    base: *mut u32,
    len: usize,
}

impl Shared {
    fn new(len: usize) -> Self {
        let (memory, bytes) = simt::dynamic_shared_memory();
        assert!(len * 4 <= bytes);
        Self {
            base: memory.cast(),
            len,
        }
    }

    fn load(&self, index: usize) -> u32 {
        assert!(index < self.len);
        simt::shared_access(index * 4, 4, false);
        // SAFETY: in bounds (above) of the block's live shared memory.
        unsafe { self.base.add(index).read() }
    }

    fn store(&self, index: usize, value: u32) {
        assert!(index < self.len);
        simt::shared_access(index * 4, 4, true);
        // SAFETY: as in `load`.
        unsafe { self.base.add(index).write(value) }
    }
}

fn load(input: &[u32], index: usize) -> u32 {
    match input.get(index) {
        Some(value) => {
            simt::global_access(value as *const u32 as usize, 4, false);
            *value
        }
        None => 0,
    }
}

fn tree_reduce(input: &[u32], partials: *mut u32, partials_len: usize) {
    let (t, block, n) = (
        simt::thread_idx_x() as usize,
        simt::block_idx_x() as usize,
        simt::block_dim_x() as usize,
    );
    let shared = Shared::new(n);
    let i = block * 2 * n + t;
    shared.store(t, load(input, i).wrapping_add(load(input, i + n)));
    simt::sync_threads();
    let mut stride = n / 2;
    while stride > 0 {
        if t < stride {
            shared.store(t, shared.load(t).wrapping_add(shared.load(t + stride)));
        }
        simt::sync_threads();
        stride /= 2;
    }
    if t == 0 {
        assert!(block < partials_len);
        // SAFETY: in bounds (above) of the partials buffer, which outlives the launch.
        let partial = unsafe { partials.add(block) };
        simt::global_access(partial as usize, 4, true);
        // SAFETY: as above.
        unsafe { partial.write(shared.load(0)) };
    }
}

fn main() {
    let input: Vec<u32> = (0..ELEMENTS as u32).map(|i| i % 1000).collect();
    let expected = input.iter().fold(0u32, |sum, &v| sum.wrapping_add(v));
    let grid = ELEMENTS.div_ceil(2 * BLOCK as usize) as u32;
    for schedule in [Schedule::InOrder, Schedule::Shuffled { seed: 7 }] {
        let mut partials = vec![0u32; grid as usize];
        let regions = [
            Region::of_slice("input", &input, Access::ReadOnly),
            Region::of_slice("partials", &partials, Access::ReadWrite),
        ];
        let config = LaunchConfig {
            grid_dim: grid,
            block_dim: BLOCK,
            shared_bytes: BLOCK as usize * 4,
            schedule,
        };
        let (partials_ptr, partials_len) = (partials.as_mut_ptr(), partials.len());
        for _ in 0..3 {
            let start = Instant::now();
            let stats = simt::launch("tree_reduce", &config, &regions, &|| {
                tree_reduce(&input, partials_ptr, partials_len)
            })
            .unwrap_or_else(|error| panic!("{error}"));
            let elapsed = start.elapsed();
            let sum = partials.iter().fold(0u32, |sum, &v| sum.wrapping_add(v));
            assert_eq!(sum, expected);
            println!(
                "{schedule:?}: {ELEMENTS} elements, {} blocks x {BLOCK} threads, {} barriers, {} shared and {} \
                 global accesses in {:.3} s ({:.0} ns per thread)",
                stats.blocks,
                stats.barriers,
                stats.shared_accesses,
                stats.global_accesses,
                elapsed.as_secs_f64(),
                elapsed.as_nanos() as f64 / stats.threads as f64
            );
        }
    }
}
