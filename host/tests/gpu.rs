//! Every version on the GPU, against the CPU reference. Without a GPU every trial is reported
//! as ignored, and the reason is printed first.

mod common;

use common::Runner;
use libtest_mimic::{Arguments, Trial};
use reduce_rs::{BackendInfo, Reducer, gpu_available};
use std::sync::{Arc, Mutex};

/// Sizes around the block shapes: one element, less than a warp, block ± 1, 2·block ± 1,
/// primes, and a large non-multiple.
const SIZES: [usize; 11] = [
    0,
    1,
    31,
    33,
    255,
    257,
    511,
    513,
    65_537,
    1_000_003,
    (1 << 22) + 7,
];

fn main() {
    let args = Arguments::from_args();
    let mut cases = common::table(&SIZES);
    cases.extend(common::block_sizes(1_000_003));
    cases.extend(common::boundaries());
    cases.extend(common::reproducible_cases(&SIZES));
    let each = common::each::cases(true);
    let opened = gpu_available()
        .map_err(reduce_rs::Error::from)
        .and_then(|_| Reducer::gpu(0));
    let trials: Vec<Trial> = match opened {
        Ok(reducer) => {
            if let BackendInfo::Gpu {
                name,
                multiprocessors,
                ..
            } = reducer.backend()
            {
                eprintln!("GPU tests on {name} ({multiprocessors} SMs)");
            }
            let runner = Runner::Shared(Arc::new(Mutex::new(reducer)));
            let mut trials = common::trials(cases, "", runner.clone());
            // The reproducible mode over rows, columns and segments (`repro::each::…`), the
            // device-output calls included.
            trials.extend(common::each::trials(each, "", runner, true));
            trials
        }
        Err(why) => {
            eprintln!("GPU tests ignored: {why}");
            let each = common::each::trials(each, "", Runner::Simulator(Default::default()), true);
            cases
                .iter()
                .map(|c| Trial::test(c.name(), || Ok(())))
                .chain(each)
                .map(|trial| trial.with_ignored_flag(true))
                .collect()
        }
    };
    libtest_mimic::run(&args, trials).exit();
}
