//! # Shards: one input spread over several GPUs
//!
//! When an input is cut into shards, one per GPU (or per process), each GPU reduces its own
//! shard and the GPUs then exchange what they found. Two kernels do the GPU's part; the
//! exchange between them is the host's (an NCCL all-gather, or the simulator's copy):
//!
//! ```text
//! GPU k:    shard k ──reduce_shard──▶ ShardPartial { count: len(shard k), acc }   (unfinished)
//! all:      all-gather ──▶ [ShardPartial; ranks] in rank order, the same bytes on every GPU
//! GPU k:    combine_shards ──▶ result (finished), the same bits on every GPU
//! ```
//!
//! - [`reduce_shard`] is v8's single pass (`single_pass` in v8's file) with the accumulator left
//!   unfinished (a mean is not yet divided) and the shard's element count beside it.
//! - [`combine_shards`] folds the gathered partials in rank order with the operator's own
//!   `combine`, after [`ShardReduction::shift`] moved each shard's arg indices by the elements
//!   of the shards before it (so argmin/argmax give the first *global* index, and ties go to
//!   the earlier shard, as on one GPU), then finishes with the total count (a mean divides by
//!   every element of every shard). One thread does it: a few partials per GPU.
//! - [`combine_records`] is that fold as a plain function: the host runs the very same code
//!   where it wants a host result, so a host combine and a device combine give the same bits.
//!
//! Exact for every operator whose combine is exact (min, max, the arg operators, integer sums):
//! the result is the bits one GPU gives over the whole input. Float sums and means are rounded
//! in another order than one GPU's, as any change of launch shape does.
//!
//! Entry points: `shard_{type}_{op}` and `combine_{type}_{op}` for every type and operator
//! (the library's set), with the same six parameters as every other kernel.
//!
//! # Output contract
//! `reduce_shard`: `output[0]` = the shard's [`ShardPartial`]; scratch as v8's. `combine_shards`:
//! `input` holds `len` [`ShardPartial`]s, `output[0]` = the finished result, or the operator's
//! `EMPTY` if every shard was empty; no scratch; one block of any size (thread 0 works).

use crate::device::{GlobalSlice, GlobalSliceMut, thread_idx_x};
use crate::element::{Element, Value, Words};
use crate::ops::{ArgMax, ArgMin, Max, Mean, Min, NO_INDEX, Reduction, Sum};
use crate::params::{Launch, Scratch};
use crate::versions::reduce_v8_single_pass::single_pass;

/// What one shard's reduction hands to the other GPUs: how many elements the shard had, and
/// its accumulator, unfinished. The host reads the same layout (`repr(C)`: `count` at byte 0,
/// `acc` at byte 8; 16 or 24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShardPartial<A> {
    pub count: u64,
    pub acc: A,
}

/// Words of the largest [`ShardPartial`]: the count, and an `Arg<f64>`'s four.
const PARTIAL_WORDS: usize = 6;

impl<A: Value> Value for ShardPartial<A> {
    type Words = [u32; PARTIAL_WORDS];
    #[inline(always)]
    fn to_words(self) -> [u32; PARTIAL_WORDS] {
        let mut words = [0; PARTIAL_WORDS];
        words[0] = self.count as u32;
        words[1] = (self.count >> 32) as u32;
        let acc = self.acc.to_words();
        words[2..2 + acc.as_ref().len()].copy_from_slice(acc.as_ref());
        words
    }
    #[inline(always)]
    fn from_words(words: [u32; PARTIAL_WORDS]) -> Self {
        let mut acc = <A::Words as Words>::ZERO;
        let len = acc.as_ref().len();
        acc.as_mut().copy_from_slice(&words[2..2 + len]);
        ShardPartial {
            count: u64::from(words[0]) | (u64::from(words[1]) << 32),
            acc: A::from_words(acc),
        }
    }
}

/// An operator whose shards can be combined: [`shift`](ShardReduction::shift) moves a shard's
/// accumulator to where the shard starts in the whole input.
pub trait ShardReduction<T: Element>: Reduction<T> {
    /// The accumulator of a shard that starts at element `start` of the whole input, from the
    /// accumulator computed with the shard's own indices: the arg operators add `start` to the
    /// index (not to [`NO_INDEX`]); every other operator has no index and changes nothing.
    fn shift(acc: Self::Acc, start: u64) -> Self::Acc;
    /// The empty shard's partial.
    #[inline(always)]
    fn empty_partial() -> ShardPartial<Self::Acc> {
        ShardPartial {
            count: 0,
            acc: Self::IDENTITY,
        }
    }
}

macro_rules! no_index {
    ($($op:ident),*) => {$(
        impl<T: Element> ShardReduction<T> for $op {
            #[inline(always)]
            fn shift(acc: Self::Acc, _start: u64) -> Self::Acc {
                acc
            }
        }
    )*};
}
no_index!(Sum, Mean, Min, Max);

macro_rules! with_index {
    ($($op:ident),*) => {$(
        impl<T: Element> ShardReduction<T> for $op {
            #[inline(always)]
            fn shift(mut acc: Self::Acc, start: u64) -> Self::Acc {
                if acc.index != NO_INDEX {
                    acc.index += start;
                }
                acc
            }
        }
    )*};
}
with_index!(ArgMin, ArgMax);

/// The partials of shards `0..ranks` (`partial(k)` is shard `k`'s), combined in rank order:
/// the accumulator over the whole input and its element count. The device's
/// [`combine_shards`] and the host run this same function.
#[inline(always)]
pub fn combine_records<T: Element, R: ShardReduction<T>>(
    ranks: usize,
    partial: impl Fn(usize) -> ShardPartial<R::Acc>,
) -> ShardPartial<R::Acc> {
    let mut acc = R::IDENTITY;
    let mut start = 0u64;
    let mut k = 0;
    while k < ranks {
        let shard = partial(k);
        acc = R::combine(acc, R::shift(shard.acc, start));
        start += shard.count;
        k += 1;
    }
    ShardPartial { count: start, acc }
}

/// The result over the whole input: finished with the total count, or the operator's `EMPTY`
/// when every shard was empty (`0` for sums, NaN for means, the identity for min and max, index
/// [`NO_INDEX`] for the arg operators, as the row kernels write for an empty row).
#[inline(always)]
pub fn finish_records<T: Element, R: ShardReduction<T>>(whole: ShardPartial<R::Acc>) -> R::Out {
    if whole.count == 0 {
        R::EMPTY
    } else {
        R::finish(whole.acc, whole.count as usize)
    }
}

/// One shard's reduction: v8's single pass, the accumulator left unfinished, with the count.
pub fn reduce_shard<T: Element, R: ShardReduction<T>>(
    input: GlobalSlice<T>,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<ShardPartial<R::Acc>>,
) {
    let count = input.len() as u64;
    single_pass::<T, R>(input, scratch, |acc| {
        output.store(0, ShardPartial { count, acc })
    });
}

/// The gathered partials of every shard, in rank order, combined and finished by thread 0.
pub fn combine_shards<T: Element, R: ShardReduction<T>>(
    partials: GlobalSliceMut<ShardPartial<R::Acc>>,
    output: GlobalSliceMut<R::Out>,
) {
    if thread_idx_x() != 0 {
        return;
    }
    let whole = combine_records::<T, R>(partials.len(), |k| partials.load(k));
    output.store(0, finish_records::<T, R>(whole));
}

/// `reduce_shard` with its parameters out of `launch`.
///
/// # Safety
/// The launch contract of [`Launch`], with `output` holding one `ShardPartial<R::Acc>`.
#[inline(always)]
unsafe fn shard_call<T: Element, R: ShardReduction<T>>(launch: Launch) {
    // SAFETY: the caller's launch contract.
    unsafe { reduce_shard::<T, R>(launch.input(), launch.scratch(), launch.output()) }
}

/// `combine_shards` with its parameters out of `launch`: `input` holds `len` partials.
///
/// # Safety
/// The launch contract of [`Launch`], with `input` holding `len` `ShardPartial<R::Acc>`s.
#[inline(always)]
unsafe fn combine_call<T: Element, R: ShardReduction<T>>(launch: Launch) {
    // SAFETY: the contract: `input` holds `len` partials, readable and unchanged for the
    // launch; the view is only read from (`load`), never written.
    let partials = unsafe {
        GlobalSliceMut::<ShardPartial<R::Acc>>::from_raw(
            launch.input.cast_mut().cast(),
            launch.sizes.len as usize,
        )
    };
    // SAFETY: the caller's launch contract.
    unsafe { combine_shards::<T, R>(partials, launch.output()) }
}

/// The two entry points of one (type, operator), or the simulator's lookup of them.
macro_rules! shard_entries {
    ((define) $tn:ident [$t:ty] $on:ident [$op:ty]) => {
        pastey::paste! {
            shard_entries!(@one [<shard_ $tn _ $on>] shard_call $t, $op);
            shard_entries!(@one [<combine_ $tn _ $on>] combine_call $t, $op);
        }
    };
    (@one $name:ident $call:ident $t:ty, $op:ty) => {
        /// # Safety
        /// The launch contract of [`crate::params::Params`].
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[allow(improper_gpu_kernel_arg)]
        pub unsafe extern "gpu-kernel" fn $name(
            input: *const u8,
            partials: *mut u8,
            retired: *mut u32,
            output: *mut u8,
            offsets: *const u64,
            sizes: $crate::params::Params,
        ) {
            let launch = $crate::params::Launch {
                input,
                partials,
                retired,
                output,
                offsets,
                sizes,
            };
            // SAFETY: the caller's launch contract is what the views require.
            unsafe { super::$call::<$t, $op>(launch) }
        }
        /// # Safety
        /// The launch contract of [`crate::params::Launch`], with host addresses of buffers
        /// the simulator registered as global memory.
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name(launch: $crate::params::Launch) {
            // SAFETY: as above.
            unsafe { super::$call::<$t, $op>(launch) }
        }
    };
    ((lookup $wanted:ident) $tn:ident [$t:ty] $on:ident [$op:ty]) => {
        pastey::paste! {
            if $wanted == stringify!([<shard_ $tn _ $on>]) {
                return Some(entries::[<shard_ $tn _ $on>] as $crate::params::SimEntry);
            }
            if $wanted == stringify!([<combine_ $tn _ $on>]) {
                return Some(entries::[<combine_ $tn _ $on>] as $crate::params::SimEntry);
            }
        }
    };
}

/// The entry points (`shard_f32_sum`, `combine_f32_sum`, …; every element type and operator).
pub mod entries {
    for_op_set!(Library shard_entries(define));
}

/// The simulator's entry point called `wanted`, if it is a shard kernel.
#[cfg(not(target_arch = "nvptx64"))]
pub fn sim_entry(wanted: &str) -> Option<crate::params::SimEntry> {
    for_op_set!(Library shard_entries(lookup wanted));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Arg;
    use std::vec::Vec;

    /// Shard partials of `xs` cut at `cuts`, as `reduce_shard` computes them (in order).
    fn partials<T: Element, R: ShardReduction<T>>(
        xs: &[T],
        cuts: &[usize],
    ) -> Vec<ShardPartial<R::Acc>> {
        let mut bounds = Vec::from(cuts);
        bounds.insert(0, 0);
        bounds.push(xs.len());
        bounds
            .windows(2)
            .map(|w| {
                let shard = &xs[w[0]..w[1]];
                let acc = shard
                    .iter()
                    .enumerate()
                    .fold(R::IDENTITY, |acc, (i, &x)| R::combine(acc, R::lift(x, i)));
                ShardPartial {
                    count: shard.len() as u64,
                    acc,
                }
            })
            .collect()
    }

    fn whole<T: Element, R: ShardReduction<T>>(xs: &[T], cuts: &[usize]) -> R::Out {
        let parts = partials::<T, R>(xs, cuts);
        finish_records::<T, R>(combine_records::<T, R>(parts.len(), |k| parts[k]))
    }

    #[test]
    fn arg_indices_become_global_and_ties_go_to_the_earlier_shard() {
        let xs = [1.0f32, 7.0, 3.0, 7.0, -2.0, 9.0, 9.0, -2.0];
        for cuts in [&[][..], &[3], &[5], &[0, 0, 6], &[2, 2, 8]] {
            assert_eq!(
                whole::<f32, ArgMax>(&xs, cuts),
                Arg {
                    index: 5,
                    value: 9.0
                },
                "{cuts:?}"
            );
            assert_eq!(whole::<f32, ArgMin>(&xs, cuts).index, 4, "{cuts:?}");
        }
        let nans = [1.0f32, 2.0, f32::NAN, 9.0, f32::NAN];
        assert_eq!(whole::<f32, ArgMax>(&nans, &[3]).index, 2);
        assert_eq!(whole::<f32, ArgMin>(&nans, &[1, 4]).index, 2);
    }

    #[test]
    fn empty_shards_and_empty_inputs() {
        assert_eq!(whole::<f32, ArgMax>(&[], &[0, 0]).index, NO_INDEX);
        assert_eq!(whole::<i32, Sum>(&[], &[0]), 0);
        assert!(whole::<f64, Mean>(&[], &[0]).is_nan());
        assert_eq!(whole::<i32, Mean>(&[1, 2, 4], &[0, 1, 1, 3]), 7.0 / 3.0);
        assert_eq!(whole::<u32, Max>(&[4, 9, 2], &[1, 1]), 9);
        let partial = <Min as ShardReduction<u64>>::empty_partial();
        assert_eq!((partial.count, partial.acc), (0, u64::MAX));
    }

    #[test]
    fn partial_words_round_trip() {
        let partial = ShardPartial {
            count: 0x1_0000_0002,
            acc: Arg {
                index: 7,
                value: -1.5f64,
            },
        };
        assert_eq!(ShardPartial::from_words(partial.to_words()), partial);
    }
}
