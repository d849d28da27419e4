//! Running versions on one input: generate it, compute the reference, run each version on the
//! chosen backend, and check the result.

use crate::element::{DType, HostElement, OpKind};
use crate::gpu::{Gpu, GpuUnavailable, Timing};
use crate::input::{Pattern, RandomElement, formula_sum, formula_value, generate};
use crate::reference::{Check, Expected, Verdict, check, reference};
use crate::versions::{LaunchShape, Version};
use crate::{sim, with_element_and_op};
use anyhow::{Result, bail};
use kernels_gpu::element::ReduceOp;
use kernels_gpu::simulate::{LaunchStats, Schedule};
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The GPU when a driver and a device are there, otherwise the simulator.
    Auto,
    Gpu,
    /// The CPU simulator (`simt`): every access checked, no timing.
    Sim,
}

pub enum Backend {
    Gpu(Box<Gpu>),
    Sim { schedule: Schedule },
}

impl Backend {
    /// The backend to use, and for `auto` a note on why the simulator was chosen.
    pub fn select(
        choice: BackendChoice,
        ptx_dir: Option<&Path>,
        schedule: Schedule,
    ) -> Result<(Backend, Option<String>)> {
        match choice {
            BackendChoice::Sim => Ok((Backend::Sim { schedule }, None)),
            BackendChoice::Gpu => Ok((Backend::Gpu(Box::new(Gpu::open(ptx_dir)?)), None)),
            BackendChoice::Auto => match crate::gpu::probe() {
                Ok(()) => Ok((Backend::Gpu(Box::new(Gpu::open(ptx_dir)?)), None)),
                Err(why @ (GpuUnavailable::NoDriver | GpuUnavailable::NoDevice)) => Ok((
                    Backend::Sim { schedule },
                    Some(format!("{why}: running on the CPU simulator")),
                )),
                Err(other) => Err(other.into()),
            },
        }
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Backend::Gpu(_))
    }

    pub fn describe(&self) -> String {
        match self {
            Backend::Gpu(gpu) => format!(
                "gpu: {} ({} SMs, {}, {} GiB), kernels from {}",
                gpu.info.name,
                gpu.info.multiprocessors,
                gpu.info.arch(),
                gpu.info.total_memory >> 30,
                gpu.source.path.display()
            ),
            Backend::Sim { schedule } => format!(
                "sim: CPU SIMT simulator ({} simulated SMs, {} schedule)",
                sim::SIM_MULTIPROCESSORS,
                match schedule {
                    Schedule::InOrder => "in-order".to_string(),
                    Schedule::Shuffled { seed } => format!("shuffled, seed {seed}"),
                }
            ),
        }
    }
}

/// One input and operator.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub dtype: DType,
    pub op: OpKind,
    pub len: usize,
    /// `None`: each version's tuned block size.
    pub block: Option<u32>,
    pub pattern: Pattern,
    pub seed: u64,
}

/// How a run was measured.
#[derive(Clone, Debug)]
pub enum Measure {
    Gpu {
        first_pass_ms: f64,
        to_scalar_ms: f64,
        repeat: u32,
        deterministic: bool,
    },
    Sim {
        wall_time: Duration,
        stats: LaunchStats,
    },
}

/// One version's result on one case.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub version: &'static Version,
    pub passes: Vec<(usize, LaunchShape)>,
    pub got: String,
    pub expected: String,
    pub additions: u64,
    pub verdict: Verdict,
    pub measure: Measure,
}

impl Outcome {
    /// Bytes the first pass must read over its time: comparable with the seeds' figures.
    pub fn first_pass_gbps(&self, case: &Case) -> Option<f64> {
        match self.measure {
            Measure::Gpu { first_pass_ms, .. } => {
                Some((case.len * case.dtype.size()) as f64 / (first_pass_ms * 1e-3) / 1e9)
            }
            Measure::Sim { .. } => None,
        }
    }
}

/// Runs every version in `versions` on the same input. The outer error is for the input
/// itself (e.g. too large for the GPU); each version's own failure is in its entry.
pub fn run_versions(
    backend: &Backend,
    versions: &[&'static Version],
    case: &Case,
    timing: Timing,
) -> Result<Vec<Result<Outcome>>> {
    check_fits(backend, case)?;
    with_element_and_op!(
        case.dtype,
        case.op,
        run_typed(backend, versions, case, timing)
    )
}

/// Refuses, before any allocation, an input that cannot fit: on the GPU (input plus the
/// partials of the first pass) or in host memory, where it is generated first.
pub fn check_fits(backend: &Backend, case: &Case) -> Result<()> {
    let gib = |bytes: usize| bytes as f64 / f64::from(1u32 << 30);
    let Some(bytes) = case.len.checked_mul(case.dtype.size()) else {
        bail!(
            "{} elements of {} do not fit in this machine's address space",
            case.len,
            case.dtype
        );
    };
    if let Backend::Gpu(gpu) = backend {
        // Partials: at most one per 64 elements (the smallest block), in two buffers.
        let needed = bytes + 2 * (case.len / 64 + 1) * case.dtype.size();
        if needed > gpu.info.free_memory {
            bail!(
                "{} × {} needs {:.1} GiB of GPU memory but {:.1} GiB are free on {}",
                case.len,
                case.dtype,
                gib(needed),
                gib(gpu.info.free_memory),
                gpu.info.name
            );
        }
    }
    if let Some(available) = host_available_memory()
        && bytes > available
    {
        bail!(
            "{} × {} needs {:.1} GiB of host memory to generate the input but {:.1} GiB are available",
            case.len,
            case.dtype,
            gib(bytes),
            gib(available)
        );
    }
    Ok(())
}

/// `MemAvailable` from `/proc/meminfo`, where there is one.
fn host_available_memory() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn run_typed<T: HostElement + RandomElement, Op: ReduceOp<T>>(
    backend: &Backend,
    versions: &[&'static Version],
    case: &Case,
    timing: Timing,
) -> Result<Vec<Result<Outcome>>> {
    let input: Vec<T> = generate(case.pattern, case.len, case.seed);
    let expected = match case.pattern {
        Pattern::Formula => formula_expected::<T, Op>(case.len),
        _ => reference::<T, Op>(&input),
    };
    match backend {
        Backend::Gpu(gpu) => {
            let device_input = gpu.upload(&input)?;
            drop(input);
            Ok(versions
                .iter()
                .map(|&version| {
                    let run = gpu.reduce::<T, Op>(
                        version,
                        version.block_for(case.block, case.len),
                        std::slice::from_ref(&device_input),
                        timing,
                    )?;
                    let measure = Measure::Gpu {
                        first_pass_ms: run.first_pass_ms,
                        to_scalar_ms: run.to_scalar_ms,
                        repeat: run.repeat,
                        deterministic: run.deterministic,
                    };
                    Ok(outcome(version, run.value, run.passes, &expected, measure))
                })
                .collect())
        }
        Backend::Sim { schedule } => Ok(versions
            .iter()
            .map(|&version| {
                let run = sim::reduce::<T, Op>(
                    version,
                    version.block_for(case.block, case.len),
                    &input,
                    *schedule,
                )?;
                let measure = Measure::Sim {
                    wall_time: run.wall_time,
                    stats: run.stats,
                };
                Ok(outcome(version, run.value, run.passes, &expected, measure))
            })
            .collect()),
    }
}

fn outcome<T: HostElement>(
    version: &'static Version,
    got: T,
    passes: Vec<(usize, LaunchShape)>,
    expected: &Expected<T>,
    measure: Measure,
) -> Outcome {
    let additions = version.additions_per_element(&passes);
    let verdict = check(got, expected, additions);
    let expected_text = match expected.check {
        Check::SumBound { .. } => format!("{:.10e}", expected.value_f64),
        Check::Exact => format!("{}", expected.value),
    };
    let got_text = match expected.check {
        Check::SumBound { .. } => format!("{:.10e}", got.to_f64()),
        Check::Exact => format!("{got}"),
    };
    Outcome {
        version,
        passes,
        got: got_text,
        expected: expected_text,
        additions,
        verdict,
        measure,
    }
}

/// The expected result for [`Pattern::Formula`], in closed form (no pass over the input).
fn formula_expected<T: HostElement, Op: ReduceOp<T>>(len: usize) -> Expected<T> {
    let signed = T::MIN.to_f64() < 0.0;
    let (low, high) = if len == 0 {
        (Op::IDENTITY, Op::IDENTITY)
    } else {
        let span = len.min(1000);
        (
            T::from_small(formula_value(0, signed)),
            T::from_small(formula_value(span - 1, signed)),
        )
    };
    match Op::NAME {
        "sum" => {
            let exact = formula_sum(len, signed);
            match T::UNIT_ROUNDOFF {
                None => {
                    let value = T::wrap_i128(exact);
                    Expected {
                        value,
                        value_f64: value.to_f64(),
                        check: Check::Exact,
                    }
                }
                Some(_) => {
                    // Σ|xᵢ| in closed form too: one cycle of |k - 500| or k sums to 250_000 / 499_500.
                    let cycle_abs = if signed { 250_000.0 } else { 499_500.0 };
                    let partial: f64 = (0..len % 1000)
                        .map(|i| f64::from(formula_value(i, signed)).abs())
                        .sum();
                    let abs_sum = (len / 1000) as f64 * cycle_abs + partial;
                    let value = exact as f64;
                    let check = if abs_sum * T::UNIT_ROUNDOFF.unwrap_or(0.0) <= 1.0 {
                        Check::Exact
                    } else {
                        Check::SumBound { abs_sum, len }
                    };
                    let zero_sum = if len == 0 { -0.0 } else { value };
                    Expected {
                        value: T::from_f64_rounded(zero_sum),
                        value_f64: zero_sum,
                        check,
                    }
                }
            }
        }
        "min" => Expected {
            value: low,
            value_f64: low.to_f64(),
            check: Check::Exact,
        },
        _ => Expected {
            value: high,
            value_f64: high.to_f64(),
            check: Check::Exact,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::element::{Max, Min, Sum};

    fn agrees<T: HostElement + RandomElement, Op: ReduceOp<T>>(len: usize) {
        let input: Vec<T> = generate(Pattern::Formula, len, 0);
        let direct = reference::<T, Op>(&input);
        let closed = formula_expected::<T, Op>(len);
        assert!(
            closed.value.same_bits(direct.value),
            "{} {} len {len}: {} vs {}",
            T::NAME,
            Op::NAME,
            closed.value,
            direct.value
        );
    }

    #[test]
    fn inputs_too_large_for_the_machine_are_refused_before_any_allocation() {
        let backend = Backend::Sim {
            schedule: Schedule::InOrder,
        };
        let case = |len| Case {
            dtype: DType::F64,
            op: OpKind::Sum,
            len,
            block: None,
            pattern: Pattern::Formula,
            seed: 0,
        };
        let error = check_fits(&backend, &case(usize::MAX / 4))
            .unwrap_err()
            .to_string();
        assert!(error.contains("address space"), "{error}");
        if host_available_memory().is_some() {
            let error = check_fits(&backend, &case(1 << 50))
                .unwrap_err()
                .to_string();
            assert!(error.contains("GiB of host memory"), "{error}");
        }
        assert!(check_fits(&backend, &case(1000)).is_ok());
    }

    #[test]
    fn formula_closed_form_matches_the_reference() {
        for len in [0, 1, 999, 1000, 1001, 54_321] {
            agrees::<i32, Sum>(len);
            agrees::<u32, Sum>(len);
            agrees::<f64, Sum>(len);
            agrees::<f32, Min>(len);
            agrees::<u32, Max>(len);
            agrees::<i32, Max>(len);
        }
    }
}
