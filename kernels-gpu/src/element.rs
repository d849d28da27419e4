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
//! Min, max and the arg operators compare elements by their *keys*: unsigned integers of the
//! type's width (`u32` for the 16- and 32-bit types, `u64` for the 64-bit ones) whose order is
//! the elements' order. For floats it is IEEE 754's `totalOrder` on the numbers, so
//! `-0.0 < +0.0` and `-inf` is the smallest number; every NaN gets the largest key
//! ([`Element::key_nan_high`], for max and argmax) or the smallest ([`Element::key_nan_low`],
//! for min and argmin), so that NaN wins and the first NaN wins among NaNs. Comparing keys is
//! one integer instruction, where comparing floats with these rules would take several.

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
    /// The key the order is compared by (see the module docs).
    type Key: Key;
    /// The element's key, every NaN above every number.
    fn key_nan_high(self) -> Self::Key;
    /// The element's key, every NaN below every number.
    fn key_nan_low(self) -> Self::Key;
    /// The element whose key is `key` (a NaN for the NaN keys).
    fn from_key(key: Self::Key) -> Self;
    /// Sixteen bytes of consecutive elements: what one vector load brings in.
    type Vector16: Vector16<Self>;
}

/// An order key: `u32` or `u64`.
pub trait Key: Copy + Ord + Send + Sync + 'static {
    const MIN: Self;
    const MAX: Self;
}
impl Key for u32 {
    const MIN: Self = 0;
    const MAX: Self = u32::MAX;
}
impl Key for u64 {
    const MIN: Self = 0;
    const MAX: Self = u64::MAX;
}

/// A type sums and means add up in: wrapping integer addition, or IEEE float addition.
pub trait Accumulator: Value + PartialEq {
    /// The identity of addition (`-0.0` for floats, so that `-0.0 + -0.0 + …` stays `-0.0`).
    const ZERO: Self;
    /// The sum of nothing: `+0.0` for floats (as numpy and PyTorch say), `0` for integers.
    const EMPTY: Self;
    /// The mean of nothing: NaN for floats (0/0), and 0 for the integers (never a mean's type).
    const NAN_OR_ZERO: Self;
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
    fn tree<A: Copy>(
        self,
        first: usize,
        lift: impl Fn(T, usize) -> A,
        combine: impl Fn(A, A) -> A,
    ) -> A;
    /// Calls `f(lane, element)` for every lane in order, written out one call per lane: every
    /// element stays in a register.
    fn each(self, f: impl FnMut(usize, T));
    /// The first lane whose `key` is the largest (`better(a, b)`: `a` beats `b`), and that key.
    fn best_lane<K: Copy>(self, key: impl Fn(T) -> K, better: impl Fn(K, K) -> bool) -> (usize, K);
    /// `f(k)` for every lane index `k`, in order, written out one call per lane: `k` is a
    /// constant in each call, so arrays indexed by it stay in registers and need no bounds
    /// check.
    fn for_lanes(f: impl FnMut(usize));
}

/// The vector of `K` elements of `T` (`K * size_of::<T>() == 16`).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Lanes<T, const K: usize>(pub [T; K]);

macro_rules! lanes {
    ($k:literal, [$($lane:literal)*], |$x:ident, $l:ident, $c:ident| $tree:expr) => {
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
            fn tree<A: Copy>(
                self,
                first: usize,
                lift: impl Fn(T, usize) -> A,
                $c: impl Fn(A, A) -> A,
            ) -> A {
                let $x = self.0;
                let $l = |k: usize| lift($x[k], first + k);
                $tree
            }
            #[inline(always)]
            fn each(self, mut f: impl FnMut(usize, T)) {
                // Written out, as `for_lanes`: a loop here is not always unrolled before
                // LLVM decides where the vector lives, and then it lives in local memory.
                $( f($lane, self.0[$lane]); )*
            }
            #[inline(always)]
            fn best_lane<K: Copy>(
                self,
                key: impl Fn(T) -> K,
                better: impl Fn(K, K) -> bool,
            ) -> (usize, K) {
                // Lane by lane, the strictly better one replacing: the first of equal keys stays.
                let mut best = (0, key(self.0[0]));
                let mut lane = 1;
                while lane < $k {
                    let candidate = key(self.0[lane]);
                    if better(candidate, best.1) {
                        best = (lane, candidate);
                    }
                    lane += 1;
                }
                best
            }
            #[inline(always)]
            fn for_lanes(mut f: impl FnMut(usize)) {
                $( f($lane); )*
            }
        }
    };
}
lanes!(2, [0 1], |x, l, c| c(l(0), l(1)));
lanes!(4, [0 1 2 3], |x, l, c| c(c(l(0), l(1)), c(l(2), l(3))));
lanes!(8, [0 1 2 3 4 5 6 7], |x, l, c| c(
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

/// `totalOrder` of an IEEE float's bits as an unsigned key of the same width, without a
/// branch: negative numbers get every bit flipped (a larger magnitude gives a smaller key),
/// positive ones their sign bit.
macro_rules! float_key {
    ($bits:expr, $unsigned:ty, $signed:ty) => {{
        let bits: $unsigned = $bits;
        let negative = ((bits as $signed) >> (<$unsigned>::BITS - 1)) as $unsigned;
        bits ^ (negative | (1 << (<$unsigned>::BITS - 1)))
    }};
}

/// The bits whose `float_key!` is `key`: keys with the top bit set were positive.
macro_rules! float_from_key {
    ($key:expr, $unsigned:ty) => {{
        let key: $unsigned = $key;
        let top = 1 << (<$unsigned>::BITS - 1);
        if key & top != 0 { key ^ top } else { !key }
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
            // 16-bit keys in a `u32`: registers are 32 bits wide anyway.
            type Key = u32;
            #[inline(always)]
            fn key_nan_high(self) -> u32 {
                if self.is_nan() {
                    u32::MAX
                } else {
                    u32::from(float_key!(self.0, u16, i16))
                }
            }
            #[inline(always)]
            fn key_nan_low(self) -> u32 {
                if self.is_nan() {
                    0
                } else {
                    u32::from(float_key!(self.0, u16, i16))
                }
            }
            #[inline(always)]
            fn from_key(key: u32) -> Self {
                // The NaN keys (0 and u32::MAX) map to the NaNs 0xffff and 0x7fff.
                $t(float_from_key!(key as u16, u16))
            }
        }
    };
}
half_element!(F16, "f16", 0xfc00, 0x7c00, 0x7c00);
half_element!(Bf16, "bf16", 0xff80, 0x7f80, 0x7f80);

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

#[cfg(test)]
mod tests {
    use super::*;

    fn ordered<T: Element + core::fmt::Debug>(values: &[T]) {
        for pair in values.windows(2) {
            assert!(pair[0].key_nan_high() < pair[1].key_nan_high(), "{pair:?}");
            assert!(pair[0].key_nan_low() < pair[1].key_nan_low(), "{pair:?}");
        }
        for &x in values {
            assert!(T::from_key(x.key_nan_high()) == x, "{x:?}");
        }
    }

    #[test]
    fn keys_follow_the_types_order_and_invert() {
        ordered(&[
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-45,
            3.0,
            f32::INFINITY,
        ]);
        ordered(&[f64::NEG_INFINITY, -1e300, -0.0, 0.0, 5e-324, f64::INFINITY]);
        ordered(&[i64::MIN, -1, 0, 1, i64::MAX]);
        ordered(&[i32::MIN, -1, 0, 1, i32::MAX]);
        ordered(&[0u32, 1, u32::MAX]);
        ordered(&[0u64, 1, u64::MAX]);
        // F16: -inf, -1, -0, +0, smallest subnormal, 1, +inf.
        ordered(&[0xfc00, 0xbc00, 0x8000, 0x0000, 0x0001, 0x3c00, 0x7c00].map(F16));
        ordered(&[0xff80, 0xbf80, 0x8000, 0x0000, 0x0001, 0x3f80, 0x7f80].map(Bf16));
        assert!(F16(0x7e00).is_nan() && !F16(0x7c00).is_nan());
        assert!(Bf16(0x7fc0).is_nan() && !Bf16(0xff80).is_nan());
        // Every NaN, whatever its sign and payload, is beyond every number, and turns back
        // into a NaN.
        for nan in [
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
            f32::from_bits(0xffff_ffff),
        ] {
            assert_eq!(nan.key_nan_high(), u32::MAX);
            assert_eq!(nan.key_nan_low(), 0);
            assert!(f32::from_key(nan.key_nan_high()).is_nan());
            assert!(f32::from_key(nan.key_nan_low()).is_nan());
        }
        assert_eq!(F16(0x7e00).key_nan_high(), u32::MAX);
        for nan in [Bf16(0x7fc0), Bf16(0xffc1)] {
            assert_eq!(nan.key_nan_high(), u32::MAX);
        }
        assert!(Bf16::from_key(u32::MAX).is_nan() && Bf16::from_key(0).is_nan());
        assert!(F16::from_key(u32::MAX).is_nan() && F16::from_key(0).is_nan());
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
            assert_eq!(
                got.to_bits(),
                value.to_bits(),
                "{bits:#06x}: {got} vs {value}"
            );
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
