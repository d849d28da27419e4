//! What a reduction computes: the operators, each a [`Reduction`] over an [`Element`] type.
//!
//! A reduction *lifts* every element into an accumulator (`Acc`), *combines* accumulators
//! pairwise in whatever order the kernel's threads, warps and blocks meet, and *finishes* the
//! last one into the result (`Out`). Every operator here is associative and commutative, so
//! the kernels may combine in any order; float addition is the one whose result depends on the
//! order, by rounding.
//!
//! | operator | `Acc` | `Out` | identity | empty input |
//! |---|---|---|---|---|
//! | [`Sum`] | `T`, but `f32` for `f16`/`bf16` | `Acc` | `0` (`-0.0` for floats) | `0` |
//! | [`Mean`] | `f32` for `f32`/`f16`/`bf16`, else `f64` | `Acc` | `0` | no value |
//! | [`Min`], [`Max`] | `T` | `T` | largest / smallest value | no value |
//! | [`ArgMin`], [`ArgMax`] | [`Arg<T>`] | [`Arg<T>`] | `(NO_INDEX, largest / smallest)` | no value |
//!
//! # NaN, signed zeros, ties
//! - A NaN is both the largest and the smallest value: `min`, `max` return NaN if any element
//!   is NaN, `argmin` and `argmax` the index of the first NaN (as PyTorch does).
//! - `-0.0 < +0.0` (IEEE 754-2019 `minimum`/`maximum`, and `totalOrder`): `max(-0.0, +0.0)` is
//!   `+0.0`, and `argmax([-0.0, +0.0])` is 1 (PyTorch treats the zeros as equal and says 0).
//! - Ties go to the first occurrence, the smallest index (as CUB and PyTorch do).
//! - Integer sums wrap (two's complement): the exact sum modulo 2^bits, in any order.
//! - Float sums are IEEE additions; `+inf + -inf` and a NaN anywhere give NaN.
//!
//! Every operator's combine is order-independent except float addition, so min, max, the arg
//! operators and integer sums give the same bits for any launch shape.

use crate::element::{Accumulator, Element, Value, Vector16, Words};

/// An operator the kernels reduce with. See the module docs for the semantics.
pub trait Reduction<T: Element>: Copy + Send + Sync + 'static {
    /// Name in kernel entry points and on the command line.
    const NAME: &'static str;
    /// What threads combine and blocks hand to each other (partials are `Acc`s).
    type Acc: Value;
    /// What the reduction returns.
    type Out: Value;
    /// Combining with the identity changes nothing: it pads partial blocks.
    const IDENTITY: Self::Acc;
    /// Element `x`, found at `index` of its input (only the arg operators use the index).
    fn lift(x: T, index: usize) -> Self::Acc;
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The lanes of one 16-byte vector combined (lane `k` is element `first + k`): lifted and
    /// combined as a tree, unless the operator has a cheaper way (min, max and the arg
    /// operators compare keys lane by lane: one integer instruction each).
    #[inline(always)]
    fn vector(vector: T::Vector16, first: usize) -> Self::Acc {
        vector.tree(first, Self::lift, Self::combine)
    }
    /// A group of `K` vectors (4 or 8: a thread's loads in flight) folded into `running`:
    /// vector `k`'s first element has index `first(k)`, and every element comes after all
    /// that `running` has seen. Each vector's lanes as a tree ([`vector`](Reduction::vector)),
    /// the vectors' values as a tree, then [`accumulate`](Reduction::accumulate); max, min and
    /// the arg operators skip that where the element type finds the group's extreme key fast
    /// ([`Element::largest_key`]). `BY_BEST_KEY`: the kernel's threads read few groups each
    /// (`rows_block`'s rows: often one), so the arg operators take every type's groups by their
    /// best key and search the lane at once, not only the types that skip groups everywhere
    /// ([`Element::ARG_SKIPS_GROUPS`]); the other operators ignore it.
    #[inline(always)]
    fn accumulate_group<const K: usize, const BY_BEST_KEY: bool>(
        running: Self::Running,
        vectors: &[T::Vector16; K],
        first: impl Fn(usize) -> usize,
    ) -> Self::Running {
        group_tree::<T, Self, K>(running, vectors, first)
    }
    /// Lane `lane` of `K` vectors combined, in order: the column kernel's group of loads down
    /// one column (vector `j`'s lane is element `index(j)`, increasing with `j`). Lifted and
    /// combined one by one, unless the operator has a cheaper way: min, max and the arg
    /// operators compare keys (one integer instruction each, where `combine` would work out the
    /// running value's order again for every element) and build one value at the end.
    #[inline(always)]
    fn column_group<const K: usize>(
        vectors: &[T::Vector16; K],
        lane: usize,
        index: impl Fn(usize) -> usize,
    ) -> Self::Acc {
        let mut acc = Self::IDENTITY;
        let mut j = 0;
        while j < K {
            acc = Self::combine(acc, Self::lift(vectors[j].lanes()[lane], index(j)));
            j += 1;
        }
        acc
    }
    /// Lane `lane` of `K` vectors folded into `running`: the column kernels' group of loads
    /// down one column, every element after all that `running` has seen (vector `j`'s lane is
    /// element `index(j)`, increasing with `j`). [`column_group`](Reduction::column_group),
    /// then [`accumulate`](Reduction::accumulate); max and min compare the lane's best key
    /// alone with the running best instead, where the element type finds that key fast
    /// ([`Element::lane_largest_key`]). (The arg operators measured that way lost: see
    /// `kernels-gpu/src/shapes/PROFILES.md`, "f32 max and min by `max.f32`".)
    #[inline(always)]
    fn accumulate_column_group<const K: usize>(
        running: Self::Running,
        vectors: &[T::Vector16; K],
        lane: usize,
        index: impl Fn(usize) -> usize,
    ) -> Self::Running {
        Self::accumulate(running, Self::column_group(vectors, lane, index))
    }
    /// What `accumulate_group` put off, done once at the end of a thread's walk over its
    /// groups (before `settle`). The arg operators: of all the groups that beat the ones before
    /// them, only the last holds the thread's best, so it alone is searched for the lane with
    /// that key, here, instead of every winner as it comes (a warp's lanes win at different
    /// groups, and each search would run with the losers waiting). `reload(first)` loads again
    /// the group whose vector 0 starts at element `first`; its vector `k` starts at
    /// `first + k·stride`. The other operators have nothing to finish.
    #[inline(always)]
    fn resolve<const K: usize>(
        running: Self::Running,
        _reload: impl Fn(usize) -> [T::Vector16; K],
        _stride: usize,
    ) -> Self::Running {
        running
    }
    /// `acc` with its index `i` replaced by `index(i)`: a kernel that lifts elements with
    /// a cheaper stand-in for their index (the narrow column kernel: a lane's step number)
    /// turns it into the true one. Only the arg operators hold an index (an empty one stays
    /// empty); the others return `acc`.
    #[inline(always)]
    fn map_index(acc: Self::Acc, _index: impl Fn(usize) -> usize) -> Self::Acc {
        acc
    }
    /// The result over `count` elements whose accumulator is `acc`.
    fn finish(acc: Self::Acc, count: usize) -> Self::Out;
    /// What the row and segment kernels write for an empty row: `0` for sums, NaN for means,
    /// the identity for min and max, and index [`NO_INDEX`] for the arg operators (the host
    /// turns the last three into "no value").
    const EMPTY: Self::Out;
    /// What a thread folds its groups of elements into before it combines with other threads:
    /// `Acc` itself, except for float sums, which keep a compensation beside it.
    type Running: Copy;
    const START: Self::Running;
    fn accumulate(running: Self::Running, acc: Self::Acc) -> Self::Running;
    fn settle(running: Self::Running) -> Self::Acc;
}

/// [`Reduction::accumulate_group`] lane by lane: each vector a tree, the vectors a tree.
#[inline(always)]
fn group_tree<T: Element, R: Reduction<T>, const K: usize>(
    running: R::Running,
    vectors: &[T::Vector16; K],
    first: impl Fn(usize) -> usize,
) -> R::Running {
    const { assert!(K == 4 || K == 8, "a group is four or eight vectors") };
    let value = |k: usize| R::vector(vectors[k], first(k));
    let quad = |k: usize| {
        R::combine(
            R::combine(value(k), value(k + 1)),
            R::combine(value(k + 2), value(k + 3)),
        )
    };
    let group = if K == 8 {
        R::combine(quad(0), quad(4))
    } else {
        quad(0)
    };
    R::accumulate(running, group)
}

/// The operators of the teaching versions v0–v7: the accumulator is the element itself, so
/// partials can be reduced again by the same kernel. Sum, min and max of the 32- and 64-bit
/// types are such operators.
pub trait ReduceOp<T: Element>: Reduction<T, Acc = T, Out = T> {}
impl<T: Element, R: Reduction<T, Acc = T, Out = T>> ReduceOp<T> for R {}

/// `a + b` (wrapping for integers; in `f32` for `f16`/`bf16`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;
/// `Σx / n`, added up in `f32` (`f32`, `f16`, `bf16`) or `f64` (`f64` and the integers).
#[derive(Clone, Copy, Debug, Default)]
pub struct Mean;
/// The smallest element (NaN if any element is NaN).
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;
/// The largest element (NaN if any element is NaN).
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;
/// The index and value of the first smallest element (of the first NaN, if any).
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMin;
/// The index and value of the first largest element (of the first NaN, if any).
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMax;

impl<T: Element> Reduction<T> for Sum {
    const NAME: &'static str = "sum";
    type Acc = T::SumAcc;
    type Out = T::SumAcc;
    const IDENTITY: T::SumAcc = <T::SumAcc as Accumulator>::ZERO;
    #[inline(always)]
    fn lift(x: T, _index: usize) -> T::SumAcc {
        x.to_sum()
    }
    #[inline(always)]
    fn combine(a: T::SumAcc, b: T::SumAcc) -> T::SumAcc {
        a.add(b)
    }
    #[inline(always)]
    fn finish(acc: T::SumAcc, _count: usize) -> T::SumAcc {
        acc
    }
    const EMPTY: T::SumAcc = <T::SumAcc as Accumulator>::EMPTY;
    type Running = <T::SumAcc as Accumulator>::Running;
    const START: Self::Running = <T::SumAcc as Accumulator>::START;
    #[inline(always)]
    fn accumulate(running: Self::Running, acc: T::SumAcc) -> Self::Running {
        <T::SumAcc as Accumulator>::accumulate(running, acc)
    }
    #[inline(always)]
    fn settle(running: Self::Running) -> T::SumAcc {
        <T::SumAcc as Accumulator>::settle(running)
    }
}

impl<T: Element> Reduction<T> for Mean {
    const NAME: &'static str = "mean";
    type Acc = T::MeanAcc;
    type Out = T::MeanAcc;
    const IDENTITY: T::MeanAcc = <T::MeanAcc as Accumulator>::ZERO;
    #[inline(always)]
    fn lift(x: T, _index: usize) -> T::MeanAcc {
        x.to_mean()
    }
    #[inline(always)]
    fn combine(a: T::MeanAcc, b: T::MeanAcc) -> T::MeanAcc {
        a.add(b)
    }
    #[inline(always)]
    fn finish(acc: T::MeanAcc, count: usize) -> T::MeanAcc {
        acc.divide(count)
    }
    const EMPTY: T::MeanAcc = <T::MeanAcc as Accumulator>::NAN_OR_ZERO;
    type Running = <T::MeanAcc as Accumulator>::Running;
    const START: Self::Running = <T::MeanAcc as Accumulator>::START;
    #[inline(always)]
    fn accumulate(running: Self::Running, acc: T::MeanAcc) -> Self::Running {
        <T::MeanAcc as Accumulator>::accumulate(running, acc)
    }
    #[inline(always)]
    fn settle(running: Self::Running) -> T::MeanAcc {
        <T::MeanAcc as Accumulator>::settle(running)
    }
}

/// `f(…f(f(acc, values[0]), values[1])…, values[K-1])`, written as a loop with a constant trip
/// count so that the compiler unrolls it and every value stays in a register (an array
/// iterator can leave the array in local memory).
#[inline(always)]
pub fn fold<A: Copy, const K: usize>(acc: A, values: [A; K], f: impl Fn(A, A) -> A) -> A {
    let mut acc = acc;
    let mut k = 0;
    while k < K {
        acc = f(acc, values[k]);
        k += 1;
    }
    acc
}

/// The operators whose accumulator is the element and whose result is one of the elements.
macro_rules! plain_running {
    ($t:ty) => {
        type Running = $t;
        const START: $t = Self::IDENTITY;
        #[inline(always)]
        fn accumulate(running: $t, acc: $t) -> $t {
            Self::combine(running, acc)
        }
        #[inline(always)]
        fn settle(running: $t) -> $t {
            running
        }
    };
}

/// Min and max: the element with the best key (`better`); `$of` (`Element::max_of`,
/// `min_of`) combines two, of equal keys the first operand staying.
macro_rules! extreme_op {
    ($op:ident, $name:literal, $identity:ident, $key:ident, $best:ident, $lane_best:ident, $better:expr, $of:ident) => {
        impl<T: Element> Reduction<T> for $op {
            const NAME: &'static str = $name;
            type Acc = T;
            type Out = T;
            const IDENTITY: T = T::$identity;
            #[inline(always)]
            fn lift(x: T, _index: usize) -> T {
                x
            }
            #[inline(always)]
            fn combine(a: T, b: T) -> T {
                T::$of(a, b)
            }
            #[inline(always)]
            fn vector(vector: T::Vector16, _first: usize) -> T {
                T::from_key(vector.best_lane(T::$key, $better).1)
            }
            #[inline(always)]
            fn column_group<const K: usize>(
                vectors: &[T::Vector16; K],
                lane: usize,
                _index: impl Fn(usize) -> usize,
            ) -> T {
                T::from_key(best_down_lane(vectors, lane, T::$key, $better).1)
            }
            /// The lane's best key, where the element type finds it fast, compared alone with
            /// the running best.
            #[inline(always)]
            fn accumulate_column_group<const K: usize>(
                running: T,
                vectors: &[T::Vector16; K],
                lane: usize,
                index: impl Fn(usize) -> usize,
            ) -> T {
                match T::$lane_best(vectors, lane) {
                    Some(key) if $better(key, running.$key()) => T::from_key(key),
                    Some(_) => running,
                    None => Self::accumulate(running, Self::column_group(vectors, lane, index)),
                }
            }
            /// The group's best key, where the element type finds it fast, is its result.
            #[inline(always)]
            fn accumulate_group<const K: usize, const BY_BEST_KEY: bool>(
                running: T,
                vectors: &[T::Vector16; K],
                first: impl Fn(usize) -> usize,
            ) -> T {
                match T::$best(vectors) {
                    Some(key) if $better(key, running.$key()) => T::from_key(key),
                    Some(_) => running,
                    None => group_tree::<T, Self, K>(running, vectors, first),
                }
            }
            #[inline(always)]
            fn finish(acc: T, _count: usize) -> T {
                acc
            }
            const EMPTY: T = Self::IDENTITY;
            plain_running!(T);
        }
    };
}
extreme_op!(
    Min,
    "min",
    HIGHEST,
    key_nan_low,
    smallest_key,
    lane_smallest_key,
    |a, b| a < b,
    min_of
);
extreme_op!(
    Max,
    "max",
    LOWEST,
    key_nan_high,
    largest_key,
    lane_largest_key,
    |a, b| a > b,
    max_of
);

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

/// The first of `K` vectors whose lane `lane` has the best key (`better(a, b)`: `a` beats
/// `b`), and that key: a constant trip count, so the vectors stay in registers.
#[inline(always)]
fn best_down_lane<T: Element, const K: usize>(
    vectors: &[T::Vector16; K],
    lane: usize,
    key: impl Fn(T) -> T::Key,
    better: impl Fn(T::Key, T::Key) -> bool,
) -> (usize, T::Key) {
    let mut best = (0, key(vectors[0].lanes()[lane]));
    let mut j = 1;
    while j < K {
        let candidate = key(vectors[j].lanes()[lane]);
        if better(candidate, best.1) {
            best = (j, candidate);
        }
        j += 1;
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
                    // A thread's first group: every lane of a warp has it at once, so the
                    // search diverges nowhere, and a thread with one group needs no reload.
                    Some(key) if running.index == NO_INDEX => {
                        let (k, lane) = first_lane_with_key::<T, K>(vectors, key);
                        Arg {
                            index: (first(k) + lane) as u64,
                            value: T::from_key(key),
                        }
                    }
                    // A block per row's later winner, for the types that skip groups only
                    // there (the 16-bit floats keep deferring theirs to `resolve`, as in the
                    // other kernels).
                    Some(key)
                        if BY_BEST_KEY
                            && !T::ARG_SKIPS_GROUPS
                            && $better(key, running.value.$key()) =>
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

#[cfg(test)]
mod tests;
