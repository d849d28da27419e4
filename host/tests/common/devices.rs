//! The several-device path on simulated devices, for every element type and operation: the
//! input split evenly over three devices (so the shortest inputs leave some shards empty), each
//! shard reduced by the library's per-device kernel, the partials combined by the combining
//! kernels — checked against the CPU reference, and every device holding the same bits after
//! `all_reduce`. `reduce/tests/devices.rs` pins the rules (exact bits, global indices, empty
//! shards) on chosen cases; this table makes sure no (type, operation) pair of the shard and
//! combine kernels goes unrun.

use super::patterns;
use host::devices::reduce_split;
use host::element::{DType, HostElement, OpKind};
use host::input::{Pattern, generate};
use host::reference::Checked;
use host::timing::Timing;
use host::with_dtype_and_op;
use libtest_mimic::{Failed, Trial};
use reduce_rs::Schedule;
use reduce_rs::devices::Devices;

/// Three devices: pieces of unequal length and, below three elements, empty shards.
const DEVICES: usize = 3;
const SIZES: [usize; 4] = [0, 2, 1_000, (1 << 16) + 3];

fn run<T: HostElement, O: Checked<T> + Default>(
    len: usize,
    pattern: Pattern,
) -> Result<(), Failed> {
    let input: Vec<T> = generate(pattern, len, len as u64 ^ 0xd3);
    let devices = Devices::simulated_with(DEVICES, Schedule::InOrder);
    let expected = O::reference(&input);
    let run = reduce_split::<T, O>(
        &devices,
        &input,
        &expected,
        Timing {
            warmup: 0,
            repeat: 1,
        },
    )
    .map_err(|e| format!("{e:#}"))?;
    if !run.verdict.pass {
        return Err(format!("got {}, expected {}", run.verdict.got, run.verdict.expected).into());
    }
    if !run.same_everywhere {
        return Err("the devices hold different results after all_reduce".into());
    }
    Ok(())
}

/// Trials `devices::{dtype}::{op}::n{len}::{pattern}`.
pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for dtype in DType::ALL {
        for op in OpKind::ALL {
            for len in SIZES {
                for pattern in patterns(op) {
                    let name =
                        format!("devices::{dtype}::{op}::n{len}::{pattern:?}").to_lowercase();
                    trials.push(Trial::test(name, move || {
                        with_dtype_and_op!(dtype, op, run(len, pattern))
                    }));
                }
            }
        }
    }
    trials
}
