//! The element types a [`Reducer`](crate::Reducer) reduces, on the host side.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use half::{bf16, f16};
use kernels_gpu::element as kernel;
use std::fmt;

/// An element type the reductions accept: `f32`, `f64`, `i32`, `u32`, `i64`, `u64`, and
/// [`half::f16`] / [`half::bf16`].
///
/// Sealed: the kernels are built for exactly these.
///
/// ```
/// use reduce_rs::{DType, Element};
/// assert_eq!(<half::bf16 as Element>::DTYPE, DType::Bf16);
/// assert_eq!(DType::Bf16.size(), 2);
/// ```
pub trait Element:
    Copy
    + PartialEq
    + fmt::Debug
    + Send
    + Sync
    + DeviceRepr
    + ValidAsZeroBits
    + 'static
    + sealed::Sealed
{
    /// The type's name and size.
    const DTYPE: DType;
    /// The kernels' twin of this type: the same bits.
    #[doc(hidden)]
    type Kernel: kernel::Element<SumAcc = Self::Sum, MeanAcc = Self::Mean>;
    /// What [`Reducer::sum`](crate::Reducer::sum) returns: the type itself, but `f32` for the
    /// 16-bit floats, which are added up in `f32`.
    type Sum: Copy + PartialEq + fmt::Debug + Send + Sync + DeviceRepr + ValidAsZeroBits + 'static;
    /// What [`Reducer::mean`](crate::Reducer::mean) returns: `f32` for `f32`, `f16` and `bf16`,
    /// `f64` for `f64` and the integers.
    type Mean: Copy + PartialEq + fmt::Debug + Send + Sync + DeviceRepr + ValidAsZeroBits + 'static;
    /// The sum of nothing: `0` (`+0.0` for floats, as numpy and PyTorch give).
    const ZERO_SUM: Self::Sum;
    #[doc(hidden)]
    fn from_kernel(value: Self::Kernel) -> Self;
}

/// An element type, named at run time (command lines, `.npy` headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// [`half::f16`].
    F16,
    /// [`half::bf16`].
    Bf16,
}

impl DType {
    /// Every type, in the order the tables list them.
    pub const ALL: [DType; 8] = [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F16,
        DType::Bf16,
    ];

    /// `f32`, `f64`, `i32`, `u32`, `i64`, `u64`, `f16`, `bf16`.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F16 | DType::Bf16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// A floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::Bf16)
    }

    /// The type called `name` (any case), if there is one.
    ///
    /// ```
    /// use reduce_rs::DType;
    /// assert_eq!(DType::parse("BF16"), Some(DType::Bf16));
    /// assert_eq!(DType::parse("f8"), None);
    /// ```
    pub fn parse(name: &str) -> Option<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

macro_rules! same_type {
    ($t:ty, $dtype:ident, $mean:ty, $zero:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dtype;
            type Kernel = $t;
            type Sum = $t;
            type Mean = $mean;
            const ZERO_SUM: $t = $zero;
            #[inline]
            fn from_kernel(value: $t) -> $t {
                value
            }
        }
    };
}
same_type!(f32, F32, f32, 0.0);
same_type!(f64, F64, f64, 0.0);
same_type!(i32, I32, f64, 0);
same_type!(u32, U32, f64, 0);
same_type!(i64, I64, f64, 0);
same_type!(u64, U64, f64, 0);

impl Element for f16 {
    const DTYPE: DType = DType::F16;
    type Kernel = kernel::F16;
    type Sum = f32;
    type Mean = f32;
    const ZERO_SUM: f32 = 0.0;
    #[inline]
    fn from_kernel(value: kernel::F16) -> f16 {
        f16::from_bits(value.0)
    }
}

impl Element for bf16 {
    const DTYPE: DType = DType::Bf16;
    type Kernel = kernel::Bf16;
    type Sum = f32;
    type Mean = f32;
    const ZERO_SUM: f32 = 0.0;
    #[inline]
    fn from_kernel(value: kernel::Bf16) -> bf16 {
        bf16::from_bits(value.0)
    }
}
