//! Barriers that not every thread reaches, or that threads reach at different call sites.

use crate::kernel::*;
use simt::ErrorKind;

const FILE: &str = file!();

#[test]
fn threads_returning_before_a_barrier_are_reported() {
    fails(
        ErrorKind::BarrierNotReached,
        &[
            "barrier not reached in kernel `early_return`, block 0",
            "threads 32-63 (32 threads) exited without reaching it",
            "threads 0-31 (32 threads) wait at sync_threads at simt/tests/simulator/barriers.rs:",
        ],
        "early_return",
        &config(1, 64, 0),
        &[],
        &|| {
            if thread_idx_x() >= 32 {
                return;
            }
            sync_threads();
        },
    );
    // Every thread returning early is fine: nobody waits.
    run("all_return", &config(1, 64, 0), &[], &|| {
        if block_dim_x() > 0 {
            return;
        }
        sync_threads();
    });
}

#[test]
fn barriers_in_both_branches_of_an_if_are_divergent() {
    let error = fails(
        ErrorKind::DivergentBarrier,
        &[
            "divergent barrier in kernel `if_else`, block 0",
            "threads 0-15 (16 threads) wait at sync_threads at",
            "threads 16-63 (48 threads) wait at sync_threads at",
        ],
        "if_else",
        &config(1, 64, 0),
        &[],
        // The point of the test: the branches look alike, but their barriers are different
        // call sites.
        #[allow(clippy::if_same_then_else)]
        &|| {
            if thread_idx_x() < 16 {
                sync_threads();
            } else {
                sync_threads();
            }
        },
    );
    assert_eq!(error.message.matches(FILE).count(), 2, "{error}");
    // One call site reached by every thread, in a loop, is what CUDA allows.
    let stats = run("loop", &config(1, 64, 0), &[], &|| {
        for _ in 0..3 {
            sync_threads();
        }
    });
    assert_eq!(stats.barriers, 3);
}
