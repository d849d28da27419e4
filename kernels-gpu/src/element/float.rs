//! `f32` and `f64`: [`Element`] (keys in IEEE `totalOrder`) and [`Accumulator`] (Neumaier's
//! compensated running sum).

use super::traits::{Accumulator, Element, first_lane_where};
use super::vector::Lanes;

/// One of [`Extremes`]' methods: on the GPU the PTX instruction `$op.$name` (register class
/// `$reg`); in the simulator the same rule spelled out, `self` kept where `$first(self, other)`
/// or where `other` is a NaN.
macro_rules! extreme_fn {
    ($method:ident, $op:literal, $t:ty, $name:literal, $reg:ident, $first:expr) => {
        #[inline(always)]
        fn $method(self, other: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                let picked: $t;
                // SAFETY: a register operation; touches no memory.
                unsafe {
                    core::arch::asm!(concat!($op, ".", $name, " {0}, {1}, {2};"), out($reg) picked, in($reg) self, in($reg) other, options(pure, nomem, nostack))
                };
                picked
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let first: fn($t, $t) -> bool = $first;
                if other.is_nan() || first(self, other) { self } else { other }
            }
        }
    };
}

/// `Element::first_lane_holding` for a float type: the first lane holding a value found by its
/// bits (a NaN target: the first NaN), one comparison a lane where a key is five instructions
/// and a comparison.
macro_rules! first_lane_by_bits {
    ($t:ty, $lanes:literal) => {
        #[inline(always)]
        fn first_lane_holding<const K: usize>(
            vectors: &[Lanes<$t, $lanes>; K],
            value: $t,
        ) -> usize {
            if value.is_nan() {
                first_lane_where(vectors, |lane: $t| lane.is_nan())
            } else {
                let bits = value.to_bits();
                first_lane_where(vectors, |lane: $t| lane.to_bits() == bits)
            }
        }
    };
}

/// The fast paths of max (or min) for a float type whose `by_maximum` is `true` (`f32`; with
/// `false`, nothing: `f64` keeps the trait's answers, no fast key and keys compared):
/// - `$group` (`largest_key`): the extreme of every lane of a group by `$pick` (`max.f32`, one
///   instruction a lane where a key is five), a NaN's key (`$nan_key`) if any lane is one;
/// - `$lane` (`lane_largest_key`): the same down one lane, a column's group of loads;
/// - `$of` (`max_of`): `$pick` unless either operand is a NaN, which then is the result (`a`
///   first). The same bits as comparing keys: equal keys are equal bits, and `max.f32` orders
///   `+0.0` above `-0.0` as the keys do; five instructions, not twelve.
macro_rules! float_extremes {
    (false; $($rest:tt)*) => {};
    (true; $t:ty, $bits:ty, $signed:ty, $lanes:literal;
     $group:ident, $lane:ident, $of:ident, $pick:ident, $nan_key:expr) => {
        #[inline(always)]
        fn $group<const K: usize>(vectors: &[Lanes<$t, $lanes>; K]) -> Option<$bits> {
            let (extreme, nan) = group_extreme(vectors, <$t>::$pick);
            Some(key_or_nan!(extreme, nan, $nan_key, $bits, $signed))
        }
        #[inline(always)]
        fn $lane<const K: usize>(vectors: &[Lanes<$t, $lanes>; K], lane: usize) -> Option<$bits> {
            let (extreme, nan) = lane_extreme(vectors, lane, <$t>::$pick);
            Some(key_or_nan!(extreme, nan, $nan_key, $bits, $signed))
        }
        #[inline(always)]
        fn $of(a: $t, b: $t) -> $t {
            if a.is_nan() {
                a
            } else if b.is_nan() {
                b
            } else {
                a.$pick(b)
            }
        }
    };
}

/// The key of `extreme`, or `nan_key` where a lane was a NaN (`extreme` is then a number the
/// NaN was passed over for).
macro_rules! key_or_nan {
    ($extreme:expr, $nan:expr, $nan_key:expr, $bits:ty, $signed:ty) => {
        if $nan {
            $nan_key
        } else {
            float_key!($extreme.to_bits(), $bits, $signed)
        }
    };
}

macro_rules! float_element {
    ($t:ty, $name:literal, $bits:ty, $signed:ty, $lanes:literal, $mean:ty, $by_maximum:tt, $reg:ident) => {
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
            float_extremes!($by_maximum; $t, $bits, $signed, $lanes;
                largest_key, lane_largest_key, max_of, max_num, <$bits>::MAX);
            float_extremes!($by_maximum; $t, $bits, $signed, $lanes;
                smallest_key, lane_smallest_key, min_of, min_num, 0);
            first_lane_by_bits!($t, $lanes);
        }

        impl Extremes for $t {
            extreme_fn!(max_num, "max", $t, $name, $reg, |a: $t, b: $t| a > b
                || (a == b && a.is_sign_positive()));
            extreme_fn!(min_num, "min", $t, $name, $reg, |a: $t, b: $t| a < b
                || (a == b && a.is_sign_negative()));
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
// `by_maximum` (the second-to-last argument): whether max and min go by `max`/`min` and a NaN
// test rather than by keys (`float_extremes!`): a group's best key (`Element::largest_key`;
// their arg twins keep the tree, `Element::ARG_SKIPS_GROUPS`, but in a block or a warp per
// row), a column lane's
// (`lane_largest_key`) and the combine (`max_of`). Not for `f64`: its two lanes a vector save
// little, its whole-array argmax then needed 69 registers where 64 let blocks of 1024 threads
// run (47 by keys), and a first cut of its combine by `max.f64` took more registers
// (`rows_warp_f64_max` 42 → 48, `columns_narrow_f64_max` 40 → 53; not timed). The last: the
// `asm!` register class of `max` and `min`.
float_element!(f32, "f32", u32, i32, 4, f32, true, reg32);
float_element!(f64, "f64", u64, i64, 2, f64, false, reg64);

/// PTX's `max` and `min` of two floats (`max.f32`, `max.f64`: one instruction from sm_70 on,
/// written out in `asm!`): the larger (smaller) number, `+0.0` above `-0.0` ("+0.0 > -0.0
/// here", the PTX ISA says), a NaN passed over for the other operand. Not `f32::max`: Rust
/// and LLVM let `maxnum` return either zero (it is `max.f32` today, but nothing promises it).
/// The simulator spells the same rule out.
pub(super) trait Extremes: Copy {
    fn max_num(self, other: Self) -> Self;
    fn min_num(self, other: Self) -> Self;
}

/// The extreme lane of `vectors` by `pick` (`max_num` or `min_num`: lane by lane down the
/// vectors, then across the lanes, so that no chain of dependent instructions is long), and
/// whether any lane is a NaN.
#[inline(always)]
pub(super) fn group_extreme<T: Extremes + PartialEq, const L: usize, const K: usize>(
    vectors: &[Lanes<T, L>; K],
    pick: impl Fn(T, T) -> T,
) -> (T, bool) {
    let mut nan = false;
    for vector in vectors {
        nan = or_any_nan(nan, &vector.0);
    }
    let mut best = vectors[0].0;
    for vector in &vectors[1..] {
        for (b, &x) in best.iter_mut().zip(vector.0.iter()) {
            *b = pick(*b, x);
        }
    }
    (pick_tree(best, pick), nan)
}

/// Lane `lane` of `vectors` by `pick` (`max_num` or `min_num`), and whether any of them is a
/// NaN: a column's group of loads.
#[inline(always)]
pub(super) fn lane_extreme<T: Extremes + PartialEq, const L: usize, const K: usize>(
    vectors: &[Lanes<T, L>; K],
    lane: usize,
    pick: impl Fn(T, T) -> T,
) -> (T, bool) {
    let values: [T; K] = core::array::from_fn(|j| vectors[j].0[lane]);
    (pick_tree(values, pick), or_any_nan(false, &values))
}

/// `nan`, or whether any of `values` is a NaN, tested two an instruction (`setp.nan` takes two
/// operands), each pair into one running flag.
#[inline(always)]
fn or_any_nan<T: PartialEq, const N: usize>(mut nan: bool, values: &[T; N]) -> bool {
    const { assert!(N.is_multiple_of(2), "values are tested for NaNs in pairs") };
    let mut i = 0;
    while i + 1 < N {
        #[allow(clippy::eq_op)] // `x != x`: x is a NaN.
        let pair = (values[i] != values[i]) | (values[i + 1] != values[i + 1]);
        nan |= pair;
        i += 2;
    }
    nan
}

/// `values` folded by `pick` as a halving tree: no chain of dependent picks longer than
/// `log2(N)`.
#[inline(always)]
fn pick_tree<T: Copy, const N: usize>(mut values: [T; N], pick: impl Fn(T, T) -> T) -> T {
    const { assert!(N.is_power_of_two(), "a tree halves a power of two") };
    let mut width = N;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            values[i] = pick(values[i], values[i + width]);
        }
    }
    values[0]
}

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
