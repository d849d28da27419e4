//! The element types' keys, conversions and accumulators, against their definitions.

use super::float::Extremes;
use super::*;

fn ordered<T: Element + core::fmt::Debug>(values: &[T]) {
    for pair in values.windows(2) {
        assert!(pair[0].key_nan_high() < pair[1].key_nan_high(), "{pair:?}");
        assert!(pair[0].key_nan_low() < pair[1].key_nan_low(), "{pair:?}");
    }
    for &x in values {
        assert!(T::from_key(x.key_nan_high()) == x, "{x:?}");
    }
}

#[test]
fn keys_follow_the_types_order_and_invert() {
    ordered(&[
        f32::NEG_INFINITY,
        -2.5,
        -0.0,
        0.0,
        1e-45,
        3.0,
        f32::INFINITY,
    ]);
    ordered(&[f64::NEG_INFINITY, -1e300, -0.0, 0.0, 5e-324, f64::INFINITY]);
    ordered(&[i64::MIN, -1, 0, 1, i64::MAX]);
    ordered(&[i32::MIN, -1, 0, 1, i32::MAX]);
    ordered(&[0u32, 1, u32::MAX]);
    ordered(&[0u64, 1, u64::MAX]);
    // F16: -inf, -1, -0, +0, smallest subnormal, 1, +inf.
    ordered(&[0xfc00, 0xbc00, 0x8000, 0x0000, 0x0001, 0x3c00, 0x7c00].map(F16));
    ordered(&[0xff80, 0xbf80, 0x8000, 0x0000, 0x0001, 0x3f80, 0x7f80].map(Bf16));
    assert!(F16(0x7e00).is_nan() && !F16(0x7c00).is_nan());
    assert!(Bf16(0x7fc0).is_nan() && !Bf16(0xff80).is_nan());
    // Every NaN, whatever its sign and payload, is beyond every number, and turns back
    // into a NaN.
    for nan in [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffff_ffff),
    ] {
        assert_eq!(nan.key_nan_high(), u32::MAX);
        assert_eq!(nan.key_nan_low(), 0);
        assert!(f32::from_key(nan.key_nan_high()).is_nan());
        assert!(f32::from_key(nan.key_nan_low()).is_nan());
    }
    assert_eq!(F16(0x7e00).key_nan_high(), u32::MAX);
    for nan in [Bf16(0x7fc0), Bf16(0xffc1)] {
        assert_eq!(nan.key_nan_high(), u32::MAX);
    }
    assert!(Bf16::from_key(u32::MAX).is_nan() && Bf16::from_key(0).is_nan());
    assert!(F16::from_key(u32::MAX).is_nan() && F16::from_key(0).is_nan());
}

#[test]
fn f16_conversion_is_exact() {
    for (bits, value) in [
        (0x3c00u16, 1.0f32),
        (0xc000, -2.0),
        (0x7bff, 65504.0),
        (0x0001, 2f32.powi(-24)),
        (0x03ff, 1023.0 * 2f32.powi(-24)),
        (0x0400, 2f32.powi(-14)),
        (0x8000, -0.0),
        (0x7c00, f32::INFINITY),
    ] {
        let got = f16_bits_to_f32(bits);
        assert_eq!(
            got.to_bits(),
            value.to_bits(),
            "{bits:#06x}: {got} vs {value}"
        );
    }
    assert!(f16_bits_to_f32(0x7e00).is_nan());
    assert_eq!(Bf16(0x3f80).to_f32(), 1.0);
}

#[test]
fn compensated_sums_keep_what_plain_sums_lose() {
    let mut running = <f32 as Accumulator>::START;
    let mut plain = 0.0f32;
    for _ in 0..1000 {
        for x in [1.0f32, 1e-8] {
            running = f32::accumulate(running, x);
            plain += x;
        }
    }
    let settled = f32::settle(running);
    assert_eq!(plain, 1000.0);
    assert!((f64::from(settled) - 1000.00001).abs() < 1e-4, "{settled}");
    // Overflow stays infinite, and -0.0 stays -0.0.
    let overflow = (0..4).fold(f32::START, |r, _| f32::accumulate(r, f32::MAX));
    assert_eq!(f32::settle(overflow), f32::INFINITY);
    let zeros = (0..3).fold(f32::START, |r, _| f32::accumulate(r, -0.0));
    assert!(f32::settle(zeros).is_sign_negative());
}

/// Bit patterns of every class a 16-bit float has: zeros of both signs, subnormals, the
/// smallest normal, ordinary values, the largest finite, infinities, the NaNs nearest the
/// infinities, quiet NaNs and all-ones NaNs of both signs (in `f16` or `bf16` terms: `0x7f80` is
/// `bf16`'s `+inf` and an `f16` NaN).
const HALF_CLASSES: [u16; 21] = [
    0x0000, 0x8000, 0x0001, 0x8001, 0x0080, 0x3c00, 0xbc00, 0x3f80, 0xbf80, 0x7bff, 0xfbff, 0x7c00,
    0xfc00, 0x7c01, 0x7e00, 0x7f80, 0xff80, 0x7f81, 0xffc1, 0x7fff, 0xffff,
];

/// A little xorshift: arbitrary numbers, the same on every run.
pub(crate) fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// `K` vectors of eight 16-bit lanes, drawn so that ties, lone extremes and near-misses are
/// common (lanes drawn from every class would nearly always hold a NaN). `palette` (drawn
/// anew here unless `fixed`) holds four values, each a class or, one time in four, any bits.
/// Even draws take each lane from the palette's first one to four values; odd draws take the
/// first value for every lane but one, anywhere in the group, which takes the second.
pub(crate) fn half_group<const K: usize>(
    seed: &mut u64,
    palette: &mut [u16; 4],
    fixed: bool,
) -> [[u16; 8]; K] {
    if !fixed {
        *palette = [0; 4].map(|_| match next(seed) % 4 {
            0 => next(seed) as u16,
            _ => HALF_CLASSES[(next(seed) % HALF_CLASSES.len() as u64) as usize],
        });
    }
    if next(seed).is_multiple_of(2) {
        let values = 1 + next(seed) % 4;
        core::array::from_fn(|_| core::array::from_fn(|_| palette[(next(seed) % values) as usize]))
    } else {
        let mut group = [[palette[0]; 8]; K];
        let lone = (next(seed) % (8 * K as u64)) as usize;
        group[lone / 8][lone % 8] = palette[1];
        group
    }
}

/// The packed keys' extremes are the extreme keys of the lanes, NaNs included.
fn packed_extremes_are_the_extreme_keys<
    T: Element<Key = u32, Vector16 = Lanes<T, 8>> + core::fmt::Debug,
>(
    of_bits: fn(u16) -> T,
) {
    let mut seed = 0x2545_f491_4f6c_dd1d;
    for _ in 0..20000 {
        let vectors = half_group::<4>(&mut seed, &mut [0; 4], false).map(|v| Lanes(v.map(of_bits)));
        let lanes = || vectors.iter().flat_map(|vector| vector.0);
        let high = lanes().map(T::key_nan_high).max();
        let low = lanes().map(T::key_nan_low).min();
        let shown: std::vec::Vec<_> = lanes().collect();
        assert_eq!(T::largest_key(&vectors), high, "{shown:?}");
        assert_eq!(T::smallest_key(&vectors), low, "{shown:?}");
    }
}

#[test]
fn the_16_bit_floats_find_a_groups_extreme_keys_two_lanes_at_a_time() {
    packed_extremes_are_the_extreme_keys(F16);
    packed_extremes_are_the_extreme_keys(Bf16);
    // The integers look at each lane.
    assert_eq!(i32::largest_key(&[Lanes([1i32; 4])]), None);
}

/// The first lane holding a value (its bits; any NaN for a NaN), two lanes a word, against a
/// lane-by-lane scan: a lane of each group as the target (a value absent from the group now
/// and then), and the words where a matching bottom half borrows from a top half that then
/// differs from the target in its lowest bit only (flagged too, but after the bottom lane).
/// Then every top half against a few targets, with the bottom half matching and not.
fn first_lanes_by_bits_are_the_first_matches<
    T: Element<Vector16 = Lanes<T, 8>> + core::fmt::Debug,
>(
    of_bits: fn(u16) -> T,
) {
    let mut seed = 0x853c_49e6_748f_ea9b;
    for round in 0..20000 {
        let mut bits = half_group::<4>(&mut seed, &mut [0; 4], false);
        let target = match round % 5 {
            0 => next(&mut seed) as u16,
            _ => bits[(next(&mut seed) % 4) as usize][(next(&mut seed) % 8) as usize],
        };
        if round % 3 == 0 {
            // A target in a bottom half, the target with its lowest bit flipped in the top half.
            let (k, pair) = (
                (next(&mut seed) % 4) as usize,
                (next(&mut seed) % 4) as usize,
            );
            (bits[k][2 * pair], bits[k][2 * pair + 1]) = (target, target ^ 1);
        }
        let vectors = bits.map(|v| Lanes(v.map(of_bits)));
        let scan = bits.iter().flatten().position(|&lane| lane == target);
        let scan = if of_bits(target).is_nan() {
            bits.iter()
                .flatten()
                .position(|&lane| of_bits(lane).is_nan())
        } else {
            scan
        };
        let found = T::first_lane_holding(&vectors, of_bits(target));
        assert_eq!(found, scan.unwrap_or(32), "{target:#x} in {bits:x?}");
    }
    for target in [
        0x0000, 0x0001, 0x8000, 0x3f80, 0xbc00, 0x7c00, 0x7f80, 0xff80, 0x7fff,
    ] {
        let matches = |lane: u16| {
            let (lane, target) = (of_bits(lane), of_bits(target));
            (target.is_nan() && lane.is_nan()) || (!target.is_nan() && lane == target)
        };
        // A lane that holds neither the target nor a NaN.
        let other = if matches(0x1234) { 0x4321 } else { 0x1234 };
        for top in 0..=u16::MAX {
            for bottom in [target, target ^ 1] {
                let mut lanes = [other; 8];
                (lanes[0], lanes[1]) = (bottom, top);
                let scan = lanes.iter().position(|&lane| matches(lane)).unwrap_or(8);
                let vectors = [Lanes(lanes.map(of_bits))];
                let found = T::first_lane_holding(&vectors, of_bits(target));
                assert_eq!(found, scan, "{target:#x} in {lanes:x?}");
            }
        }
    }
}

#[test]
fn the_16_bit_floats_find_a_value_two_lanes_at_a_time() {
    first_lanes_by_bits_are_the_first_matches(F16);
    first_lanes_by_bits_are_the_first_matches(Bf16);
}

/// The other types' search (`Element::first_lane_holding`: lane by lane by key, `f32` and `f64`
/// by the bits): the first lane with the value's key, so the first NaN for any NaN, and `-0.0`
/// and `+0.0` apart; past the last lane where none matches.
fn first_lanes_by_keys_are_the_first_matches<T: Element + core::fmt::Debug>(
    vectors: [T::Vector16; 2],
    targets: &[T],
) {
    let values: std::vec::Vec<T> = vectors.iter().flat_map(|v| v.lanes().to_vec()).collect();
    for &target in targets {
        let expected = values
            .iter()
            .position(|&lane| lane.key_nan_high() == target.key_nan_high())
            .unwrap_or(values.len());
        assert_eq!(
            T::first_lane_holding(&vectors, target),
            expected,
            "{target:?} in {values:?}"
        );
    }
}

#[test]
fn the_other_types_find_a_value_lane_by_lane() {
    let nan = f32::from_bits(0xffc0_0001);
    // Argmin looks for `from_key(0)`, a NaN with every bit set.
    let negative_nan = f32::from_bits(u32::MAX);
    let targets = [1.0, -0.0, 0.0, 2.0, f32::NAN, negative_nan, -1.0, 3.0];
    let floats = [[1.0, -0.0, 2.0, 0.0], [nan, 2.0, f32::NAN, -1.0]];
    first_lanes_by_keys_are_the_first_matches(floats.map(Lanes), &targets);
    // A NaN looked for where there is none.
    let numbers = [[1.0, -0.0, 2.0, 0.0], [4.0, 2.0, 3.0, -1.0]];
    first_lanes_by_keys_are_the_first_matches(numbers.map(Lanes), &[f32::NAN, negative_nan]);
    let doubles = [[-0.0, 2.0], [f64::from(nan), 0.0]];
    first_lanes_by_keys_are_the_first_matches(doubles.map(Lanes), &targets.map(f64::from));
    let no_nan = [[-0.0, 2.0], [1.0, 0.0]];
    first_lanes_by_keys_are_the_first_matches(
        no_nan.map(Lanes),
        &[f64::NAN, f64::from_bits(u64::MAX)],
    );
    let ints = [[5, -3, 7, 7], [i32::MIN, 0, -3, 9]];
    first_lanes_by_keys_are_the_first_matches(ints.map(Lanes), &[7, -3, i32::MIN, 9, 4]);
    let wide_ints = [[u64::MAX, 3], [3, 0]];
    first_lanes_by_keys_are_the_first_matches(wide_ints.map(Lanes), &[3, 0, u64::MAX, 1]);
}

/// `f32` and `f64` values of every class: zeros of both signs, subnormals, ordinary values,
/// infinities, NaNs of both signs (and a quiet and a signalling payload).
pub(crate) const F32_CLASSES: [u32; 14] = [
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0001,
    0x3f80_0000,
    0xbf80_0000,
    0x4000_0000,
    0x7f7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0xffc0_0000,
    0x7f80_0001,
    0xffff_ffff,
];

#[test]
fn f32_and_f64_find_a_groups_extreme_keys_by_their_maximum() {
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for round in 0..20000 {
        // Four values a round (so ties and zeros of both signs meet often); one round in
        // four a NaN is allowed, else the classes without them.
        let classes = if round % 4 == 0 { 14 } else { 10 };
        let palette: [u32; 4] = core::array::from_fn(|_| match next(&mut seed) % 5 {
            0 => next(&mut seed) as u32 & 0x7f7f_ffff,
            _ => F32_CLASSES[(next(&mut seed) % classes) as usize],
        });
        let mut pick = || palette[(next(&mut seed) % 4) as usize];
        let narrow: [Lanes<f32, 4>; 4] =
            core::array::from_fn(|_| Lanes(core::array::from_fn(|_| f32::from_bits(pick()))));
        let wide: [Lanes<f64, 2>; 3] = core::array::from_fn(|_| {
            Lanes(core::array::from_fn(|_| f64::from(f32::from_bits(pick()))))
        });
        let lanes = || narrow.iter().flat_map(|vector| vector.0);
        let shown: std::vec::Vec<f32> = lanes().collect();
        assert_eq!(
            f32::largest_key(&narrow),
            lanes().map(f32::key_nan_high).max(),
            "{shown:?}"
        );
        assert_eq!(
            f32::smallest_key(&narrow),
            lanes().map(f32::key_nan_low).min(),
            "{shown:?}"
        );
        // One lane down the vectors: a column's group of loads.
        for lane in 0..4 {
            let column = || narrow.iter().map(|vector| vector.0[lane]);
            let shown: std::vec::Vec<f32> = column().collect();
            assert_eq!(
                f32::lane_largest_key(&narrow, lane),
                column().map(f32::key_nan_high).max(),
                "{shown:?}"
            );
            assert_eq!(
                f32::lane_smallest_key(&narrow, lane),
                column().map(f32::key_nan_low).min(),
                "{shown:?}"
            );
        }
        // `f64` looks at each lane (`largest_key` is `None`); its `group_extreme` is checked
        // all the same, for the day it is used.
        let lanes = || wide.iter().flat_map(|vector| vector.0);
        let shown: std::vec::Vec<f64> = lanes().collect();
        let (largest, nan) = super::float::group_extreme(&wide, |a: f64, b| a.max_num(b));
        let high = if nan {
            u64::MAX
        } else {
            largest.key_nan_high()
        };
        assert_eq!(
            Some(high),
            lanes().map(f64::key_nan_high).max(),
            "{shown:?}"
        );
        let (smallest, nan) = super::float::group_extreme(&wide, |a: f64, b| a.min_num(b));
        let low = if nan { 0 } else { smallest.key_nan_low() };
        assert_eq!(Some(low), lanes().map(f64::key_nan_low).min(), "{shown:?}");
    }
    assert_eq!(f64::largest_key(&[Lanes([1.0f64; 2])]), None);
    assert_eq!(f64::lane_largest_key(&[Lanes([1.0f64; 2]); 2], 0), None);
}

/// The simulator's `max_num` and `min_num` follow PTX's `max.f32`/`min.f32`: a NaN operand is
/// passed over for the other, `+0.0` is above `-0.0` in either order.
#[test]
fn the_simulators_max_and_min_pass_over_a_nan_and_order_zeros() {
    for (x, nan) in [(1.5f32, f32::NAN), (-2.0, -f32::NAN)] {
        assert_eq!(x.max_num(nan).to_bits(), x.to_bits());
        assert_eq!(nan.max_num(x).to_bits(), x.to_bits());
        assert_eq!(x.min_num(nan).to_bits(), x.to_bits());
        assert_eq!(nan.min_num(x).to_bits(), x.to_bits());
    }
    for (a, b) in [(0.0f32, -0.0f32), (-0.0, 0.0)] {
        assert_eq!(a.max_num(b).to_bits(), 0.0f32.to_bits());
        assert_eq!(a.min_num(b).to_bits(), (-0.0f32).to_bits());
    }
}

/// `max_of` and `min_of` of `f32` (by `max.f32`/`min.f32` and a NaN test) return the very
/// operand that comparing keys returns: every pair of classes, both orders. (`f64` compares
/// keys itself: checked as a guard against a later fast path.)
#[test]
fn float_max_and_min_of_two_are_the_operand_the_keys_pick() {
    fn bits<T: Element>(x: T) -> std::vec::Vec<u32> {
        x.to_words().as_ref().to_vec()
    }
    fn check<T: Element + core::fmt::Debug>(a: T, b: T) {
        let by_keys_max = if a.key_nan_high() >= b.key_nan_high() {
            a
        } else {
            b
        };
        let by_keys_min = if a.key_nan_low() <= b.key_nan_low() {
            a
        } else {
            b
        };
        assert_eq!(
            bits(T::max_of(a, b)),
            bits(by_keys_max),
            "max_of({a:?}, {b:?})"
        );
        assert_eq!(
            bits(T::min_of(a, b)),
            bits(by_keys_min),
            "min_of({a:?}, {b:?})"
        );
    }
    for &a in &F32_CLASSES {
        for &b in &F32_CLASSES {
            let (a, b) = (f32::from_bits(a), f32::from_bits(b));
            check(a, b);
            check(f64::from(a), f64::from(b));
        }
    }
}
