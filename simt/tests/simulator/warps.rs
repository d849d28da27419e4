//! Warp operations that cannot complete or read lanes that are not there.

use crate::kernel::*;
use simt::{ErrorKind, shuffle_down};

#[test]
fn a_mask_without_the_callers_lane_is_invalid() {
    fails(
        ErrorKind::InvalidWarpMask,
        &[
            "invalid warp mask in kernel `bad_mask`, block 0: thread 0 (warp 0, lane 0) called \
             shuffle_down(mask 0xfffffffe, delta 1, width 32) at simt/tests/simulator/warps.rs:",
            "does not contain its own lane 0",
        ],
        "bad_mask",
        &config(1, 32, 0),
        &[],
        &|| {
            let _ = shuffle_down(0xFFFF_FFFE, 1, 1, 32);
        },
    );
    fails(
        ErrorKind::InvalidWarpMask,
        &["thread 2 (warp 0, lane 2) called sync_warp(mask 0x00000003)"],
        "bad_sync_mask",
        &config(1, 32, 0),
        &[],
        &|| sync_warp(0b11),
    );
}

#[test]
fn shuffling_from_a_lane_that_returned_is_reported() {
    fails(
        ErrorKind::InactiveShuffleSource,
        &[
            "inactive shuffle source in kernel `exited_source`, block 0: thread 30 (warp 0, lane 30)",
            "reads thread 31 (warp 0, lane 31), which has already exited",
        ],
        "exited_source",
        &config(1, 32, 0),
        &[],
        &|| {
            if lane_id() == 31 {
                return;
            }
            let _ = shuffle_down(FULL_MASK, 1, 1, 32);
        },
    );
}

#[test]
fn shuffling_from_a_lane_outside_the_mask_or_the_block_is_reported() {
    fails(
        ErrorKind::InactiveShuffleSource,
        &[
            "thread 15 (warp 0, lane 15)",
            "reads thread 16 (warp 0, lane 16), which is not in the mask",
        ],
        "outside_mask",
        &config(1, 32, 0),
        &[],
        &|| {
            if lane_id() < 16 {
                let _ = shuffle_down(0x0000_FFFF, 1, 1, 32);
            }
        },
    );
    fails(
        ErrorKind::InactiveShuffleSource,
        &[
            "thread 39 (warp 1, lane 7)",
            "reads thread 40 (warp 1, lane 8), which does not exist (the block has 40 threads)",
        ],
        "past_the_block",
        &config(1, 40, 0),
        &[],
        &|| {
            let _ = shuffle_down(FULL_MASK, 1, 1, 32);
        },
    );
}

#[test]
fn a_warp_op_waiting_for_a_lane_at_a_barrier_is_a_deadlock() {
    fails(
        ErrorKind::Deadlock,
        &[
            "deadlock in kernel `warp_vs_block`, block 0: thread 0 (warp 0, lane 0) waits at sync_warp(mask 0xffffffff)",
            "for thread 1 (warp 0, lane 1), which waits at sync_threads at",
        ],
        "warp_vs_block",
        &config(1, 32, 0),
        &[],
        &|| {
            if lane_id() == 0 {
                sync_warp(FULL_MASK);
            }
            sync_threads();
        },
    );
    fails(
        ErrorKind::Deadlock,
        &[
            "thread 0 (warp 0, lane 0) waits at sync_warp(mask 0xffffffff)",
            "which waits at shuffle_down(mask 0xffffffff",
        ],
        "sync_vs_shuffle",
        &config(1, 32, 0),
        &[],
        &|| {
            if lane_id() == 0 {
                sync_warp(FULL_MASK);
            } else {
                let _ = shuffle_down(FULL_MASK, 0, 1, 32);
            }
        },
    );
}

#[test]
fn lanes_that_disagree_on_the_mask_are_reported() {
    fails(
        ErrorKind::InvalidWarpMask,
        &[
            "mismatched warp masks",
            "thread 0 (warp 0, lane 0) waits at sync_warp(mask 0x00000003)",
            "thread 1 (warp 0, lane 1) waits at sync_warp(mask 0x00000007)",
        ],
        "mismatch",
        &config(1, 32, 0),
        &[],
        &|| {
            let lane = lane_id();
            if lane < 3 {
                sync_warp(if lane == 0 { 0b011 } else { 0b111 });
            }
        },
    );
}

#[test]
fn a_bad_width_is_reported() {
    fails(
        ErrorKind::InvalidWarpMask,
        &["width must be a power of two"],
        "width",
        &config(1, 32, 0),
        &[],
        &|| {
            let _ = shuffle_down(FULL_MASK, 0, 1, 12);
        },
    );
}
