//! The reproducible mode on the simulator: the same bits for every block size, grid, input
//! offset and thread schedule, the same bits as the host's fold of `PartialSum`, and partial
//! sums of any split that merge to the same bits.

mod common;

use common::bottom::{
    bottom_f32_inputs, bottom_f64_inputs, round_f32, round_f64, shuffle, some_shapes, tiny_f32,
    tiny_f64, units_f32, units_f64,
};
use common::{reducer, shapes, wide_f32};
use half::{bf16, f16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::ops::{Mean, Sum};
use reduce_rs::reproducible::PartialSum;
use reduce_rs::{Reducer, Schedule};

#[test]
fn f32_sums_have_the_same_bits_for_every_launch_shape_and_offset() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // 9 000 elements: with one block of 64 threads each thread deposits ~140 per state, and
    // with 1024 threads some have nothing but a tail.
    let data = wide_f32(&mut rng, 9_003);
    for offset in 0..4 {
        let slice = &data[offset..];
        let host = PartialSum::of(slice.iter().copied()).value();
        let plain = Reducer::simulator().sum(slice).unwrap();
        for (block, grid) in shapes() {
            let got = reducer(block, grid, Schedule::InOrder).sum(slice).unwrap();
            assert_eq!(
                got.to_bits(),
                host.to_bits(),
                "offset {offset}, block {block}, grid {grid:?}: {got} vs {host} (v8: {plain})"
            );
        }
    }
}

#[test]
fn thread_schedules_do_not_change_the_bits() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let data: Vec<f64> = (0..5000)
        .map(|_| rng.random_range(-1.0f64..1.0) * 10f64.powi(rng.random_range(-30..30)))
        .collect();
    let host = PartialSum::of(data.iter().copied()).value();
    for seed in 0..4 {
        for (block, grid) in [(64, Some(3)), (256, None), (1024, Some(1))] {
            let got = reducer(block, grid, Schedule::Shuffled { seed })
                .sum(&data[1..])
                .unwrap();
            let expected = PartialSum::of(data[1..].iter().copied()).value();
            assert_eq!(
                got.to_bits(),
                expected.to_bits(),
                "seed {seed}, block {block}"
            );
        }
    }
    assert_eq!(
        reducer(128, Some(2), Schedule::InOrder)
            .sum(&data)
            .unwrap()
            .to_bits(),
        host.to_bits()
    );
}

#[test]
fn long_threads_renormalise_on_the_way() {
    // One block of 64 threads over 2^17 elements: 2048 per thread, 1024 per state, twice the
    // f32 endurance (CUB's bug (b) merged such states unrenormalised and got them wrong).
    let data: Vec<f32> = (0..1usize << 17)
        .map(|i| 0.75 + (i % 1000) as f32 * 1e-4)
        .collect();
    let exact: f64 = data.iter().map(|&x| f64::from(x)).sum();
    let one_block = reducer(64, Some(1), Schedule::InOrder).sum(&data).unwrap();
    assert_eq!(one_block, exact as f32);
    let wide = reducer(512, Some(7), Schedule::InOrder).sum(&data).unwrap();
    assert_eq!(wide.to_bits(), one_block.to_bits());
    // f64: endurance 2048, 1024 per state with 2^18 elements.
    let data: Vec<f64> = (0..1usize << 17).map(|i| 1.0 + (i % 7) as f64).collect();
    let sum = reducer(64, Some(1), Schedule::InOrder).sum(&data).unwrap();
    assert_eq!(sum, data.iter().sum::<f64>());
}

#[test]
fn half_precision_and_means() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let values = wide_f32(&mut rng, 7000);
    // Within f16's range (its largest is 65504): no infinities here.
    let halves: Vec<f16> = values.iter().map(|&x| f16::from_f32(x / 64.0)).collect();
    let brains: Vec<bf16> = values.iter().map(|&x| bf16::from_f32(x)).collect();
    let host_h = PartialSum::of(halves.iter().map(|x| x.to_f32())).value();
    let host_b = PartialSum::of(brains.iter().map(|x| x.to_f32())).value();
    let host_f = PartialSum::of(values.iter().copied()).value();
    for (block, grid) in [(64, Some(1)), (128, Some(3)), (1024, None)] {
        let r = reducer(block, grid, Schedule::InOrder);
        assert_eq!(r.sum(&halves).unwrap().to_bits(), host_h.to_bits());
        assert_eq!(r.sum(&brains).unwrap().to_bits(), host_b.to_bits());
        let mean = r.reduce(Mean, &values[..]).unwrap().unwrap();
        assert_eq!(mean.to_bits(), (host_f / values.len() as f32).to_bits());
        let mean_h = r.mean(&halves).unwrap().unwrap();
        assert_eq!(mean_h.to_bits(), (host_h / halves.len() as f32).to_bits());
    }
    // Integer means are summed as f64, each value converted once: exact here, where plain
    // f64 additions of 2^62-sized values would round in the launch's order.
    let big: Vec<i64> = (0..4000).map(|i| (1i64 << 62) - i * 977).collect();
    let exact = big.iter().map(|&x| i128::from(x)).sum::<i128>();
    let host = PartialSum::of(big.iter().map(|&x| x as f64)).value() / big.len() as f64;
    for (block, grid) in [(64, Some(1)), (256, Some(3)), (1024, None)] {
        let mean = reducer(block, grid, Schedule::InOrder)
            .mean(&big)
            .unwrap()
            .unwrap();
        assert_eq!(mean.to_bits(), host.to_bits(), "block {block}");
        assert!((mean - exact as f64 / 4000.0).abs() <= 2048.0);
    }
    let small = [3u32, 4, 4];
    assert_eq!(
        reducer(64, None, Schedule::InOrder).mean(&small).unwrap(),
        Some(11.0 / 3.0)
    );
}

#[test]
fn other_reductions_are_unchanged() {
    let r = reducer(256, None, Schedule::InOrder);
    assert_eq!(r.sum(&[i32::MAX, 1]).unwrap(), i32::MIN);
    assert_eq!(r.max(&[1.0f32, 3.0, 2.0]).unwrap(), Some(3.0));
    assert_eq!(r.argmin(&[4.0f64, -1.0, -1.0]).unwrap(), Some((1, -1.0)));
    assert_eq!(
        r.reproducible_kernel::<f32, Sum>().as_deref(),
        Some("reproducible_f32_sum")
    );
    assert_eq!(r.reproducible_kernel::<i32, Sum>(), None);
    assert_eq!(Reducer::simulator().reproducible_kernel::<f32, Sum>(), None);
}

#[test]
fn special_values_through_the_kernel() {
    let n = 6000;
    let base: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    let cases: Vec<(&str, Vec<(usize, f32)>)> = vec![
        ("nan in a vector", vec![(2500, f32::NAN)]),
        ("nan in the head", vec![(1, f32::NAN)]),
        ("nan in the tail", vec![(n - 1, f32::NAN)]),
        ("+inf", vec![(17, f32::INFINITY)]),
        (
            "-inf twice",
            vec![(17, f32::NEG_INFINITY), (5000, f32::NEG_INFINITY)],
        ),
        (
            "+inf and -inf far apart",
            vec![(3, f32::INFINITY), (5990, f32::NEG_INFINITY)],
        ),
        ("huge", vec![(10, 3e38), (4000, 3e38), (4001, -3e38)]),
        ("overflow", vec![(10, f32::MAX), (4000, f32::MAX)]),
        ("subnormals", vec![(100, 1e-40), (200, -3e-41)]),
    ];
    for (what, planted) in cases {
        let mut data = base.clone();
        for &(at, x) in &planted {
            data[at] = x;
        }
        let slice = &data[1..];
        let host = PartialSum::of(slice.iter().copied()).value();
        for (block, grid) in [(64, Some(1)), (64, Some(7)), (256, None), (1024, Some(2))] {
            let got = reducer(block, grid, Schedule::InOrder).sum(slice).unwrap();
            assert_eq!(
                got.to_bits(),
                host.to_bits(),
                "{what}: block {block} grid {grid:?}"
            );
        }
    }
    let nan = reducer(64, Some(3), Schedule::InOrder)
        .sum(&[1.0f64, f64::INFINITY, 2.0, f64::NEG_INFINITY])
        .unwrap();
    assert_eq!(nan.to_bits(), f64::NAN.to_bits());
    let zeros = reducer(64, Some(3), Schedule::InOrder)
        .sum(&vec![-0.0f32; 1000])
        .unwrap();
    assert_eq!(zeros.to_bits(), 0);
    assert_eq!(
        reducer(64, None, Schedule::InOrder)
            .sum::<f32, _>(&[])
            .unwrap()
            .to_bits(),
        0
    );
}

#[test]
fn partial_sums_of_any_split_merge_to_the_whole() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let data = wide_f32(&mut rng, 20_000);
    let whole = reducer(256, None, Schedule::InOrder).sum(&data).unwrap();
    let r = Reducer::simulator().with_block_size(128).unwrap();
    for shards in [1usize, 2, 3, 5, 8] {
        let mut cuts: Vec<usize> = (1..shards)
            .map(|_| rng.random_range(0..=data.len()))
            .collect();
        cuts.push(0);
        cuts.push(data.len());
        cuts.sort();
        let mut parts: Vec<PartialSum<f32>> = cuts
            .windows(2)
            .map(|w| r.partial_sum(&data[w[0]..w[1]]).unwrap())
            .collect();
        parts.reverse();
        let merged = r.merge_partial_sums(&parts).unwrap();
        assert_eq!(
            merged.to_bits(),
            whole.to_bits(),
            "{shards} shards at {cuts:?}"
        );
        let mut on_host = PartialSum::EMPTY;
        for part in &parts {
            on_host.merge(part);
        }
        assert_eq!(on_host, PartialSum::of(data.iter().copied()));
    }
    // Many partial sums: the merging kernel uses several threads and blocks.
    let parts: Vec<PartialSum<f64>> = (0..300)
        .map(|k| PartialSum::of((0..10).map(|i| ((k * 10 + i) as f64).sqrt())))
        .collect();
    let all = PartialSum::of((0..3000).map(|i| (i as f64).sqrt())).value();
    for (block, grid) in [(64, Some(3)), (1024, None)] {
        let mut r = Reducer::simulator().with_block_size(block).unwrap();
        r.set_max_blocks(grid);
        assert_eq!(
            r.merge_partial_sums(&parts).unwrap().to_bits(),
            all.to_bits()
        );
    }
    assert_eq!(r.merge_partial_sums::<f32>(&[]).unwrap().to_bits(), 0);
    assert_eq!(r.partial_sum::<f32, _>(&[]).unwrap(), PartialSum::EMPTY);
}

#[test]
fn f32_sums_at_the_bottom_of_the_range_are_exact_on_every_launch_shape() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for (what, data) in bottom_f32_inputs(&mut rng) {
        let exact = round_f32(data.iter().map(|&x| units_f32(x)).sum());
        let host = PartialSum::of(data.iter().copied()).value();
        assert_eq!(
            host.to_bits(),
            exact.to_bits(),
            "{what}: the host's fold gives {host:e}, the exact sum is {exact:e}"
        );
        for (block, grid) in some_shapes() {
            let got = reducer(block, grid, Schedule::InOrder).sum(&data).unwrap();
            assert_eq!(
                got.to_bits(),
                exact.to_bits(),
                "{what}: block {block}, grid {grid:?}"
            );
        }
        // Another start: the vectors, head and tail split the input elsewhere.
        let slice = &data[1.min(data.len())..];
        let exact = round_f32(slice.iter().map(|&x| units_f32(x)).sum());
        let got = reducer(128, Some(3), Schedule::InOrder).sum(slice).unwrap();
        assert_eq!(got.to_bits(), exact.to_bits(), "{what}, offset 1");
    }
}

#[test]
fn f64_sums_at_the_bottom_of_the_range_are_exact_on_every_launch_shape() {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    for (what, data) in bottom_f64_inputs(&mut rng) {
        let exact = round_f64(data.iter().map(|&x| units_f64(x)).sum());
        let host = PartialSum::of(data.iter().copied()).value();
        assert_eq!(
            host.to_bits(),
            exact.to_bits(),
            "{what}: the host's fold gives {host:e}, the exact sum is {exact:e}"
        );
        for (block, grid) in some_shapes() {
            let got = reducer(block, grid, Schedule::InOrder).sum(&data).unwrap();
            assert_eq!(
                got.to_bits(),
                exact.to_bits(),
                "{what}: block {block}, grid {grid:?}"
            );
        }
        let slice = &data[1.min(data.len())..];
        let exact = round_f64(slice.iter().map(|&x| units_f64(x)).sum());
        let got = reducer(64, Some(2), Schedule::Shuffled { seed: 5 })
            .sum(slice)
            .unwrap();
        assert_eq!(got.to_bits(), exact.to_bits(), "{what}, offset 1");
    }
}

#[test]
fn half_precision_sums_at_the_bottom_of_the_range_are_exact() {
    // bf16 has f32's exponents: its smallest values are f32 subnormals (none finer than
    // 2^-133). f16's smallest (2^-24) are normal in f32. Both are summed in f32.
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let brains: Vec<bf16> = (0..7_001)
        .map(|_| bf16::from_f32(tiny_f32(&mut rng, -134, -119)))
        .collect();
    let halves: Vec<f16> = (0..7_001)
        .map(|_| f16::from_bits(rng.random_range(0..0x0800u16) | rng.random_range(0..2u16) << 15))
        .collect();
    let exact_b = round_f32(brains.iter().map(|x| units_f32(x.to_f32())).sum());
    // Whole numbers of 2^-24 below 2^-14: their f64 sum is exact.
    let exact_h = halves.iter().map(|x| f64::from(x.to_f32())).sum::<f64>() as f32;
    assert_eq!(
        PartialSum::of(brains.iter().map(|x| x.to_f32())).value(),
        exact_b
    );
    assert_eq!(
        PartialSum::of(halves.iter().map(|x| x.to_f32())).value(),
        exact_h
    );
    for (block, grid) in some_shapes() {
        let r = reducer(block, grid, Schedule::InOrder);
        assert_eq!(
            r.sum(&brains).unwrap().to_bits(),
            exact_b.to_bits(),
            "bf16 {block}"
        );
        assert_eq!(
            r.sum(&halves).unwrap().to_bits(),
            exact_h.to_bits(),
            "f16 {block}"
        );
        let mean = r.mean(&brains).unwrap().unwrap();
        assert_eq!(mean.to_bits(), (exact_b / brains.len() as f32).to_bits());
    }
}

#[test]
fn many_tiny_values_add_up_exactly() {
    // 2^18 smallest subnormals: 2^-131, exactly (the old bins rounded each of them to 0).
    let data = vec![f32::from_bits(1); 1 << 18];
    let expected = 2f32.powi(-131);
    assert_eq!(PartialSum::of(data.iter().copied()).value(), expected);
    for (block, grid) in [(64, Some(1)), (256, None), (1024, Some(5))] {
        assert_eq!(
            reducer(block, grid, Schedule::InOrder).sum(&data).unwrap(),
            expected
        );
    }
    // 2^17 random tiny normals and subnormals, both signs.
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    let data: Vec<f64> = (0..1 << 17)
        .map(|_| tiny_f64(&mut rng, -1075, -990))
        .collect();
    let exact = round_f64(data.iter().map(|&x| units_f64(x)).sum());
    for (block, grid) in [(64, Some(1)), (256, None), (1024, Some(5))] {
        let got = reducer(block, grid, Schedule::InOrder).sum(&data).unwrap();
        assert_eq!(got.to_bits(), exact.to_bits(), "block {block}");
    }
}

#[test]
fn partial_sums_at_the_bottom_of_the_range_merge_to_the_exact_sum() {
    let mut rng = ChaCha8Rng::seed_from_u64(25);
    let r = Reducer::simulator().with_block_size(128).unwrap();
    let cut = |rng: &mut ChaCha8Rng, len: usize, shards: usize| {
        let mut cuts: Vec<usize> = (1..shards).map(|_| rng.random_range(0..=len)).collect();
        cuts.extend([0, len]);
        cuts.sort();
        cuts
    };
    for (what, data) in bottom_f32_inputs(&mut rng) {
        let exact = round_f32(data.iter().map(|&x| units_f32(x)).sum());
        for shards in [2, 3, 8] {
            let cuts = cut(&mut rng, data.len(), shards);
            let mut parts: Vec<PartialSum<f32>> = cuts
                .windows(2)
                .map(|w| r.partial_sum(&data[w[0]..w[1]]).unwrap())
                .collect();
            shuffle(&mut rng, &mut parts);
            let merged = r.merge_partial_sums(&parts).unwrap();
            assert_eq!(merged.to_bits(), exact.to_bits(), "{what}: {shards} shards");
            let mut on_host = PartialSum::EMPTY;
            for part in &parts {
                on_host.merge(part);
            }
            assert_eq!(on_host, PartialSum::of(data.iter().copied()), "{what}");
        }
    }
    for (what, data) in bottom_f64_inputs(&mut rng) {
        let exact = round_f64(data.iter().map(|&x| units_f64(x)).sum());
        let cuts = cut(&mut rng, data.len(), 5);
        let parts: Vec<PartialSum<f64>> = cuts
            .windows(2)
            .map(|w| r.partial_sum(&data[w[0]..w[1]]).unwrap())
            .collect();
        let merged = r.merge_partial_sums(&parts).unwrap();
        assert_eq!(merged.to_bits(), exact.to_bits(), "{what}");
    }
}

#[test]
fn sums_above_the_exact_range_keep_the_documented_bound() {
    // A few values just above 2^-119 (f32) or 2^-976 (f64) among many subnormals: the state is
    // exact to 2^-26·max|x| (2^-80) per element, and the value one rounding from it.
    let mut rng = ChaCha8Rng::seed_from_u64(26);
    for n in [100, 5_000] {
        let mut data: Vec<f32> = (0..n).map(|_| tiny_f32(&mut rng, -150, -126)).collect();
        data.extend([1.75 * 2f32.powi(-119), -1.25 * 2f32.powi(-118)]);
        shuffle(&mut rng, &mut data);
        let exact: i128 = data.iter().map(|&x| units_f32(x)).sum();
        let largest = data.iter().map(|&x| units_f32(x).abs()).max().unwrap();
        let got = reducer(128, Some(3), Schedule::InOrder).sum(&data).unwrap();
        let half_ulp = (units_f32(got).abs() >> 24).max(1);
        let bound = ((data.len() as i128 * largest) >> 26) + half_ulp + 1;
        assert!((units_f32(got) - exact).abs() <= bound, "f32, n = {n}");
        assert_eq!(
            got.to_bits(),
            PartialSum::of(data.iter().copied()).value().to_bits()
        );

        let mut data: Vec<f64> = (0..n).map(|_| tiny_f64(&mut rng, -1075, -1000)).collect();
        data.extend([1.75 * 2f64.powi(-976), -1.25 * 2f64.powi(-975)]);
        shuffle(&mut rng, &mut data);
        let exact: i128 = data.iter().map(|&x| units_f64(x)).sum();
        let largest = data.iter().map(|&x| units_f64(x).abs()).max().unwrap();
        let got = reducer(128, Some(3), Schedule::InOrder).sum(&data).unwrap();
        let half_ulp = (units_f64(got).abs() >> 53).max(1);
        let bound = ((data.len() as i128 * largest) >> 80) + half_ulp + 1;
        assert!((units_f64(got) - exact).abs() <= bound, "f64, n = {n}");
        assert_eq!(
            got.to_bits(),
            PartialSum::of(data.iter().copied()).value().to_bits()
        );
    }
}

// Rows, columns and segments (`reduce_each`): each result is the bits of the reproducible sum
// (or mean) of its row, column or segment alone, whatever else shares the batch, whichever
// kernel the shape picks, and whatever the grid, block size and thread schedule.

use reduce_rs::{Element, Operation, Shape};
use std::collections::BTreeSet;

/// A result's bits (an empty mean, `None`, as all ones).
trait Bits: Copy + std::fmt::Debug {
    fn bits(self) -> u64;
}
impl Bits for f32 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}
impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}
impl<B: Bits> Bits for Option<B> {
    fn bits(self) -> u64 {
        self.map_or(u64::MAX, Bits::bits)
    }
}

/// An element type of the tests: the float its reproducible sum is kept in, and random rows.
trait Row: Element {
    type F: reduce_rs::reproducible::SumFloat + Bits;
    fn fold(self) -> Self::F;
    fn random(rng: &mut ChaCha8Rng, n: usize) -> Vec<Self>;
}

macro_rules! rows_of {
    ($($t:ty => $f:ty, |$x:ident| $fold:expr, |$rng:ident| $random:expr;)*) => {$(
        impl Row for $t {
            type F = $f;
            fn fold(self) -> $f {
                let $x = self;
                $fold
            }
            fn random($rng: &mut ChaCha8Rng, n: usize) -> Vec<$t> {
                (0..n).map(|_| $random).collect()
            }
        }
    )*};
}
rows_of! {
    f32 => f32, |x| x, |rng| rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-20..20));
    f64 => f64, |x| x, |rng| rng.random_range(-1.0f64..1.0) * 10f64.powi(rng.random_range(-30..30));
    f16 => f32, |x| x.to_f32(), |rng| f16::from_f32(rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-12..12)));
    bf16 => f32, |x| x.to_f32(), |rng| bf16::from_f32(rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-30..30)));
    i32 => f64, |x| f64::from(x), |rng| rng.random::<i32>();
    u32 => f64, |x| f64::from(x), |rng| rng.random::<u32>();
    i64 => f64, |x| x as f64, |rng| rng.random::<i64>() >> rng.random_range(0..20);
    u64 => f64, |x| x as f64, |rng| rng.random::<u64>() >> rng.random_range(0..20);
}

/// The host's fold of `row` (the bits of the reproducible sum of `row` alone, which the
/// whole-array tests above hold the kernels to): the sum, or the mean (`None` when empty).
fn fold_bits<T: Row>(mean: bool, row: &[T]) -> u64 {
    let sum = PartialSum::of(row.iter().map(|x| x.fold())).value();
    match (mean, row.len()) {
        (false, _) => sum.bits(),
        (true, 0) => None::<T::F>.bits(),
        (true, n) => Some(sum.divide(n)).bits(),
    }
}

use reduce_rs::reproducible::BinnedFloat as _;

fn each_bits<T: Row, O: Operation<T>>(
    reducer: &Reducer,
    op: O,
    input: &[T],
    shape: Shape<'_>,
) -> Vec<u64>
where
    O::Output: Bits,
{
    reducer
        .reduce_each(op, input, shape)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(Bits::bits)
        .collect()
}

/// Launch settings for the shape tests: block size, grid limit, schedule.
fn each_settings(big: bool) -> Vec<(u32, Option<u32>, Schedule)> {
    if big {
        return vec![
            (256, None, Schedule::InOrder),
            (64, Some(3), Schedule::Shuffled { seed: 11 }),
        ];
    }
    vec![
        (256, None, Schedule::InOrder),
        (64, Some(1), Schedule::InOrder),
        (1024, Some(3), Schedule::InOrder),
        (128, Some(2), Schedule::Shuffled { seed: 7 }),
        (512, None, Schedule::Shuffled { seed: 3 }),
    ]
}

/// `rows × cols` random values with `probe` as row `at`.
fn matrix_with<T: Row>(rng: &mut ChaCha8Rng, probe: &[T], rows: usize, at: usize) -> Vec<T> {
    let cols = probe.len();
    let mut matrix = T::random(rng, rows * cols);
    matrix[at * cols..(at + 1) * cols].copy_from_slice(probe);
    matrix
}

fn transposed<T: Copy>(matrix: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..cols * rows)
        .map(|i| matrix[(i % rows) * cols + i / rows])
        .collect()
}

/// `probe` as a row of batches of 1, 7, 64 and 4096 rows, and as a column of their transposes,
/// for the sum and the mean: each result against the row alone (the whole-array kernel, once;
/// the host's fold for every row). Returns the kernels that ran.
fn probe_in_batches<T: Row>(rng: &mut ChaCha8Rng, lens: &[usize]) -> BTreeSet<String>
where
    T::Sum: Bits,
    T::Mean: Bits,
{
    use reduce_rs::ops::{Mean, Sum};
    let mut kernels = BTreeSet::new();
    for &len in lens {
        let probe = T::random(rng, len);
        let alone = reducer(256, None, Schedule::InOrder);
        let sum_alone = alone.reduce(Sum, &probe[..]).unwrap();
        let mean_alone = alone.reduce(Mean, &probe[..]).unwrap();
        assert_eq!(
            sum_alone.bits(),
            fold_bits(false, &probe),
            "{len}: the sum alone"
        );
        assert_eq!(
            mean_alone.bits(),
            fold_bits(true, &probe),
            "{len}: the mean alone"
        );
        for batch in [1usize, 7, 64, 4096] {
            if batch * len > 300_000 {
                continue;
            }
            let at = (len * 7 + 3) % batch;
            let matrix = matrix_with(rng, &probe, batch, at);
            let columns = transposed(&matrix, batch, len);
            let rows_of = |i: usize| &matrix[i * len..(i + 1) * len];
            for (block, grid, schedule) in each_settings(batch * len > 30_000) {
                let r = reducer(block, grid, schedule);
                let what = format!(
                    "{} × {len} ({}), row {at}, block {block}, grid {grid:?}, {schedule:?}",
                    batch,
                    T::DTYPE
                );
                for shape in [Shape::rows(batch, len), Shape::columns(len, batch)] {
                    kernels.insert(r.plan_each::<T, Mean>(&shape).1);
                }
                for mean in [false, true] {
                    let (by_row, by_column) = if mean {
                        (
                            each_bits(&r, Mean, &matrix, Shape::rows(batch, len)),
                            each_bits(&r, Mean, &columns, Shape::columns(len, batch)),
                        )
                    } else {
                        (
                            each_bits(&r, Sum, &matrix, Shape::rows(batch, len)),
                            each_bits(&r, Sum, &columns, Shape::columns(len, batch)),
                        )
                    };
                    let alone = if mean {
                        mean_alone.bits()
                    } else {
                        sum_alone.bits()
                    };
                    assert_eq!(by_row[at], alone, "{what}: mean {mean}: the probe row");
                    assert_eq!(
                        by_column[at], alone,
                        "{what}: mean {mean}: the probe column"
                    );
                    for i in 0..batch {
                        let expected = fold_bits(mean, rows_of(i));
                        assert_eq!(by_row[i], expected, "{what}: mean {mean}: row {i}");
                        assert_eq!(by_column[i], expected, "{what}: mean {mean}: column {i}");
                    }
                }
            }
        }
    }
    kernels
}

#[test]
fn f32_rows_and_columns_have_the_bits_of_the_row_alone_in_any_batch() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    // One element; a few lanes per row; a warp; several blocks per row when the batch is
    // small; 80 KB rows, a block each when there are more rows than blocks but fewer than
    // warps.
    let kernels = probe_in_batches::<f32>(&mut rng, &[1, 5, 37, 130, 1000, 5003, 20_003]);
    for kernel in ["rows_warp", "rows_block", "rows_split", "columns"] {
        assert!(
            kernels.contains(&format!("reproducible_{kernel}_f32_mean")),
            "{kernel} never ran: {kernels:?}"
        );
    }
}

#[test]
fn other_types_rows_and_columns_have_the_bits_of_the_row_alone_in_any_batch() {
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    probe_in_batches::<f64>(&mut rng, &[3, 77, 2001]);
    probe_in_batches::<f16>(&mut rng, &[9, 301]);
    probe_in_batches::<bf16>(&mut rng, &[2, 45, 1500]);
    // Means only (the sum of an integer type is exact and not the mode's), but the sums run
    // too: they must stay the plain kernels' wrapping sums.
    probe_in_batches_means_only::<i32>(&mut rng, &[13, 700]);
    probe_in_batches_means_only::<u32>(&mut rng, &[6]);
    probe_in_batches_means_only::<i64>(&mut rng, &[29, 1200]);
    probe_in_batches_means_only::<u64>(&mut rng, &[100]);
}

/// [`probe_in_batches`] for the integer types, whose sums the mode leaves alone.
fn probe_in_batches_means_only<T: Row>(rng: &mut ChaCha8Rng, lens: &[usize])
where
    T::Mean: Bits,
{
    use reduce_rs::ops::{Mean, Sum};
    for &len in lens {
        let probe = T::random(rng, len);
        let mean_alone = reducer(256, None, Schedule::InOrder)
            .reduce(Mean, &probe[..])
            .unwrap();
        assert_eq!(
            mean_alone.bits(),
            fold_bits(true, &probe),
            "{len}: the mean alone"
        );
        for batch in [1usize, 7, 64, 4096] {
            if batch * len > 300_000 {
                continue;
            }
            let at = (len * 5 + 1) % batch;
            let matrix = matrix_with(rng, &probe, batch, at);
            let columns = transposed(&matrix, batch, len);
            for (block, grid, schedule) in each_settings(batch * len > 30_000) {
                let r = reducer(block, grid, schedule);
                let what = format!(
                    "{batch} × {len} ({}), block {block}, grid {grid:?}",
                    T::DTYPE
                );
                let by_row = each_bits(&r, Mean, &matrix, Shape::rows(batch, len));
                let by_column = each_bits(&r, Mean, &columns, Shape::columns(len, batch));
                assert_eq!(by_row[at], mean_alone.bits(), "{what}: the probe row");
                assert_eq!(by_column[at], mean_alone.bits(), "{what}: the probe column");
                for i in 0..batch {
                    let expected = fold_bits(true, &matrix[i * len..(i + 1) * len]);
                    assert_eq!(by_row[i], expected, "{what}: row {i}");
                    assert_eq!(by_column[i], expected, "{what}: column {i}");
                }
                let sums = r
                    .reduce_each(Sum, &matrix, Shape::rows(batch, len))
                    .unwrap();
                let plain = Reducer::simulator()
                    .reduce_each(Sum, &matrix, Shape::rows(batch, len))
                    .unwrap();
                assert!(sums == plain, "{what}: integer sums are the plain kernels'");
            }
        }
    }
}

/// Ragged segments (about one in eight empty) around `probe`, which starts at every offset
/// modulo a 16-byte vector: each segment against its own fold, the probe against the
/// whole-array kernel.
fn probe_in_segments<T: Row>(rng: &mut ChaCha8Rng, probe_len: usize, mean_len: usize, count: usize)
where
    T::Sum: Bits,
    T::Mean: Bits,
{
    use reduce_rs::ops::{Mean, Sum};
    let probe = T::random(rng, probe_len);
    let alone = reducer(128, Some(2), Schedule::InOrder);
    let sum_alone = alone.reduce(Sum, &probe[..]).unwrap().bits();
    let mean_alone = alone.reduce(Mean, &probe[..]).unwrap().bits();
    for shift in 0..16 / size_of::<T>() {
        let mut lens: Vec<usize> = (0..count)
            .map(|_| {
                if rng.random_range(0..8) == 0 {
                    0
                } else {
                    rng.random_range(0..=2 * mean_len)
                }
            })
            .collect();
        let at = rng.random_range(0..count);
        lens[at] = probe_len;
        // Make the probe start `shift` elements past a vector boundary.
        let before: usize = lens[..at].iter().sum();
        let lanes = 16 / size_of::<T>();
        let pad = (lanes + shift - before % lanes) % lanes;
        lens.insert(at, pad);
        let at = at + 1;
        let mut offsets = vec![0usize];
        for len in &lens {
            offsets.push(offsets.last().unwrap() + len);
        }
        let mut data = T::random(rng, *offsets.last().unwrap());
        data[offsets[at]..offsets[at + 1]].copy_from_slice(&probe);
        for (block, grid, schedule) in each_settings(data.len() > 30_000) {
            let r = reducer(block, grid, schedule);
            let what = format!(
                "{} segments ({}), probe {probe_len} at {at} (offset {}), block {block}, grid {grid:?}",
                lens.len(),
                T::DTYPE,
                offsets[at]
            );
            let sums = each_bits(&r, Sum, &data, Shape::segments(&offsets));
            let means = each_bits(&r, Mean, &data, Shape::segments(&offsets));
            assert_eq!(sums[at], sum_alone, "{what}: the probe's sum");
            assert_eq!(means[at], mean_alone, "{what}: the probe's mean");
            for i in 0..lens.len() {
                let segment = &data[offsets[i]..offsets[i + 1]];
                assert_eq!(sums[i], fold_bits(false, segment), "{what}: segment {i}");
                assert_eq!(means[i], fold_bits(true, segment), "{what}: segment {i}");
            }
        }
    }
}

#[test]
fn segments_have_the_bits_of_the_segment_alone() {
    let mut rng = ChaCha8Rng::seed_from_u64(33);
    // Short segments (a few lanes each) and long ones (a block each).
    probe_in_segments::<f32>(&mut rng, 41, 30, 60);
    probe_in_segments::<f32>(&mut rng, 3001, 2500, 9);
    probe_in_segments::<f64>(&mut rng, 250, 100, 30);
    probe_in_segments::<bf16>(&mut rng, 77, 50, 40);
}

#[test]
fn special_values_in_rows_have_the_bits_of_the_row_alone() {
    let cols = 600;
    let mut rng = ChaCha8Rng::seed_from_u64(34);
    let planted: Vec<(&str, Vec<(usize, f32)>)> = vec![
        ("nan", vec![(300, f32::NAN)]),
        ("nan first", vec![(0, f32::NAN)]),
        ("nan last", vec![(cols - 1, f32::NAN)]),
        ("+inf", vec![(17, f32::INFINITY)]),
        (
            "-inf twice",
            vec![(17, f32::NEG_INFINITY), (500, f32::NEG_INFINITY)],
        ),
        (
            "+inf and -inf",
            vec![(3, f32::INFINITY), (590, f32::NEG_INFINITY)],
        ),
        ("huge", vec![(10, 3e38), (400, 3e38), (401, -3e38)]),
        ("overflow", vec![(10, f32::MAX), (400, f32::MAX)]),
        ("subnormals", vec![(100, 1e-40), (200, -3e-41)]),
    ];
    let mut special_rows: Vec<Vec<f32>> = planted
        .iter()
        .map(|(_, at)| {
            let mut row = wide_f32(&mut rng, cols);
            for &(i, x) in at {
                row[i] = x;
            }
            row
        })
        .collect();
    special_rows.push(vec![-0.0; cols]);
    special_rows.push(
        (0..cols)
            .map(|i| f32::from_bits(1 + i as u32 % 7))
            .collect(),
    );
    let mut names: Vec<&str> = planted.iter().map(|(name, _)| *name).collect();
    names.extend(["-0.0", "smallest subnormals"]);
    for (name, row) in names.iter().zip(&special_rows) {
        let alone = reducer(64, Some(3), Schedule::InOrder).sum(row).unwrap();
        assert_eq!(alone.bits(), fold_bits(false, row), "{name} alone");
    }
    // Every special row in a batch of ordinary ones, twice over: rows and columns.
    for batch in [special_rows.len(), 40] {
        let mut matrix = wide_f32(&mut rng, batch * cols);
        for (k, row) in special_rows.iter().enumerate() {
            let at = k * batch / special_rows.len();
            matrix[at * cols..(at + 1) * cols].copy_from_slice(row);
        }
        let columns = transposed(&matrix, batch, cols);
        for (block, grid, schedule) in each_settings(false) {
            let r = reducer(block, grid, schedule);
            for mean in [false, true] {
                let (by_row, by_column) = if mean {
                    (
                        each_bits(&r, reduce_rs::ops::Mean, &matrix, Shape::rows(batch, cols)),
                        each_bits(
                            &r,
                            reduce_rs::ops::Mean,
                            &columns,
                            Shape::columns(cols, batch),
                        ),
                    )
                } else {
                    (
                        each_bits(&r, reduce_rs::ops::Sum, &matrix, Shape::rows(batch, cols)),
                        each_bits(
                            &r,
                            reduce_rs::ops::Sum,
                            &columns,
                            Shape::columns(cols, batch),
                        ),
                    )
                };
                for i in 0..batch {
                    let expected = fold_bits(mean, &matrix[i * cols..(i + 1) * cols]);
                    let what = format!(
                        "batch {batch}, row {i}, block {block}, grid {grid:?}, mean {mean}"
                    );
                    assert_eq!(by_row[i], expected, "{what}");
                    assert_eq!(by_column[i], expected, "{what} (column)");
                }
            }
        }
    }
}

#[test]
fn empty_rows_and_segments() {
    let r = reducer(128, None, Schedule::InOrder);
    let offsets = [0usize, 0, 5, 5, 5, 9];
    let data: Vec<f32> = (0..9).map(|i| i as f32 * 0.1).collect();
    let sums = r
        .reduce_each(reduce_rs::ops::Sum, &data, Shape::segments(&offsets))
        .unwrap();
    assert_eq!(
        sums.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        [
            0,
            fold_bits(false, &data[..5]) as u32,
            0,
            0,
            fold_bits(false, &data[5..]) as u32
        ]
    );
    let means = r
        .reduce_each(reduce_rs::ops::Mean, &data, Shape::segments(&offsets))
        .unwrap();
    assert_eq!(means[0], None);
    assert_eq!(means[2], None);
    let none: Vec<f32> = r
        .reduce_each(reduce_rs::ops::Sum, &[] as &[f32], Shape::rows(3, 0))
        .unwrap();
    assert_eq!(
        none.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        [0, 0, 0]
    );
}

#[test]
fn the_mode_names_its_row_kernels() {
    use reduce_rs::ops::{Max, Mean, Sum};
    let r = reducer(256, None, Schedule::InOrder);
    let name = |shape: &Shape<'_>| r.plan_each::<f32, Sum>(shape).1;
    assert!(name(&Shape::rows(1000, 64)).starts_with("reproducible_rows_"));
    assert!(name(&Shape::columns(1000, 64)).starts_with("reproducible_columns_"));
    assert_eq!(
        r.plan_each::<i32, Mean>(&Shape::rows(2, 64)).1,
        "reproducible_rows_split_i32_mean"
    );
    // Order-independent already: unchanged.
    assert_eq!(
        r.plan_each::<f32, Max>(&Shape::rows(1000, 64)).1,
        "rows_warp_f32_max"
    );
    assert_eq!(
        r.plan_each::<i32, Sum>(&Shape::rows(1000, 64)).1,
        "rows_warp_i32_sum"
    );
}
