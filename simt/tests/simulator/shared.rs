//! Shared memory: races (RAW, WAR, WAW) and reads of words the block never wrote.

use crate::correct::{input, tree_sum};
use crate::kernel::*;
use simt::{Access, ErrorKind};

const FILE: &str = file!();

#[test]
fn tree_without_barriers_between_steps_races() {
    let mut data = input(2 * 64);
    let mut partials = vec![0; 1];
    let (input, output) = (Global::new(&mut data), Global::new(&mut partials));
    let regions = [
        input.region("input", Access::ReadOnly),
        output.region("partials", Access::ReadWrite),
    ];
    let base = config(1, 64, 64 * 4);
    let mut read_after_write = false;
    for config in (0..20).map(|seed| shuffled(base, seed)).chain([base]) {
        let error = fails(
            ErrorKind::SharedRace,
            &[
                "data race on shared memory in kernel `tree_no_sync`, block 0: thread",
                "correct.rs:",
            ],
            "tree_no_sync",
            &config,
            &regions,
            &|| tree_sum(input, output, false),
        );
        read_after_write |=
            error.message.contains("then thread") && error.message.contains(" read it at");
        if config.schedule == base.schedule {
            // In order, thread 0 runs every step first: it reads word 1 in the last one, before
            // thread 1 writes it in the first.
            assert!(
                error
                    .message
                    .contains("thread 0 (warp 0, lane 0) read byte 4")
                    && error
                        .message
                        .contains("then thread 1 (warp 0, lane 1) wrote it"),
                "{error}"
            );
        }
    }
    assert!(
        read_after_write,
        "no schedule showed the read-after-write order"
    );
}

/// The tutorial's last-warp code, literally: warp 0 reduces `s[0..64]` with no `sync_warp`,
/// relying on lockstep execution that Volta's independent thread scheduling does not give.
fn last_warp(shared: &Shared<u32>, t: usize, with_sync_warp: bool) {
    for offset in [32, 16, 8, 4, 2, 1] {
        if with_sync_warp {
            let value = shared.load(t).wrapping_add(shared.load(t + offset));
            sync_warp(FULL_MASK);
            shared.store(t, value);
            sync_warp(FULL_MASK);
        } else {
            shared.store(t, shared.load(t).wrapping_add(shared.load(t + offset)));
        }
    }
}

fn last_warp_kernel(input: Global<u32>, output: Global<u32>, with_sync_warp: bool) {
    let t = thread_idx_x() as usize;
    let shared = Shared::<u32>::new(0, 64);
    shared.store(t, input.load(t));
    sync_threads();
    if t < 32 {
        last_warp(&shared, t, with_sync_warp);
    }
    if t == 0 {
        output.store(0, shared.load(0));
    }
}

#[test]
fn warp_synchronous_last_warp_without_sync_warp_races_under_every_schedule() {
    let mut data = input(64);
    let mut out = vec![0; 1];
    let (input, output) = (Global::new(&mut data), Global::new(&mut out));
    let regions = [
        input.region("input", Access::ReadOnly),
        output.region("out", Access::ReadWrite),
    ];
    let base = config(1, 64, 64 * 4);
    for config in (0..20).map(|seed| shuffled(base, seed)).chain([base]) {
        let error = fails(
            ErrorKind::SharedRace,
            &[
                "data race on shared memory in kernel `last_warp_unsynced`, block 0",
                "(warp 0, lane",
                "with no sync_threads or sync_warp between them",
                FILE,
            ],
            "last_warp_unsynced",
            &config,
            &regions,
            &|| last_warp_kernel(input, output, false),
        );
        if config.schedule == base.schedule {
            // In order, thread 0 runs all six steps first (reading word 1 in the last), then
            // thread 1 overwrites word 1 in its first.
            assert!(
                error.message.contains(
                    "thread 0 (warp 0, lane 0) read byte 4 at simt/tests/simulator/shared.rs:"
                ) && error
                    .message
                    .contains("then thread 1 (warp 0, lane 1) wrote it at"),
                "{error}"
            );
        }
    }
}

#[test]
fn last_warp_with_sync_warp_between_read_and_write_is_exact() {
    let mut data = input(64);
    let expected = data.iter().fold(0u32, |sum, &v| sum.wrapping_add(v));
    for config in schedules(config(1, 64, 64 * 4)) {
        let mut out = vec![0; 1];
        let (input, output) = (Global::new(&mut data), Global::new(&mut out));
        let regions = [
            input.region("input", Access::ReadOnly),
            output.region("out", Access::ReadWrite),
        ];
        let stats = run("last_warp_synced", &config, &regions, &|| {
            last_warp_kernel(input, output, true)
        });
        assert_eq!(out[0], expected);
        assert_eq!(stats.warp_syncs, 12);
    }
}

/// Every thread takes its right neighbour's value: `s[t] = s[t + 1]`. Without a barrier between
/// the read and the write, thread 1 may overwrite `s[1]` before thread 0 has read it.
fn rotate(output: Global<u32>, barrier_between: bool) {
    let (t, n) = (thread_idx_x() as usize, block_dim_x() as usize);
    let shared = Shared::<u32>::new(0, n);
    shared.store(t, t as u32);
    sync_threads();
    let right = shared.load((t + 1) % n);
    if barrier_between {
        sync_threads();
    }
    shared.store(t, right);
    sync_threads();
    output.store(t, shared.load(t));
}

#[test]
fn overwriting_a_word_another_thread_read_is_a_write_after_read_race() {
    let mut out = vec![0; 64];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    fails(
        ErrorKind::SharedRace,
        &[
            "block 0: thread 0 (warp 0, lane 0) read byte 4 at",
            "then thread 1 (warp 0, lane 1) wrote it at",
            FILE,
        ],
        "rotate",
        &config(1, 64, 64 * 4),
        &regions,
        &|| rotate(output, false),
    );
    for config in schedules(config(1, 64, 64 * 4)) {
        run("rotate", &config, &regions, &|| rotate(output, true));
        assert_eq!(out, (0..64).map(|t| (t + 1) % 64).collect::<Vec<u32>>());
    }
}

#[test]
fn a_read_by_another_warp_is_only_ordered_by_a_barrier() {
    // Thread 40 reads word 0, then thread 0 writes it, with a sync_warp that cannot help.
    let mut out = vec![0; 1];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    let config = shuffled(config(1, 64, 4), 3);
    fails(
        ErrorKind::SharedRace,
        &[
            "(warp 1, lane 8)",
            "(warp 0, lane 0)",
            "they are in different warps",
        ],
        "cross_warp",
        &config,
        &regions,
        &|| {
            let t = thread_idx_x();
            let shared = Shared::<u32>::new(0, 1);
            if t == 0 {
                shared.store(0, 1);
            }
            sync_threads();
            if t == 40 {
                output.store(0, shared.load(0));
            }
            sync_warp(FULL_MASK);
            if t == 0 {
                shared.store(0, 2);
            }
        },
    );
}

#[test]
fn two_threads_writing_one_word_is_a_write_after_write_race() {
    fails(
        ErrorKind::SharedRace,
        &[
            "thread 0 (warp 0, lane 0) wrote byte 12",
            "then thread 1 (warp 0, lane 1) wrote it",
        ],
        "same_word",
        &config(1, 32, 16),
        &[],
        &|| {
            let shared = Shared::<u32>::new(0, 4);
            if thread_idx_x() < 2 {
                shared.store(3, thread_idx_x());
            }
        },
    );
}

#[test]
fn neighbouring_two_byte_values_of_one_word_do_not_race() {
    // Threads 0 and 1 write the two halves of word 0 with no barrier between them: different
    // bytes, so no race (the f16 partials of neighbouring warps do exactly this).
    let stats = simt::launch("halves", &config(1, 64, 4), &[], &|| {
        let halves = Shared::<u16>::new(0, 2);
        let t = thread_idx_x();
        if t.is_multiple_of(32) {
            halves.store((t / 32) as usize, 7);
        }
        sync_threads();
        if t == 0 {
            assert_eq!(halves.load(0) + halves.load(1), 14);
        }
    });
    assert!(stats.is_ok(), "{stats:?}");
}

#[test]
fn eight_byte_accesses_cover_two_words() {
    fails(
        ErrorKind::SharedRace,
        &[
            "thread 0 (warp 0, lane 0) wrote byte 12",
            "then thread 1 (warp 0, lane 1) read it",
        ],
        "wide",
        &config(1, 32, 32),
        &[],
        &|| {
            let t = thread_idx_x() as usize;
            let words = Shared::<u32>::new(0, 8);
            let doubles = Shared::<u64>::new(0, 4);
            if t == 0 {
                words.store(2, 7);
                words.store(3, 7);
            }
            sync_threads();
            if t == 0 {
                words.store(3, 8);
            }
            if t == 1 {
                // Words 2 (ordered by the barrier) and 3 (not).
                let _ = doubles.load(1);
            }
        },
    );
}

#[test]
fn reading_shared_memory_nobody_wrote_is_reported() {
    fails(
        ErrorKind::UninitializedSharedRead,
        &[
            "read of uninitialized shared memory in kernel `uninit`, block 0: thread 0 (warp 0, lane 0) read byte 20",
        ],
        "uninit",
        &config(1, 32, 32 * 4),
        &[],
        &|| {
            let shared = Shared::<u32>::new(0, 32);
            let t = thread_idx_x() as usize;
            let _ = shared.load(t + 5);
        },
    );
}

#[test]
fn a_block_does_not_inherit_an_earlier_blocks_shared_memory() {
    let mut out = vec![0; 2];
    let output = Global::new(&mut out);
    let regions = [output.region("out", Access::ReadWrite)];
    fails(
        ErrorKind::UninitializedSharedRead,
        &["block 1: thread 0 (warp 0, lane 0) read byte 0"],
        "inherit",
        &config(2, 1, 4),
        &regions,
        &|| {
            let shared = Shared::<u32>::new(0, 1);
            if block_idx_x() == 0 {
                shared.store(0, 42);
            }
            output.store(block_idx_x() as usize, shared.load(0));
        },
    );
    // The memory itself is poisoned too.
    run("poison", &config(2, 1, 4), &regions, &|| {
        let (memory, _) = simt::dynamic_shared_memory();
        // SAFETY: the launch gave 4 bytes of shared memory; reading bytes bypasses the checks,
        // which is what this test is after.
        let byte = unsafe { memory.read() };
        if block_idx_x() == 0 {
            simt::shared_access(0, 4, true);
            // SAFETY: as above.
            unsafe { memory.write(0) };
        }
        output.store(block_idx_x() as usize, u32::from(byte));
    });
    assert_eq!(out, [0xAB, 0xAB]);
}

#[test]
fn out_of_bounds_shared_access_is_reported() {
    fails(
        ErrorKind::OutOfBounds,
        &[
            "out-of-bounds shared memory access",
            "write of 4 bytes at byte offset 128",
            "128 bytes",
        ],
        "shared_oob",
        &config(1, 1, 128),
        &[],
        &|| simt::shared_access(128, 4, true),
    );
}
