//! The [`Reduction`] trait every operator implements, and [`ReduceOp`], the teaching versions'
//! operators; what the operators' files share: folding a group of vectors as a tree
//! ([`group_tree`]), the best key down one lane of a group ([`best_down_lane`]); and [`fold`],
//! the kernels' unrolled fold of a few values.

use crate::element::{Element, Value, Vector16};

/// An operator the kernels reduce with. See [`ops`](super) for the semantics.
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
    /// (`rows_block`'s rows: often one group a thread; `rows_warp`'s lanes: a few), so the arg
    /// operators take every
    /// type's groups by their best key and search the lane at once, not only the types that
    /// skip groups everywhere ([`Element::ARG_SKIPS_GROUPS`]); the other operators ignore it.
    #[inline(always)]
    fn accumulate_group<const K: usize, const BY_BEST_KEY: bool>(
        running: Self::Running,
        vectors: &[T::Vector16; K],
        first: impl Fn(usize) -> usize,
    ) -> Self::Running {
        group_tree::<T, Self, K>(running, vectors, first)
    }
    /// Whether a thread's walk issues its next group's loads before it folds this one
    /// ([`accumulate_group`](Reduction::accumulate_group)), so that they travel while it is
    /// folded: a second group of registers held through the fold, in the kernels that let it
    /// (v8, whose shards' kernels share its walk, and `rows_split`; not `rows_warp` or
    /// `rows_block`). Measured on the
    /// H100 against the plain walk, each as planned (`kernels-gpu/src/shapes/PROFILES.md`,
    /// "The vocabulary argmax instruction by instruction" for the experiment, "The prefetch
    /// kept for the 16-bit arg operators" for the product): the 16-bit floats' arg operators,
    /// whose folds are long integer work with the loads' first use at their head, gained (whole
    /// bf16 argmax of 2^24 22.75 → 21.15 µs; in `rows_split`, 16 vocabulary rows 13.17 → 11.06,
    /// 64 rows 16.34 → 15.76, `docs/runs/2026-12-07/`); the other operators, whose folds are
    /// short, lost or stayed (whole `f32` argmax of 2^28 352.9 → 360.2, segments of ~300 sums
    /// 45.5 → 56.1). Off for all but those.
    const PREFETCH_GROUPS: bool = false;
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
    /// the identity for min and max, and index [`NO_INDEX`](super::NO_INDEX) for the arg
    /// operators (the host turns the last three into "no value").
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
pub(super) fn group_tree<T: Element, R: Reduction<T>, const K: usize>(
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

/// The first of `K` vectors whose lane `lane` has the best key (`better(a, b)`: `a` beats
/// `b`), and that key: a constant trip count, so the vectors stay in registers.
#[inline(always)]
pub(super) fn best_down_lane<T: Element, const K: usize>(
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

/// The operators of the teaching versions v0–v7: the accumulator is the element itself, so
/// partials can be reduced again by the same kernel. Sum, min and max of the 32- and 64-bit
/// types are such operators.
pub trait ReduceOp<T: Element>: Reduction<T, Acc = T, Out = T> {}
impl<T: Element, R: Reduction<T, Acc = T, Out = T>> ReduceOp<T> for R {}

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
