//! Reproducible sums: the same bits for any grid, block size, GPU model and split of the input,
//! and for every row, column or segment the bits of that row alone, whatever shares the batch.
//!
//! A [`Reducer`](crate::Reducer) made [`with_reproducible(true)`](crate::Reducer::with_reproducible)
//! adds float sums and means with binned accumulation (Demmel and Nguyen's, as ReproBLAS and
//! CUB's `gpu_to_gpu` determinism): each value's bits are collected, exactly, in three
//! fixed-width bins set by the largest magnitude, and the total is rounded once at the end.
//! The result does not depend on the order of the additions, so it is the same on every GPU,
//! with every launch grid, on the simulator, and when the input is cut into shards whose
//! [`PartialSum`]s are merged later (a sum over several GPUs):
//!
//! ```
//! use reduce_rs::Reducer;
//! use reduce_rs::reproducible::PartialSum;
//! let data: Vec<f32> = (0..100_000).map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5).collect();
//! let whole = Reducer::simulator().with_reproducible(true).sum(&data)?;
//! let other_shape = Reducer::simulator().with_reproducible(true).with_block_size(64)?.with_max_blocks(3);
//! assert_eq!(other_shape.sum(&data)?.to_bits(), whole.to_bits());
//! // Two shards, each on its own (another GPU, another call), merged:
//! let reducer = Reducer::simulator();
//! let (left, right) = data.split_at(12_345);
//! let parts = [reducer.partial_sum(left)?, reducer.partial_sum(right)?];
//! assert_eq!(reducer.merge_partial_sums(&parts)?.to_bits(), whole.to_bits());
//! // The same on the host, without a GPU:
//! assert_eq!(PartialSum::of(data.iter().copied()).value().to_bits(), whole.to_bits());
//! # Ok::<(), reduce_rs::Error>(())
//! ```
//!
//! Rows, columns and segments ([`Reducer::reduce_each`](crate::Reducer::reduce_each),
//! [`reduce_each_into`](crate::Reducer::reduce_each_into),
//! [`reduce_segments_into`](crate::Reducer::reduce_segments_into)) run the binned twins of the
//! shape kernels: each result is the bits of the reproducible sum (or mean) of its row,
//! column or segment reduced alone — *batch invariance*, what LLM inference needs (a request's
//! result must not change because other requests share its batch), and what PyTorch's and
//! CUB's row reductions do not give (their kernel, grid and order of additions follow the
//! batch's shape):
//!
//! ```
//! use reduce_rs::{Reducer, Shape, ops::Sum};
//! let reducer = Reducer::simulator().with_reproducible(true);
//! let row: Vec<f32> = (0..3000).map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5).collect();
//! let alone = reducer.sum(&row)?;
//! // The same row in a batch of 64 rows (a warp each) and of 3 (several blocks each), and as
//! // a column of the transpose:
//! for batch in [64, 3] {
//!     let mut matrix: Vec<f32> = (0..batch * 3000).map(|i| (i % 17) as f32 * 0.3).collect();
//!     matrix[3000..6000].copy_from_slice(&row);
//!     let sums = reducer.reduce_each(Sum, &matrix, Shape::rows(batch, 3000))?;
//!     assert_eq!(sums[1].to_bits(), alone.to_bits());
//!     let transposed: Vec<f32> = (0..batch * 3000).map(|i| matrix[(i % batch) * 3000 + i / batch]).collect();
//!     let sums = reducer.reduce_each(Sum, &transposed, Shape::columns(3000, batch))?;
//!     assert_eq!(sums[1].to_bits(), alone.to_bits());
//! }
//! # Ok::<(), reduce_rs::Error>(())
//! ```
//!
//! # What it guarantees
//! - `sum` and `mean` of `f32`, `f64`, `f16`, `bf16` (added up in `f32`), and `mean` of the
//!   integer types (added up in `f64`, each 64-bit integer rounded to `f64` once): the same bits
//!   for any launch and any split. Integer sums (exact, wrapping), `min`, `max`, `argmin` and
//!   `argmax` are already order-independent, and unchanged.
//! - The same for every row, column and segment: its result is the bits of the whole-array
//!   reduction of that row alone, whatever the number of rows in the batch, the rows beside it,
//!   the kernel the shape picks (a warp or a few lanes per row, a block per row, several blocks
//!   per row, bands of columns), the grid, the block size and the GPU model. The sum of an
//!   empty row or segment is `+0.0`, its mean NaN (on the host: `0` and `None`).
//! - A mean is the sum divided by the count, rounded once; a NaN mean is one fixed NaN (the
//!   GPU's division and the CPU's would give NaNs of different bits).
//! - Accuracy: each input is rounded, once and on its own, to the finest bin's ulp: by at most
//!   2^-26 (f32) or 2^-80 (f64) of the largest magnitude, and not at all when every magnitude
//!   is below 2^-119 (f32) or 2^-976 (f64): sums of subnormals and of the smallest normal
//!   numbers are kept exactly, whatever their number and signs (the finest bin then has the
//!   smallest subnormal for its ulp). These are summed exactly, and the total
//!   is rounded once (the state's terms are added up in double-double first, which errs by
//!   less than 2^-96·Σ|x|). In all, the error of a sum is at most
//!   `n·2^-26·max|x| + 2^-96·Σ|x| + ulp/2` (f32; `n·2^-80·max|x|` for f64), the first term 0
//!   below those magnitudes; a mean adds the rounding of its division. This holds for up to
//!   2^32 `f32` (2^63 `f64`) inputs, past which the carries, kept in the type, could round.
//!   In practice (errors of both signs) the error is far less: usually the correctly rounded
//!   sum. `bench --accuracy` measures it.
//! - NaN anywhere, or `+inf` with `-inf`, gives NaN (one fixed bit pattern); otherwise an
//!   infinity gives that infinity; a finite sum too large for the type gives an infinity. An
//!   empty input, all zeros, or a sum that cancels exactly gives `+0.0`.
//!
//! # What it costs
//! Every element goes through three folds (about 12 instructions instead of one addition): the
//! kernel is still limited by memory bandwidth on the H100 and H200, at a cost `bench` shows
//! beside v8 ("reduce-rs reproducible"), and `bench --shapes` beside the row kernels
//! (`reproducible_rows_…`, column `/plain`). The states are 28 bytes (`f32`) or 56 bytes
//! (`f64`); merging two costs as much as a few hundred deposits, so the reproducible row
//! kernels give each lane more of a row than the plain ones (a warp per row up to 64 KiB rows,
//! or whenever there are more rows than the GPU holds warps).

use crate::element::DType;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use std::fmt;

pub use kernels_gpu::reproducible::{Binned, BinnedFloat, STATE_BYTES_F32, STATE_BYTES_F64};

/// The floats a reproducible sum is kept in: `f32` (for `f32`, `f16`, `bf16`) and `f64`.
pub trait SumFloat:
    BinnedFloat + DeviceRepr + ValidAsZeroBits + PartialEq + fmt::Debug + sealed::Sealed
{
    /// `f32` or `f64`, as the merging kernels are named.
    const DTYPE: DType;
}
impl SumFloat for f32 {
    const DTYPE: DType = DType::F32;
}
impl SumFloat for f64 {
    const DTYPE: DType = DType::F64;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The unfinished reproducible sum of part of an input: what one shard contributes to a sum
/// split over GPUs, calls or hosts. Merge any number of them, in any order, and the
/// [`value`](PartialSum::value) is the same bits as the reproducible sum of the whole input.
///
/// [`STATE_BYTES_F32`] (28) or [`STATE_BYTES_F64`] (56) bytes, `repr(C)`: device buffers of
/// them are what [`Reducer::partial_sum_into`](crate::Reducer::partial_sum_into) writes and
/// [`Reducer::merge_partial_sums_into`](crate::Reducer::merge_partial_sums_into) reads; a
/// zeroed buffer holds empty sums. Two `PartialSum`s are equal when their bits are.
///
/// ```
/// use reduce_rs::reproducible::PartialSum;
/// let mut left = PartialSum::of([1e8f32, 1.0]);
/// left.merge(&PartialSum::of([-1e8f32, 0.5]));
/// assert_eq!(left.value(), 1.5);
/// assert_eq!(left, PartialSum::of([0.5f32, -1e8, 1.0, 1e8]));
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct PartialSum<F: SumFloat>(Binned<F>);

// SAFETY: `repr(transparent)` over `Binned<F>`, which is `repr(C)` of seven `F`s: plain bytes,
// the layout the kernels read and write.
unsafe impl<F: SumFloat> DeviceRepr for PartialSum<F> {}
// SAFETY: all-zero bytes are `Binned::EMPTY`, the sum of nothing.
unsafe impl<F: SumFloat> ValidAsZeroBits for PartialSum<F> {}

impl<F: SumFloat> PartialEq for PartialSum<F> {
    fn eq(&self, other: &Self) -> bool {
        use kernels_gpu::element::Value;
        self.0.to_words().as_ref() == other.0.to_words().as_ref()
    }
}

impl<F: SumFloat> Default for PartialSum<F> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<F: SumFloat> PartialSum<F> {
    /// The sum of nothing.
    pub const EMPTY: Self = PartialSum(Binned::EMPTY);

    /// The partial sum of `values`, on the host.
    ///
    /// ```
    /// use reduce_rs::reproducible::PartialSum;
    /// assert_eq!(PartialSum::of([0.1f64, 0.2, 0.3]).value(), 0.6);
    /// ```
    pub fn of(values: impl IntoIterator<Item = F>) -> Self {
        PartialSum(Binned::sum_of(values))
    }

    /// Adds one value.
    pub fn add(&mut self, x: F) {
        self.0.add(x);
    }

    /// Adds the values `other` holds (exactly: order and grouping do not matter).
    pub fn merge(&mut self, other: &Self) {
        self.0.merge(&other.0);
    }

    /// The sum, rounded once (see [the module docs](self) for NaN, infinities and zeros).
    pub fn value(&self) -> F {
        self.0.value()
    }

    /// The binned state (folds, carries, the sum of non-finite values).
    pub fn binned(&self) -> &Binned<F> {
        &self.0
    }

    /// The state a kernel wrote in `bytes`.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Self {
        crate::bytes::read_value(bytes)
    }
}
