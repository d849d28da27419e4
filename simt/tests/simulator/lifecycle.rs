//! Launches that fail before or while running, and what state they leave behind.

use crate::correct::{input, tree_sum};
use crate::kernel::*;
use simt::{Access, ErrorKind, FaultKind, LaunchConfig, Region, Schedule};

/// The shared tree sum over 4 blocks of 64 threads, checked against the host.
fn tree_sum_works() {
    let mut data = input(4 * 2 * 64);
    let expected: Vec<u32> = data
        .chunks(128)
        .map(|c| c.iter().fold(0u32, |s, &v| s.wrapping_add(v)))
        .collect();
    let mut partials = vec![0; 4];
    let (input, output) = (Global::new(&mut data), Global::new(&mut partials));
    let regions = [
        input.region("input", Access::ReadOnly),
        output.region("partials", Access::ReadWrite),
    ];
    run("tree_sum", &config(4, 64, 64 * 4), &regions, &|| {
        tree_sum(input, output, true)
    });
    assert_eq!(partials, expected);
}

#[test]
fn a_panicking_kernel_is_reported_and_the_next_launch_works() {
    let error = fails(
        ErrorKind::Panic,
        &[
            "kernel `boom` panicked in block 1, thread 5 (warp 0, lane 5) at simt/tests/simulator/lifecycle.rs:",
            "boom in thread 5",
        ],
        "boom",
        &config(3, 64, 64 * 4),
        &[],
        &|| {
            let shared = Shared::<u32>::new(0, 64);
            let t = thread_idx_x() as usize;
            shared.store(t, 1);
            sync_threads();
            if block_idx_x() == 1 && t == 5 {
                panic!("boom in thread {t}");
            }
            // Other threads are suspended here when thread 5 panics.
            sync_threads();
        },
    );
    assert!(!error.message.contains('\n'), "one paragraph: {error}");
    tree_sum_works();
    // A race leaves suspended threads behind too.
    fails(
        ErrorKind::SharedRace,
        &[],
        "race",
        &config(1, 64, 4),
        &[],
        &|| {
            let shared = Shared::<u32>::new(0, 1);
            shared.store(0, thread_idx_x());
            sync_threads();
        },
    );
    tree_sum_works();
}

#[test]
fn faults_are_reported_with_their_message() {
    fails(
        ErrorKind::Fault,
        &[
            "kernel `fault` faulted in block 0, thread 0 (warp 0, lane 0) at simt/tests/simulator/lifecycle.rs:",
            "compiled for 128 threads per block but launched with 64",
        ],
        "fault",
        &config(1, 64, 0),
        &[],
        &|| {
            if block_dim_x() != 128 {
                simt::fault(
                    FaultKind::Other,
                    format_args!(
                        "the kernel was compiled for 128 threads per block but launched with {}",
                        block_dim_x()
                    ),
                );
            }
        },
    );
    tree_sum_works();
}

#[test]
fn a_faults_error_kind_comes_from_its_kind_not_its_wording() {
    fails(
        ErrorKind::OutOfBounds,
        &[
            "kernel `typed_oob` faulted in block 0, thread 3 (warp 0, lane 3) at simt/tests/simulator/lifecycle.rs:",
            ": index 7 is past the end of the 4-element table",
        ],
        "typed_oob",
        &config(1, 32, 0),
        &[],
        &|| {
            if thread_idx_x() == 3 {
                simt::fault(
                    FaultKind::OutOfBounds,
                    format_args!("index 7 is past the end of the 4-element table"),
                );
            }
        },
    );
    fails(
        ErrorKind::Fault,
        &[": out-of-bounds global memory access: index 100 of an array of 100 elements"],
        "looks_oob",
        &config(1, 32, 0),
        &[],
        &|| {
            if thread_idx_x() == 3 {
                simt::fault(
                    FaultKind::Other,
                    format_args!(
                        "out-of-bounds global memory access: index 100 of an array of 100 elements"
                    ),
                );
            }
        },
    );
    tree_sum_works();
}

#[test]
fn invalid_launches_are_refused() {
    let bad = |config: LaunchConfig, regions: &[Region], part: &str| {
        fails(
            ErrorKind::InvalidLaunch,
            &["invalid launch of kernel `k`", part],
            "k",
            &config,
            regions,
            &|| {},
        );
    };
    bad(config(1, 0, 0), &[], "block_dim is 0");
    bad(config(1, 1025, 0), &[], "block_dim is 1025");
    bad(config(0, 32, 0), &[], "grid_dim is 0");
    bad(
        config(1, 32, 227 * 1024 + 1),
        &[],
        "at most 232448 (227 KiB)",
    );
    let buffer = [0u8; 64];
    let whole = Region::of_slice("whole", &buffer, Access::ReadOnly);
    let half = Region::of_slice("half", &buffer[32..], Access::ReadWrite);
    bad(
        config(1, 32, 0),
        &[whole, half],
        "regions `whole` and `half` overlap",
    );
    let nested = LaunchConfig {
        grid_dim: 1,
        block_dim: 1,
        shared_bytes: 0,
        schedule: Schedule::InOrder,
    };
    fails(
        ErrorKind::Panic,
        &["simt::launch was called from inside a kernel"],
        "outer",
        &nested,
        &[],
        &|| {
            let inner = simt::launch("inner", &nested, &[], &|| {});
            panic!("{}", inner.unwrap_err());
        },
    );
    tree_sum_works();
}

#[test]
#[should_panic(expected = "simt::thread_idx_x() called outside a kernel launch")]
fn device_functions_panic_outside_a_launch() {
    simt::thread_idx_x();
}

#[test]
#[should_panic(expected = "simt::sync_threads() called outside a kernel launch")]
fn barriers_panic_outside_a_launch() {
    simt::sync_threads();
}
