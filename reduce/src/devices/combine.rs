//! How the shards' partials become one result, per operation.
//!
//! | operation | each device | collective | then |
//! |---|---|---|---|
//! | sum | `Σ shard` in `T::Sum` (v8) | NCCL all-reduce, `ncclSum` | nothing: that is the result |
//! | min, max, argmin, argmax, mean | [`ShardPartial`] (count + unfinished accumulator) | NCCL all-gather | combine kernel (device result) or the same fold on the host (host result) |
//! | float sum, reproducible | the shard's binned partial sum | NCCL all-gather | merge kernel (device result) or the same merge on the host |
//!
//! Sums go through NCCL's own `ncclSum` (integers as unsigned: two's complement addition is
//! the same bits, and wraps as the library's integer sums do). NCCL's `ncclMin`/`ncclMax`
//! do not follow the library's rules (NaN is both the largest and the smallest value, `-0.0 <
//! +0.0`, argmin/argmax give the first global index), so those operations gather every shard's
//! partial — 16 or 24 bytes each — and fold them with the kernels' own `combine`
//! (`kernels_gpu::shards`), in rank order, the same code on the device and on the host.
//!
//! # Reproducible mode
//! A group whose reducers are reproducible ([`Devices::with_reproducible`],
//! [`Rank::with_reproducible`]) sums floats the binned way ([`crate::reproducible`]): each
//! device writes its shard's partial sum (a binned state of 28 or 56 bytes), NCCL all-gathers
//! them, and each device merges the `world` states with the merge kernel (the host, for a host
//! result, merges them with the same arithmetic). The bits are those of one device's
//! reproducible sum of the whole input, whatever the number of devices and the cut: the
//! binned states add up exactly, in any order.
//!
//! [`ShardPartial`]: kernels_gpu::shards::ShardPartial
//! [`Devices::with_reproducible`]: crate::devices::Devices::with_reproducible
//! [`Rank::with_reproducible`]: crate::devices::Rank::with_reproducible

use super::nccl::DataType;
use crate::bytes::{read_value, value_bytes};
use crate::element::{DType, Element};
use crate::op::device_value;
use crate::op::{OpKind, Operation};
use kernels_gpu::ops::Reduction;
use kernels_gpu::shards::ShardPartial;

/// The accumulator `O` hands between shards.
pub(crate) type Acc<T, O> = <O as Reduction<<T as Element>::Kernel>>::Acc;
/// What one shard hands to the others.
pub(crate) type Partial<T, O> = ShardPartial<Acc<T, O>>;

/// Bytes of `O`'s shard partial for `T` (16 or 24).
pub(crate) fn partial_bytes<T: Element, O: Operation<T>>() -> usize {
    size_of::<Partial<T, O>>()
}
use crate::reproducible::{PartialSum, STATE_BYTES_F32, SumFloat};
use kernels_gpu::shards::{combine_records, finish_records};

/// How one operation's shards are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Each device sums its shard in `T::Sum`; NCCL all-reduces with `ncclSum` in `dtype`.
    SumCollective { dtype: DataType, bytes: usize },
    /// Each device writes its shard's partial (`bytes` bytes); NCCL all-gathers them; the
    /// combine kernel (or the host) folds them.
    Gather { bytes: usize },
    /// Reproducible float sums: each device writes its shard's binned partial sum (`bytes`
    /// bytes); NCCL all-gathers them; the merge kernel (or the host) merges them.
    Binned { bytes: usize },
}

impl Strategy {
    /// The strategy for `O` over `T`, for a group whose reducers are `reproducible` or not.
    pub(crate) fn of<T: Element, O: Operation<T>>(reproducible: bool) -> Strategy {
        match O::KIND {
            OpKind::Sum if reproducible && T::DTYPE.is_float() => Strategy::Binned {
                bytes: crate::plan::reproducible::state_bytes(T::DTYPE),
            },
            OpKind::Sum => Strategy::SumCollective {
                dtype: sum_dtype(T::DTYPE),
                bytes: size_of::<T::Sum>(),
            },
            _ => Strategy::Gather {
                bytes: partial_bytes::<T, O>(),
            },
        }
    }

    /// Bytes each device sends.
    pub(crate) fn bytes(self) -> usize {
        match self {
            Strategy::SumCollective { bytes, .. }
            | Strategy::Gather { bytes }
            | Strategy::Binned { bytes } => bytes,
        }
    }
}

/// NCCL's type for a sum of `dtype` (`T::Sum`): `f32` for the 16-bit floats; the integers as
/// unsigned (the same bits, wrapping).
pub(crate) fn sum_dtype(dtype: DType) -> DataType {
    match dtype {
        DType::F32 | DType::F16 | DType::Bf16 => DataType::Float32,
        DType::F64 => DataType::Float64,
        DType::I32 | DType::U32 => DataType::Uint32,
        DType::I64 | DType::U64 => DataType::Uint64,
    }
}

/// The sum of `values` (each one `dtype` value's bytes), in rank order: what the simulated
/// all-reduce computes.
pub(crate) fn sum_values(dtype: DataType, values: &[Vec<u8>]) -> Vec<u8> {
    macro_rules! fold {
        ($t:ty, $add:expr) => {{
            let add: fn($t, $t) -> $t = $add;
            let total = values
                .iter()
                .map(|v| read_value::<$t>(v))
                .reduce(add)
                .unwrap_or_default();
            value_bytes(&total)
        }};
    }
    match dtype {
        DataType::Float32 => fold!(f32, |a, b| a + b),
        DataType::Float64 => fold!(f64, |a, b| a + b),
        DataType::Uint32 => fold!(u32, u32::wrapping_add),
        DataType::Uint64 => fold!(u64, u64::wrapping_add),
        DataType::Uint8 => fold!(u8, u8::wrapping_add),
    }
}

/// The host result of `O` from the `ranks` partials in `gathered` (rank order): the same fold
/// the combine kernel runs, so the same bits.
pub(crate) fn host_result<T: Element, O: Operation<T>>(gathered: &[u8], ranks: usize) -> O::Output {
    let size = partial_bytes::<T, O>();
    let whole = combine_records::<T::Kernel, O>(ranks, |k| {
        read_value::<Partial<T, O>>(&gathered[k * size..(k + 1) * size])
    });
    if whole.count == 0 {
        return O::empty();
    }
    let out = finish_records::<T::Kernel, O>(whole);
    O::output(device_value::<T, O>(&value_bytes(&out)))
}

/// The host result of a reproducible sum from the `ranks` binned partial sums in `gathered`
/// (rank order): merged with the arithmetic of the merge kernel, so the same bits.
pub(crate) fn merged_sum<T: Element, O: Operation<T>>(gathered: &[u8], ranks: usize) -> O::Output {
    fn merge<F: SumFloat>(gathered: &[u8], ranks: usize) -> Vec<u8> {
        let size = gathered.len() / ranks.max(1);
        let mut total = PartialSum::<F>::EMPTY;
        for k in 0..ranks {
            total.merge(&PartialSum::from_bytes(&gathered[k * size..(k + 1) * size]));
        }
        value_bytes(&total.value())
    }
    let bytes = if crate::plan::reproducible::state_bytes(T::DTYPE) == STATE_BYTES_F32 {
        merge::<f32>(gathered, ranks)
    } else {
        merge::<f64>(gathered, ranks)
    };
    O::output(read_value(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{ArgMax, Mean, Sum};

    #[test]
    fn sums_are_collectives_and_the_rest_gathers() {
        assert_eq!(
            Strategy::of::<half::bf16, Sum>(false),
            Strategy::SumCollective {
                dtype: DataType::Float32,
                bytes: 4
            }
        );
        assert_eq!(
            Strategy::of::<i64, Sum>(false),
            Strategy::SumCollective {
                dtype: DataType::Uint64,
                bytes: 8
            }
        );
        assert_eq!(
            Strategy::of::<f64, ArgMax>(true),
            Strategy::Gather { bytes: 24 }
        );
        assert_eq!(
            Strategy::of::<i32, Mean>(false),
            Strategy::Gather { bytes: 16 }
        );
        // Reproducible: float sums gather binned states; integer sums stay exact collectives.
        assert_eq!(
            Strategy::of::<half::bf16, Sum>(true),
            Strategy::Binned {
                bytes: STATE_BYTES_F32
            }
        );
        assert!(matches!(
            Strategy::of::<i32, Sum>(true),
            Strategy::SumCollective { .. }
        ));
    }

    #[test]
    fn simulated_sums_wrap_like_the_kernels() {
        let values = [value_bytes(&u32::MAX), value_bytes(&2u32)];
        assert_eq!(read_value::<u32>(&sum_values(DataType::Uint32, &values)), 1);
    }
}
