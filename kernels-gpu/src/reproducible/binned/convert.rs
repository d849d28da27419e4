//! A state's value: its terms (each exact in `f64`) added up coarsest first in double-double
//! ([`Accurate`]) and rounded once — to `f64`, or to `f32` through `f64` rounded to odd.

use super::{Binned, BinnedFloat};

/// A sum of exact `f64` terms kept as `hi + lo`: each addition's rounding error, exact by
/// Knuth's TwoSum, goes to `lo`. The conversions add a state's terms up in it, so that their
/// value is the state's exact sum rounded once, up to an error below 2^-100 of the terms'
/// magnitudes (one `f64` alone would leave up to 2^-53 of them per addition).
#[derive(Clone, Copy)]
struct Accurate {
    hi: f64,
    lo: f64,
}

impl Accurate {
    const ZERO: Self = Accurate { hi: 0.0, lo: 0.0 };

    #[inline(always)]
    fn add(&mut self, term: f64) {
        let (sum, error) = two_sum(self.hi, term);
        self.hi = sum;
        self.lo += error;
    }

    /// The sum, rounded once to `f64`.
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    /// The sum, rounded once to `f32`: rounded to `f64` *to odd* first (an inexact result gets
    /// its last bit set), which a second rounding to fewer than 52 bits never turns into a
    /// double rounding.
    #[inline(always)]
    fn to_f32(self) -> f32 {
        let (sum, error) = two_sum(self.hi, self.lo);
        let bits = sum.to_bits();
        let bits = if error == 0.0 || bits & 1 == 1 {
            bits
        } else if (error > 0.0) == (sum > 0.0) {
            // The odd neighbour on the side of the exact value: away from zero...
            bits.wrapping_add(1)
        } else {
            // ...or towards it.
            bits.wrapping_sub(1)
        };
        f64::from_bits(bits) as f32
    }
}

/// `a + b` rounded, and the error of that rounding (exact, barring overflow).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let sum = a + b;
    let b_part = sum - a;
    let error = (a - (sum - b_part)) + (b - b_part);
    (sum, error)
}

/// The value of an `f32` state, CUB's `conv_binned_to_float` with one rounding: every term
/// exact in `f64`, added up coarsest first ([`Accurate`]), rounded once to `f32`.
#[inline(always)]
pub(super) fn convert_f32(state: &Binned<f32>) -> f32 {
    let expansion = 2.0 * f64::from(f32::HALF_EXPANSION);
    // Written out fold by fold: an index that is a loop variable would put the state in local
    // memory.
    let (top, second, third) = (
        state.fold_terms(0),
        state.fold_terms(1),
        state.fold_terms(2),
    );
    let scale = if state.index() == 0 { expansion } else { 1.0 };
    let mut sum = Accurate::ZERO;
    sum.add(top.1 * scale);
    sum.add(second.1);
    sum.add(top.0 * scale);
    sum.add(third.1);
    sum.add(second.0);
    sum.add(third.0);
    sum.to_f32()
}

/// The value of an `f64` state, CUB's `conv_binned_to_double` with one rounding and its
/// scale fixed: the terms added up coarsest first ([`Accurate`]); for states whose top folds
/// are near the top of the range, scaled down by 2^-66 first (exactly: their finest terms are
/// far above the subnormals) and the rounded sum scaled back by 2^66 (CUB scales back by 2^-66
/// again, so sums above ~2^904 come out 2^132 too small).
#[inline(always)]
pub(super) fn convert_f64(state: &Binned<f64>) -> f64 {
    const SCALED_UP_TO: i32 = 3 * 53 / 40;
    let index = state.index();
    let scaled = index <= SCALED_UP_TO;
    let down = if scaled {
        f64::from_bits((1023 - 66) << 52) // 2^-66
    } else {
        1.0
    };
    let expansion = if index == 0 {
        2.0 * f64::HALF_EXPANSION
    } else {
        1.0
    };
    // Written out fold by fold, as `convert_f32`.
    let (top, second, third) = (
        state.fold_terms(0),
        state.fold_terms(1),
        state.fold_terms(2),
    );
    let mut sum = Accurate::ZERO;
    sum.add(top.1 * down * expansion);
    sum.add(second.1 * down);
    sum.add(top.0 * down * expansion);
    sum.add(third.1 * down);
    sum.add(second.0 * down);
    sum.add(third.0 * down);
    let value = sum.to_f64();
    if scaled {
        value * f64::from_bits((1023 + 66) << 52) // 2^66: exact, or the overflow to ±inf
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::Accurate;

    fn sum_of(terms: [f64; 3]) -> Accurate {
        let mut sum = Accurate::ZERO;
        for term in terms {
            sum.add(term);
        }
        sum
    }

    #[test]
    fn the_sum_is_rounded_once() {
        // 1 + 2^-24 is the midpoint of two f32s, 1 + 2^-53 of two f64s: what lies past it
        // decides, where rounding the f64 sum first (to f32) or each addition (to f64) ties.
        assert_eq!(
            sum_of([1.0, 2f64.powi(-24), 2f64.powi(-80)]).to_f32(),
            1.0 + 2f32.powi(-23)
        );
        assert_eq!(
            sum_of([-1.0, -2f64.powi(-24), 2f64.powi(-80)]).to_f32(),
            -1.0
        );
        assert_eq!(
            sum_of([1.0, 2f64.powi(-53), 2f64.powi(-60)]).to_f64(),
            1.0 + 2f64.powi(-52)
        );
        assert_eq!(
            sum_of([-1.0, -2f64.powi(-53), 2f64.powi(-60)]).to_f64(),
            -1.0
        );
        // Exact sums come out as they are, ties to even.
        assert_eq!(sum_of([1.0, 2f64.powi(-24), 0.0]).to_f32(), 1.0);
        assert_eq!(sum_of([3.0, -3.0, 0.0]).to_f32().to_bits(), 0);
    }
}
