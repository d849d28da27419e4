//! The operators' rules, element by element: identities, NaN, signed zeros, ties, the
//! 16-bit floats' sums in `f32`.

use super::reduction::group_tree;
use super::*;
use crate::element::{Element, Value, Vector16};
use std::vec::Vec;

fn fold<T: Element, R: Reduction<T>>(xs: &[T]) -> R::Out {
    let acc = xs
        .iter()
        .enumerate()
        .fold(R::IDENTITY, |acc, (i, &x)| R::combine(acc, R::lift(x, i)));
    R::finish(acc, xs.len())
}

#[test]
fn min_and_max_propagate_nan_and_order_signed_zeros() {
    assert!(fold::<f32, Min>(&[1.0, f32::NAN, -3.0]).is_nan());
    assert!(fold::<f32, Max>(&[1.0, f32::NAN, -3.0]).is_nan());
    assert!(fold::<f32, Min>(&[0.0, -0.0]).is_sign_negative());
    assert!(fold::<f32, Max>(&[-0.0, 0.0]).is_sign_positive());
    assert_eq!(fold::<i32, Max>(&[-5, -2, -9]), -2);
    assert_eq!(fold::<u64, Min>(&[5, u64::MAX, 3]), 3);
}

#[test]
fn arg_operators_take_the_first_occurrence_and_the_first_nan() {
    let xs = [1.0f32, 7.0, 3.0, 7.0, -2.0, -2.0];
    assert_eq!(
        fold::<f32, ArgMax>(&xs),
        Arg {
            index: 1,
            value: 7.0
        }
    );
    assert_eq!(
        fold::<f32, ArgMin>(&xs),
        Arg {
            index: 4,
            value: -2.0
        }
    );
    let nans = [1.0f32, f32::NAN, 9.0, f32::NAN];
    assert_eq!(fold::<f32, ArgMax>(&nans).index, 1);
    assert_eq!(fold::<f32, ArgMin>(&nans).index, 1);
    // Order of combination does not matter: combine the pairs backwards.
    let lifted: Vec<_> = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| ArgMax::lift(x, i))
        .collect();
    let backwards = lifted
        .iter()
        .rev()
        .fold(<ArgMax as Reduction<f32>>::IDENTITY, |a, &b| {
            ArgMax::combine(b, a)
        });
    assert_eq!(backwards.index, 1);
    assert_eq!(fold::<f32, ArgMax>(&[]).index, NO_INDEX);
    assert_eq!(fold::<u64, ArgMax>(&[0, 0]), Arg { index: 0, value: 0 });
    assert_eq!(
        fold::<u64, ArgMin>(&[u64::MAX]),
        Arg {
            index: 0,
            value: u64::MAX
        }
    );
}

/// `R::vector` (the fast path) against lifting and combining lane by lane.
fn vector_agrees<T, R: Reduction<T>>(lanes: [T; 4], first: usize)
where
    T: Element<Vector16 = crate::element::Lanes<T, 4>> + core::fmt::Debug,
    R::Acc: PartialEq + core::fmt::Debug,
{
    let slow = lanes.iter().enumerate().fold(R::IDENTITY, |acc, (k, &x)| {
        R::combine(acc, R::lift(x, first + k))
    });
    let fast = R::vector(crate::element::Lanes(lanes), first);
    let same = fast == slow || std::format!("{fast:?}") == std::format!("{slow:?}");
    assert!(same, "{lanes:?}: fast {fast:?}, slow {slow:?}");
}

#[test]
fn the_vector_fast_paths_agree_with_combining_lane_by_lane() {
    let cases: [[f32; 4]; 6] = [
        [1.0, 7.0, 3.0, 7.0],
        [-0.0, 0.0, -0.0, 0.0],
        [2.0, f32::NAN, 5.0, f32::NAN],
        [f32::NEG_INFINITY; 4],
        [3.0, -f32::NAN, 9.0, 1.0],
        [f32::INFINITY, 1.0, f32::INFINITY, 0.0],
    ];
    for lanes in cases {
        vector_agrees::<f32, ArgMax>(lanes, 40);
        vector_agrees::<f32, ArgMin>(lanes, 40);
    }
    vector_agrees::<i32, ArgMax>([i32::MIN, -1, i32::MIN, -1], 0);
    vector_agrees::<u32, ArgMin>([u32::MAX; 4], 8);
    // Min and max: compare as values (NaN with NaN).
    let max = <Max as Reduction<f32>>::vector(crate::element::Lanes([1.0, f32::NAN, 2.0, 3.0]), 0);
    assert!(max.is_nan());
    let min = <Min as Reduction<f32>>::vector(crate::element::Lanes([0.0, -0.0, 1.0, 2.0]), 0);
    assert!(min == 0.0 && min.is_sign_negative());
}

/// A thread's loop over groups of `K` vectors, as v8's (thread `thread` of `threads`,
/// vector `v` starting at element `base + 8 v`), through `accumulate_group` (which skips
/// groups and searches lanes by the group's best key, where the type finds it fast, and for
/// every type with `BY_BEST_KEY`) against the same loop through the lane-by-lane tree.
fn groups_agree_with_the_tree<T, R, const K: usize, const BY_BEST_KEY: bool>(
    to_vector: fn([u16; 8]) -> T::Vector16,
) where
    T: Element,
    R: Reduction<T>,
{
    use crate::element::tests::{half_group, next};
    let lanes = <T::Vector16 as Vector16<T>>::LANES;
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for round in 0..4000 {
        let threads = 1 + (next(&mut seed) % 300) as usize;
        let thread = (next(&mut seed) as usize) % threads;
        let base = (next(&mut seed) % 1000) as usize;
        // The same palette for the whole input every other round (ties with the running
        // best and with the identity: all -inf, both zeros), else a new one each group.
        let mut palette = [0; 4];
        let (mut tree, mut grouped) = (R::START, R::START);
        let first = |g: usize, k: usize| base + lanes * (thread + (g * K + k) * threads);
        let mut groups = std::vec::Vec::new();
        for g in 0..4 {
            let fixed = round % 2 == 0 && g > 0;
            let group = half_group::<K>(&mut seed, &mut palette, fixed).map(to_vector);
            tree = group_tree::<T, R, K>(tree, &group, |k| first(g, k));
            grouped = R::accumulate_group::<K, BY_BEST_KEY>(grouped, &group, |k| first(g, k));
            groups.push(group);
        }
        // The walk's reload: the group whose vector 0 starts at `at`, by its start.
        let reload = |at: usize| {
            let g = (0..groups.len()).find(|&g| first(g, 0) == at);
            groups[g.expect("a group starts where resolve asks")]
        };
        let grouped = R::resolve(grouped, reload, lanes * threads);
        let (tree, grouped) = (R::settle(tree), R::settle(grouped));
        assert_eq!(
            tree.to_words().as_ref(),
            grouped.to_words().as_ref(),
            "{} {} with groups of {K}, by best key: {BY_BEST_KEY}",
            T::NAME,
            R::NAME
        );
    }
}

fn groups_of_four_and_eight_agree_with_the_tree<T, R>(to_vector: fn([u16; 8]) -> T::Vector16)
where
    T: Element,
    R: Reduction<T>,
{
    // Without `BY_BEST_KEY` only the types that skip groups leave the tree.
    if T::ARG_SKIPS_GROUPS {
        groups_agree_with_the_tree::<T, R, 4, false>(to_vector);
        groups_agree_with_the_tree::<T, R, 8, false>(to_vector);
    }
    groups_agree_with_the_tree::<T, R, 4, true>(to_vector);
    groups_agree_with_the_tree::<T, R, 8, true>(to_vector);
}

/// The same value, a NaN for a NaN whatever its bits (the key paths return one NaN for
/// all, as `vector` does).
fn same_value<T: Element>(a: T, b: T) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_words().as_ref() == b.to_words().as_ref()
}

/// `column_group` (a fast path for the extremes and the arg operators) against lifting and
/// combining row by row, over groups of eight vectors of 16-bit lanes.
fn column_groups_agree<T, R>(of_bits: fn(u16) -> T, same: impl Fn(R::Acc, R::Acc) -> bool)
where
    T: Element<Vector16 = crate::element::Lanes<T, 8>>,
    R: Reduction<T>,
    R::Acc: core::fmt::Debug,
{
    use crate::element::tests::{half_group, next};
    let mut seed = 0x2545_f491_4f6c_dd1d;
    let mut palette = [0; 4];
    for _ in 0..4000 {
        let group = half_group::<8>(&mut seed, &mut palette, false)
            .map(|lanes| crate::element::Lanes(lanes.map(of_bits)));
        let (first, step) = (
            (next(&mut seed) % 1000) as usize,
            1 + (next(&mut seed) % 9) as usize,
        );
        for lane in 0..8 {
            let index = |j: usize| first + j * step;
            let slow = (0..8).fold(R::IDENTITY, |acc, j| {
                R::combine(acc, R::lift(group[j].lanes()[lane], index(j)))
            });
            let fast = R::column_group(&group, lane, index);
            assert!(
                same(fast, slow),
                "{}: fast {fast:?}, slow {slow:?}",
                R::NAME
            );
        }
    }
}

#[test]
fn column_groups_by_key_agree_with_combining_row_by_row() {
    use crate::element::{Bf16, F16};
    fn args<T: Element>(a: Arg<T>, b: Arg<T>) -> bool {
        a.index == b.index && same_value(a.value, b.value)
    }
    column_groups_agree::<Bf16, Max>(Bf16, same_value);
    column_groups_agree::<Bf16, Min>(Bf16, same_value);
    column_groups_agree::<F16, Max>(F16, same_value);
    column_groups_agree::<F16, Min>(F16, same_value);
    column_groups_agree::<Bf16, ArgMax>(Bf16, args);
    column_groups_agree::<Bf16, ArgMin>(Bf16, args);
    column_groups_agree::<F16, ArgMax>(F16, args);
    column_groups_agree::<F16, ArgMin>(F16, args);
}

#[test]
fn groups_by_their_best_key_agree_with_the_lane_by_lane_tree() {
    use crate::element::{Bf16, F16, Lanes};
    groups_of_four_and_eight_agree_with_the_tree::<Bf16, ArgMax>(|l| Lanes(l.map(Bf16)));
    groups_of_four_and_eight_agree_with_the_tree::<Bf16, ArgMin>(|l| Lanes(l.map(Bf16)));
    groups_of_four_and_eight_agree_with_the_tree::<Bf16, Max>(|l| Lanes(l.map(Bf16)));
    groups_of_four_and_eight_agree_with_the_tree::<Bf16, Min>(|l| Lanes(l.map(Bf16)));
    groups_of_four_and_eight_agree_with_the_tree::<F16, ArgMax>(|l| Lanes(l.map(F16)));
    groups_of_four_and_eight_agree_with_the_tree::<F16, ArgMin>(|l| Lanes(l.map(F16)));
    groups_of_four_and_eight_agree_with_the_tree::<F16, Max>(|l| Lanes(l.map(F16)));
    groups_of_four_and_eight_agree_with_the_tree::<F16, Min>(|l| Lanes(l.map(F16)));
}

/// `BY_BEST_KEY` (a block or a few lanes per row) for the other types: their groups by the best
/// key (`f32`'s by `max.f32`, the others' lane by lane), a winner searched at once. The 16-bit
/// classes (zeros, infinities, NaNs, ties) widened: into the top half of an `f32`, and on to
/// `f64`; as integers, sign-extended or not.
#[test]
fn every_types_groups_by_their_best_key_agree_with_the_tree() {
    use crate::element::Lanes;
    fn both<T: Element>(to_vector: fn([u16; 8]) -> T::Vector16) {
        groups_of_four_and_eight_agree_with_the_tree::<T, ArgMax>(to_vector);
        groups_of_four_and_eight_agree_with_the_tree::<T, ArgMin>(to_vector);
    }
    fn f32_of(bits: u16) -> f32 {
        f32::from_bits(u32::from(bits) << 16)
    }
    both::<f32>(|l| Lanes(core::array::from_fn(|i| f32_of(l[i]))));
    both::<f64>(|l| Lanes(core::array::from_fn(|i| f64::from(f32_of(l[i])))));
    both::<i32>(|l| Lanes(core::array::from_fn(|i| i32::from(l[i] as i16))));
    both::<u32>(|l| Lanes(core::array::from_fn(|i| u32::from(l[i]))));
    both::<i64>(|l| Lanes(core::array::from_fn(|i| i64::from(l[i] as i16))));
    both::<u64>(|l| Lanes(core::array::from_fn(|i| u64::from(l[i]))));
}

#[test]
fn arg_words_round_trip() {
    let arg = Arg {
        index: 0x1234_5678_9abc_def0,
        value: -2.5f64,
    };
    assert_eq!(Arg::<f64>::from_words(arg.to_words()), arg);
    let half = Arg {
        index: 7,
        value: crate::element::F16(0xbc00),
    };
    assert_eq!(Arg::from_words(half.to_words()), half);
}

#[test]
fn means_and_sums_use_their_accumulators() {
    assert_eq!(fold::<i32, Sum>(&[i32::MAX, 1]), i32::MIN);
    assert_eq!(fold::<i32, Mean>(&[i32::MAX, 1]), 1073741824.0);
    assert_eq!(fold::<f32, Mean>(&[1.0, 2.0, 4.0]), 7.0 / 3.0);
    let halves = [crate::element::Bf16(0x3f80), crate::element::Bf16(0x4000)];
    assert_eq!(fold::<crate::element::Bf16, Sum>(&halves), 3.0f32);
}

/// `accumulate_column_group` of `f32` max and min (the lane's extreme by `max.f32`, compared
/// with the running best alone) against `column_group` then `accumulate`, the same bits: groups
/// of four and eight vectors drawn from every class of value, NaNs and signed zeros included.
#[test]
fn f32_column_groups_by_the_lanes_extreme_agree_with_combining_row_by_row() {
    use crate::element::Lanes;
    use crate::element::tests::{F32_CLASSES, next};
    fn agree<R: Reduction<f32, Running = f32, Acc = f32>, const K: usize>(seed: &mut u64) {
        let mut pick = || f32::from_bits(F32_CLASSES[(next(seed) % 14) as usize]);
        let group: [Lanes<f32, 4>; K] =
            core::array::from_fn(|_| Lanes(core::array::from_fn(|_| pick())));
        let running = pick();
        for lane in 0..4 {
            let fast = R::accumulate_column_group(running, &group, lane, |j| j);
            let slow = R::accumulate(running, R::column_group(&group, lane, |j| j));
            let column: Vec<u32> = group
                .iter()
                .map(|vector| vector.0[lane].to_bits())
                .collect();
            assert_eq!(
                fast.to_bits(),
                slow.to_bits(),
                "{}: running {:#x}, column {column:#x?}",
                R::NAME,
                running.to_bits()
            );
        }
    }
    let mut seed = 0x853c_49e6_748f_ea9b;
    for _ in 0..5000 {
        agree::<Max, 4>(&mut seed);
        agree::<Min, 4>(&mut seed);
        agree::<Max, 8>(&mut seed);
        agree::<Min, 8>(&mut seed);
    }
}
