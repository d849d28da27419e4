//! The table of named test cases both backends run: every version × element type × operator ×
//! size, each checked against the CPU reference.

use host::element::{DType, OpKind};
use host::gpu::Timing;
use host::input::Pattern;
use host::run::{Backend, Case, run_versions};
use host::versions::{VERSIONS, Version};
use libtest_mimic::{Failed, Trial};
use std::sync::Arc;

/// One named case.
#[derive(Clone, Copy, Debug)]
pub struct TestCase {
    pub version: &'static Version,
    pub case: Case,
}

impl TestCase {
    pub fn name(&self) -> String {
        let c = &self.case;
        format!(
            "{}::{}::{}::n{}::b{}::{}",
            self.version.name(),
            c.dtype,
            c.op,
            c.len,
            self.version.block_for(c.block, c.len),
            c.pattern.name()
        )
    }
}

/// Every version × type × operator × `sizes`, with each version's tuned block size; random inputs, and
/// small integers (exact float sums) for f32 sums.
pub fn table(sizes: &[usize]) -> Vec<TestCase> {
    let mut cases = Vec::new();
    for version in &VERSIONS {
        for dtype in DType::ALL {
            for op in OpKind::ALL {
                for &len in sizes {
                    let mut patterns = vec![Pattern::Random];
                    if dtype == DType::F32 && op == OpKind::Sum {
                        patterns.push(Pattern::SmallIntegers);
                    }
                    for pattern in patterns {
                        let case = Case {
                            dtype,
                            op,
                            len,
                            block: None,
                            pattern,
                            seed: len as u64 ^ 0x5eed,
                        };
                        cases.push(TestCase { version, case });
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
    for version in &VERSIONS {
        for block in kernels_gpu::launch::BLOCK_SIZES {
            let case = Case {
                dtype: DType::F32,
                op: OpKind::Sum,
                len,
                block: Some(block),
                pattern: Pattern::Random,
                seed: 11,
            };
            cases.push(TestCase { version, case });
        }
    }
    cases
}

/// Runs one case on `backend` and turns a wrong result or an error into a failure.
pub fn run_case(backend: &Backend, test: &TestCase) -> Result<(), Failed> {
    let timing = Timing {
        warmup: 0,
        repeat: 1,
    };
    let results =
        run_versions(backend, &[test.version], &test.case, timing).map_err(|e| format!("{e:#}"))?;
    let outcome = results
        .into_iter()
        .next()
        .expect("one version")
        .map_err(|e| format!("{e:#}"))?;
    if outcome.verdict.pass {
        Ok(())
    } else {
        Err(format!(
            "got {}, expected {} (abs. error {:.3e}, tolerance {:.3e}, h = {})",
            outcome.got,
            outcome.expected,
            outcome.verdict.abs_error,
            outcome.verdict.tolerance,
            outcome.additions
        )
        .into())
    }
}

/// Trials for `cases`, run on the backend `make` gives (shared by every trial).
pub fn trials(cases: Vec<TestCase>, backend: Arc<std::sync::Mutex<Backend>>) -> Vec<Trial> {
    cases
        .into_iter()
        .map(|test| {
            let backend = backend.clone();
            Trial::test(test.name(), move || {
                let backend = backend
                    .lock()
                    .map_err(|_| "a previous test panicked while holding the backend")?;
                run_case(&backend, &test)
            })
        })
        .collect()
}
