//! The tables of named test cases both backends run, each checked against the CPU reference.
//!
//! Every sum also runs on small integers, where every order of the additions is exact: a kernel
//! that counts an element twice or drops one gets a wrong answer there (min and max would not
//! notice a double count, and rounding could hide it in a random float sum).

#![allow(dead_code)] // each test binary uses part of this module

pub mod devices;
pub mod each;

use host::element::{DType, OpKind};
use host::input::Pattern;
use host::run::{InputSource, Outcome, RunCase, run_versions};
use host::timing::Timing;
use libtest_mimic::{Failed, Trial};
use reduce_rs::{Reducer, Schedule, Version};
use std::sync::{Arc, Mutex};

/// One named case.
#[derive(Clone, Debug)]
pub struct TestCase {
    pub version: Version,
    pub case: RunCase,
    /// Run with `Reducer::with_reproducible(true)` (float sums and means then run the
    /// reproducible kernel in the version's place).
    pub reproducible: bool,
}

impl TestCase {
    pub fn name(&self) -> String {
        let c = &self.case;
        let InputSource::Generated { pattern, .. } = c.source else {
            unreachable!("the tables generate their inputs")
        };
        let mut name = format!(
            "{}{}::{}::{}::n{}::b{}::{}",
            if self.reproducible { "repro::" } else { "" },
            self.version.name(),
            c.dtype,
            c.op,
            c.len,
            c.block.unwrap_or_else(|| self.version.tuned_block(c.len)),
            pattern.name()
        );
        if let Some(blocks) = c.max_blocks {
            name.push_str(&format!("::grid{blocks}"));
        }
        if c.offset > 0 {
            name.push_str(&format!("::offset{}", c.offset));
        }
        name
    }
}

fn case(dtype: DType, op: OpKind, len: usize, pattern: Pattern) -> RunCase {
    RunCase {
        dtype,
        op,
        len,
        block: None,
        max_blocks: None,
        offset: 0,
        source: InputSource::Generated {
            pattern,
            seed: len as u64 ^ 0x5eed,
        },
    }
}

/// The sizes of the simulator's table: nothing, one element, less than a warp, exactly one
/// block, one more, several blocks with a tail, and a size past 2^16.
pub const SIM_SIZES: [usize; 7] = [0, 1, 31, 256, 257, 5_003, (1 << 16) + 3];

/// The patterns a (type, op) runs: random, and one where a mistake of the operator's shows:
/// small integers for every sum and mean (exact, and an element counted twice changes them),
/// all-negative inputs for the maxima and all-positive ones for the minima (a wrong identity
/// such as 0 wins there).
fn patterns(op: OpKind) -> Vec<Pattern> {
    let telling = match op {
        OpKind::Sum | OpKind::Mean => Pattern::SmallIntegers,
        OpKind::Max | OpKind::ArgMax => Pattern::Negative,
        OpKind::Min | OpKind::ArgMin => Pattern::Positive,
    };
    vec![Pattern::Random, telling]
}

/// Every version × every type and operation it is built for × `sizes`, with each version's
/// tuned block size.
pub fn table(sizes: &[usize]) -> Vec<TestCase> {
    let mut cases = Vec::new();
    for version in Version::all() {
        for dtype in DType::ALL {
            for op in OpKind::ALL {
                if !version.supports(dtype, op) {
                    continue;
                }
                for &len in sizes {
                    for pattern in patterns(op) {
                        cases.push(TestCase {
                            version,
                            case: case(dtype, op, len, pattern),
                            reproducible: false,
                        });
                    }
                }
            }
        }
    }
    cases
}

/// Every version at every block size, f32 sums over a size that is no multiple of any block.
pub fn block_sizes(len: usize) -> Vec<TestCase> {
    let mut cases = Vec::new();
    for version in Version::all() {
        for block in kernels_gpu::launch::BLOCK_SIZES {
            let mut case = case(DType::F32, OpKind::Sum, len, Pattern::SmallIntegers);
            case.block = Some(block);
            cases.push(TestCase {
                version,
                case,
                reproducible: false,
            });
        }
    }
    cases
}

/// v8 around every boundary of its loops, on grids of 1–3 blocks of 64 threads, so that small
/// inputs take the multi-block path (partials, fence, ticket, last block): sizes around the
/// vector head and tail, one grid stride of vectors (`64 · blocks` of them) and four of them
/// (one group of loads in flight), and inputs that start 1–3 elements past a 16-byte boundary.
pub fn boundaries() -> Vec<TestCase> {
    let v8 = Version::fastest();
    let mut cases = Vec::new();
    for blocks in [1u32, 2, 3] {
        let vectors_per_stride = 64 * blocks as usize;
        for dtype in [DType::F32, DType::F64, DType::Bf16, DType::I64] {
            let lanes = 16 / dtype.size();
            let stride = vectors_per_stride * lanes;
            let mut sizes = vec![0, 1, 2, lanes - 1, lanes, lanes + 1, 2 * lanes + 3];
            for edge in [stride, 4 * stride, 5 * stride] {
                sizes.extend([edge - 1, edge, edge + 1, edge + lanes + 1]);
            }
            for len in sizes {
                for offset in [0, 1, 3] {
                    for (op, pattern) in [
                        (OpKind::Sum, Pattern::SmallIntegers),
                        (OpKind::ArgMax, Pattern::SmallIntegers),
                        (OpKind::Min, Pattern::Random),
                    ] {
                        let mut case = case(dtype, op, len, pattern);
                        case.block = Some(64);
                        case.max_blocks = Some(blocks);
                        case.offset = offset;
                        cases.push(TestCase {
                            version: v8,
                            case,
                            reproducible: false,
                        });
                    }
                }
            }
        }
    }
    cases
}

/// The reproducible mode: every type and operation it covers (float sums, every mean) at the
/// table's sizes, float sums also of values at the bottom of the range (`Pattern::Tiny`:
/// subnormals and the smallest normals), and float sums (random and tiny) on grids of 1 and 3
/// blocks of 64 and 1024 threads, starting 0, 1 and 3 elements past a 16-byte boundary. Each
/// result is checked against the reference with the binned sum's bound (the bits against the
/// host fold are checked by the library's tests).
pub fn reproducible_cases(sizes: &[usize]) -> Vec<TestCase> {
    let v8 = Version::fastest();
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for op in OpKind::ALL {
            if reduce_rs::plan::reproducible::kernel_for(dtype, op).is_none() {
                continue;
            }
            let mut patterns = patterns(op);
            if op == OpKind::Sum {
                patterns.push(Pattern::Tiny);
            }
            for &len in sizes {
                for &pattern in &patterns {
                    cases.push(TestCase {
                        version: v8,
                        case: case(dtype, op, len, pattern),
                        reproducible: true,
                    });
                }
            }
        }
    }
    for dtype in [DType::F32, DType::F64, DType::Bf16] {
        for pattern in [Pattern::Random, Pattern::Tiny] {
            for block in [64, 1024] {
                for blocks in [1u32, 3] {
                    for offset in [0, 1, 3] {
                        let mut case = case(dtype, OpKind::Sum, 5_003, pattern);
                        case.block = Some(block);
                        case.max_blocks = Some(blocks);
                        case.offset = offset;
                        cases.push(TestCase {
                            version: v8,
                            case,
                            reproducible: true,
                        });
                    }
                }
            }
        }
    }
    cases
}

/// Runs one case on `reducer`: the version's outcome (its result checked against the
/// reference), or the error that stopped it (from the simulator, the library or the input).
pub fn run_outcome(reducer: &mut Reducer, test: &TestCase) -> anyhow::Result<Outcome> {
    let timing = Timing {
        warmup: 0,
        repeat: 1,
    };
    let mut outcome = None;
    reducer.set_reproducible(test.reproducible);
    run_versions(
        reducer,
        &[test.version],
        &test.case,
        None,
        timing,
        |_| {},
        |_, result| outcome = Some(result),
    )?;
    outcome.ok_or_else(|| anyhow::anyhow!("the version did not run"))?
}

/// A wrong result or an error as a test failure; its message is what the tables report.
pub fn judge(outcome: &anyhow::Result<Outcome>) -> Result<(), Failed> {
    let outcome = outcome.as_ref().map_err(|e| format!("{e:#}"))?;
    if outcome.verdict.pass {
        Ok(())
    } else {
        Err(format!(
            "got {}, expected {} (abs. error {:.3e}, tolerance {:.3e}, h = {})",
            outcome.verdict.got,
            outcome.verdict.expected,
            outcome.verdict.abs_error,
            outcome.verdict.tolerance,
            outcome.additions
        )
        .into())
    }
}

/// Runs one case on `reducer` and turns a wrong result or an error into a failure.
pub fn run_case(reducer: &mut Reducer, test: &TestCase) -> Result<(), Failed> {
    judge(&run_outcome(reducer, test))
}

/// Where the trials run.
#[derive(Clone)]
pub enum Runner {
    /// A simulator of its own for each trial (trials run in parallel).
    Simulator(Schedule),
    /// One reducer all trials share, one at a time (the GPU).
    Shared(Arc<Mutex<Reducer>>),
}

/// Trials for `cases`, named `{prefix}{case}`.
pub fn trials(cases: Vec<TestCase>, prefix: &str, runner: Runner) -> Vec<Trial> {
    cases
        .into_iter()
        .map(|test| {
            let runner = runner.clone();
            Trial::test(format!("{prefix}{}", test.name()), move || match runner {
                Runner::Simulator(schedule) => {
                    run_case(&mut Reducer::simulator_with(schedule), &test)
                }
                Runner::Shared(reducer) => {
                    let mut reducer = reducer
                        .lock()
                        .map_err(|_| "a previous test panicked while holding the reducer")?;
                    run_case(&mut reducer, &test)
                }
            })
        })
        .collect()
}
