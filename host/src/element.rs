//! Element types and operators as the command line names them, and the dispatch from those
//! names to the generic code (`with_element_and_op!`).

use kernels_gpu::element::Element;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DType {
    F32,
    F64,
    I32,
    U32,
}

impl DType {
    pub const ALL: [DType; 4] = [DType::F32, DType::F64, DType::I32, DType::U32];

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::U32 => "u32",
        }
    }

    pub fn size(self) -> usize {
        match self {
            DType::F64 => 8,
            _ => 4,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OpKind {
    Sum,
    Min,
    Max,
}

impl OpKind {
    pub const ALL: [OpKind; 3] = [OpKind::Sum, OpKind::Min, OpKind::Max];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Sum => "sum",
            OpKind::Min => "min",
            OpKind::Max => "max",
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the host needs of an element type beyond what the kernels need.
pub trait HostElement:
    Element
    + cudarc::driver::DeviceRepr
    + cudarc::driver::ValidAsZeroBits
    + fmt::Debug
    + fmt::Display
    + Default
{
    const DTYPE: DType;
    /// Unit roundoff (2^-24 for f32, 2^-53 for f64); `None` for integers, whose results are exact.
    const UNIT_ROUNDOFF: Option<f64>;
    fn to_f64(self) -> f64;
    /// For integers, the exact value; the reference sums these in `i128`.
    fn to_i128(self) -> i128;
    /// `value` wrapped into the type, as the kernels' wrapping sum leaves it.
    fn wrap_i128(value: i128) -> Self;
    /// Bitwise equality (so NaN equals NaN and -0.0 differs from +0.0).
    fn same_bits(self, other: Self) -> bool {
        self.to_bits64() == other.to_bits64()
    }
    fn is_nan(self) -> bool;
    /// `small` as this type (small integers, exact in every type).
    fn from_small(small: i32) -> Self;
    /// `value` rounded to this type (to nearest for floats, saturating for integers).
    fn from_f64_rounded(value: f64) -> Self;
}

macro_rules! host_float {
    ($t:ty, $dtype:ident, $u:expr) => {
        impl HostElement for $t {
            const DTYPE: DType = DType::$dtype;
            const UNIT_ROUNDOFF: Option<f64> = Some($u);
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_i128(self) -> i128 {
                self as i128
            }
            fn wrap_i128(value: i128) -> Self {
                value as $t
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn from_small(small: i32) -> Self {
                small as $t
            }
            fn from_f64_rounded(value: f64) -> Self {
                value as $t
            }
        }
    };
}
host_float!(f32, F32, f32::EPSILON as f64 / 2.0);
host_float!(f64, F64, f64::EPSILON / 2.0);

macro_rules! host_int {
    ($t:ty, $dtype:ident) => {
        impl HostElement for $t {
            const DTYPE: DType = DType::$dtype;
            const UNIT_ROUNDOFF: Option<f64> = None;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_i128(self) -> i128 {
                self as i128
            }
            fn wrap_i128(value: i128) -> Self {
                value as $t
            }
            fn is_nan(self) -> bool {
                false
            }
            fn from_small(small: i32) -> Self {
                small as $t
            }
            fn from_f64_rounded(value: f64) -> Self {
                value as $t
            }
        }
    };
}
host_int!(i32, I32);
host_int!(u32, U32);

/// Calls the generic function `$f::<T, Op>($args…)` for the runtime element type and operator.
#[macro_export]
macro_rules! with_element_and_op {
    ($dtype:expr, $op:expr, $f:ident $(::<$($prefix:ty),*>)? ( $($args:expr),* $(,)? )) => {{
        use kernels_gpu::element::{Max, Min, Sum};
        use $crate::element::{DType, OpKind};
        match ($dtype, $op) {
            (DType::F32, OpKind::Sum) => $f::<f32, Sum>($($args),*),
            (DType::F32, OpKind::Min) => $f::<f32, Min>($($args),*),
            (DType::F32, OpKind::Max) => $f::<f32, Max>($($args),*),
            (DType::F64, OpKind::Sum) => $f::<f64, Sum>($($args),*),
            (DType::F64, OpKind::Min) => $f::<f64, Min>($($args),*),
            (DType::F64, OpKind::Max) => $f::<f64, Max>($($args),*),
            (DType::I32, OpKind::Sum) => $f::<i32, Sum>($($args),*),
            (DType::I32, OpKind::Min) => $f::<i32, Min>($($args),*),
            (DType::I32, OpKind::Max) => $f::<i32, Max>($($args),*),
            (DType::U32, OpKind::Sum) => $f::<u32, Sum>($($args),*),
            (DType::U32, OpKind::Min) => $f::<u32, Min>($($args),*),
            (DType::U32, OpKind::Max) => $f::<u32, Max>($($args),*),
        }
    }};
}
