//! `Binned` against the golden values of the CUB research memo (a line-by-line host port of
//! CUB's `rfa.cuh`), against exact sums, and against itself in other orders and splits.

use super::binned::counts::Counts;
use super::binned::{Binned, BinnedFloat};
use super::kernel::lane_sum_of_states;
use crate::element::Value;
use std::format;
use std::vec;
use std::vec::Vec;

/// A small seeded generator (splitmix64): tests need no crate for this.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in [-1, 1), every bit of a random f32 mantissa (values near 0 have low bits).
    fn unit_f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            xs.swap(i, self.below(i + 1));
        }
    }
}

/// `0x1.b1253p+22` → its value (the memo writes states as C hex floats).
fn hex(text: &str) -> f64 {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let text = text.strip_prefix("0x").expect("0x");
    let (mantissa, exponent) = text.split_once('p').expect("p");
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut value = u64::from_str_radix(whole, 16).unwrap() as f64;
    for (k, digit) in fraction.chars().enumerate() {
        value += digit.to_digit(16).unwrap() as f64 / 16f64.powi(k as i32 + 1);
    }
    let value = value * 2f64.powi(exponent.parse().unwrap());
    if negative { -value } else { value }
}

fn words<F: BinnedFloat>(state: &Binned<F>) -> Vec<u32> {
    state.to_words().as_ref().to_vec()
}

/// The kernel's way: batches, one `update` per batch to its largest magnitude, deposits
/// without renormalising until `ENDURANCE` would be passed, then one renorm at the end.
fn batched<F: BinnedFloat>(xs: &[F], batch: usize) -> Binned<F> {
    let mut state = Binned::EMPTY;
    let mut pending = 0;
    for chunk in xs.chunks(batch) {
        if pending + chunk.len() as u32 > F::ENDURANCE {
            state.renorm();
            pending = 0;
        }
        pending += chunk.len() as u32;
        let largest = chunk.iter().fold(F::ZERO, |m, &x| m.max_abs(x));
        state.update(F::index_for(largest));
        for &x in chunk {
            if state.in_top_bin() {
                state.deposit_top(x);
            } else {
                state.deposit(x);
            }
        }
    }
    state.renorm();
    state
}

/// `0`, `shards - 1` random places in `0..=len` and `len`, in order: the bounds of `shards`
/// pieces of a slice of `len` (some empty).
fn random_cuts(len: usize, rng: &mut Rng, shards: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..shards - 1).map(|_| rng.below(len + 1)).collect();
    cuts.extend([0, len]);
    cuts.sort();
    cuts
}

/// `xs` cut at random places into shards, each summed on its own, merged in a random order.
fn split_and_merge<F: BinnedFloat>(xs: &[F], rng: &mut Rng, shards: usize) -> Binned<F> {
    let mut states: Vec<Binned<F>> = random_cuts(xs.len(), rng, shards)
        .windows(2)
        .map(|w| batched(&xs[w[0]..w[1]], 1 + rng.below(40)))
        .collect();
    rng.shuffle(&mut states);
    // A random tree: merge two random states until one is left.
    while states.len() > 1 {
        let a = states.swap_remove(rng.below(states.len()));
        let b = rng.below(states.len());
        let mut merged = a;
        merged.merge(&states[b]);
        states[b] = merged;
    }
    states.pop().unwrap_or(Binned::EMPTY)
}

#[test]
fn golden_values_of_the_cub_port() {
    let tenths: Vec<f32> = (0..10_000).map(|i| i as f32 * 0.1f32).collect();
    let state = Binned::sum_of(tenths.iter().copied());
    let (primary, carry, _) = state.parts();
    assert_eq!(state.index(), 9);
    let expected = ["0x1.b1253p+22", "0x1.8009ap+9", "0x1.955556p-4"];
    for (p, e) in primary.iter().zip(expected) {
        assert_eq!(*p, hex(e) as f32, "{primary:?}");
    }
    assert_eq!(carry, [4.0, 0.0, 0.0]);
    assert_eq!(state.value(), hex("0x1.31253p+22") as f32);
    assert_eq!(state.value(), 4_999_500.0);

    let harmonic = Binned::sum_of((1..=100_000).map(|i| 1.0f32 / i as f32));
    assert_eq!(
        (harmonic.index(), harmonic.parts().1),
        (9, [0.0, 0.0, 54.0])
    );
    assert_eq!(harmonic.value(), hex("0x1.82e27ap+3") as f32);

    let harmonic = Binned::sum_of((1..=100_000).map(|i| 1.0f64 / i as f64));
    assert_eq!(
        (harmonic.index(), harmonic.parts().1),
        (25, [0.0, 4.0, -1.0])
    );
    assert_eq!(harmonic.value(), hex("0x1.82e27a22f3fbp+3"));

    let cancelling = Binned::sum_of((0..1000).flat_map(|_| [1e8f32, 1.0, -1e8]));
    assert_eq!((cancelling.index(), cancelling.value()), (7, 1000.0));

    let negative = Binned::sum_of([-2.5f32]);
    let (primary, carry, _) = negative.parts();
    assert_eq!(negative.index(), 9);
    assert_eq!(primary[0], hex("0x1.bffff6p+22") as f32);
    assert_eq!(carry, [-1.0, 0.0, 0.0]);
    assert_eq!(negative.value(), -2.5);

    // Near f32::MAX the top fold is the compressed bin 0.
    let huge = Binned::sum_of([3e38f32]);
    let (primary, _, _) = huge.parts();
    assert_eq!(huge.index(), 0);
    assert!(huge.in_top_bin());
    for (p, e) in primary
        .iter()
        .zip(["0x1.801c36p+127", "0x1.800798p+126", "0x1.8p+113"])
    {
        assert_eq!(*p, hex(e) as f32, "{primary:?}");
    }
    assert_eq!(huge.value(), 3e38);
}

#[test]
fn f32_sums_whose_bits_the_folds_hold_are_correctly_rounded() {
    // Multiples of 2^-24 in [-1, 1): every bit lies within the three folds, so the state is
    // the exact sum, and the value is it rounded once (f64 adds these exactly).
    let mut rng = Rng(7);
    for n in [1usize, 2, 3, 100, 4096, 100_000] {
        let xs: Vec<f32> = (0..n)
            .map(|_| (rng.next() >> 39) as i64 - (1 << 24))
            .map(|k| k as f32 / (1u64 << 24) as f32)
            .collect();
        let exact: f64 = xs.iter().map(|&x| f64::from(x)).sum();
        let state = Binned::sum_of(xs.iter().copied());
        assert_eq!(state.value(), exact as f32, "n = {n}");
        assert_eq!(words(&batched(&xs, 16)), words(&state), "n = {n}");
    }
}

#[test]
fn f64_sums_are_the_exact_sum_rounded_once() {
    let mut rng = Rng(11);
    for n in [1usize, 5, 1000, 50_000] {
        let ks: Vec<i64> = (0..n)
            .map(|_| (rng.next() >> 13) as i64 - (1 << 50))
            .collect();
        let scale = 2f64.powi(-40);
        let xs: Vec<f64> = ks.iter().map(|&k| k as f64 * scale).collect();
        // The exact sum rounded once (`i128 as f64` rounds to nearest, even on ties).
        let exact = ks.iter().map(|&k| i128::from(k)).sum::<i128>() as f64 * scale;
        let got = Binned::sum_of(xs.iter().copied()).value();
        assert_eq!(got, exact, "n = {n}");
    }
    // One rounding: 1 + 2^-53 + 2^-60 lies just past the midpoint between 1 and the next f64;
    // adding the folds' terms up in plain f64 (CUB's conversion) rounds 1 + 2^-53 to 1 first.
    let xs = [1.0, 2f64.powi(-53), 2f64.powi(-60)];
    assert_eq!(Binned::sum_of(xs).value(), 1.0 + 2f64.powi(-52));
}

#[test]
fn random_splits_and_merge_orders_give_the_same_bits() {
    let mut rng = Rng(3);
    for round in 0..20 {
        let n = 1 + rng.below(5000);
        // Magnitudes over a wide range, so that shards start at different bins.
        let xs: Vec<f32> = (0..n)
            .map(|_| rng.unit_f32() * 2f32.powi(rng.below(60) as i32 - 30))
            .collect();
        let whole = Binned::sum_of(xs.iter().copied());
        for shards in [1, 2, 3, 7, 64] {
            let merged = split_and_merge(&xs, &mut rng, shards);
            assert_eq!(
                words(&merged),
                words(&whole),
                "round {round}, {shards} shards"
            );
        }
        let mut shuffled = xs.clone();
        rng.shuffle(&mut shuffled);
        assert_eq!(
            words(&batched(&shuffled, 13)),
            words(&whole),
            "round {round}"
        );

        let xs64: Vec<f64> = xs
            .iter()
            .map(|&x| f64::from(x) * 1e200 * f64::from(x))
            .collect();
        let whole = Binned::sum_of(xs64.iter().copied());
        let merged = split_and_merge(&xs64, &mut rng, 5);
        assert_eq!(words(&merged), words(&whole), "round {round} (f64)");
    }
}

#[test]
fn renormalising_often_or_rarely_gives_the_same_state() {
    // Thousands of deposits of one sign between renormalisations (the endurance), against one
    // renorm per deposit: CUB's bug (b) would show here as a different state.
    let xs = vec![0.999_999_9f32; 20_000];
    let sequential = Binned::sum_of(xs.iter().copied());
    for batch in [1, 16, 64, 511, 512] {
        assert_eq!(words(&batched(&xs, batch)), words(&sequential), "{batch}");
    }
    assert_eq!(sequential.value(), 19_999.998);
}

#[test]
fn nan_and_infinities_are_summed_aside_in_any_order() {
    let canonical = f32::NAN.to_bits();
    let sum = |xs: &[f32]| Binned::sum_of(xs.iter().copied()).value();
    assert_eq!(sum(&[1.0, f32::INFINITY, 2.0]), f32::INFINITY);
    assert_eq!(sum(&[1.0, f32::NEG_INFINITY]), f32::NEG_INFINITY);
    assert_eq!(
        sum(&[f32::INFINITY, 5.0, f32::NEG_INFINITY]).to_bits(),
        canonical
    );
    assert_eq!(
        sum(&[f32::from_bits(0xffc0_1234), 1.0]).to_bits(),
        canonical
    );
    assert_eq!(sum(&[f32::NAN, f32::INFINITY]).to_bits(), canonical);
    // Merging: the specials add up whatever the split.
    let mut a = Binned::sum_of([f32::INFINITY, 1.0]);
    let b = Binned::sum_of([2.0f32, f32::NEG_INFINITY]);
    a.merge(&b);
    assert_eq!(a.value().to_bits(), canonical);
    let mut c = Binned::sum_of([3.0f32]);
    c.merge(&Binned::sum_of([f32::INFINITY]));
    assert_eq!(c.value(), f32::INFINITY);
    // A finite sum that overflows is +inf (CUB: the same), not NaN.
    assert_eq!(sum(&[f32::MAX, f32::MAX]), f32::INFINITY);
    assert_eq!(sum(&[f32::MAX, 1.0]), f32::MAX);
    let sum64 = |xs: &[f64]| Binned::sum_of(xs.iter().copied()).value();
    assert_eq!(sum64(&[f64::INFINITY, -1.0]), f64::INFINITY);
    assert!(sum64(&[f64::NAN, 1.0]).to_bits() == f64::NAN.to_bits());
}

#[test]
fn zeros_and_empty_inputs_are_positive_zero() {
    let empty = Binned::<f32>::EMPTY;
    assert_eq!(empty.value().to_bits(), 0);
    for xs in [vec![0.0f32; 10], vec![-0.0f32; 10], vec![0.0, -0.0]] {
        let state = Binned::sum_of(xs.iter().copied());
        assert_eq!(state.value().to_bits(), 0, "{xs:?}");
        // CUB's bug (a): an all-zero input left garbage that depended on the split.
        let mut rng = Rng(5);
        assert_eq!(words(&split_and_merge(&xs, &mut rng, 3)), words(&state));
    }
    // Exact cancellation is +0 too.
    assert_eq!(Binned::sum_of([1.5f32, -1.5]).value().to_bits(), 0);
    assert_eq!(Binned::sum_of([0.0f64; 3]).value().to_bits(), 0);
    // Merging with an empty state changes nothing, from either side.
    let x = Binned::sum_of([1.25f32, 7.0]);
    let (mut left, mut right) = (Binned::EMPTY, x);
    left.merge(&x);
    right.merge(&Binned::EMPTY);
    assert_eq!(words(&left), words(&x));
    assert_eq!(words(&right), words(&x));
}

#[test]
fn subnormals_count_down_to_the_smallest() {
    // Below 2^-119 (f32) the last fold is the bottom bin, whose ulp is the smallest subnormal:
    // sums of subnormals are exact (CUB's finest bin has an ulp of 2^-144 and rounds them away).
    let tiny = 2f32.powi(-140);
    assert!(tiny < f32::MIN_POSITIVE);
    assert_eq!(
        Binned::sum_of(std::iter::repeat_n(tiny, 1000)).value(),
        1000.0 * tiny
    );
    let mut rng = Rng(9);
    let xs: Vec<f32> = (0..3000)
        .map(|_| f32::from_bits((rng.next() as u32) & 0x807f_ffff))
        .collect();
    let whole = Binned::sum_of(xs.iter().copied());
    assert_eq!(words(&split_and_merge(&xs, &mut rng, 9)), words(&whole));
    // Exact in f64 (35 bits), rounded once.
    let exact: f64 = xs.iter().map(|&x| f64::from(x)).sum();
    assert_eq!(whole.value(), exact as f32);
    // f64 subnormals down to 2^-1074 (CUB's index quirk drops them all).
    let tiny = 2f64.powi(-1050);
    assert_eq!(
        Binned::sum_of(std::iter::repeat_n(tiny, 8)).value(),
        8.0 * tiny
    );
    assert_eq!(
        Binned::sum_of([f64::from_bits(1), f64::from_bits(2)]).value(),
        f64::from_bits(3)
    );
}

#[test]
fn values_near_the_top_of_the_range_use_the_compressed_bin() {
    let sum = |xs: &[f32]| Binned::sum_of(xs.iter().copied()).value();
    assert_eq!(sum(&[f32::MAX, -f32::MAX, 2f32.powi(100)]), 2f32.powi(100));
    assert_eq!(sum(&[f32::MAX, f32::MAX / 2.0, -f32::MAX]), f32::MAX / 2.0);
    // The exact sum of these three f32s, rounded once (2e38 itself is not it).
    let exact = (-3e38f32 as f64 + -1e38f32 as f64 + 2e38f32 as f64) as f32;
    assert_eq!(sum(&[-3e38, -1e38, 2e38]), exact);
    let mut rng = Rng(13);
    let xs: Vec<f32> = (0..2000).map(|_| rng.unit_f32() * 1e35).collect();
    let whole = Binned::sum_of(xs.iter().copied());
    assert_eq!(words(&split_and_merge(&xs, &mut rng, 6)), words(&whole));
    assert_eq!(words(&batched(&xs, 16)), words(&whole));

    // f64: CUB's bug (e) scaled these by 2^-132.
    let sum64 = |xs: &[f64]| Binned::sum_of(xs.iter().copied()).value();
    assert_eq!(sum64(&[1e300]), 1e300);
    assert_eq!(sum64(&[1e308, 1e308, -1e308]), 1e308);
    assert_eq!(sum64(&[f64::MAX, f64::MAX]), f64::INFINITY);
    assert_eq!(
        sum64(&[-f64::MAX, 2f64.powi(1000), f64::MAX]),
        2f64.powi(1000)
    );
    let xs: Vec<f64> = (0..500)
        .map(|_| f64::from(rng.unit_f32()) * 1e306)
        .collect();
    let whole = Binned::sum_of(xs.iter().copied());
    assert_eq!(words(&split_and_merge(&xs, &mut rng, 4)), words(&whole));
    let exact: f64 = xs.iter().sum();
    assert!((whole.value() - exact).abs() <= 1e-12 * xs.iter().map(|x| x.abs()).sum::<f64>());
}

/// `xs` cut into `shards` (some empty), each shard's state as [`Counts`] (`sum_of`: infinities
/// go to the special sum), added up as the
/// warp merge does: a tree of `Counts::plus` with no state in between, turned into a state once.
fn counts_tree<F: BinnedFloat>(xs: &[F], rng: &mut Rng, shards: usize) -> Binned<F> {
    let mut counts: Vec<Counts<F>> = random_cuts(xs.len(), rng, shards)
        .windows(2)
        .map(|w| Counts::of(&Binned::sum_of(xs[w[0]..w[1]].iter().copied())))
        .collect();
    while counts.len() > 1 {
        let a = counts.swap_remove(rng.below(counts.len()));
        let b = rng.below(counts.len());
        counts[b] = counts[b].plus(&a);
    }
    counts[0].to_state()
}

#[test]
fn trees_of_counts_give_the_state_of_one_sequential_sum() {
    let mut rng = Rng(21);
    // Magnitudes from the subnormals to near f32::MAX (the compressed bin), so that the shards'
    // top folds differ by 0, 1, 2 and more bins; a NaN-free infinity in some rounds.
    for round in 0..40 {
        let n = 1 + rng.below(3000);
        let spread = 1 + rng.below(276) as i32;
        let mut xs: Vec<f32> = (0..n)
            .map(|_| rng.unit_f32() * 2f32.powi(rng.below(spread as usize) as i32 - 148).min(1e37))
            .collect();
        if round % 10 == 9 {
            xs[rng.below(n)] = f32::INFINITY;
        }
        let whole = Binned::sum_of(xs.iter().copied());
        for shards in [1, 2, 5, 32, 200] {
            let tree = counts_tree(&xs, &mut rng, shards);
            assert_eq!(
                words(&tree),
                words(&whole),
                "round {round}, {shards} shards"
            );
        }
        let xs64: Vec<f64> = xs
            .iter()
            .map(|&x| f64::from(x) * 2f64.powi(rng.below(1800) as i32 - 900))
            .collect();
        let whole = Binned::sum_of(xs64.iter().copied());
        let tree = counts_tree(&xs64, &mut rng, 32);
        assert_eq!(words(&tree), words(&whole), "round {round} (f64)");
    }
    // A state of nothing, and nothing but an infinity, through counts.
    let empty = Counts::<f32>::of(&Binned::EMPTY).plus(&Counts::of(&Binned::EMPTY));
    assert_eq!(words(&empty.to_state()), words(&Binned::<f32>::EMPTY));
    let inf = Binned::sum_of([f32::INFINITY]);
    assert_eq!(words(&Counts::of(&inf).to_state()), words(&inf));
}

#[test]
fn merges_count_more_ulps_than_64_bits_hold() {
    // f64 values of 2^23 to 2^24 sit at the top of their fold (bin 2^37, ulp 2^-15): 2^38 ulps
    // each. Doubling a state of 1000 of them 30 times counts about 2^78 ulps.
    let mut rng = Rng(22);
    let xs: Vec<f64> = (0..1000)
        .map(|_| 8_388_608.0 * (1.0 + f64::from(rng.unit_f32().abs())))
        .collect();
    let one = Binned::sum_of(xs.iter().copied());
    let mut doubled = one;
    for _ in 0..30 {
        let copy = doubled;
        doubled.merge(&copy);
    }
    assert_eq!(doubled.value(), one.value() * 2f64.powi(30));
}

/// A state of 1000 random `f32`, and the same folds with every offset one ulp short of a
/// quarter (`2^21 - 1`): the largest offsets a renormalised state holds.
fn a_state_and_its_largest_offsets() -> [Binned<f32>; 2] {
    let mut rng = Rng(23);
    let xs: Vec<f32> = (0..1000)
        .map(|_| 4096.0 * (1.0 + rng.unit_f32().abs()))
        .collect();
    let one = Binned::sum_of(xs.iter().copied());
    let mut words_of_one = one.to_words();
    for primary in &mut words_of_one[..3] {
        *primary |= (1 << 21) - 1;
    }
    [one, Binned::<f32>::from_words(words_of_one)]
}

#[test]
fn a_tree_of_counts_takes_its_most_leaves() {
    // `MAX_LEAVES` copies of a state, one whose offsets are all just short of a quarter among
    // them: the `u32` offsets' sum at its largest.
    for state in a_state_and_its_largest_offsets() {
        let mut tree = Counts::of(&state);
        let mut leaves = 1;
        while leaves < Counts::<f32>::MAX_LEAVES {
            tree = tree.plus(&tree);
            leaves *= 2;
        }
        let mut merged = state;
        for _ in 0..Counts::<f32>::MAX_LEAVES.trailing_zeros() {
            let copy = merged;
            merged.merge(&copy);
        }
        assert_eq!(words(&tree.to_state()), words(&merged));
        assert_eq!(merged.value(), state.value() * 2048.0);
    }
}

#[test]
fn a_lane_adds_any_number_of_states() {
    // A last block's lane adds every `block`-th partial: more than a tree's leaves when the
    // states outnumber `LANE_LEAVES` lanes' worth, so the lane renormalises as it goes. The
    // largest offsets overflow `u32` by `MAX_LEAVES` leaves unless it does.
    let count = 3 * Counts::<f32>::MAX_LEAVES + 5;
    for state in a_state_and_its_largest_offsets() {
        for (first, step) in [(0, 1), (7, 3)] {
            let sum = lane_sum_of_states(count, first, step, |_| state);
            let mut merged = Binned::EMPTY;
            for _ in (first..count).step_by(step) {
                merged.merge(&state);
            }
            assert_eq!(
                words(&sum.to_state()),
                words(&merged),
                "from {first} by {step}"
            );
        }
    }
    // No state at all: the empty sum.
    let none = lane_sum_of_states(0, 0, 1, |_| Binned::<f32>::EMPTY);
    assert_eq!(words(&none.to_state()), words(&Binned::<f32>::EMPTY));
}

#[test]
fn states_round_trip_through_their_words() {
    let state = Binned::sum_of([1.0f64, -3.5e10, 7e-5]);
    let back = Binned::<f64>::from_words(state.to_words());
    assert_eq!(words(&back), words(&state));
    assert_eq!(size_of::<Binned<f32>>(), super::STATE_BYTES_F32);
    assert_eq!(super::STATE_BYTES_F32, super::state_bytes(4));
    assert_eq!(super::STATE_BYTES_F64, super::state_bytes(8));
    let f32_state = Binned::sum_of([2.0f32, 0.25]);
    assert_eq!(
        words(&Binned::<f32>::from_words(f32_state.to_words())),
        words(&f32_state)
    );
}

// The bottom of the range: subnormals and the smallest normal numbers, against exact sums.
// Every f32 is a whole number of 2^-149 and every f64 of 2^-1074 ("units"): the tests add
// those integers up exactly (in i128) and round the total once, by hand.

/// `x` in units of the smallest subnormal (2^-149 for f32, 2^-1074 for f64), exactly: `x` must
/// be small enough for an i128 (every f32 below 2^-22, every f64 below 2^-948).
fn units<F: BinnedFloat>(x: F) -> i128 {
    let (bits, mantissa) = match size_of::<F>() {
        4 => (u64::from(x.to_words().as_ref()[0]), 23),
        _ => {
            let w = x.to_words();
            (
                u64::from(w.as_ref()[0]) | u64::from(w.as_ref()[1]) << 32,
                52,
            )
        }
    };
    let width = 8 * size_of::<F>() as u32;
    let negative = bits >> (width - 1) == 1;
    let exponent = ((bits & !(1 << (width - 1))) >> mantissa) as u32;
    let fraction = bits & ((1u64 << mantissa) - 1);
    let magnitude = if exponent == 0 {
        i128::from(fraction)
    } else {
        assert!(exponent < 100, "{x:?} is too large for the exact reference");
        i128::from(fraction | 1 << mantissa) << (exponent - 1)
    };
    if negative { -magnitude } else { magnitude }
}

/// `n` units, rounded once to the nearest `F` (ties to even).
fn round_units<F: BinnedFloat>(n: i128) -> F {
    let (digits, unit) = match size_of::<F>() {
        4 => (24, 2f64.powi(-149)),
        _ => (53, f64::from_bits(1)),
    };
    let magnitude = n.unsigned_abs();
    let length = 128 - magnitude.leading_zeros();
    let (mut kept, shift) = (magnitude, length.saturating_sub(digits));
    if shift > 0 {
        kept = magnitude >> shift;
        let rest = magnitude & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept += 1;
        }
    }
    // Exact: at most `digits` bits, times a power of two inside f64's range.
    let value = kept as f64 * 2f64.powi(shift as i32) * unit;
    let value = if n < 0 { -value } else { value };
    from_f64(value)
}

/// An f64 that `F` holds exactly, as `F`.
fn from_f64<F: BinnedFloat>(value: f64) -> F {
    let words: Vec<u32> = match size_of::<F>() {
        4 => vec![(value as f32).to_bits()],
        _ => vec![value.to_bits() as u32, (value.to_bits() >> 32) as u32],
    };
    let mut w = <F::Words as crate::element::Words>::ZERO;
    w.as_mut().copy_from_slice(&words);
    let x = F::from_words(w);
    assert_eq!(x.to_f64(), value, "not exact in the type");
    x
}

/// A random `F` of `2^low ≤ |x| < 2^high` or a subnormal (exponent field 0, when `low` is
/// below the smallest normal's), random mantissa and sign.
fn tiny<F: BinnedFloat>(rng: &mut Rng, low: i32, high: i32) -> F {
    let (mantissa, bias) = match size_of::<F>() {
        4 => (23u32, 127i32),
        _ => (52, 1023),
    };
    let exponent = low + rng.below((high - low) as usize) as i32;
    let field = (exponent + bias).max(0) as u64;
    let bits = field << mantissa | (rng.next() & ((1u64 << mantissa) - 1));
    let sign = (rng.next() & 1) << (8 * size_of::<F>() - 1);
    let bits = bits | sign;
    let mut w = <F::Words as crate::element::Words>::ZERO;
    let n = w.as_ref().len();
    for (i, word) in w.as_mut().iter_mut().enumerate().take(n) {
        *word = (bits >> (32 * i)) as u32;
    }
    F::from_words(w)
}

/// The sum of `xs` is exact before its one rounding (what the bottom of the range gets),
/// and the same bits in other orders, batches and splits.
fn check_exact<F: BinnedFloat>(xs: &[F], rng: &mut Rng, what: &str) {
    let exact: i128 = xs.iter().map(|&x| units(x)).sum();
    let whole = Binned::sum_of(xs.iter().copied());
    let expected: F = round_units(exact);
    let got = whole.value();
    assert!(
        got.to_f64().to_bits() == expected.to_f64().to_bits(),
        "{what}: {got:?}, exactly rounded {expected:?} ({} units off)",
        units(got) - exact
    );
    for batch in [1, 16, 64] {
        assert_eq!(
            words(&batched(xs, batch)),
            words(&whole),
            "{what}: batches of {batch}"
        );
    }
    for shards in [2, 5, 33] {
        assert_eq!(
            words(&split_and_merge(xs, rng, shards)),
            words(&whole),
            "{what}: {shards} shards"
        );
    }
}

#[test]
fn subnormal_sums_are_exact() {
    let mut rng = Rng(21);
    // One smallest subnormal, a few, many: CUB's bins stop at 2^-144 (f32) and lose them all.
    check_exact(&[f32::from_bits(1)], &mut rng, "2^-149");
    check_exact(&[f32::from_bits(1); 7], &mut rng, "7 × 2^-149");
    check_exact(&[f64::from_bits(1); 3], &mut rng, "3 × 2^-1074");
    check_exact(&vec![f32::from_bits(1); 1 << 20], &mut rng, "2^20 × 2^-149");
    check_exact(
        &vec![f64::from_bits(3); 100_000],
        &mut rng,
        "10^5 × 3·2^-1074",
    );
    for n in [1, 2, 31, 1000, 20_000] {
        let xs: Vec<f32> = (0..n).map(|_| tiny(&mut rng, -150, -126)).collect();
        check_exact(&xs, &mut rng, &format!("{n} f32 subnormals"));
        let xs: Vec<f64> = (0..n).map(|_| tiny(&mut rng, -1075, -1022)).collect();
        check_exact(&xs, &mut rng, &format!("{n} f64 subnormals"));
    }
}

#[test]
fn sums_at_the_smallest_normals_are_exact() {
    let mut rng = Rng(22);
    // Subnormals mixed with the smallest normals, up to the largest magnitude whose sum the
    // state keeps exactly (2^-119 for f32, 2^-976 for f64).
    for n in [1, 3, 100, 5000, 100_000] {
        for high in [-125, -122, -119] {
            let xs: Vec<f32> = (0..n).map(|_| tiny(&mut rng, -150, high)).collect();
            check_exact(&xs, &mut rng, &format!("{n} f32 below 2^{high}"));
        }
        for high in [-1021, -1000, -976] {
            let xs: Vec<f64> = (0..n).map(|_| tiny(&mut rng, -1075, high)).collect();
            check_exact(&xs, &mut rng, &format!("{n} f64 below 2^{high}"));
        }
    }
    // Straddling the smallest normal: its neighbours by a few units on either side.
    let xs: Vec<f32> = (0..4000)
        .map(|i| f32::from_bits(0x0080_0000 + (i % 9) - 4) * if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    check_exact(&xs, &mut rng, "f32 around 2^-126");
    let xs: Vec<f64> = (0..4000u64)
        .map(|i| f64::from_bits((1 << 52) + (i % 9) - 4) * if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    check_exact(&xs, &mut rng, "f64 around 2^-1022");
}

#[test]
fn tiny_sums_that_cancel_are_exact() {
    let mut rng = Rng(23);
    for n in [2, 50, 3000] {
        let half: Vec<f32> = (0..n).map(|_| tiny(&mut rng, -150, -119)).collect();
        let mut xs: Vec<f32> = half.iter().flat_map(|&x| [x, -x]).collect();
        check_exact(&xs, &mut rng, "f32 x and -x");
        assert_eq!(Binned::sum_of(xs.iter().copied()).value().to_bits(), 0);
        // What is left after the cancellation: a few subnormals.
        xs.extend([f32::from_bits(5), -f32::from_bits(2)]);
        rng.shuffle(&mut xs);
        check_exact(&xs, &mut rng, "f32 x, -x and 3·2^-149");
        assert_eq!(
            Binned::sum_of(xs.iter().copied()).value(),
            f32::from_bits(3)
        );

        let half: Vec<f64> = (0..n).map(|_| tiny(&mut rng, -1075, -976)).collect();
        let mut xs: Vec<f64> = half.iter().flat_map(|&x| [x, -x]).collect();
        xs.push(f64::from_bits(1));
        rng.shuffle(&mut xs);
        check_exact(&xs, &mut rng, "f64 x, -x and 2^-1074");
        assert_eq!(
            Binned::sum_of(xs.iter().copied()).value(),
            f64::from_bits(1)
        );
    }
}

#[test]
fn sums_just_above_the_exact_range_keep_the_bound() {
    // Largest magnitudes just above 2^-119 (f32) and 2^-976 (f64) with many subnormals: the
    // state rounds each value to the finest fold again, within 2^-26 (2^-80) of max|x|.
    let mut rng = Rng(24);
    for n in [10, 1000, 30_000] {
        let mut xs: Vec<f32> = (0..n).map(|_| tiny(&mut rng, -150, -126)).collect();
        xs.push(1.5 * 2f32.powi(-119));
        rng.shuffle(&mut xs);
        check_bound(&xs, 2f64.powi(-26), &mut rng);
        let mut xs: Vec<f64> = (0..n).map(|_| tiny(&mut rng, -1075, -1000)).collect();
        xs.push(1.5 * 2f64.powi(-976));
        rng.shuffle(&mut xs);
        check_bound(&xs, 2f64.powi(-80), &mut rng);
    }
}

/// `|value - exact| ≤ n·per_element·max|x| + ulp(value)` (the state's bound, then the
/// rounding), in units; and the same bits for a split.
fn check_bound<F: BinnedFloat>(xs: &[F], per_element: f64, rng: &mut Rng) {
    let exact: i128 = xs.iter().map(|&x| units(x)).sum();
    let largest = xs.iter().map(|&x| units(x).abs()).max().unwrap_or(0);
    let whole = Binned::sum_of(xs.iter().copied());
    let got = whole.value();
    let ulp = (units(got).abs() >> (if size_of::<F>() == 4 { 23 } else { 52 })).max(1);
    let bound = xs.len() as f64 * per_element * largest as f64 + ulp as f64;
    let error = (units(got) - exact).abs() as f64;
    assert!(
        error <= bound,
        "{} values: {error} units off, bound {bound}",
        xs.len()
    );
    assert_eq!(words(&split_and_merge(xs, rng, 4)), words(&whole));
}

#[test]
fn a_mean_of_nan_or_of_nothing_is_the_one_nan() {
    use super::conclusion::Conclusion;
    use crate::ops::{Mean, Sum};
    let mean = |state: Binned<f32>, count| <Mean as Conclusion<f32>>::conclude(state, count);
    // A NaN divided on a GPU gives its own NaN: the conclusion gives the fixed one instead.
    let odd_nan = f32::from_bits(0x7fff_ffff);
    assert_eq!(
        mean(Binned::sum_of([1.0, odd_nan]), 2).to_bits(),
        0x7fc0_0000
    );
    assert_eq!(
        mean(Binned::sum_of([f32::INFINITY, f32::NEG_INFINITY]), 2).to_bits(),
        0x7fc0_0000
    );
    // The mean of an empty row is NaN (as the other row kernels write it); its sum is +0.0.
    assert_eq!(mean(Binned::EMPTY, 0).to_bits(), 0x7fc0_0000);
    assert_eq!(
        <Sum as Conclusion<f32>>::conclude(Binned::EMPTY, 0).to_bits(),
        0
    );
    assert_eq!(mean(Binned::sum_of([3.0, 4.5]), 2), 3.75);
    let mean64 = <Mean as Conclusion<f64>>::conclude(Binned::sum_of([f64::NAN]), 1);
    assert_eq!(mean64.to_bits(), 0x7ff8_0000_0000_0000);
}
