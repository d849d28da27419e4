//! What a reduction reduces: the element types (`f32`, `f64`, `i32`, `u32`) and the operators
//! (`Sum`, `Min`, `Max`). Kernels are generic over both; the entry points are monomorphized.
//!
//! # Semantics (the CPU reference in the host follows the same rules)
//! - Integer `Sum` wraps in the element type (two's complement). Wrapping addition is
//!   associative, so every summation order gives the same result: the exact sum modulo 2^32.
//! - Float `Sum` is IEEE addition; its identity is `-0.0` (so an all-`-0.0` input sums to
//!   `-0.0`), a NaN anywhere gives NaN, `+inf + -inf` gives NaN.
//! - Float `Min`/`Max` are IEEE 754-2019 `minimum`/`maximum`: a NaN anywhere gives NaN, and
//!   `-0.0 < +0.0`. The result is exact and independent of the order.

/// An element type the kernels reduce. Sealed: the entry points are generated for exactly
/// these four types.
pub trait Element: Copy + PartialEq + Send + Sync + 'static + sealed::Sealed {
    /// Name used in kernel entry points and on the command line.
    const NAME: &'static str;
    /// Largest and smallest values, the identities of `Min` and `Max`.
    const MAX: Self;
    const MIN: Self;
    /// The identity of addition (`-0.0` for floats).
    const ADD_IDENTITY: Self;
    fn add(self, other: Self) -> Self;
    fn minimum(self, other: Self) -> Self;
    fn maximum(self, other: Self) -> Self;
    /// Bit pattern, widened to 64 bits, for moving the value through a warp shuffle.
    fn to_bits64(self) -> u64;
    fn from_bits64(bits: u64) -> Self;
    /// Sixteen bytes of consecutive elements: what one vector load brings in.
    type Vector16: Vector16<Self>;
}

/// Sixteen bytes of elements, 16-byte aligned, so a load of it is one `ld.global.v4.b32` or
/// `ld.global.v2.b64`.
pub trait Vector16<T>: Copy {
    /// Elements in the vector.
    const LANES: usize;
    fn lanes(&self) -> &[T];
}

/// The vector of `K` elements of `T` (`K * size_of::<T>() == 16`).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Lanes<T, const K: usize>(pub [T; K]);

impl<T: Copy, const K: usize> Vector16<T> for Lanes<T, K> {
    const LANES: usize = {
        assert!(K * size_of::<T>() == 16, "a vector is 16 bytes");
        K
    };
    #[inline(always)]
    fn lanes(&self) -> &[T] {
        &self.0
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
}

macro_rules! float_element {
    ($t:ty, $name:literal, $bits:ty, $lanes:literal) => {
        impl Element for $t {
            type Vector16 = Lanes<$t, $lanes>;
            const NAME: &'static str = $name;
            const MAX: Self = <$t>::INFINITY;
            const MIN: Self = <$t>::NEG_INFINITY;
            const ADD_IDENTITY: Self = -0.0;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn minimum(self, other: Self) -> Self {
                <$t>::minimum(self, other)
            }
            #[inline(always)]
            fn maximum(self, other: Self) -> Self {
                <$t>::maximum(self, other)
            }
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
        }
    };
}
float_element!(f32, "f32", u32, 4);
float_element!(f64, "f64", u64, 2);

macro_rules! int_element {
    ($t:ty, $name:literal, $bits:ty, $lanes:literal) => {
        impl Element for $t {
            type Vector16 = Lanes<$t, $lanes>;
            const NAME: &'static str = $name;
            const MAX: Self = <$t>::MAX;
            const MIN: Self = <$t>::MIN;
            const ADD_IDENTITY: Self = 0;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn minimum(self, other: Self) -> Self {
                Ord::min(self, other)
            }
            #[inline(always)]
            fn maximum(self, other: Self) -> Self {
                Ord::max(self, other)
            }
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                self as $bits as u64
            }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self {
                bits as $bits as $t
            }
        }
    };
}
int_element!(i32, "i32", u32, 4);
int_element!(u32, "u32", u32, 4);

/// A reduction operator: associative and commutative, with an identity that pads the
/// tails of partial blocks.
pub trait ReduceOp<T: Element>: Copy + Send + Sync + 'static {
    const NAME: &'static str;
    const IDENTITY: T;
    fn combine(a: T, b: T) -> T;
}

/// `a + b` (wrapping for integers).
#[derive(Clone, Copy, Debug)]
pub struct Sum;
/// The smallest element (NaN if any element is NaN).
#[derive(Clone, Copy, Debug)]
pub struct Min;
/// The largest element (NaN if any element is NaN).
#[derive(Clone, Copy, Debug)]
pub struct Max;

impl<T: Element> ReduceOp<T> for Sum {
    const NAME: &'static str = "sum";
    const IDENTITY: T = T::ADD_IDENTITY;
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.add(b)
    }
}
impl<T: Element> ReduceOp<T> for Min {
    const NAME: &'static str = "min";
    const IDENTITY: T = T::MAX;
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.minimum(b)
    }
}
impl<T: Element> ReduceOp<T> for Max {
    const NAME: &'static str = "max";
    const IDENTITY: T = T::MIN;
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.maximum(b)
    }
}
