//! [`ArgMin`] and [`ArgMax`]: the first element with the best key and its index, as an
//! [`Arg`]; a group of vectors at a time by its best key where the element type finds that
//! fast ([`Element::ARG_SKIPS_GROUPS`]), the winning group's lane searched once at the end of a
//! thread's walk ([`Reduction::resolve`]).

use super::reduction::{Reduction, best_down_lane, group_tree};
use crate::element::{Element, Value, Vector16, Words};

/// The index and value of the first smallest element (of the first NaN, if any).
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMin;
/// The index and value of the first largest element (of the first NaN, if any).
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMax;

/// An element and where it was: the accumulator and result of [`ArgMin`] and [`ArgMax`].
/// `index` is [`NO_INDEX`] when no element was seen (an empty input or row).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arg<T> {
    pub index: u64,
    pub value: T,
}

/// The index of an [`Arg`] that holds no element.
pub const NO_INDEX: u64 = u64::MAX;

impl<T: Element> Value for Arg<T> {
    type Words = [u32; 4];
    #[inline(always)]
    fn to_words(self) -> [u32; 4] {
        let mut words = [0; 4];
        words[0] = self.index as u32;
        words[1] = (self.index >> 32) as u32;
        let value = self.value.to_words();
        words[2..2 + value.as_ref().len()].copy_from_slice(value.as_ref());
        words
    }
    #[inline(always)]
    fn from_words(words: [u32; 4]) -> Self {
        let mut value = <T::Words as Words>::ZERO;
        let len = value.as_ref().len();
        value.as_mut().copy_from_slice(&words[2..2 + len]);
        Arg {
            index: u64::from(words[0]) | (u64::from(words[1]) << 32),
            value: T::from_words(value),
        }
    }
}

/// `a` if it beats `b` (`better` on their keys), ties to the smaller index: the same winner in
/// any order of combination.
#[inline(always)]
fn arg_winner<T: Element>(
    a: Arg<T>,
    b: Arg<T>,
    key: impl Fn(T) -> T::Key,
    better: impl Fn(T::Key, T::Key) -> bool,
) -> Arg<T> {
    let (ka, kb) = (key(a.value), key(b.value));
    if better(ka, kb) || (ka == kb && a.index <= b.index) {
        a
    } else {
        b
    }
}

/// The best key of every lane of `vectors` (`better(a, b)`: `a` is the better key), lane by
/// lane: the arg operators' group key where the element type has no faster way.
#[inline(always)]
fn best_key_by_lanes<T: Element, const K: usize>(
    vectors: &[T::Vector16; K],
    key: impl Fn(T) -> T::Key + Copy,
    better: impl Fn(T::Key, T::Key) -> bool + Copy,
) -> T::Key {
    let mut best = vectors[0].best_lane(key, better).1;
    let mut k = 1;
    while k < K {
        let candidate = vectors[k].best_lane(key, better).1;
        if better(candidate, best) {
            best = candidate;
        }
        k += 1;
    }
    best
}

/// The flag of an arg operator's running best whose lane is not found yet: its index is then
/// the index of the first element of the group that won last (flagged). Only the group walk of
/// one thread sees it (`Reduction::accumulate_group` compares keys alone), and
/// [`Reduction::resolve`] replaces it with the true index before the thread folds in anything
/// else or hands its value on. No input has 2^63 elements, so no true index has this bit. (A
/// flag bit, not a struct with a `bool` beside the `Arg`: that struct's padding made LLVM copy
/// the running best through local memory in v8's loop, 204 → 256 µs for the bf16 argmax of
/// 2^28 on the H100.)
const PENDING: u64 = 1 << 63;

/// Whether the running best `index` waits for [`Reduction::resolve`].
#[inline(always)]
fn is_pending(index: u64) -> bool {
    index != NO_INDEX && index & PENDING != 0
}

/// The first lane of `vectors` whose key is `key`: its vector and its lane in that vector.
/// Nothing else is kept: the group's best is known. Either key maps the bits one to one (the
/// NaNs aside, which share one), so this is the lane that holds the element with that key
/// ([`Element::first_lane_holding`]).
#[inline(always)]
fn first_lane_with_key<T: Element, const K: usize>(
    vectors: &[T::Vector16; K],
    key: T::Key,
) -> (usize, usize) {
    let lanes = <T::Vector16 as Vector16<T>>::LANES;
    let found = T::first_lane_holding(vectors, T::from_key(key));
    debug_assert!(found < K * lanes, "the key is one of these lanes'");
    (found / lanes, found % lanes)
}

macro_rules! arg_op {
    ($op:ident, $name:literal, $identity:ident, $key:ident, $best:ident, $better:expr) => {
        impl<T: Element> Reduction<T> for $op {
            const NAME: &'static str = $name;
            type Acc = Arg<T>;
            type Out = Arg<T>;
            const IDENTITY: Arg<T> = Arg {
                index: NO_INDEX,
                value: T::$identity,
            };
            #[inline(always)]
            fn lift(x: T, index: usize) -> Arg<T> {
                Arg {
                    index: index as u64,
                    value: x,
                }
            }
            #[inline(always)]
            fn combine(a: Arg<T>, b: Arg<T>) -> Arg<T> {
                arg_winner(a, b, T::$key, $better)
            }
            /// The first best lane by keys, then one `Arg`: the 64-bit index is computed once
            /// per vector, not once per element. The value is rebuilt from its key (the exact
            /// element, or a NaN).
            #[inline(always)]
            fn vector(vector: T::Vector16, first: usize) -> Arg<T> {
                let (lane, key) = vector.best_lane(T::$key, $better);
                Arg {
                    index: (first + lane) as u64,
                    value: T::from_key(key),
                }
            }
            /// The first row with the best key; its index computed once.
            #[inline(always)]
            fn column_group<const K: usize>(
                vectors: &[T::Vector16; K],
                lane: usize,
                index: impl Fn(usize) -> usize,
            ) -> Arg<T> {
                let (j, key) = best_down_lane(vectors, lane, T::$key, $better);
                Arg {
                    index: index(j) as u64,
                    value: T::from_key(key),
                }
            }
            /// The 16-bit floats' folds are long (their keys found two lanes a word, then
            /// compared): the next group's loads travel meanwhile.
            const PREFETCH_GROUPS: bool = T::ARG_SKIPS_GROUPS;
            /// Where the element type skips groups by their best key
            /// ([`Element::ARG_SKIPS_GROUPS`]): a group that does not beat the running best is
            /// skipped (its elements come later, so a tie loses too), and one that does becomes
            /// the pending best, its lane found by [`resolve`](Reduction::resolve). The first
            /// group always wins (the identity has no index), and is searched at once.
            /// `BY_BEST_KEY` (a kernel whose threads read few groups): every type's groups so,
            /// the best key by the type's fast way or else lane by lane; a later winner is
            /// searched at once, but for the 16-bit floats, which defer it as everywhere.
            #[inline(always)]
            fn accumulate_group<const K: usize, const BY_BEST_KEY: bool>(
                running: Arg<T>,
                vectors: &[T::Vector16; K],
                first: impl Fn(usize) -> usize,
            ) -> Arg<T> {
                let best = if T::ARG_SKIPS_GROUPS {
                    T::$best(vectors)
                } else if BY_BEST_KEY {
                    Some(
                        T::$best(vectors)
                            .unwrap_or_else(|| best_key_by_lanes(vectors, T::$key, $better)),
                    )
                } else {
                    None
                };
                match best {
                    // Searched at once: a thread's first group (every lane of a warp has it at
                    // once, so the search diverges nowhere, and a thread with one group needs
                    // no reload), and a later winner in a block or a warp per row
                    // (`BY_BEST_KEY`) for the types that skip groups only there (the 16-bit
                    // floats keep deferring theirs to `resolve`, as in the other kernels).
                    Some(key)
                        if running.index == NO_INDEX
                            || (BY_BEST_KEY
                                && !T::ARG_SKIPS_GROUPS
                                && $better(key, running.value.$key())) =>
                    {
                        let (k, lane) = first_lane_with_key::<T, K>(vectors, key);
                        Arg {
                            index: (first(k) + lane) as u64,
                            value: T::from_key(key),
                        }
                    }
                    Some(key) if $better(key, running.value.$key()) => Arg {
                        index: first(0) as u64 | PENDING,
                        value: T::from_key(key),
                    },
                    Some(_) => running,
                    None => group_tree::<T, Self, K>(running, vectors, first),
                }
            }
            /// The pending group's first lane with the best key, comparing keys only.
            #[inline(always)]
            fn resolve<const K: usize>(
                running: Arg<T>,
                reload: impl Fn(usize) -> [T::Vector16; K],
                stride: usize,
            ) -> Arg<T> {
                if !is_pending(running.index) {
                    return running;
                }
                let first = (running.index & !PENDING) as usize;
                let key = running.value.$key();
                let (k, lane) = first_lane_with_key::<T, K>(&reload(first), key);
                Arg {
                    index: (first + k * stride + lane) as u64,
                    value: running.value,
                }
            }
            #[inline(always)]
            fn map_index(acc: Arg<T>, index: impl Fn(usize) -> usize) -> Arg<T> {
                if acc.index == NO_INDEX {
                    return acc;
                }
                Arg {
                    index: index(acc.index as usize) as u64,
                    value: acc.value,
                }
            }
            #[inline(always)]
            fn finish(acc: Arg<T>, _count: usize) -> Arg<T> {
                acc
            }
            const EMPTY: Arg<T> = Self::IDENTITY;
            type Running = Arg<T>;
            const START: Arg<T> = Self::IDENTITY;
            /// `combine`: the walk resolves a pending best before it folds in anything else
            /// (the remainder, head and tail elements), so none reaches here.
            #[inline(always)]
            fn accumulate(running: Arg<T>, acc: Arg<T>) -> Arg<T> {
                debug_assert!(!is_pending(running.index), "resolve comes first");
                Self::combine(running, acc)
            }
            #[inline(always)]
            fn settle(running: Arg<T>) -> Arg<T> {
                debug_assert!(!is_pending(running.index), "a walk ends with `resolve`");
                running
            }
        }
    };
}
arg_op!(
    ArgMin,
    "argmin",
    HIGHEST,
    key_nan_low,
    smallest_key,
    |a, b| a < b
);
arg_op!(
    ArgMax,
    "argmax",
    LOWEST,
    key_nan_high,
    largest_key,
    |a, b| a > b
);
