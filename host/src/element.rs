//! What the CLI, the checker and the benchmark need of an element type beyond what the library
//! needs, and the dispatch from run-time names to the generic code.

use half::{bf16, f16};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use reduce_rs::Element;
use std::cmp::Ordering;
use std::fmt;

pub use reduce_rs::{DType, OpKind};

/// An element type as the host generates, checks and prints it.
pub trait HostElement: Element + fmt::Display {
    /// Unit roundoff of the type sums are added up in (2^-24 for `f32`, `f16` and `bf16`, which
    /// add up in `f32`; 2^-53 for `f64`); `None` for integers, whose sums are exact.
    const SUM_ROUNDOFF: Option<f64>;
    /// The largest finite value of the sum's type (floats).
    const SUM_MAX: f64;
    /// Uniformly random: floats in [-1, 1), integers over their whole range.
    fn random(rng: &mut ChaCha8Rng) -> Self;
    /// Floats at the bottom of the range they are summed in (see `Pattern::Tiny`); integers:
    /// as [`HostElement::random`].
    fn tiny(rng: &mut ChaCha8Rng) -> Self;
    /// `small` as this type (small integers are exact in every type).
    fn from_small(small: i32) -> Self;
    /// The value, exactly for every type but the 64-bit integers beyond 2^53.
    fn to_f64(self) -> f64;
    /// Integers: the exact value.
    fn to_i128(self) -> Option<i128>;
    fn is_nan(self) -> bool;
    /// The order of two non-NaN values, with `-0.0 < +0.0`: written on the host side from the
    /// values, independently of the kernels' bit keys.
    fn order(self, other: Self) -> Ordering;
    /// Bitwise equality (NaN equals NaN with the same bits, `-0.0` differs from `+0.0`).
    fn same_bits(self, other: Self) -> bool;
    /// The integer sum `value` wrapped into this type, as the kernels' wrapping sums leave it.
    fn wrap_sum(value: i128) -> Self::Sum;
    /// `value` as the sum's type (floats: rounded to nearest).
    fn sum_from_f64(value: f64) -> Self::Sum;
    fn sum_to_f64(sum: Self::Sum) -> f64;
    fn mean_to_f64(mean: Self::Mean) -> f64;
    fn sum_same_bits(a: Self::Sum, b: Self::Sum) -> bool;
}

fn float_order(a: f64, b: f64) -> Ordering {
    match a.partial_cmp(&b) {
        Some(Ordering::Equal) => a.is_sign_positive().cmp(&b.is_sign_positive()),
        Some(order) => order,
        None => Ordering::Equal,
    }
}

macro_rules! host_float {
    ($t:ty, $sum:ty, $u:expr, $from:expr, $to:expr, $bits:ident, tiny: $top:literal..$bottom:literal) => {
        impl HostElement for $t {
            const SUM_ROUNDOFF: Option<f64> = Some($u);
            const SUM_MAX: f64 = <$sum>::MAX as f64;
            fn random(rng: &mut ChaCha8Rng) -> Self {
                $from(rng.random_range(-1.0f64..1.0))
            }
            fn tiny(rng: &mut ChaCha8Rng) -> Self {
                // [-1, 1) times 2^top·2^-k: two steps, as 2^-1075 is no f64.
                let k = rng.random_range(0..$top - $bottom);
                let x = rng.random_range(-1.0f64..1.0) * 2f64.powi($top);
                $from(x * 2f64.powi(-k))
            }
            fn from_small(small: i32) -> Self {
                $from(f64::from(small))
            }
            fn to_f64(self) -> f64 {
                $to(self)
            }
            fn to_i128(self) -> Option<i128> {
                None
            }
            fn is_nan(self) -> bool {
                $to(self).is_nan()
            }
            fn order(self, other: Self) -> Ordering {
                float_order($to(self), $to(other))
            }
            fn same_bits(self, other: Self) -> bool {
                self.$bits() == other.$bits()
            }
            fn wrap_sum(value: i128) -> $sum {
                value as $sum
            }
            fn sum_from_f64(value: f64) -> $sum {
                value as $sum
            }
            fn sum_to_f64(sum: $sum) -> f64 {
                sum as f64
            }
            fn mean_to_f64(mean: Self::Mean) -> f64 {
                mean as f64
            }
            fn sum_same_bits(a: $sum, b: $sum) -> bool {
                a.to_bits() == b.to_bits()
            }
        }
    };
}
host_float!(
    f32,
    f32,
    f32::EPSILON as f64 / 2.0,
    |x: f64| x as f32,
    |x: f32| x as f64,
    to_bits,
    tiny: -119..-150
);
host_float!(
    f64,
    f64,
    f64::EPSILON / 2.0,
    |x: f64| x,
    |x: f64| x,
    to_bits,
    tiny: -1000..-1075
);
host_float!(
    f16,
    f32,
    f32::EPSILON as f64 / 2.0,
    f16::from_f64,
    f16::to_f64,
    to_bits,
    tiny: -14..-25
);
host_float!(
    bf16,
    f32,
    f32::EPSILON as f64 / 2.0,
    bf16::from_f64,
    bf16::to_f64,
    to_bits,
    tiny: -119..-134
);

macro_rules! host_int {
    ($t:ty) => {
        impl HostElement for $t {
            const SUM_ROUNDOFF: Option<f64> = None;
            const SUM_MAX: f64 = <$t>::MAX as f64;
            fn random(rng: &mut ChaCha8Rng) -> Self {
                rng.random()
            }
            fn tiny(rng: &mut ChaCha8Rng) -> Self {
                rng.random()
            }
            fn from_small(small: i32) -> Self {
                small as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_i128(self) -> Option<i128> {
                Some(self as i128)
            }
            fn is_nan(self) -> bool {
                false
            }
            fn order(self, other: Self) -> Ordering {
                self.cmp(&other)
            }
            fn same_bits(self, other: Self) -> bool {
                self == other
            }
            fn wrap_sum(value: i128) -> $t {
                value as $t
            }
            fn sum_from_f64(value: f64) -> $t {
                value as $t
            }
            fn sum_to_f64(sum: $t) -> f64 {
                sum as f64
            }
            fn mean_to_f64(mean: f64) -> f64 {
                mean
            }
            fn sum_same_bits(a: $t, b: $t) -> bool {
                a == b
            }
        }
    };
}
host_int!(i32);
host_int!(u32);
host_int!(i64);
host_int!(u64);

/// Calls `$f::<T>($args…)` with `T` the element type `$dtype` names.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $f:ident $(::<$($extra:ty),*>)? ( $($args:expr),* $(,)? )) => {{
        use $crate::element::DType;
        match $dtype {
            DType::F32 => $f::<f32 $(, $($extra),*)?>($($args),*),
            DType::F64 => $f::<f64 $(, $($extra),*)?>($($args),*),
            DType::I32 => $f::<i32 $(, $($extra),*)?>($($args),*),
            DType::U32 => $f::<u32 $(, $($extra),*)?>($($args),*),
            DType::I64 => $f::<i64 $(, $($extra),*)?>($($args),*),
            DType::U64 => $f::<u64 $(, $($extra),*)?>($($args),*),
            DType::F16 => $f::<half::f16 $(, $($extra),*)?>($($args),*),
            DType::Bf16 => $f::<half::bf16 $(, $($extra),*)?>($($args),*),
        }
    }};
}

/// Calls `$f::<T, O>($args…)` for the run-time element type and operation.
#[macro_export]
macro_rules! with_dtype_and_op {
    ($dtype:expr, $op:expr, $f:ident ( $($args:expr),* $(,)? )) => {{
        use reduce_rs::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};
        use $crate::element::OpKind;
        match $op {
            OpKind::Sum => $crate::with_dtype!($dtype, $f::<Sum>($($args),*)),
            OpKind::Min => $crate::with_dtype!($dtype, $f::<Min>($($args),*)),
            OpKind::Max => $crate::with_dtype!($dtype, $f::<Max>($($args),*)),
            OpKind::ArgMin => $crate::with_dtype!($dtype, $f::<ArgMin>($($args),*)),
            OpKind::ArgMax => $crate::with_dtype!($dtype, $f::<ArgMax>($($args),*)),
            OpKind::Mean => $crate::with_dtype!($dtype, $f::<Mean>($($args),*)),
        }
    }};
}
