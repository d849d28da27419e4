//! The traits of what kernels read and move: [`Value`], [`Element`], [`Key`], [`Accumulator`].

use super::vector::Vector16;

/// A value that lives in registers, shared and global memory, and moves between the lanes of
/// a warp as 32-bit words.
pub trait Value: Copy + Send + Sync + 'static {
    /// `[u32; N]`: the value's bits, split for `shfl.sync` (which moves 32 bits at a time).
    type Words: Words;
    fn to_words(self) -> Self::Words;
    fn from_words(words: Self::Words) -> Self;
}

/// The first lane of `vectors` for which `matches` holds, as `k · LANES + lane` (`K · LANES` if
/// none does): from the last lane to the first, each match replacing, so the first match is
/// what stays, with no branch. `Element::first_lane_holding`'s scans.
#[inline(always)]
pub(super) fn first_lane_where<T: Copy, V: Vector16<T>, const K: usize>(
    vectors: &[V; K],
    matches: impl Fn(T) -> bool,
) -> usize {
    let lanes = V::LANES;
    let mut found = K * lanes;
    let mut k = K;
    while k > 0 {
        k -= 1;
        let mut lane = lanes;
        while lane > 0 {
            lane -= 1;
            if matches(vectors[k].lanes()[lane]) {
                found = k * lanes + lane;
            }
        }
    }
    found
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
    /// Whether argmax and argmin skip the groups whose [`largest_key`](Element::largest_key)
    /// (or smallest) cannot beat a thread's running best, and search the last group that won
    /// after the walk: the 16-bit floats, whose groups of 32 lanes a tree of (index, value)
    /// pairs costs most. `f32` finds its groups' keys fast as well, but its arg operators
    /// measured both ways by kernel when they skipped (H100, `docs/runs/2026-11-27-b/`:
    /// 64 × 128256 rows 25.8 → 21.9 µs, segments of ~300 62.2 → 53.8, but 16384 × 4096 rows
    /// 94.5 → 116.4 and the whole 2^28 array 353.0 → 364.5), and keep the tree — except in a
    /// block or a warp per row, which take every type's groups by their best key
    /// ([`Reduction::accumulate_group`](crate::ops::Reduction::accumulate_group)'s
    /// `BY_BEST_KEY`).
    const ARG_SKIPS_GROUPS: bool = false;
    /// The largest [`key_nan_high`](Element::key_nan_high) of the lanes of `vectors`, where
    /// the type finds it faster than lane by lane (the 16-bit floats: two lanes an
    /// instruction; `f32`: `max.f32`, a lane an instruction), else `None`. Max skips, on its
    /// word, the groups of vectors that cannot beat a thread's running best, and so does
    /// argmax where [`ARG_SKIPS_GROUPS`](Element::ARG_SKIPS_GROUPS) says, and in a block or a
    /// warp per row ([`Reduction::accumulate_group`](crate::ops::Reduction::accumulate_group)).
    #[inline(always)]
    fn largest_key<const K: usize>(_vectors: &[Self::Vector16; K]) -> Option<Self::Key> {
        None
    }
    /// The smallest [`key_nan_low`](Element::key_nan_low) of the lanes of `vectors`, or
    /// `None`: [`largest_key`](Element::largest_key)'s twin for min and argmin.
    #[inline(always)]
    fn smallest_key<const K: usize>(_vectors: &[Self::Vector16; K]) -> Option<Self::Key> {
        None
    }
    /// The first lane of `vectors` that holds `value` (its bits; any NaN for a NaN), as
    /// `k · LANES + lane` (vector `k`, lane `lane`; `K · LANES` if none does). Each of the
    /// type's keys (`key_nan_high`, `key_nan_low`) is a one-to-one map of the bits but for the
    /// NaNs, which share one key: so the arg operators find the lane that holds a group's best
    /// key this way ([`Reduction::accumulate_group`](crate::ops::Reduction::accumulate_group)
    /// and [`resolve`](crate::ops::Reduction::resolve)). Lane by lane by
    /// [`key_nan_high`](Element::key_nan_high), unless the type has a faster way (the 16-bit
    /// floats: two lanes a word; `f32` and `f64`: by the bits).
    #[inline(always)]
    fn first_lane_holding<const K: usize>(vectors: &[Self::Vector16; K], value: Self) -> usize {
        let key = value.key_nan_high();
        first_lane_where(vectors, |lane: Self| lane.key_nan_high() == key)
    }
    /// `a` or `b`, whichever has the larger [`key_nan_high`](Element::key_nan_high) (so a NaN
    /// if either is one), `a` on a tie: max's `combine`. By the keys, unless the type has a
    /// cheaper way (`f32`: `max.f32` and a test for NaNs, the same bits).
    #[inline(always)]
    fn max_of(a: Self, b: Self) -> Self {
        if a.key_nan_high() >= b.key_nan_high() {
            a
        } else {
            b
        }
    }
    /// `a` or `b`, whichever has the smaller [`key_nan_low`](Element::key_nan_low) (a NaN if
    /// either is one), `a` on a tie: min's `combine`.
    #[inline(always)]
    fn min_of(a: Self, b: Self) -> Self {
        if a.key_nan_low() <= b.key_nan_low() {
            a
        } else {
            b
        }
    }
    /// The largest [`key_nan_high`](Element::key_nan_high) of lane `lane` of `vectors` (one
    /// column's group of loads in the column kernels), where the type finds it faster than key
    /// by key (`f32`: `max.f32`, an instruction a lane where a key is five), else `None`.
    /// Max compares it alone with a column's running best
    /// ([`Reduction::accumulate_column_group`](crate::ops::Reduction::accumulate_column_group));
    /// the arg operators do not use it (measured slower: `kernels-gpu/src/shapes/PROFILES.md`).
    #[inline(always)]
    fn lane_largest_key<const K: usize>(
        _vectors: &[Self::Vector16; K],
        _lane: usize,
    ) -> Option<Self::Key> {
        None
    }
    /// The smallest [`key_nan_low`](Element::key_nan_low) of lane `lane` of `vectors`, or
    /// `None`: [`lane_largest_key`](Element::lane_largest_key)'s twin for min.
    #[inline(always)]
    fn lane_smallest_key<const K: usize>(
        _vectors: &[Self::Vector16; K],
        _lane: usize,
    ) -> Option<Self::Key> {
        None
    }
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

/// Closes [`Element`] to the types the entry points are generated for (the 16-bit floats
/// open it in `half.rs`).
pub(super) mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
}
