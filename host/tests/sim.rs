//! Every version on the CPU simulator, against the CPU reference: what CI executes.

mod common;

use host::run::Backend;
use kernels_gpu::simulate::Schedule;
use libtest_mimic::{Arguments, Trial};
use std::sync::{Arc, Mutex};

/// One element, less than a warp, a prime, exactly one block, several blocks with a tail, and a
/// size past 2^16.
const SIZES: [usize; 7] = [0, 1, 31, 257, 256, 5_003, (1 << 16) + 3];

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    let in_order = Arc::new(Mutex::new(Backend::Sim {
        schedule: Schedule::InOrder,
    }));
    let mut cases = common::table(&SIZES);
    cases.extend(common::block_sizes(3_001));
    trials.extend(common::trials(cases, in_order));
    // The same kernels under a shuffled thread order: a kernel that only works in one order
    // has a race the detector should also name.
    let shuffled = Arc::new(Mutex::new(Backend::Sim {
        schedule: Schedule::Shuffled { seed: 42 },
    }));
    let mut shuffled_cases = common::block_sizes(3_001);
    shuffled_cases.retain(|c| c.case.block == Some(256));
    trials.extend(
        common::trials(shuffled_cases, shuffled)
            .into_iter()
            .map(|t| {
                let name = format!("shuffled::{}", t.name());
                t.with_kind(name)
            }),
    );
    libtest_mimic::run(&args, trials).exit();
}
