//! [`Min`] and [`Max`]: the element with the best key, found by comparing keys (one integer
//! instruction each), a group at a time by its extreme key where the element type finds that
//! fast.

use super::reduction::{Reduction, best_down_lane, group_tree};
use crate::element::{Element, Vector16};

/// The smallest element (NaN if any element is NaN).
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;
/// The largest element (NaN if any element is NaN).
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

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
