//! Correct kernels: exact results under every schedule, and the launch statistics.

use crate::kernel::*;
use simt::{Access, shuffle_down};

/// Adds two elements per thread while loading, then halves a shared-memory tree with a barrier
/// after every step (the reduction series' v3). `sync_each_step: false` is the classic bug.
pub fn tree_sum(input: Global<u32>, partials: Global<u32>, sync_each_step: bool) {
    let (t, block, n) = (
        thread_idx_x() as usize,
        block_idx_x() as usize,
        block_dim_x() as usize,
    );
    let shared = Shared::<u32>::new(0, n);
    let i = block * 2 * n + t;
    let first = if i < input.len { input.load(i) } else { 0 };
    let second = if i + n < input.len {
        input.load(i + n)
    } else {
        0
    };
    shared.store(t, first.wrapping_add(second));
    sync_threads();
    let mut stride = n / 2;
    while stride > 0 {
        if t < stride {
            shared.store(t, shared.load(t).wrapping_add(shared.load(t + stride)));
        }
        if sync_each_step {
            sync_threads();
        }
        stride /= 2;
    }
    if t == 0 {
        partials.store(block, shared.load(0));
    }
}

pub fn input(len: usize) -> Vec<u32> {
    (0..len as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % 1000)
        .collect()
}

fn host_sum(values: &[u32]) -> u32 {
    values.iter().fold(0, |sum, &v| sum.wrapping_add(v))
}

#[test]
fn shared_tree_sum_is_exact_under_every_schedule() {
    let block = 128;
    let mut data = input(10_000 + 37);
    let grid = data.len().div_ceil(2 * block) as u32;
    let expected: Vec<u32> = data.chunks(2 * block).map(host_sum).collect();
    for config in schedules(config(grid, block as u32, block * 4)) {
        let mut partials = vec![0; grid as usize];
        let (input, output) = (Global::new(&mut data), Global::new(&mut partials));
        let regions = [
            input.region("input", Access::ReadOnly),
            output.region("partials", Access::ReadWrite),
        ];
        run("tree_sum", &config, &regions, &|| {
            tree_sum(input, output, true)
        });
        assert_eq!(partials, expected, "{:?}", config.schedule);
    }
}

/// v7: grid-stride accumulation in a register, shuffles within each warp, one value per warp
/// through shared memory, shuffles again in warp 0.
fn shuffle_sum(input: Global<u32>, partials: Global<u32>) {
    let (t, n) = (thread_idx_x(), block_dim_x());
    let warps = n / 32;
    let warp_sums = Shared::<u32>::new(0, warps as usize);
    let warp_reduce = |mut value: u32, lanes: u32| {
        let mut delta = lanes / 2;
        while delta > 0 {
            let (other, _) = shuffle_down(FULL_MASK, u64::from(value), delta, 32);
            value = value.wrapping_add(other as u32);
            delta /= 2;
        }
        value
    };
    let stride = (n * grid_dim_x()) as usize;
    let mut index = (block_idx_x() * n + t) as usize;
    let mut acc = 0u32;
    while index < input.len {
        acc = acc.wrapping_add(input.load(index));
        index += stride;
    }
    let value = warp_reduce(acc, 32);
    if lane_id() == 0 {
        warp_sums.store((t / 32) as usize, value);
    }
    sync_threads();
    if t < 32 {
        let value = if t < warps {
            warp_sums.load(t as usize)
        } else {
            0
        };
        let value = warp_reduce(value, warps);
        if t == 0 {
            partials.store(block_idx_x() as usize, value);
        }
    }
}

#[test]
fn warp_shuffle_sum_is_exact_under_every_schedule() {
    let mut data = input(50_001);
    let expected = host_sum(&data);
    for config in schedules(config(7, 256, 8 * 4)) {
        let mut partials = vec![0; 7];
        let (input, output) = (Global::new(&mut data), Global::new(&mut partials));
        let regions = [
            input.region("input", Access::ReadOnly),
            output.region("partials", Access::ReadWrite),
        ];
        let stats = run("shuffle_sum", &config, &regions, &|| {
            shuffle_sum(input, output)
        });
        assert_eq!(host_sum(&partials), expected, "{:?}", config.schedule);
        // Per block: 5 shuffle rounds in each of 8 warps, then 3 in warp 0.
        assert_eq!(stats.shuffles, 7 * (8 * 5 + 3));
    }
}

#[test]
fn shuffle_down_stays_in_its_segment() {
    let mut out = vec![(0u64, false); 64];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    run("segments", &config(1, 64, 0), &regions, &|| {
        let t = thread_idx_x();
        let result = shuffle_down(FULL_MASK, u64::from(t) * 10, 3, 8);
        output.store(t as usize, result);
    });
    for (t, &(value, in_range)) in out.iter().enumerate() {
        let source_in_segment = t % 8 + 3 < 8;
        let expected = if source_in_segment {
            ((t + 3) * 10) as u64
        } else {
            (t * 10) as u64
        };
        assert_eq!(
            (value, in_range),
            (expected, source_in_segment),
            "thread {t}"
        );
    }
}

#[test]
fn lanes_of_a_partial_warp_shuffle_among_themselves() {
    // 40 threads: warp 1 has lanes 0-7 only, and a full mask names lanes that do not exist.
    let mut out = vec![0u32; 40];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    run("partial_warp", &config(1, 40, 0), &regions, &|| {
        let t = thread_idx_x();
        let (value, _) = shuffle_down(FULL_MASK, u64::from(t), 4, 8);
        output.store(t as usize, value as u32);
    });
    assert_eq!(out[32..], [36, 37, 38, 39, 36, 37, 38, 39]);
}

#[test]
fn sync_warp_over_disjoint_halves_of_a_warp() {
    let mut out = vec![0u32; 32];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    let stats = run("halves", &config(1, 32, 32 * 4), &regions, &|| {
        let t = thread_idx_x() as usize;
        let shared = Shared::<u32>::new(0, 32);
        let half = if t < 16 { 0x0000_FFFF } else { 0xFFFF_0000 };
        shared.store(t, t as u32);
        sync_warp(half);
        // Read the neighbour in the same half: ordered by that half's sync_warp.
        output.store(t, shared.load(t ^ 1));
    });
    assert_eq!(out, (0..32).map(|t| t ^ 1).collect::<Vec<u32>>());
    assert_eq!(stats.warp_syncs, 2);
}

#[test]
fn stats_count_what_the_launch_did() {
    let mut data = input(4 * 2 * 64);
    let mut partials = vec![0; 4];
    let (input, output) = (Global::new(&mut data), Global::new(&mut partials));
    let regions = [
        input.region("input", Access::ReadOnly),
        output.region("partials", Access::ReadWrite),
    ];
    let stats = run("tree_sum", &config(4, 64, 64 * 4), &regions, &|| {
        tree_sum(input, output, true)
    });
    assert_eq!((stats.blocks, stats.threads), (4, 256));
    // One barrier after the load and one per halving step (32, 16, 8, 4, 2, 1).
    assert_eq!(stats.barriers, 4 * 7);
    // Per block: 64 stores, 3 accesses per active thread per step, one load by thread 0.
    assert_eq!(stats.shared_accesses, 4 * (64 + 3 * 63 + 1));
    assert_eq!(stats.global_accesses, 4 * (2 * 64 + 1));
    assert_eq!((stats.warp_syncs, stats.shuffles), (0, 0));
}
