//! Every version on the CPU simulator, against the CPU reference: what CI executes.

mod common;

use common::Runner;
use libtest_mimic::{Arguments, Trial};
use reduce_rs::Schedule;

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    let in_order = Runner::Simulator(Schedule::InOrder);
    let shuffled = Runner::Simulator(Schedule::Shuffled { seed: 42 });
    trials.extend(common::trials(
        common::table(&common::SIM_SIZES),
        "",
        in_order.clone(),
    ));
    trials.extend(common::trials(
        common::block_sizes(3_001),
        "",
        in_order.clone(),
    ));
    trials.extend(common::trials(common::boundaries(), "", in_order.clone()));
    trials.extend(common::trials(
        common::reproducible_cases(&common::SIM_SIZES),
        "",
        in_order.clone(),
    ));
    // The reproducible mode over rows, columns and segments (`repro::each::…`).
    trials.extend(common::each::trials(
        common::each::cases(false),
        "",
        in_order,
        false,
    ));
    // The several-device path (`devices::…`): every type and operation over simulated devices.
    trials.extend(common::devices::trials());
    // The same kernels with the threads of every block in a seeded random order: a kernel that
    // only works in one order has a race the detector should also name.
    trials.extend(common::trials(
        common::table(&common::SIM_SIZES),
        "shuffled::",
        shuffled.clone(),
    ));
    trials.extend(common::trials(
        common::block_sizes(3_001),
        "shuffled::",
        shuffled.clone(),
    ));
    trials.extend(common::trials(
        common::boundaries(),
        "shuffled::",
        shuffled.clone(),
    ));
    trials.extend(common::trials(
        common::reproducible_cases(&common::SIM_SIZES),
        "shuffled::",
        shuffled.clone(),
    ));
    trials.extend(common::each::trials(
        common::each::cases(false),
        "shuffled::",
        shuffled,
        false,
    ));
    libtest_mimic::run(&args, trials).exit();
}
