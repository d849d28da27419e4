//! Every version on the GPU, against the CPU reference. Without a GPU every trial is reported
//! as ignored, and the reason is printed first.

mod common;

use host::gpu::{Gpu, probe};
use host::run::Backend;
use libtest_mimic::{Arguments, Trial};
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
    let trials: Vec<Trial> = match probe()
        .map_err(anyhow::Error::from)
        .and_then(|()| Gpu::open(None))
    {
        Ok(gpu) => {
            eprintln!(
                "GPU tests on {} ({} SMs)",
                gpu.info.name, gpu.info.multiprocessors
            );
            common::trials(cases, Arc::new(Mutex::new(Backend::Gpu(Box::new(gpu)))))
        }
        Err(why) => {
            eprintln!("GPU tests ignored: {why:#}");
            cases
                .iter()
                .map(|c| Trial::test(c.name(), || Ok(())).with_ignored_flag(true))
                .collect()
        }
    };
    libtest_mimic::run(&args, trials).exit();
}
