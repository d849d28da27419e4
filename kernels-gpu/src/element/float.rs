//! `f32` and `f64`: [`Element`] (keys in IEEE `totalOrder`) and [`Accumulator`] (Neumaier's
//! compensated running sum).

use super::traits::{Accumulator, Element};
use super::vector::Lanes;

macro_rules! float_element {
    ($t:ty, $name:literal, $bits:ty, $signed:ty, $lanes:literal, $mean:ty) => {
        impl Element for $t {
            type Vector16 = Lanes<$t, $lanes>;
            type SumAcc = $t;
            type MeanAcc = $mean;
            const NAME: &'static str = $name;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline(always)]
            fn to_sum(self) -> $t {
                self
            }
            #[inline(always)]
            fn to_mean(self) -> $mean {
                self
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self != self
            }
            type Key = $bits;
            #[inline(always)]
            fn key_nan_high(self) -> $bits {
                if self.is_nan() {
                    <$bits>::MAX
                } else {
                    float_key!(self.to_bits(), $bits, $signed)
                }
            }
            #[inline(always)]
            fn key_nan_low(self) -> $bits {
                if self.is_nan() {
                    0
                } else {
                    float_key!(self.to_bits(), $bits, $signed)
                }
            }
            #[inline(always)]
            fn from_key(key: $bits) -> Self {
                <$t>::from_bits(float_from_key!(key, $bits))
            }
        }

        impl Accumulator for $t {
            const ZERO: Self = -0.0;
            const EMPTY: Self = 0.0;
            const NAN_OR_ZERO: Self = <$t>::NAN;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn divide(self, count: usize) -> Self {
                self / count as $t
            }
            /// Neumaier's compensated sum: `(sum, compensation)`. A thread adds tens of
            /// thousands of group sums one after another; plain addition would let the error
            /// grow with their number, the compensation keeps it at a few units of roundoff.
            type Running = ($t, $t);
            const START: ($t, $t) = (-0.0, 0.0);
            #[inline(always)]
            fn accumulate((sum, compensation): ($t, $t), value: $t) -> ($t, $t) {
                let total = sum + value;
                let lost = if abs(sum) >= abs(value) {
                    (sum - total) + value
                } else {
                    (value - total) + sum
                };
                (total, compensation + lost)
            }
            #[inline(always)]
            fn settle((sum, compensation): ($t, $t)) -> $t {
                // A non-finite sum stays what it is (the compensation of an overflow is
                // `-inf`, and inf + -inf would be NaN); a zero compensation is not added, so
                // that a sum of `-0.0`s stays `-0.0`.
                if sum - sum == 0.0 && compensation != 0.0 {
                    sum + compensation
                } else {
                    sum
                }
            }
        }
    };
}
float_element!(f32, "f32", u32, i32, 4, f32);
float_element!(f64, "f64", u64, i64, 2, f64);

/// `|x|` without `std` (clears the sign bit).
#[inline(always)]
fn abs<T: Abs>(x: T) -> T {
    x.abs_value()
}
trait Abs {
    fn abs_value(self) -> Self;
}
impl Abs for f32 {
    #[inline(always)]
    fn abs_value(self) -> Self {
        f32::from_bits(self.to_bits() & 0x7fff_ffff)
    }
}
impl Abs for f64 {
    #[inline(always)]
    fn abs_value(self) -> Self {
        f64::from_bits(self.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
}
