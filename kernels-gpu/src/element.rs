//! What the kernels read: the element types, and the [`Value`]s that move between threads.
//!
//! - [`Element`]: a type the input may hold — `f32`, `f64`, `i32`, `u32`, `i64`, `u64`, and the
//!   16-bit floats [`F16`] (IEEE binary16) and [`Bf16`] (bfloat16). Sealed: the entry points are
//!   generated for exactly these.
//! - [`Value`]: anything a thread keeps in a register, stores to shared or global memory, and
//!   hands to another lane through a warp shuffle: every element, and the operators'
//!   accumulators (for example the `(index, value)` pair of an arg-max, see [`crate::ops`]).
//!
//! # Order
//! Min, max and the arg operators compare elements by [`Element::order_key`]: a `u64` whose
//! unsigned order is the element's order. For floats it is IEEE 754's `totalOrder` on the
//! numbers, so `-0.0 < +0.0` and `-inf` is the smallest; NaN has no key, and each operator says
//! where it goes (see [`crate::ops`]).

/// A value that lives in registers, shared and global memory, and moves between the lanes of
/// a warp as 32-bit words.
pub trait Value: Copy + Send + Sync + 'static {
    /// `[u32; N]`: the value's bits, split for `shfl.sync` (which moves 32 bits at a time).
    type Words: Words;
    fn to_words(self) -> Self::Words;
    fn from_words(words: Self::Words) -> Self;
}

/// `[u32; N]` for the `N` a [`Value`] needs.
pub trait Words: Copy + AsRef<[u32]> + AsMut<[u32]> {
    const ZERO: Self;
}
impl<const N: usize> Words for [u32; N] {
    const ZERO: Self = [0; N];
}

/// An element type the kernels reduce.
pub trait Element: Value + PartialEq + sealed::Sealed {
    /// Name in kernel entry points, on the command line and in `.npy` headers' terms.
    const NAME: &'static str;
    /// The smallest and the largest value (for floats `-inf` and `+inf`): the identities of
    /// max and min.
    const LOWEST: Self;
    const HIGHEST: Self;
    /// What a sum or a mean of these adds up in (`f32` for the 16-bit floats, see [`crate::ops`]).
    type SumAcc: Accumulator;
    type MeanAcc: Accumulator;
    fn to_sum(self) -> Self::SumAcc;
    fn to_mean(self) -> Self::MeanAcc;
    /// NaN (floats only).
    fn is_nan(self) -> bool;
    /// The element's place in its type's order, as an unsigned number (see the module docs).
    /// Meaningless for NaN.
    fn order_key(self) -> u64;
    /// Sixteen bytes of consecutive elements: what one vector load brings in.
    type Vector16: Vector16<Self>;
}

/// A type sums and means add up in: wrapping integer addition, or IEEE float addition.
pub trait Accumulator: Value + PartialEq {
    /// The identity of addition (`-0.0` for floats, so that `-0.0 + -0.0 + …` stays `-0.0`).
    const ZERO: Self;
    fn add(self, other: Self) -> Self;
    /// `self / count` in this type (a mean).
    fn divide(self, count: usize) -> Self;
    /// A running sum that a thread adds many group sums into (see [`crate::ops::Sum`]).
    type Running: Copy;
    const START: Self::Running;
    fn accumulate(running: Self::Running, value: Self) -> Self::Running;
    fn settle(running: Self::Running) -> Self;
}

/// Sixteen bytes of elements, 16-byte aligned, so a load of it is one `ld.global.v4.b32` or
/// `ld.global.v2.b64`.
pub trait Vector16<T>: Copy {
    /// Elements in the vector.
    const LANES: usize;
    fn lanes(&self) -> &[T];
    /// The lanes lifted (lane `k` is element `first + k` of the input) and combined as a tree,
    /// `(l0⊕l1)⊕(l2⊕l3)`: written out for each width, so every value stays in a register.
    fn tree<A: Copy>(self, first: usize, lift: impl Fn(T, usize) -> A, combine: impl Fn(A, A) -> A) -> A;
}

/// The vector of `K` elements of `T` (`K * size_of::<T>() == 16`).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Lanes<T, const K: usize>(pub [T; K]);

macro_rules! lanes {
    ($k:literal, |$x:ident, $l:ident, $c:ident| $tree:expr) => {
        impl<T: Copy> Vector16<T> for Lanes<T, $k> {
            const LANES: usize = {
                assert!($k * size_of::<T>() == 16, "a vector is 16 bytes");
                $k
            };
            #[inline(always)]
            fn lanes(&self) -> &[T] {
                &self.0
            }
            #[inline(always)]
            fn tree<A: Copy>(self, first: usize, lift: impl Fn(T, usize) -> A, $c: impl Fn(A, A) -> A) -> A {
                let $x = self.0;
                let $l = |k: usize| lift($x[k], first + k);
                $tree
            }
        }
    };
}
lanes!(2, |x, l, c| c(l(0), l(1)));
lanes!(4, |x, l, c| c(c(l(0), l(1)), c(l(2), l(3))));
lanes!(8, |x, l, c| c(
    c(c(l(0), l(1)), c(l(2), l(3))),
    c(c(l(4), l(5)), c(l(6), l(7)))
));

/// IEEE 754 binary16, as its bits. Sums and means add it up in `f32`; min, max and the arg
/// operators return it unchanged.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct F16(pub u16);

/// bfloat16 (the top half of an `f32`), as its bits. Sums and means add it up in `f32`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bf16(pub u16);

impl F16 {
    /// The exact `f32` of this binary16 (every binary16 is an `f32`).
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        crate::device::f16_to_f32(self.0)
    }
}

impl Bf16 {
    /// The exact `f32` of this bfloat16: its bits are the top half of the `f32`'s.
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

/// `f16 → f32` in software, exactly (subnormals, infinities and NaN payloads included): what
/// the simulator runs, and the GPU's `cvt.f32.f16` computes in one instruction.
pub fn f16_bits_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits & 0x8000) << 16;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let magnitude = match (exponent, mantissa) {
        (0, 0) => 0,
        // Subnormal: mantissa · 2^-24; normalise it into an f32 (which has room for it).
        (0, m) => {
            let shift = m.leading_zeros() - 21; // brings bit 10 to the top of the mantissa
            let m = (m << shift) & 0x3ff;
            ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1f, m) => 0x7f80_0000 | (m << 13),
        (e, m) => ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
    impl Sealed for super::F16 {}
    impl Sealed for super::Bf16 {}
}

macro_rules! value_32 {
    ($($t:ty),*) => {$(
        impl Value for $t {
            type Words = [u32; 1];
            #[inline(always)]
            fn to_words(self) -> [u32; 1] {
                [self.to_bits32()]
            }
            #[inline(always)]
            fn from_words(words: [u32; 1]) -> Self {
                Self::from_bits32(words[0])
            }
        }
    )*};
}
macro_rules! value_64 {
    ($($t:ty),*) => {$(
        impl Value for $t {
            type Words = [u32; 2];
            #[inline(always)]
            fn to_words(self) -> [u32; 2] {
                let bits = self.to_bits64();
                [bits as u32, (bits >> 32) as u32]
            }
            #[inline(always)]
            fn from_words(words: [u32; 2]) -> Self {
                Self::from_bits64(u64::from(words[0]) | (u64::from(words[1]) << 32))
            }
        }
    )*};
}

/// Bit casts the [`Value`] impls are written with.
trait Bits32 {
    fn to_bits32(self) -> u32;
    fn from_bits32(bits: u32) -> Self;
}
trait Bits64 {
    fn to_bits64(self) -> u64;
    fn from_bits64(bits: u64) -> Self;
}
impl Bits32 for f32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}
impl Bits32 for i32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        bits as i32
    }
}
impl Bits32 for u32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        bits
    }
}
impl Bits32 for F16 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        u32::from(self.0)
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        F16(bits as u16)
    }
}
impl Bits32 for Bf16 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        u32::from(self.0)
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        Bf16(bits as u16)
    }
}
impl Bits64 for f64 {
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits64(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}
impl Bits64 for i64 {
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_bits64(bits: u64) -> Self {
        bits as i64
    }
}
impl Bits64 for u64 {
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_bits64(bits: u64) -> Self {
        bits
    }
}
value_32!(f32, i32, u32, F16, Bf16);
value_64!(f64, i64, u64);

/// `totalOrder` of an IEEE float's bits as an unsigned key, without a branch: negative numbers
/// get every bit flipped (a larger magnitude gives a smaller key), positive ones their sign bit.
macro_rules! float_key {
    ($bits:expr, $unsigned:ty, $signed:ty) => {{
        let bits: $unsigned = $bits;
        let negative = ((bits as $signed) >> (<$unsigned>::BITS - 1)) as $unsigned;
        (bits ^ (negative | (1 << (<$unsigned>::BITS - 1)))) as u64
    }};
}

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
            #[inline(always)]
            fn order_key(self) -> u64 {
                float_key!(self.to_bits(), $bits, $signed)
            }
        }

        impl Accumulator for $t {
            const ZERO: Self = -0.0;
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

macro_rules! half_element {
    ($t:ident, $name:literal, $lowest:literal, $highest:literal, $exponent_mask:literal) => {
        impl Element for $t {
            type Vector16 = Lanes<$t, 8>;
            type SumAcc = f32;
            type MeanAcc = f32;
            const NAME: &'static str = $name;
            const LOWEST: Self = $t($lowest);
            const HIGHEST: Self = $t($highest);
            #[inline(always)]
            fn to_sum(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn to_mean(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.0 & 0x7fff > $exponent_mask
            }
            #[inline(always)]
            fn order_key(self) -> u64 {
                float_key!(self.0, u16, i16)
            }
        }
    };
}
half_element!(F16, "f16", 0xfc00, 0x7c00, 0x7c00);
half_element!(Bf16, "bf16", 0xff80, 0x7f80, 0x7f80);

macro_rules! int_element {
    ($t:ty, $name:literal, $lanes:literal, $as_u64:expr) => {
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
            #[inline(always)]
            fn order_key(self) -> u64 {
                $as_u64(self)
            }
        }

        impl Accumulator for $t {
            const ZERO: Self = 0;
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
/// Signed keys: widened to `i64`, then the sign bit flipped, which maps `i64::MIN..=i64::MAX`
/// onto `0..=u64::MAX` in order.
const SIGNED_KEY: u64 = 1 << 63;
int_element!(i32, "i32", 4, |x: i32| (x as i64 as u64) ^ SIGNED_KEY);
int_element!(u32, "u32", 4, |x: u32| x as u64);
int_element!(i64, "i64", 2, |x: i64| (x as u64) ^ SIGNED_KEY);
int_element!(u64, "u64", 2, |x: u64| x);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keys_follow_the_types_order() {
        let floats = [f32::NEG_INFINITY, -2.5, -0.0, 0.0, 1e-45, 3.0, f32::INFINITY];
        for pair in floats.windows(2) {
            assert!(pair[0].order_key() < pair[1].order_key(), "{pair:?}");
        }
        let ints = [i64::MIN, -1, 0, 1, i64::MAX];
        for pair in ints.windows(2) {
            assert!(pair[0].order_key() < pair[1].order_key(), "{pair:?}");
        }
        let i32s = [i32::MIN, -1, 0, 1, i32::MAX];
        for pair in i32s.windows(2) {
            assert!(pair[0].order_key() < pair[1].order_key(), "{pair:?}");
        }
        // F16: -inf, -1, -0, +0, smallest subnormal, 1, +inf.
        let halves = [0xfc00, 0xbc00, 0x8000, 0x0000, 0x0001, 0x3c00, 0x7c00].map(F16);
        for pair in halves.windows(2) {
            assert!(pair[0].order_key() < pair[1].order_key(), "{pair:?}");
        }
        assert!(F16(0x7e00).is_nan() && !F16(0x7c00).is_nan());
        assert!(Bf16(0x7fc0).is_nan() && !Bf16(0xff80).is_nan());
    }

    #[test]
    fn f16_conversion_is_exact() {
        for (bits, value) in [
            (0x3c00u16, 1.0f32),
            (0xc000, -2.0),
            (0x7bff, 65504.0),
            (0x0001, 2f32.powi(-24)),
            (0x03ff, 1023.0 * 2f32.powi(-24)),
            (0x0400, 2f32.powi(-14)),
            (0x8000, -0.0),
            (0x7c00, f32::INFINITY),
        ] {
            let got = f16_bits_to_f32(bits);
            assert_eq!(got.to_bits(), value.to_bits(), "{bits:#06x}: {got} vs {value}");
        }
        assert!(f16_bits_to_f32(0x7e00).is_nan());
        assert_eq!(Bf16(0x3f80).to_f32(), 1.0);
    }

    #[test]
    fn compensated_sums_keep_what_plain_sums_lose() {
        let mut running = <f32 as Accumulator>::START;
        let mut plain = 0.0f32;
        for _ in 0..1000 {
            for x in [1.0f32, 1e-8] {
                running = f32::accumulate(running, x);
                plain += x;
            }
        }
        let settled = f32::settle(running);
        assert_eq!(plain, 1000.0);
        assert!((f64::from(settled) - 1000.00001).abs() < 1e-4, "{settled}");
        // Overflow stays infinite, and -0.0 stays -0.0.
        let overflow = (0..4).fold(f32::START, |r, _| f32::accumulate(r, f32::MAX));
        assert_eq!(f32::settle(overflow), f32::INFINITY);
        let zeros = (0..3).fold(f32::START, |r, _| f32::accumulate(r, -0.0));
        assert!(f32::settle(zeros).is_sign_negative());
    }
}
