//! Global memory: bounds and access modes of regions, races within and between blocks, and the
//! fence + atomic pattern that orders blocks.

use crate::correct::input;
use crate::kernel::*;
use simt::{Access, ErrorKind, Region, atomic_add_u32, atomic_exchange_u32, thread_fence};

#[test]
fn an_index_past_the_buffer_is_out_of_bounds() {
    let mut data = vec![1u32; 100];
    let input = Global::new(&mut data);
    let regions = [input.region("input", Access::ReadOnly)];
    // Caught by the kernel's own bounds check.
    fails(
        ErrorKind::OutOfBounds,
        &[
            "kernel `wrapper_oob` faulted in block 3, thread 4 (warp 0, lane 4) at simt/tests/simulator/",
            "out-of-bounds global memory access: index 100 of an array of 100 elements",
        ],
        "wrapper_oob",
        &config(4, 32, 0),
        &regions,
        &|| {
            let _ = input.load((block_idx_x() * 32 + thread_idx_x()) as usize);
        },
    );
    // Missed by a buggy wrapper, caught by the simulator's region check.
    fails(
        ErrorKind::OutOfBounds,
        &[
            "out-of-bounds global memory access in kernel `raw_oob`, block 3: thread 4 (warp 0, lane 4) made a read of 4 bytes",
            "in no buffer registered for this launch (regions: `input`",
        ],
        "raw_oob",
        &config(4, 32, 0),
        &regions,
        &|| {
            let _ = input.load_unchecked((block_idx_x() * 32 + thread_idx_x()) as usize);
        },
    );
    // An access that starts inside the region and ends past it.
    fails(
        ErrorKind::OutOfBounds,
        &[
            "made a read of 8 bytes",
            "runs past the end of region `input` (400 bytes at",
        ],
        "straddle",
        &config(1, 1, 0),
        &regions,
        &|| simt::global_access(input.as_ptr() as usize + 396, 8, false),
    );
}

#[test]
fn a_write_past_the_region_is_stopped_before_it_happens() {
    // Only the first 4 elements are registered; element 4 stands for memory the kernel must not
    // touch.
    let mut data = vec![0u32; 8];
    let output = Global::new(&mut data);
    let regions = [Region {
        bytes: 16,
        ..output.region("out", Access::ReadWrite)
    }];
    fails(
        ErrorKind::OutOfBounds,
        &[
            "thread 4 (warp 0, lane 4) made a write of 4 bytes",
            "in no buffer registered for this launch",
        ],
        "write_past",
        &config(1, 8, 0),
        &regions,
        &|| output.store_unchecked(thread_idx_x() as usize, 9),
    );
    assert_eq!(data, [9, 9, 9, 9, 0, 0, 0, 0]);
}

#[test]
fn writing_a_read_only_region_is_reported() {
    let mut data = vec![1u32; 32];
    let input = Global::new(&mut data);
    let regions = [input.region("input", Access::ReadOnly)];
    fails(
        ErrorKind::OutOfBounds,
        &[
            "thread 0 (warp 0, lane 0) made a write of 4 bytes",
            "in region `input`, which this launch gives as read-only",
        ],
        "write_input",
        &config(1, 32, 0),
        &regions,
        &|| input.store(thread_idx_x() as usize, 0),
    );
    assert!(data.iter().all(|&v| v == 1), "the write must not happen");
}

#[test]
fn atomic_regions_take_atomics_only() {
    let mut counter = vec![0u32; 1];
    let mut data = vec![0u32; 1];
    let (counter, data) = (Global::new(&mut counter), Global::new(&mut data));
    let regions = [
        counter.region("counter", Access::Atomic),
        data.region("data", Access::ReadWrite),
    ];
    fails(
        ErrorKind::OutOfBounds,
        &[
            "made a read of 4 bytes",
            "in region `counter`, which this launch gives for atomics only",
        ],
        "plain_counter",
        &config(1, 1, 0),
        &regions,
        &|| {
            let _ = counter.load(0);
        },
    );
    fails(
        ErrorKind::OutOfBounds,
        &[
            "made an atomic of 4 bytes",
            "atomics need a region given as Access::Atomic, and this one is ReadWrite",
        ],
        "atomic_data",
        &config(1, 1, 0),
        &regions,
        &|| {
            atomic_add_u32(data.as_ptr(), 1);
        },
    );
    let stats = run("count", &config(3, 64, 0), &regions, &|| {
        atomic_add_u32(counter.as_ptr(), 2);
    });
    assert_eq!(stats.global_accesses, 3 * 64);
    // SAFETY: the launch is over; nothing else holds the buffer.
    assert_eq!(unsafe { counter.as_ptr().read() }, 3 * 64 * 2);
}

#[test]
fn threads_of_a_block_race_on_global_memory_like_on_shared() {
    let mut out = vec![0u32; 1];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    let kernel = |barrier: bool| {
        move || {
            if thread_idx_x() == 0 {
                output.store(0, 7);
            }
            if barrier {
                sync_threads();
            }
            if thread_idx_x() == 1 {
                let _ = output.load(0);
            }
        }
    };
    fails(
        ErrorKind::GlobalRace,
        &[
            "data race on global memory in kernel `intra`, block 0: thread 0 (warp 0, lane 0) wrote the bytes at",
            "(byte 0 of region `out`)",
            "then thread 1 (warp 0, lane 1) read it at",
            "with no sync_threads or sync_warp between them",
        ],
        "intra",
        &config(1, 32, 0),
        &regions,
        &kernel(false),
    );
    run("intra", &config(1, 32, 0), &regions, &kernel(true));
}

#[test]
fn a_block_reading_another_blocks_output_races() {
    let mut out = vec![0u32; 2];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    let kernel = || {
        if thread_idx_x() == 0 {
            let block = block_idx_x() as usize;
            output.store(block, 1);
            if block == 1 {
                let _ = output.load(0);
            }
        }
    };
    fails(
        ErrorKind::GlobalRace,
        &[
            "data race on global memory in kernel `neighbour`: block 0, thread 0 (warp 0, lane 0) wrote the bytes at",
            "then block 1, thread 0 (warp 0, lane 0) read it at",
            "Blocks run concurrently",
        ],
        "neighbour",
        &config(2, 32, 0),
        &regions,
        &kernel,
    );
    // Whatever the block order, it is a race (here: a read, then the other block's write).
    for seed in 0..8 {
        fails(
            ErrorKind::GlobalRace,
            &["data race on global memory"],
            "neighbour",
            &shuffled(config(2, 32, 0), seed),
            &regions,
            &kernel,
        );
    }
}

/// CUDA's threadFenceReduction: each block writes its partial; its thread 0 fences and takes a
/// ticket from a counter; the block that takes the last ticket adds up all partials.
fn last_block_sum(
    input: Global<u32>,
    partials: Global<u32>,
    total: Global<u32>,
    counter: *mut u32,
    fence: bool,
) {
    let (t, n, block, grid) = (
        thread_idx_x() as usize,
        block_dim_x() as usize,
        block_idx_x() as usize,
        grid_dim_x(),
    );
    let shared = Shared::<u32>::new(0, n);
    let is_last = Shared::<u32>::new(n, 1);
    let block_sum = |value: u32| {
        shared.store(t, value);
        sync_threads();
        let mut stride = n / 2;
        while stride > 0 {
            if t < stride {
                shared.store(t, shared.load(t).wrapping_add(shared.load(t + stride)));
            }
            sync_threads();
            stride /= 2;
        }
        shared.load(0)
    };
    let i = block * n + t;
    let sum = block_sum(if i < input.len { input.load(i) } else { 0 });
    if t == 0 {
        partials.store(block, sum);
        if fence {
            thread_fence();
        }
        let ticket = atomic_add_u32(counter, 1);
        is_last.store(0, u32::from(ticket == grid - 1));
    }
    sync_threads();
    if is_last.load(0) == 1 {
        let mut acc = 0u32;
        let mut index = t;
        while index < partials.len {
            acc = acc.wrapping_add(partials.load(index));
            index += n;
        }
        let sum = block_sum(acc);
        if t == 0 {
            total.store(0, sum);
            atomic_exchange_u32(counter, 0);
        }
    }
}

#[test]
fn the_fence_and_atomic_last_block_pattern_orders_blocks() {
    let mut data = input(20 * 64 - 5);
    let expected = data.iter().fold(0u32, |sum, &v| sum.wrapping_add(v));
    for config in schedules(config(20, 64, 65 * 4)) {
        let (mut partials, mut total, mut counter) = (vec![0u32; 20], vec![0u32; 1], vec![0u32; 1]);
        let (input, partials, total, counter) = (
            Global::new(&mut data),
            Global::new(&mut partials),
            Global::new(&mut total),
            Global::new(&mut counter),
        );
        let regions = [
            input.region("input", Access::ReadOnly),
            partials.region("partials", Access::ReadWrite),
            total.region("total", Access::ReadWrite),
            counter.region("retired", Access::Atomic),
        ];
        run("last_block", &config, &regions, &|| {
            last_block_sum(input, partials, total, counter.as_ptr(), true)
        });
        // SAFETY: the launch is over; the buffers are only read.
        unsafe {
            assert_eq!(total.as_ptr().read(), expected, "{:?}", config.schedule);
            assert_eq!(
                counter.as_ptr().read(),
                0,
                "the last block resets the counter"
            );
        }
    }
}

#[test]
fn the_last_block_pattern_without_the_fence_races() {
    let mut data = input(20 * 64);
    for config in schedules(config(20, 64, 65 * 4)) {
        let (mut partials, mut total, mut counter) = (vec![0u32; 20], vec![0u32; 1], vec![0u32; 1]);
        let (input, partials, total, counter) = (
            Global::new(&mut data),
            Global::new(&mut partials),
            Global::new(&mut total),
            Global::new(&mut counter),
        );
        let regions = [
            input.region("input", Access::ReadOnly),
            partials.region("partials", Access::ReadWrite),
            total.region("total", Access::ReadWrite),
            counter.region("retired", Access::Atomic),
        ];
        fails(
            ErrorKind::GlobalRace,
            &[
                "data race on global memory in kernel `no_fence`: block",
                "wrote the bytes at",
                "of region `partials`)",
                "read it at",
            ],
            "no_fence",
            &config,
            &regions,
            &|| last_block_sum(input, partials, total, counter.as_ptr(), false),
        );
    }
}

/// Block 0's thread 5 writes a word that block 0's thread 0 releases (fence + atomic); block
/// 1's thread 0 acquires it (atomic) and thread 1 reads the word.
fn hand_over(
    word: Global<u32>,
    counter: *mut u32,
    barrier_before_fence: bool,
    barrier_after_acquire: bool,
) {
    let t = thread_idx_x();
    if block_idx_x() == 0 {
        if t == 5 {
            word.store(0, 42);
        }
        if barrier_before_fence {
            sync_threads();
        }
        if t == 0 {
            thread_fence();
            atomic_add_u32(counter, 1);
        }
    } else {
        if t == 0 {
            atomic_add_u32(counter, 1);
        }
        if barrier_after_acquire {
            sync_threads();
        }
        if t == 1 {
            let _ = word.load(0);
        }
    }
}

#[test]
fn release_and_acquire_reach_other_threads_through_barriers_only() {
    let (mut word, mut counter) = (vec![0u32; 1], vec![0u32; 1]);
    let (word, counter) = (Global::new(&mut word), Global::new(&mut counter));
    let regions = [
        word.region("word", Access::ReadWrite),
        counter.region("counter", Access::Atomic),
    ];
    let config = config(2, 32, 0);
    run("hand_over", &config, &regions, &|| {
        hand_over(word, counter.as_ptr(), true, true)
    });
    fails(
        ErrorKind::GlobalRace,
        &[
            "block 0, thread 5 (warp 0, lane 5) wrote",
            "then block 1, thread 1 (warp 0, lane 1) read it",
        ],
        "no_barrier_before_fence",
        &config,
        &regions,
        &|| hand_over(word, counter.as_ptr(), false, true),
    );
    fails(
        ErrorKind::GlobalRace,
        &[
            "block 0, thread 5 (warp 0, lane 5) wrote",
            "then block 1, thread 1 (warp 0, lane 1) read it",
        ],
        "no_barrier_after_acquire",
        &config,
        &regions,
        &|| hand_over(word, counter.as_ptr(), true, false),
    );
}
