//! The CPU reference and the check of a result against it.
//!
//! The reference is written from the definitions, not from the kernels' code: it starts from
//! no element (not from an identity constant the kernels also use), compares values as
//! numbers (not through the kernels' bit keys), and adds up in the widest type (`i128` for
//! integers, compensated `f64` for floats). So a wrong identity or comparison in the kernels
//! cannot hide behind the same mistake here.
//!
//! - Integer sums: exact, then wrapped into the type (the kernels' wrapping semantics).
//! - Min, max, argmin, argmax: exact. NaN is both the largest and the smallest value (the first
//!   NaN's index for the arg operations), `-0.0 < +0.0`, ties to the first index.
//! - Float sums: Neumaier-compensated in `f64`. The kernels add in another order, in the sum's
//!   type, so the result may differ by rounding; the accepted difference is the classical bound
//!   for recursive summation (Higham, *Accuracy and Stability of Numerical Algorithms*, §4.2),
//!   valid for any order: `|ŝ − s| ≤ γ_h · Σ|xᵢ|`, `γ_h = h·u / (1 − h·u)`, with `u` the unit
//!   roundoff of the sum's type and `h` the most additions an element goes through in the
//!   version's launch grid, plus the reference's own error. Where every element is an integer
//!   and `Σ|xᵢ|` fits the significand, every order is exact, and so is the check.
//! - A float sum whose exact value is beyond the type's range must be `±inf`.
//! - Means: the sum's bound divided by `n`, plus the division's rounding.

use crate::element::HostElement;
use reduce_rs::Operation;
use reduce_rs::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};
use std::cmp::Ordering;

/// The outcome of one check.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub pass: bool,
    pub got: String,
    pub expected: String,
    pub abs_error: f64,
    /// `|got − expected| / |expected|` (the absolute error when the expected value is 0).
    pub rel_error: f64,
    /// The largest accepted absolute error (0 for exact checks).
    pub tolerance: f64,
}

impl Verdict {
    fn exact(pass: bool, got: String, expected: String) -> Verdict {
        Verdict {
            pass,
            got,
            expected,
            abs_error: if pass { 0.0 } else { f64::NAN },
            rel_error: if pass { 0.0 } else { f64::NAN },
            tolerance: 0.0,
        }
    }
}

/// An operation the host can compute a reference for and check.
pub trait Checked<T: HostElement>: Operation<T> {
    /// What the result must be, computed from `input` alone.
    type Expected: Clone + std::fmt::Debug + Send + Sync;
    fn reference(input: &[T]) -> Self::Expected;
    /// `got` against `expected`; `additions` is the `h` of the float error bound.
    fn check(got: Self::Output, expected: &Self::Expected, additions: u64) -> Verdict;
}

/// A float or integer sum's reference.
#[derive(Clone, Debug)]
pub enum SumReference<S> {
    /// Integer sums, and float sums that every order computes exactly.
    Exact(S),
    /// A float sum: the compensated value, `Σ|xᵢ|`, the count, and the sum of the positive and
    /// of the negative elements (which say whether some order overflows).
    Bounded {
        value: f64,
        abs_sum: f64,
        len: usize,
        positive: f64,
        negative: f64,
    },
}

/// `Σxᵢ` with Neumaier's compensation, `Σ|xᵢ|`, the positive and negative parts (of the finite
/// elements), and whether every element is an integer.
///
/// Infinities are added up on their own (their sum is the sum's value: NaN for both signs), a
/// NaN makes the value NaN, and finite elements whose sum overflows `f64` (`f64` inputs near
/// their largest value) are added up scaled by 2^-600 and scaled back, so that the value is the
/// signed infinity or the finite result the exact sum rounds to.
fn neumaier<T: HostElement>(input: &[T]) -> (f64, f64, f64, f64, bool) {
    let values: Vec<f64> = input.iter().map(|&x| x.to_f64()).collect();
    let (mut abs_sum, mut positive, mut negative, mut all_integers) = (0.0, 0.0, 0.0, true);
    let (mut saw_nan, mut infinities) = (false, None::<f64>);
    for &x in &values {
        saw_nan |= x.is_nan();
        if x.is_infinite() {
            infinities = Some(infinities.map_or(x, |sum| sum + x));
            continue;
        }
        abs_sum += x.abs();
        if x > 0.0 {
            positive += x;
        } else {
            negative += x;
        }
        all_integers &= x.fract() == 0.0;
    }
    let finite = || values.iter().copied().filter(|x| x.is_finite());
    let mut sum = compensated(finite());
    if !sum.is_finite() && !saw_nan {
        /// 2^-600: far below `f64::MAX` (2^1024) yet far above the subnormals' 2^-1074.
        const SCALE: f64 = f64::from_bits((1023 - 600) << 52);
        sum = compensated(finite().map(|x| x * SCALE)) / SCALE;
    }
    let sum = if saw_nan {
        f64::NAN
    } else if let Some(infinite) = infinities {
        infinite
    } else {
        sum
    };
    (sum, abs_sum, positive, negative, all_integers)
}

/// `Σxᵢ` of finite values with Neumaier's compensation; a sum starts from its first element (so
/// that `-0.0 + -0.0` is `-0.0`, as IEEE says).
fn compensated(mut values: impl Iterator<Item = f64>) -> f64 {
    let Some(first) = values.next() else {
        return 0.0;
    };
    let (mut sum, mut compensation) = (first, 0.0f64);
    for x in values {
        let t = sum + x;
        compensation += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
    }
    if sum.is_finite() && compensation != 0.0 {
        sum + compensation
    } else {
        sum
    }
}

/// `γ_h · Σ|xᵢ|` plus the error of the `f64` Neumaier reference itself.
pub fn sum_error_bound(
    unit_roundoff: f64,
    additions: u64,
    abs_sum: f64,
    len: usize,
    value: f64,
) -> f64 {
    let hu = additions as f64 * unit_roundoff;
    let gamma = if hu < 1.0 {
        hu / (1.0 - hu)
    } else {
        f64::INFINITY
    };
    let u64_ = f64::EPSILON / 2.0;
    gamma * abs_sum + 2.0 * u64_ * value.abs() + 2.0 * len as f64 * u64_ * u64_ * abs_sum
}

fn sum_reference<T: HostElement>(input: &[T]) -> SumReference<T::Sum> {
    match T::SUM_ROUNDOFF {
        None => SumReference::Exact(T::wrap_sum(
            input.iter().map(|x| x.to_i128().unwrap_or(0)).sum(),
        )),
        Some(u) => {
            let (value, abs_sum, positive, negative, all_integers) = neumaier(input);
            if all_integers && abs_sum <= 2.0 / u && value.is_finite() {
                SumReference::Exact(T::sum_from_f64(value))
            } else {
                SumReference::Bounded {
                    value,
                    abs_sum,
                    len: input.len(),
                    positive,
                    negative,
                }
            }
        }
    }
}

/// How a float sum (or a mean, `scale` = n) is checked: the unit roundoff and the largest
/// finite value of the type it is added up in, and a tolerance added to the bound (the mean's
/// division).
struct Bound {
    scale: f64,
    unit_roundoff: f64,
    max: f64,
    extra: f64,
}

/// Checks a float sum `got` (as `f64`) against a bounded reference.
fn check_bounded<S>(
    got: f64,
    reference: &SumReference<S>,
    additions: u64,
    bound: Bound,
) -> Verdict {
    let SumReference::Bounded {
        value,
        abs_sum,
        len,
        positive,
        negative,
    } = *reference
    else {
        unreachable!("called for bounded references only");
    };
    let scale = bound.scale;
    let expected = value / scale;
    let tolerance = sum_error_bound(bound.unit_roundoff, additions, abs_sum, len, value) / scale
        + if bound.extra > 0.0 {
            // The division's rounding: relative, and, where the quotient falls among the
            // subnormals, half of their spacing (the smallest subnormal of the result's type).
            let smallest = if bound.unit_roundoff >= f64::from(f32::EPSILON) / 2.0 {
                f64::from(f32::from_bits(1))
            } else {
                f64::from_bits(1)
            };
            bound.extra * expected.abs() + smallest / 2.0
        } else {
            0.0
        };
    let max = bound.max / scale;
    let abs_error = if got.is_nan() && expected.is_nan() {
        0.0
    } else {
        (got - expected).abs()
    };
    // A part that overflows in some order: IEEE arithmetic may reach that infinity (and NaN,
    // inf + -inf, where the parts of both signs do), whatever the exact sum.
    let (positive_overflows, negative_overflows) =
        (positive / scale > max, -negative / scale > max);
    let both_overflow = positive_overflows && negative_overflows;
    let some_order_overflows = (got == f64::INFINITY && positive_overflows)
        || (got == f64::NEG_INFINITY && negative_overflows)
        || (got.is_nan() && both_overflow);
    let pass = if expected.is_nan() {
        got.is_nan()
    } else if expected.is_infinite() {
        // An infinite element (or an exact sum beyond f64) makes the sum that infinity; but
        // where the finite elements of the other sign can overflow in the sum's type, some
        // orders reach the other infinity first, and inf + -inf is NaN.
        let other_overflows = if expected > 0.0 {
            -negative / scale > max
        } else {
            positive / scale > max
        };
        got == expected || (other_overflows && got.is_nan())
    } else if expected.abs() - tolerance > max {
        // Beyond the range in every order: the sum overflows (to NaN where both signs can).
        got == expected.signum() * f64::INFINITY || (both_overflow && got.is_nan())
    } else {
        let within = got.is_finite() && abs_error <= tolerance;
        // Near the edge of the range, or with parts that overflow in some order, IEEE
        // arithmetic may give ±inf (and NaN once both signs overflowed).
        let edge = expected.abs() + tolerance > max && got == expected.signum() * f64::INFINITY;
        within || edge || some_order_overflows
    };
    Verdict {
        pass,
        got: format!("{got:.10e}"),
        expected: format!("{expected:.10e}"),
        abs_error,
        rel_error: if expected == 0.0 {
            abs_error
        } else {
            abs_error / expected.abs()
        },
        tolerance,
    }
}

impl<T: HostElement> Checked<T> for Sum {
    type Expected = SumReference<T::Sum>;
    fn reference(input: &[T]) -> Self::Expected {
        sum_reference(input)
    }
    fn check(got: T::Sum, expected: &Self::Expected, additions: u64) -> Verdict {
        match expected {
            SumReference::Exact(value) => Verdict::exact(
                T::sum_same_bits(got, *value),
                format!("{got:?}"),
                format!("{value:?}"),
            ),
            bounded => check_bounded(
                T::sum_to_f64(got),
                bounded,
                additions,
                Bound {
                    scale: 1.0,
                    unit_roundoff: T::SUM_ROUNDOFF.expect("bounded sums are float sums"),
                    max: T::SUM_MAX,
                    extra: 0.0,
                },
            ),
        }
    }
}

impl<T: HostElement> Checked<T> for Mean {
    type Expected = Option<SumReference<T::Sum>>;
    fn reference(input: &[T]) -> Self::Expected {
        (!input.is_empty()).then(|| match T::SUM_ROUNDOFF {
            // Integer means add up in f64: compare with the exact mean.
            None => {
                let exact: i128 = input.iter().map(|x| x.to_i128().unwrap_or(0)).sum();
                SumReference::Bounded {
                    value: exact as f64,
                    abs_sum: input.iter().map(|x| x.to_f64().abs()).sum(),
                    len: input.len(),
                    positive: 0.0,
                    negative: 0.0,
                }
            }
            Some(_) => {
                let (value, abs_sum, positive, negative, _) = neumaier(input);
                SumReference::Bounded {
                    value,
                    abs_sum,
                    len: input.len(),
                    positive,
                    negative,
                }
            }
        })
    }
    fn check(got: Option<T::Mean>, expected: &Self::Expected, additions: u64) -> Verdict {
        match (got, expected) {
            (None, None) => Verdict::exact(true, "none".into(), "none".into()),
            (Some(got), Some(reference)) => {
                let SumReference::Bounded { len, .. } = *reference else {
                    unreachable!("means are always bounded");
                };
                // Integer means add up in f64; float means in their sum's type. The division
                // rounds once more.
                let (unit_roundoff, max) = match T::SUM_ROUNDOFF {
                    Some(u) => (u, T::SUM_MAX),
                    None => (f64::EPSILON / 2.0, f64::MAX),
                };
                let bound = Bound {
                    scale: len as f64,
                    unit_roundoff,
                    max,
                    extra: unit_roundoff,
                };
                check_bounded(T::mean_to_f64(got), reference, additions, bound)
            }
            (got, expected) => Verdict::exact(false, format!("{got:?}"), format!("{expected:?}")),
        }
    }
}

/// The first extreme element and its index: `keep_left(a, b)` says whether `a` (earlier) stays
/// against `b`. A NaN wins against every number; between NaNs the first one stays.
fn extreme<T: HostElement>(input: &[T], wanted: Ordering) -> Option<(usize, T)> {
    let mut best: Option<(usize, T)> = None;
    for (i, &x) in input.iter().enumerate() {
        let replace = match best {
            None => true,
            Some((_, b)) => match (b.is_nan(), x.is_nan()) {
                (true, _) => false,
                (false, true) => true,
                (false, false) => x.order(b) == wanted,
            },
        };
        if replace {
            best = Some((i, x));
        }
    }
    best
}

fn value_text<T: HostElement>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

fn same_value<T: HostElement>(a: Option<T>, b: Option<T>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_bits(b) || (a.is_nan() && b.is_nan()),
        _ => false,
    }
}

impl<T: HostElement> Checked<T> for Min {
    type Expected = Option<T>;
    fn reference(input: &[T]) -> Option<T> {
        extreme(input, Ordering::Less).map(|(_, v)| v)
    }
    fn check(got: Option<T>, expected: &Option<T>, _additions: u64) -> Verdict {
        Verdict::exact(
            same_value(got, *expected),
            value_text(got),
            value_text(*expected),
        )
    }
}

impl<T: HostElement> Checked<T> for Max {
    type Expected = Option<T>;
    fn reference(input: &[T]) -> Option<T> {
        extreme(input, Ordering::Greater).map(|(_, v)| v)
    }
    fn check(got: Option<T>, expected: &Option<T>, _additions: u64) -> Verdict {
        Verdict::exact(
            same_value(got, *expected),
            value_text(got),
            value_text(*expected),
        )
    }
}

fn arg_text<T: HostElement>(arg: Option<(usize, T)>) -> String {
    arg.map_or_else(|| "none".to_string(), |(i, v)| format!("{v} at {i}"))
}

fn check_arg<T: HostElement>(got: Option<(usize, T)>, expected: Option<(usize, T)>) -> Verdict {
    let pass = got.map(|(i, _)| i) == expected.map(|(i, _)| i)
        && same_value(got.map(|(_, v)| v), expected.map(|(_, v)| v));
    Verdict::exact(pass, arg_text(got), arg_text(expected))
}

impl<T: HostElement> Checked<T> for ArgMin {
    type Expected = Option<(usize, T)>;
    fn reference(input: &[T]) -> Self::Expected {
        extreme(input, Ordering::Less)
    }
    fn check(got: Option<(usize, T)>, expected: &Self::Expected, _additions: u64) -> Verdict {
        check_arg(got, *expected)
    }
}

impl<T: HostElement> Checked<T> for ArgMax {
    type Expected = Option<(usize, T)>;
    fn reference(input: &[T]) -> Self::Expected {
        extreme(input, Ordering::Greater)
    }
    fn check(got: Option<(usize, T)>, expected: &Self::Expected, _additions: u64) -> Verdict {
        check_arg(got, *expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    #[test]
    fn integer_sums_wrap_like_the_kernels() {
        let expected = <Sum as Checked<i32>>::reference(&[i32::MAX, 1, 5]);
        assert!(<Sum as Checked<i32>>::check(i32::MIN + 5, &expected, 10).pass);
        assert!(!<Sum as Checked<i32>>::check(i32::MIN + 4, &expected, 10).pass);
        let expected = <Sum as Checked<u64>>::reference(&[u64::MAX, 2]);
        assert!(<Sum as Checked<u64>>::check(1, &expected, 2).pass);
    }

    #[test]
    fn float_sums_pass_within_the_bound_and_fail_outside_it() {
        let input: Vec<f32> = (0..1000)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let expected = <Sum as Checked<f32>>::reference(&input);
        let sequential: f32 = input.iter().sum();
        assert!(<Sum as Checked<f32>>::check(sequential, &expected, 1000).pass);
        assert!(!<Sum as Checked<f32>>::check(sequential + 5.0, &expected, 1000).pass);
    }

    #[test]
    fn overflowing_float_sums_must_be_infinite() {
        // The exact sum, 4·MAX, is beyond f32: +inf is right, and the finite value is not.
        let input = [f32::MAX; 4];
        let expected = <Sum as Checked<f32>>::reference(&input);
        assert!(<Sum as Checked<f32>>::check(f32::INFINITY, &expected, 4).pass);
        assert!(!<Sum as Checked<f32>>::check(f32::MAX, &expected, 4).pass);
        assert!(!<Sum as Checked<f32>>::check(f32::NEG_INFINITY, &expected, 4).pass);
        let expected = <Sum as Checked<f64>>::reference(&[-f64::MAX, -f64::MAX]);
        assert!(<Sum as Checked<f64>>::check(f64::NEG_INFINITY, &expected, 2).pass);
        let expected = <Sum as Checked<bf16>>::reference(&[bf16::MAX, bf16::MAX]);
        assert!(<Sum as Checked<bf16>>::check(f32::INFINITY, &expected, 2).pass);
    }

    #[test]
    fn min_and_max_do_not_trust_an_identity() {
        // All negative: a max folded from a wrong identity (0) would say 0.
        let negative = [-5i32, -2, -9];
        assert_eq!(<Max as Checked<i32>>::reference(&negative), Some(-2));
        assert!(!<Max as Checked<i32>>::check(Some(0), &Some(-2), 0).pass);
        assert_eq!(<Min as Checked<u32>>::reference(&[7, 9]), Some(7));
        assert_eq!(<Min as Checked<f32>>::reference(&[]), None);
    }

    #[test]
    fn nan_signed_zeros_and_ties() {
        assert!(
            <Min as Checked<f32>>::reference(&[1.0, f32::NAN])
                .unwrap()
                .is_nan()
        );
        assert!(
            <Max as Checked<f32>>::reference(&[-0.0, 0.0])
                .unwrap()
                .is_sign_positive()
        );
        assert!(
            <Min as Checked<f32>>::reference(&[0.0, -0.0])
                .unwrap()
                .is_sign_negative()
        );
        let xs = [1.0f32, 7.0, f32::NAN, 7.0, f32::NAN];
        assert_eq!(<ArgMax as Checked<f32>>::reference(&xs).unwrap().0, 2);
        assert_eq!(<ArgMin as Checked<f32>>::reference(&xs).unwrap().0, 2);
        assert_eq!(
            <ArgMax as Checked<f32>>::reference(&[3.0, 7.0, 7.0])
                .unwrap()
                .0,
            1
        );
        assert_eq!(
            <ArgMax as Checked<f32>>::reference(&[-0.0, 0.0]).unwrap().0,
            1
        );
        let expected = <Sum as Checked<f32>>::reference(&[-0.0, -0.0]);
        assert!(<Sum as Checked<f32>>::check(-0.0, &expected, 2).pass);
    }

    #[test]
    fn means() {
        let expected = <Mean as Checked<i32>>::reference(&[i32::MAX, 1]);
        assert!(<Mean as Checked<i32>>::check(Some(1073741824.0), &expected, 2).pass);
        assert!(!<Mean as Checked<i32>>::check(Some(1073741825.0), &expected, 2).pass);
        let expected = <Mean as Checked<f32>>::reference(&[1.0, 2.0, 4.0]);
        assert!(<Mean as Checked<f32>>::check(Some(7.0 / 3.0), &expected, 3).pass);
        assert!(<Mean as Checked<f32>>::check(None, &None, 0).pass);
    }
}
