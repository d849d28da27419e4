//! The integers: [`Element`] (keys with the sign bit flipped) and [`Accumulator`] (wrapping
//! addition).

use super::traits::{Accumulator, Element};
use super::vector::Lanes;

macro_rules! int_element {
    ($t:ty, $name:literal, $lanes:literal, $key:ty, $flip:expr) => {
        impl Element for $t {
            type Vector16 = Lanes<$t, $lanes>;
            type SumAcc = $t;
            type MeanAcc = f64;
            const NAME: &'static str = $name;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn to_sum(self) -> $t {
                self
            }
            #[inline(always)]
            fn to_mean(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            /// Flipping the sign bit of a signed integer maps `MIN..=MAX` onto `0..=MAX` of
            /// the unsigned type, in order.
            type Key = $key;
            #[inline(always)]
            fn key_nan_high(self) -> $key {
                (self as $key) ^ $flip
            }
            #[inline(always)]
            fn key_nan_low(self) -> $key {
                (self as $key) ^ $flip
            }
            #[inline(always)]
            fn from_key(key: $key) -> Self {
                (key ^ $flip) as $t
            }
        }

        impl Accumulator for $t {
            const ZERO: Self = 0;
            const EMPTY: Self = 0;
            const NAN_OR_ZERO: Self = 0;
            /// Wrapping: two's complement addition is associative, so every order of the
            /// additions gives the same result, the exact sum modulo 2^bits.
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn divide(self, count: usize) -> Self {
                self / count as $t
            }
            type Running = $t;
            const START: $t = 0;
            #[inline(always)]
            fn accumulate(running: $t, value: $t) -> $t {
                running.wrapping_add(value)
            }
            #[inline(always)]
            fn settle(running: $t) -> $t {
                running
            }
        }
    };
}
int_element!(i32, "i32", 4, u32, 1 << 31);
int_element!(u32, "u32", 4, u32, 0);
int_element!(i64, "i64", 2, u64, 1 << 63);
int_element!(u64, "u64", 2, u64, 0);
