//! The simulator's point: bugs that a result check alone misses. Each test runs a deliberately
//! broken kernel — written here, with the same device API as the real ones — and checks what
//! the simulator reports; the corrected kernel (or the project's own version) passes.

use kernels_gpu::device::{
    FULL_MASK, GlobalCounters, GlobalSlice, GlobalSliceMut, block_dim_x, block_idx_x, shared_array,
    sync_threads, sync_warp, thread_fence, thread_idx_x, warp_shuffle_down,
};
use kernels_gpu::ops::Sum;
use kernels_gpu::params::Scratch;
use simt::{Access, ErrorKind, LaunchConfig, Region, Schedule, SimError};

const BLOCK: u32 = 64;

/// The shape of the broken kernels below: input, one value per block, ticket counters.
type Kernel = fn(GlobalSlice<f32>, GlobalSliceMut<f32>, GlobalCounters);

/// Runs `kernel` on the simulator over host buffers standing for global memory.
fn simulate(
    kernel: Kernel,
    config: &LaunchConfig,
    input: &[f32],
    partials: &mut [f32],
    retired: &mut [u32],
) -> Result<simt::LaunchStats, SimError> {
    let regions = [
        Region::of_slice("input", input, Access::ReadOnly),
        Region::of_slice("partials", partials, Access::ReadWrite),
        Region::of_slice("retired", retired, Access::Atomic),
    ];
    // SAFETY: the three buffers are borrowed (input shared, the others exclusively) for the
    // whole call, and the simulator checks every access the views make against the regions.
    let (input, partials, retired) = unsafe {
        (
            GlobalSlice::from_raw(input.as_ptr(), input.len()),
            GlobalSliceMut::from_raw(partials.as_mut_ptr(), partials.len()),
            GlobalCounters::from_raw(retired.as_mut_ptr(), retired.len()),
        )
    };
    simt::launch("test_kernel", config, &regions, &|| {
        kernel(input, partials, retired)
    })
}

/// One of the project's versions in the shape of the broken kernels: its per-block values go
/// to `partials`.
fn version(
    kernel: fn(GlobalSlice<f32>, Scratch<f32>, GlobalSliceMut<f32>),
) -> impl Fn(GlobalSlice<f32>, GlobalSliceMut<f32>, GlobalCounters) {
    move |input, partials, retired| {
        let scratch = Scratch { partials, retired };
        kernel(input, scratch, partials)
    }
}

fn launch(
    kernel: Kernel,
    grid: u32,
    len: usize,
) -> (Result<simt::LaunchStats, SimError>, Vec<f32>) {
    launch_with_shared(kernel, grid, len, BLOCK as usize * 4)
}

fn launch_with_shared(
    kernel: Kernel,
    grid: u32,
    len: usize,
    shared_bytes: usize,
) -> (Result<simt::LaunchStats, SimError>, Vec<f32>) {
    let input: Vec<f32> = (0..len).map(|i| (i % 7) as f32 - 3.0).collect();
    let mut partials = vec![f32::NAN; grid as usize];
    let mut retired = [0];
    let config = LaunchConfig {
        grid_dim: grid,
        block_dim: BLOCK,
        shared_bytes,
        schedule: Schedule::InOrder,
    };
    let result = simulate(kernel, &config, &input, &mut partials, &mut retired);
    (result, partials)
}

fn expect(kind: ErrorKind, result: Result<simt::LaunchStats, SimError>, mentions: &[&str]) {
    let error = result.expect_err("the simulator should have reported the bug");
    assert_eq!(error.kind, kind, "wrong kind; report:\n{error}");
    for text in mentions {
        assert!(
            error.message.contains(text),
            "report should mention `{text}`:\n{error}"
        );
    }
}

/// Loads one element per thread into shared memory (all tests start like v2).
fn load_block(input: &GlobalSlice<f32>) -> kernels_gpu::device::SharedArray<f32> {
    let tid = thread_idx_x() as usize;
    let shared = shared_array![f32; BLOCK as usize];
    let index = block_idx_x() as usize * BLOCK as usize + tid;
    shared.store(
        tid,
        if index < input.len() {
            input.load(index)
        } else {
            0.0
        },
    );
    shared
}

/// The tutorial's `warpReduce` (chapter `reduce_v4_unroll_last_warp`), literally: `volatile`
/// accesses and no `__syncwarp()`, relying on lockstep execution that Volta removed.
fn tutorials_literal_v4(input: GlobalSlice<f32>, partials: GlobalSliceMut<f32>, _: GlobalCounters) {
    let tid = thread_idx_x() as usize;
    let cache = load_block(&input);
    sync_threads();
    if tid < 32 {
        for offset in [32, 16, 8, 4, 2, 1] {
            cache.store_volatile(
                tid,
                cache.load_volatile(tid) + cache.load_volatile(tid + offset),
            );
        }
    }
    if tid == 0 {
        partials.store(block_idx_x() as usize, cache.load(0));
    }
}

#[test]
fn the_tutorials_literal_last_warp_code_is_a_race_but_the_port_is_not() {
    // The literal code even gives the right sum here — a result check cannot see the bug.
    let (result, _) = launch(tutorials_literal_v4, 2, 128);
    expect(
        ErrorKind::SharedRace,
        result,
        &["test_kernel", "sim_detects.rs"],
    );

    let v4 = |i, p, r| version(kernels_gpu::versions::reduce_v4::<f32, Sum>)(i, p, r);
    let (result, partials) = launch(v4, 1, 128);
    result.expect("the port syncs the warp between reading and writing");
    let expected: f32 = (0..128).map(|i| (i % 7) as f32 - 3.0).sum();
    assert_eq!(partials[0], expected);
}

/// v2's tree with the barrier after each round forgotten.
fn missing_barrier(input: GlobalSlice<f32>, partials: GlobalSliceMut<f32>, _: GlobalCounters) {
    let tid = thread_idx_x();
    let shared = load_block(&input);
    sync_threads();
    let mut stride = block_dim_x() / 2;
    while stride > 0 {
        if tid < stride {
            shared.store(
                tid as usize,
                shared.load(tid as usize) + shared.load((tid + stride) as usize),
            );
        }
        stride /= 2;
    }
    if tid == 0 {
        partials.store(block_idx_x() as usize, shared.load(0));
    }
}

#[test]
fn a_missing_barrier_is_a_shared_memory_race() {
    let (result, _) = launch(missing_barrier, 1, 64);
    expect(ErrorKind::SharedRace, result, &["block 0"]);
}

/// Reads one element past the end (the tutorial assumes N is a multiple of the block size).
fn reads_past_the_end(input: GlobalSlice<f32>, partials: GlobalSliceMut<f32>, _: GlobalCounters) {
    let index = block_idx_x() as usize * BLOCK as usize + thread_idx_x() as usize;
    let value = input.load(index);
    if thread_idx_x() == 0 {
        partials.store(block_idx_x() as usize, value);
    }
}

#[test]
fn an_out_of_bounds_read_is_reported_not_undefined() {
    let (result, _) = launch(reads_past_the_end, 2, 100);
    expect(
        ErrorKind::OutOfBounds,
        result,
        &["index 100", "100 elements"],
    );
}

/// A barrier only some threads reach.
fn barrier_in_a_branch(input: GlobalSlice<f32>, partials: GlobalSliceMut<f32>, _: GlobalCounters) {
    let shared = load_block(&input);
    if thread_idx_x() < 32 {
        sync_threads();
    }
    if thread_idx_x() == 0 {
        partials.store(block_idx_x() as usize, shared.load(0));
    }
}

#[test]
fn a_barrier_not_reached_by_every_thread_is_reported_not_a_hang() {
    let (result, _) = launch(barrier_in_a_branch, 1, 64);
    let error = result.expect_err("divergent barrier");
    assert!(
        matches!(
            error.kind,
            ErrorKind::BarrierNotReached | ErrorKind::DivergentBarrier
        ),
        "{error}"
    );
}

/// Two different barriers for the two halves of the block.
#[allow(clippy::if_same_then_else)] // the same call at two call sites is the bug
fn barriers_at_different_places(
    input: GlobalSlice<f32>,
    partials: GlobalSliceMut<f32>,
    _: GlobalCounters,
) {
    let shared = load_block(&input);
    if thread_idx_x() < 32 {
        sync_threads();
    } else {
        sync_threads();
    }
    if thread_idx_x() == 0 {
        partials.store(block_idx_x() as usize, shared.load(0));
    }
}

#[test]
fn barriers_at_different_call_sites_are_divergent() {
    let (result, _) = launch(barriers_at_different_places, 1, 64);
    expect(ErrorKind::DivergentBarrier, result, &["sim_detects.rs"]);
}

/// A shuffle whose mask leaves out the calling lane (lanes 16–31 call with a mask of 0–15;
/// within 16-lane segments every source lane of 0–15 is in the mask).
fn shuffle_without_own_lane(
    input: GlobalSlice<f32>,
    partials: GlobalSliceMut<f32>,
    _: GlobalCounters,
) {
    let index = block_idx_x() as usize * BLOCK as usize + thread_idx_x() as usize;
    let value = if index < input.len() {
        input.load(index)
    } else {
        0.0
    };
    let (other, _) = warp_shuffle_down(0x0000_ffff, value, 1, 16);
    if thread_idx_x() == 0 {
        partials.store(block_idx_x() as usize, value + other);
    }
}

#[test]
fn a_shuffle_mask_without_the_calling_lane_is_reported() {
    let (result, _) = launch(shuffle_without_own_lane, 1, 64);
    expect(ErrorKind::InvalidWarpMask, result, &[]);
}

/// Lane 31 leaves before the shuffle that lane 30 reads it through.
fn shuffle_from_an_exited_lane(
    input: GlobalSlice<f32>,
    partials: GlobalSliceMut<f32>,
    _: GlobalCounters,
) {
    if thread_idx_x() % 32 == 31 {
        return;
    }
    let index = block_idx_x() as usize * BLOCK as usize + thread_idx_x() as usize;
    let value = if index < input.len() {
        input.load(index)
    } else {
        0.0
    };
    let (other, _) = warp_shuffle_down(FULL_MASK, value, 1, 32);
    if thread_idx_x() == 0 {
        partials.store(block_idx_x() as usize, value + other);
    }
}

#[test]
fn a_shuffle_reading_an_exited_lane_is_reported() {
    let (result, _) = launch(shuffle_from_an_exited_lane, 1, 64);
    let error = result.expect_err("lane 31 exited");
    assert!(
        matches!(
            error.kind,
            ErrorKind::InactiveShuffleSource | ErrorKind::InvalidWarpMask | ErrorKind::Deadlock
        ),
        "{error}"
    );
}

/// Reads a shared word no thread wrote: the tree runs over twice the loaded slots.
fn reads_unwritten_shared(
    input: GlobalSlice<f32>,
    partials: GlobalSliceMut<f32>,
    _: GlobalCounters,
) {
    let tid = thread_idx_x() as usize;
    let shared = shared_array![f32; BLOCK as usize];
    if tid < 32 {
        shared.store(tid, input.load(tid));
    }
    sync_threads();
    if tid < 32 {
        let value = shared.load(tid) + shared.load(tid + 32);
        sync_warp(FULL_MASK);
        shared.store(tid, value);
    }
    sync_threads();
    if tid == 0 {
        partials.store(block_idx_x() as usize, shared.load(0));
    }
}

#[test]
fn reading_shared_memory_nobody_wrote_is_reported() {
    let (result, _) = launch(reads_unwritten_shared, 1, 64);
    expect(ErrorKind::UninitializedSharedRead, result, &[]);
}

#[test]
fn a_launch_with_too_little_shared_memory_is_reported() {
    // The GPU trusts the launch contract here (no check in every warp); the simulator does not.
    let v2 = |i, p, r| version(kernels_gpu::versions::reduce_v2::<f32, Sum>)(i, p, r);
    let (result, _) = launch_with_shared(v2, 1, 64, 63 * 4);
    expect(
        ErrorKind::Fault,
        result,
        &["wants 256 bytes of shared memory", "gave 252"],
    );
    let (result, _) = launch_with_shared(v2, 1, 64, 64 * 4);
    result.expect("64 floats fit in 256 bytes");
}

/// Block 1 adds block 0's partial without any ordering between the blocks.
fn reads_another_blocks_output(
    input: GlobalSlice<f32>,
    partials: GlobalSliceMut<f32>,
    _: GlobalCounters,
) {
    let index = block_idx_x() as usize * BLOCK as usize + thread_idx_x() as usize;
    if thread_idx_x() == 0 {
        let mut value = input.load(index);
        if block_idx_x() == 1 {
            value += partials.load(0);
        }
        partials.store(block_idx_x() as usize, value);
    }
}

#[test]
fn a_block_reading_another_blocks_output_is_a_global_race() {
    let (result, _) = launch(reads_another_blocks_output, 2, 128);
    expect(ErrorKind::GlobalRace, result, &[]);
}

/// The last-block pattern of v8 without the fence: the ticket alone does not publish the partial.
fn last_block_without_fence(
    input: GlobalSlice<f32>,
    partials: GlobalSliceMut<f32>,
    retired: GlobalCounters,
) {
    let tid = thread_idx_x();
    let index = block_idx_x() as usize * BLOCK as usize + tid as usize;
    let flag = shared_array![u32; 1];
    if tid == 0 {
        partials.store(block_idx_x() as usize, input.load(index));
        flag.store(0, retired.at(0).fetch_add(1));
    }
    sync_threads();
    if flag.load(0) == 1 && tid == 0 {
        partials.store(0, partials.load(0) + partials.load(1));
    }
}

/// The same with `thread_fence()` before the ticket, as v8 does.
fn last_block_with_fence(
    input: GlobalSlice<f32>,
    partials: GlobalSliceMut<f32>,
    retired: GlobalCounters,
) {
    let tid = thread_idx_x();
    let index = block_idx_x() as usize * BLOCK as usize + tid as usize;
    let flag = shared_array![u32; 1];
    if tid == 0 {
        partials.store(block_idx_x() as usize, input.load(index));
        thread_fence();
        flag.store(0, retired.at(0).fetch_add(1));
    }
    sync_threads();
    if flag.load(0) == 1 && tid == 0 {
        thread_fence();
        partials.store(0, partials.load(0) + partials.load(1));
    }
}

#[test]
fn handing_partials_to_the_last_block_needs_the_fence() {
    let (result, _) = launch(last_block_without_fence, 2, 128);
    expect(ErrorKind::GlobalRace, result, &[]);
    let (result, partials) = launch(last_block_with_fence, 2, 128);
    result.expect("fence + ticket orders the partials");
    assert_eq!(partials[0], -3.0 + ((64 % 7) as f32 - 3.0));
}
