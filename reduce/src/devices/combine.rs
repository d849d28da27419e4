//! How the shards' partials become one result, per operation.
//!
//! | operation | each device | collective | then |
//! |---|---|---|---|
//! | sum | `Σ shard` in `T::Sum` (v8) | NCCL all-reduce, `ncclSum` | nothing: that is the result |
//! | min, max, argmin, argmax, mean | [`ShardPartial`] (count + unfinished accumulator) | NCCL all-gather | combine kernel (device result) or the same fold on the host (host result) |
//!
//! Sums go through NCCL's own `ncclSum` (integers as unsigned: two's complement addition is
//! the same bits, and wraps as the library's integer sums do). NCCL's `ncclMin`/`ncclMax`
//! do not follow the library's rules (NaN is both the largest and the smallest value, `-0.0 <
//! +0.0`, argmin/argmax give the first global index), so those operations gather every shard's
//! partial — 16 or 24 bytes each — and fold them with the kernels' own `combine`
//! (`kernels_gpu::shards`), in rank order, the same code on the device and on the host.
//!
//! # Reproducible mode: where it goes
//! The binned-sum mode (`Reducer::with_reproducible`, another branch) writes a fixed-size
//! binned state per input and merges `count` states into the final value, so that the bits do
//! not depend on how the input was cut. It slots in as a third [`Strategy`],
//! `Binned { state_bytes }`, returned by [`Strategy::of`] for float sums and means when the
//! group's reducers are reproducible (`Strategy::of` then takes that flag; `Devices` and `Rank`
//! get a `with_reproducible(bool)` that sets it on every member's reducer):
//! 1. each device: the state kernel over its shard into its send buffer (`state_bytes`), in
//!    `group::shard_step_gpu` / `group::shard_step_sim`, where `Gather` runs the shard kernel
//!    (the launches beside `enqueue_shard` / `simulate_shard` in `reducer/shards.rs`);
//! 2. the all-gather of `state_bytes` per rank: `group::collective_step` as it is (it moves
//!    bytes);
//! 3. each device: the merge kernel over the `world` gathered states into its result, in
//!    `group::gpu_all_reduce` / `group::sim_all_reduce` where `Gather` calls the combine
//!    kernel; for a host result ([`Devices::reduce`]) in `group::reduce_to_host`, the merge's
//!    host twin where `Gather` calls [`host_result`].
//!
//! Merging the states in rank order gives the bits one GPU gives, whatever the number of GPUs.
//! Nothing here fakes it until those kernels exist.
//!
//! [`ShardPartial`]: kernels_gpu::shards::ShardPartial
//! [`Devices::reduce`]: crate::devices::Devices::reduce

use super::nccl::DataType;
use crate::element::{DType, Element};
use crate::op::{OpKind, Operation};
use crate::reducer::device_value;
use crate::reducer::shards::{Partial, partial_bytes, read_value, value_bytes};
use kernels_gpu::shards::{combine_records, finish_records};

/// How one operation's shards are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Each device sums its shard in `T::Sum`; NCCL all-reduces with `ncclSum` in `dtype`.
    SumCollective { dtype: DataType, bytes: usize },
    /// Each device writes its shard's partial (`bytes` bytes); NCCL all-gathers them; the
    /// combine kernel (or the host) folds them.
    Gather { bytes: usize },
}

impl Strategy {
    /// The strategy for `O` over `T`.
    pub(crate) fn of<T: Element, O: Operation<T>>() -> Strategy {
        match O::KIND {
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
            Strategy::SumCollective { bytes, .. } | Strategy::Gather { bytes } => bytes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{ArgMax, Mean, Sum};

    #[test]
    fn sums_are_collectives_and_the_rest_gathers() {
        assert_eq!(
            Strategy::of::<half::bf16, Sum>(),
            Strategy::SumCollective {
                dtype: DataType::Float32,
                bytes: 4
            }
        );
        assert_eq!(
            Strategy::of::<i64, Sum>(),
            Strategy::SumCollective {
                dtype: DataType::Uint64,
                bytes: 8
            }
        );
        assert_eq!(
            Strategy::of::<f64, ArgMax>(),
            Strategy::Gather { bytes: 24 }
        );
        assert_eq!(Strategy::of::<i32, Mean>(), Strategy::Gather { bytes: 16 });
    }

    #[test]
    fn simulated_sums_wrap_like_the_kernels() {
        let values = [value_bytes(&u32::MAX), value_bytes(&2u32)];
        assert_eq!(read_value::<u32>(&sum_values(DataType::Uint32, &values)), 1);
    }
}
