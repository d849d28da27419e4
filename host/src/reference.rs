//! The CPU reference, in the widest type, and the check of a GPU/simulator result against it.
//!
//! - Integer sums: exact, in `i128`, then wrapped into the element type (the kernels' wrapping
//!   semantics); compared bit for bit.
//! - Min / max: folded in the element type with the kernels' operator (IEEE `minimum` /
//!   `maximum` for floats); exact for any order, so compared bit for bit.
//! - Float sums: Neumaier-compensated summation in `f64`. The kernels add in another order, in
//!   the element type, so the result may differ by rounding; the accepted difference is the
//!   classical bound for recursive summation (Higham, *Accuracy and Stability of Numerical
//!   Algorithms*, §4.2), which holds for any order of the additions:
//!   `|ŝ − s| ≤ γ_h · Σ|xᵢ|`, `γ_h = h·u / (1 − h·u)`,
//!   with `u` the element type's unit roundoff and `h` the most additions any element goes
//!   through (from the version's launch shape: `Version::additions_per_element`), plus the
//!   reference's own error (`2·u₆₄·|s| + 2·n·u₆₄²·Σ|xᵢ|` for Neumaier's method).
//!   When every element is an integer and `Σ|xᵢ|` fits the significand (2^24 for f32), every
//!   partial sum is exact in any order: then the check is exact too.

use crate::element::HostElement;
use approx::AbsDiffEq;
use kernels_gpu::element::ReduceOp;

/// The expected result and how to compare with it.
#[derive(Clone, Copy, Debug)]
pub struct Expected<T> {
    /// The reference rounded to the element type.
    pub value: T,
    /// The reference as `f64` (for float sums, more precise than `value`).
    pub value_f64: f64,
    pub check: Check,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Check {
    /// Bit for bit (NaN matches any NaN).
    Exact,
    /// Within the summation error bound; `abs_sum` is `Σ|xᵢ|`, `len` the element count.
    SumBound { abs_sum: f64, len: usize },
}

pub fn reference<T: HostElement, Op: ReduceOp<T>>(input: &[T]) -> Expected<T> {
    let is_sum = Op::NAME == "sum";
    match (is_sum, T::UNIT_ROUNDOFF) {
        (true, None) => {
            let exact: i128 = input.iter().map(|&x| x.to_i128()).sum();
            let value = T::wrap_i128(exact);
            Expected {
                value,
                value_f64: value.to_f64(),
                check: Check::Exact,
            }
        }
        (true, Some(unit_roundoff)) => {
            let (sum, abs_sum, all_integers) = neumaier_sum(input);
            let significand_limit = 2.0 / unit_roundoff; // 2^24 for f32, 2^53 for f64
            let check = if all_integers && abs_sum <= significand_limit {
                Check::Exact
            } else {
                Check::SumBound {
                    abs_sum,
                    len: input.len(),
                }
            };
            Expected {
                value: T::from_f64_rounded(sum),
                value_f64: sum,
                check,
            }
        }
        (false, _) => {
            let value = input
                .iter()
                .fold(Op::IDENTITY, |acc, &x| Op::combine(acc, x));
            Expected {
                value,
                value_f64: value.to_f64(),
                check: Check::Exact,
            }
        }
    }
}

/// `Σxᵢ` with Neumaier's compensation, `Σ|xᵢ|`, and whether every element is an integer.
/// Starts from `-0.0`, the identity of IEEE addition, as the kernels do.
fn neumaier_sum<T: HostElement>(input: &[T]) -> (f64, f64, bool) {
    let (mut sum, mut compensation, mut abs_sum, mut all_integers) =
        (-0.0f64, 0.0f64, 0.0f64, true);
    for &x in input {
        let x = x.to_f64();
        let t = sum + x;
        compensation += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
        abs_sum += x.abs();
        all_integers &= x.fract() == 0.0;
    }
    // Adding a zero compensation would turn a -0.0 sum into +0.0.
    let sum = if compensation != 0.0 && sum.is_finite() {
        sum + compensation
    } else {
        sum
    };
    (sum, abs_sum, all_integers)
}

/// The outcome of one check.
#[derive(Clone, Copy, Debug)]
pub struct Verdict {
    pub pass: bool,
    pub abs_error: f64,
    /// `|got − expected| / |expected|` (the absolute error when the expected value is 0).
    pub rel_error: f64,
    /// The largest accepted absolute error (0 for exact checks).
    pub tolerance: f64,
}

/// Checks `got` against `expected`, with `additions` the `h` of the error bound.
pub fn check<T: HostElement>(got: T, expected: &Expected<T>, additions: u64) -> Verdict {
    let got_f64 = got.to_f64();
    let abs_error = if got.is_nan() && expected.value_f64.is_nan() {
        0.0
    } else {
        (got_f64 - expected.value_f64).abs()
    };
    let rel_error = if expected.value_f64 == 0.0 {
        abs_error
    } else {
        abs_error / expected.value_f64.abs()
    };
    match expected.check {
        Check::Exact => {
            let pass = got.same_bits(expected.value) || (got.is_nan() && expected.value.is_nan());
            Verdict {
                pass,
                abs_error,
                rel_error,
                tolerance: 0.0,
            }
        }
        Check::SumBound { abs_sum, len } => {
            let unit_roundoff = T::UNIT_ROUNDOFF.expect("float sums have a unit roundoff");
            let tolerance =
                sum_error_bound(unit_roundoff, additions, abs_sum, len, expected.value_f64);
            let pass = if expected.value_f64.is_nan() {
                got.is_nan()
            } else if expected.value_f64.is_infinite() {
                got_f64 == expected.value_f64
            } else {
                got_f64.abs_diff_eq(&expected.value_f64, tolerance)
            };
            Verdict {
                pass,
                abs_error,
                rel_error,
                tolerance,
            }
        }
    }
}

/// `γ_h · Σ|xᵢ|` plus the error of the `f64` Neumaier reference itself.
pub fn sum_error_bound(
    unit_roundoff: f64,
    additions: u64,
    abs_sum: f64,
    len: usize,
    reference: f64,
) -> f64 {
    let hu = additions as f64 * unit_roundoff;
    let gamma = if hu < 1.0 {
        hu / (1.0 - hu)
    } else {
        f64::INFINITY
    };
    let u64_ = f64::EPSILON / 2.0;
    gamma * abs_sum + 2.0 * u64_ * reference.abs() + 2.0 * len as f64 * u64_ * u64_ * abs_sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::element::{Max, Min, Sum};

    #[test]
    fn integer_sums_wrap_like_the_kernels() {
        let input = [i32::MAX, 1, 5];
        let expected = reference::<i32, Sum>(&input);
        assert_eq!(expected.value, i32::MIN + 5);
        assert!(check(i32::MIN + 5, &expected, 10).pass);
        assert!(!check(i32::MIN + 4, &expected, 10).pass);
        assert_eq!(reference::<u32, Sum>(&[u32::MAX, 2]).value, 1);
    }

    #[test]
    fn float_sums_pass_within_the_bound_and_fail_outside_it() {
        let input: Vec<f32> = (0..1000)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let expected = reference::<f32, Sum>(&input);
        let Check::SumBound { abs_sum, .. } = expected.check else {
            panic!("not integers")
        };
        // Summed in f32 in order: within the bound for h = 1000.
        let sequential: f32 = input.iter().sum();
        assert!(check(sequential, &expected, 1000).pass);
        // Off by far more than γ_h Σ|x|: fails.
        assert!(!check(expected.value + (abs_sum as f32) * 1e-3, &expected, 1000).pass);
    }

    #[test]
    fn integer_valued_floats_are_checked_exactly() {
        let input = [3.0f32, -2.0, 8.0];
        let expected = reference::<f32, Sum>(&input);
        assert_eq!(expected.check, Check::Exact);
        assert!(check(9.0f32, &expected, 3).pass);
        assert!(!check(9.000001f32, &expected, 3).pass);
    }

    #[test]
    fn negative_zeros_sum_to_negative_zero() {
        let expected = reference::<f32, Sum>(&[-0.0, -0.0]);
        assert!(check(-0.0f32, &expected, 2).pass);
        assert!(
            !check(0.0f32, &expected, 2).pass,
            "+0.0 is not the sum of -0.0s"
        );
        assert!(reference::<f32, Sum>(&[-0.0, 0.0]).value.is_sign_positive());
    }

    #[test]
    fn nan_and_infinities() {
        let expected = reference::<f32, Sum>(&[1.0, f32::NAN, 2.0]);
        assert!(check(f32::NAN, &expected, 3).pass);
        assert!(!check(3.0f32, &expected, 3).pass);
        let expected = reference::<f64, Sum>(&[1.0, f64::INFINITY]);
        assert!(check(f64::INFINITY, &expected, 2).pass);
        assert!(
            reference::<f32, Sum>(&[f32::INFINITY, f32::NEG_INFINITY])
                .value
                .is_nan()
        );
        // Min/max propagate NaN and order -0.0 below +0.0.
        assert!(reference::<f32, Min>(&[1.0, f32::NAN]).value.is_nan());
        assert!(reference::<f32, Max>(&[-0.0, 0.0]).value.is_sign_positive());
        assert!(reference::<f32, Min>(&[0.0, -0.0]).value.is_sign_negative());
    }

    #[test]
    fn the_bound_grows_with_additions() {
        let small = sum_error_bound(2f64.powi(-24), 10, 100.0, 100, 1.0);
        let large = sum_error_bound(2f64.powi(-24), 1000, 100.0, 100, 1.0);
        assert!(small < large && small > 0.0);
    }
}
