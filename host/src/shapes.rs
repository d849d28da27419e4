//! Reductions of every row, column or segment, as the CLI, the tests and the benchmark run them:
//! the shapes made from command-line words, ragged segments drawn from a seed, and the check of
//! every result against the CPU reference of its own row.

use crate::element::HostElement;
use crate::reference::{Checked, Verdict};
use anyhow::{Result, bail};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::shape::{ShapeKernel, ShapePlan};
use reduce_rs::{Reducer, Shape};

/// What to reduce each of, independent of the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShapeSpec {
    Rows {
        rows: usize,
        cols: usize,
    },
    Columns {
        rows: usize,
        cols: usize,
    },
    /// `offsets` (`segments + 1` of them) over `len` elements.
    Segments {
        offsets: Vec<usize>,
    },
}

impl ShapeSpec {
    pub fn shape(&self) -> Shape<'_> {
        match self {
            ShapeSpec::Rows { rows, cols } => Shape::rows(*rows, *cols),
            ShapeSpec::Columns { rows, cols } => Shape::columns(*rows, *cols),
            ShapeSpec::Segments { offsets } => Shape::segments(offsets),
        }
    }

    /// Elements of the input.
    pub fn len(&self) -> usize {
        match self {
            ShapeSpec::Rows { rows, cols } | ShapeSpec::Columns { rows, cols } => rows * cols,
            ShapeSpec::Segments { offsets } => offsets.last().copied().unwrap_or(0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `8192×8192 rows`, `segments (1000, mean 300)`.
    pub fn describe(&self) -> String {
        match self {
            ShapeSpec::Rows { rows, cols } => format!("each row of {rows} × {cols}"),
            ShapeSpec::Columns { rows, cols } => format!("each column of {rows} × {cols}"),
            ShapeSpec::Segments { offsets } => format!(
                "{} segments of {} elements",
                offsets.len().saturating_sub(1),
                self.len()
            ),
        }
    }

    /// `len` elements as `rows` rows (columns when `by_column`); `len` must divide evenly.
    pub fn matrix(len: usize, rows: usize, by_column: bool) -> Result<ShapeSpec> {
        if rows == 0 {
            if len == 0 {
                return Ok(ShapeSpec::Rows { rows: 0, cols: 0 });
            }
            bail!("--rows 0 cannot hold {len} elements");
        }
        if !len.is_multiple_of(rows) {
            bail!(
                "{len} elements do not make {rows} rows of equal length ({len} / {rows} is not whole)"
            );
        }
        let cols = len / rows;
        Ok(if by_column {
            ShapeSpec::Columns { rows, cols }
        } else {
            ShapeSpec::Rows { rows, cols }
        })
    }

    /// `segments` segments of random lengths averaging `mean_len` (about one in eight empty),
    /// reproducible from `seed`.
    pub fn ragged(segments: usize, mean_len: usize, seed: u64) -> ShapeSpec {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut offsets = Vec::with_capacity(segments + 1);
        offsets.push(0);
        for _ in 0..segments {
            let len = if rng.random_range(0..8) == 0 {
                0
            } else {
                rng.random_range(0..=2 * mean_len)
            };
            offsets.push(offsets.last().copied().unwrap_or(0) + len);
        }
        ShapeSpec::Segments { offsets }
    }
}

/// Upper bound on the additions any element of a result goes through in `plan`'s kernel, for
/// the float error bound (see `reduce_rs::plan::additions_per_element`).
pub fn additions(plan: &ShapePlan, len: usize) -> u64 {
    let (len, block) = (len as u64, u64::from(plan.launch.block));
    let split = plan.split as u64;
    let tree = u64::from(plan.launch.block.ilog2());
    match plan.kernel {
        ShapeKernel::RowsWarp => len.div_ceil(32) + 5 + 2,
        ShapeKernel::RowsBlock => len.div_ceil(block) + tree + 2,
        ShapeKernel::RowsSplit => len.div_ceil(block * split) + 2 * tree + split + 2,
        ShapeKernel::Columns => len.div_ceil(split) + split,
    }
}

/// The check of every result of one shape reduction.
#[derive(Clone, Debug)]
pub struct ShapeVerdict {
    pub results: usize,
    pub failed: usize,
    /// The first failure, described.
    pub first_failure: Option<String>,
    /// The largest relative error among the results.
    pub worst_rel_error: f64,
}

impl ShapeVerdict {
    pub fn pass(&self) -> bool {
        self.failed == 0
    }
}

/// Checks every result of `got` (one per row, column or segment of `input`) against the CPU
/// reference of its own elements.
pub fn check_each<T: HostElement, O: Checked<T>>(
    input: &[T],
    spec: &ShapeSpec,
    plan: &ShapePlan,
    got: &[O::Output],
) -> ShapeVerdict {
    let shape = spec.shape();
    let mut verdict = ShapeVerdict {
        results: got.len(),
        failed: 0,
        first_failure: None,
        worst_rel_error: 0.0,
    };
    if got.len() != shape.results() {
        verdict.failed = 1;
        verdict.first_failure = Some(format!(
            "{} results for {} rows",
            got.len(),
            shape.results()
        ));
        return verdict;
    }
    for (i, &result) in got.iter().enumerate() {
        let elements: &[T] = match spec {
            ShapeSpec::Rows { cols, .. } => &input[i * cols..(i + 1) * cols],
            ShapeSpec::Columns { rows, cols } => {
                // The column, gathered (fine for checking; the kernel reads it in place).
                let column: Vec<T> = (0..*rows).map(|r| input[r * cols + i]).collect();
                let check = O::check(result, &O::reference(&column), additions(plan, *rows));
                record(&mut verdict, i, &check);
                continue;
            }
            ShapeSpec::Segments { offsets } => &input[offsets[i]..offsets[i + 1]],
        };
        let check: Verdict = O::check(
            result,
            &O::reference(elements),
            additions(plan, elements.len()),
        );
        record(&mut verdict, i, &check);
    }
    verdict
}

fn record(verdict: &mut ShapeVerdict, i: usize, check: &Verdict) {
    if check.rel_error.is_finite() {
        verdict.worst_rel_error = verdict.worst_rel_error.max(check.rel_error);
    }
    if !check.pass {
        verdict.failed += 1;
        if verdict.first_failure.is_none() {
            verdict.first_failure = Some(format!(
                "result {i}: got {}, expected {} (tolerance {:.3e})",
                check.got, check.expected, check.tolerance
            ));
        }
    }
}

/// Runs `O` over every row, column or segment of `input` on `reducer` and checks each result.
pub fn run_and_check<T: HostElement, O: Checked<T> + Default>(
    reducer: &Reducer,
    input: &[T],
    spec: &ShapeSpec,
) -> Result<(ShapePlan, String, ShapeVerdict)> {
    let (plan, name) = reducer.plan_each::<T, O>(&spec.shape());
    let got = reducer.reduce_each(O::default(), input, spec.shape())?;
    let verdict = check_each::<T, O>(input, spec, &plan, &got);
    Ok((plan, name, verdict))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_and_ragged_segments() {
        assert_eq!(
            ShapeSpec::matrix(12, 3, false).unwrap(),
            ShapeSpec::Rows { rows: 3, cols: 4 }
        );
        assert!(
            ShapeSpec::matrix(13, 3, false)
                .unwrap_err()
                .to_string()
                .contains("not whole")
        );
        let spec = ShapeSpec::ragged(1000, 50, 7);
        let ShapeSpec::Segments { offsets } = &spec else {
            panic!()
        };
        assert_eq!(offsets.len(), 1001);
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
        assert!(
            offsets.windows(2).any(|w| w[0] == w[1]),
            "some empty segments"
        );
        assert_eq!(spec, ShapeSpec::ragged(1000, 50, 7));
    }
}
