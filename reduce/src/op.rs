//! The operations, and what each returns on the host and on the device.
//!
//! | operation | host result ([`Operation::Output`]) | device result ([`Operation::Device`]) | empty input |
//! |---|---|---|---|
//! | [`Sum`] | `T::Sum` (`f32` for `f16`/`bf16`) | `T::Sum` | `0` |
//! | [`Mean`] | `Option<T::Mean>` | `T::Mean` | `None` |
//! | [`Min`], [`Max`] | `Option<T>` | `T` | `None` |
//! | [`ArgMin`], [`ArgMax`] | `Option<(usize, T)>` | [`Arg<T>`] | `None` |
//!
//! NaN, signed zeros and ties: a NaN is both the largest and the smallest value (min and max
//! return NaN, argmin and argmax the index of the first NaN); `-0.0 < +0.0`; ties go to the
//! first occurrence. Integer sums wrap. See `kernels_gpu::ops` for the details.

use crate::element::Element;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use kernels_gpu::ops as kernel;
use kernels_gpu::ops::Reduction;
use std::fmt;

pub use kernels_gpu::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};

/// An operation the reductions compute, for element type `T`.
///
/// ```
/// use reduce_rs::{Reducer, ops::ArgMax};
/// let reducer = Reducer::simulator();
/// assert_eq!(reducer.reduce(ArgMax, &[3.0f32, 9.0, 9.0])?, Some((1, 9.0)));
/// # Ok::<(), reduce_rs::Error>(())
/// ```
pub trait Operation<T: Element>:
    kernel::Reduction<T::Kernel> + kernels_gpu::shards::ShardReduction<T::Kernel> + sealed::Sealed
{
    /// The operation's name and kind.
    const KIND: OpKind;
    /// What a reduction returns on the host.
    type Output: Copy + PartialEq + fmt::Debug;
    /// What a reduction leaves in a device buffer (the same bits as the kernel's result).
    type Device: Copy + PartialEq + fmt::Debug + DeviceRepr + ValidAsZeroBits + 'static;
    /// The host result of a non-empty input whose device result is `device`.
    fn output(device: Self::Device) -> Self::Output;
    /// The host result of an empty input.
    fn empty() -> Self::Output;
    /// The device result of an empty input, where there is one (`0` for sums; min, max, mean
    /// and the arg operations have no value to write).
    fn empty_device() -> Option<Self::Device>;
}

/// The index and value of an argmin / argmax as a device buffer holds it.
///
/// ```
/// use reduce_rs::Arg;
/// let arg = Arg { index: 7, value: 2.5f32 };
/// assert_eq!(arg.index, 7);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Arg<T> {
    /// The element's index in the input (in its row, column or segment for
    /// [`Reducer::reduce_each`](crate::Reducer::reduce_each)).
    pub index: u64,
    /// The element's value.
    pub value: T,
}

// SAFETY: `repr(C)` of a `u64` and a `DeviceRepr` value: plain bytes the GPU writes.
unsafe impl<T: DeviceRepr> DeviceRepr for Arg<T> {}
// SAFETY: all-zero bytes are index 0 and a zero value, which `T: ValidAsZeroBits` allows.
unsafe impl<T: ValidAsZeroBits> ValidAsZeroBits for Arg<T> {}

/// An operation, named at run time (command lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// [`Sum`].
    Sum,
    /// [`Min`].
    Min,
    /// [`Max`].
    Max,
    /// [`ArgMin`].
    ArgMin,
    /// [`ArgMax`].
    ArgMax,
    /// [`Mean`].
    Mean,
}

impl OpKind {
    /// Every operation, in the order tables list them.
    pub const ALL: [OpKind; 6] = [
        OpKind::Sum,
        OpKind::Min,
        OpKind::Max,
        OpKind::ArgMin,
        OpKind::ArgMax,
        OpKind::Mean,
    ];

    /// `sum`, `min`, `max`, `argmin`, `argmax`, `mean`: as kernel entry points name them.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Sum => "sum",
            OpKind::Min => "min",
            OpKind::Max => "max",
            OpKind::ArgMin => "argmin",
            OpKind::ArgMax => "argmax",
            OpKind::Mean => "mean",
        }
    }

    /// The operation called `name` (any case), if there is one.
    ///
    /// ```
    /// use reduce_rs::OpKind;
    /// assert_eq!(OpKind::parse("ArgMax"), Some(OpKind::ArgMax));
    /// ```
    pub fn parse(name: &str) -> Option<OpKind> {
        OpKind::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Sum {}
    impl Sealed for super::Mean {}
    impl Sealed for super::Min {}
    impl Sealed for super::Max {}
    impl Sealed for super::ArgMin {}
    impl Sealed for super::ArgMax {}
}

impl<T: Element> Operation<T> for Sum {
    const KIND: OpKind = OpKind::Sum;
    type Output = T::Sum;
    type Device = T::Sum;
    fn output(device: T::Sum) -> T::Sum {
        device
    }
    fn empty() -> T::Sum {
        T::ZERO_SUM
    }
    fn empty_device() -> Option<T::Sum> {
        Some(T::ZERO_SUM)
    }
}

impl<T: Element> Operation<T> for Mean {
    const KIND: OpKind = OpKind::Mean;
    type Output = Option<T::Mean>;
    type Device = T::Mean;
    fn output(device: T::Mean) -> Option<T::Mean> {
        Some(device)
    }
    fn empty() -> Option<T::Mean> {
        None
    }
    fn empty_device() -> Option<T::Mean> {
        None
    }
}

macro_rules! value_op {
    ($op:ident, $kind:ident) => {
        impl<T: Element> Operation<T> for $op {
            const KIND: OpKind = OpKind::$kind;
            type Output = Option<T>;
            type Device = T;
            fn output(device: T) -> Option<T> {
                Some(device)
            }
            fn empty() -> Option<T> {
                None
            }
            fn empty_device() -> Option<T> {
                None
            }
        }
    };
}
value_op!(Min, Min);
value_op!(Max, Max);

macro_rules! arg_op {
    ($op:ident, $kind:ident) => {
        impl<T: Element> Operation<T> for $op {
            const KIND: OpKind = OpKind::$kind;
            type Output = Option<(usize, T)>;
            type Device = Arg<T>;
            fn output(device: Arg<T>) -> Option<(usize, T)> {
                (device.index != kernel::NO_INDEX).then_some((device.index as usize, device.value))
            }
            fn empty() -> Option<(usize, T)> {
                None
            }
            fn empty_device() -> Option<Arg<T>> {
                None
            }
        }
    };
}
arg_op!(ArgMin, ArgMin);
arg_op!(ArgMax, ArgMax);

/// The result `O` left in `bytes` as a device buffer holds it (at least
/// `size_of::<O::Device>()` of them): what a kernel wrote, read back.
///
/// ```
/// use reduce_rs::{Arg, op::device_value, ops::ArgMax};
/// let bytes = [7u64.to_ne_bytes(), 2.5f64.to_ne_bytes()].concat();
/// assert_eq!(device_value::<f64, ArgMax>(&bytes), Arg { index: 7, value: 2.5 });
/// ```
pub fn device_value<T: Element, O: Operation<T>>(bytes: &[u8]) -> O::Device {
    const {
        assert!(
            size_of::<O::Device>() == size_of::<<O as Reduction<T::Kernel>>::Out>(),
            "the host's view of a result has the kernel's layout"
        )
    };
    crate::bytes::read_value(bytes)
}
