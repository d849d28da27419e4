//! The reproducible mode at the edges of the float range, on the simulator: NaN, infinities,
//! overflow and subnormals through the kernel, and sums at the bottom of the range (subnormals
//! and the smallest normals), exact before their one rounding on every launch grid.

mod common;

use common::bottom::{
    bottom_f32_inputs, bottom_f64_inputs, round_f32, round_f64, shuffle, some_launch_grids,
    tiny_f32, tiny_f64, units_f32, units_f64,
};
use common::reducer;
use half::{bf16, f16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::Schedule;
use reduce_rs::reproducible::PartialSum;

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
fn f32_sums_at_the_bottom_of_the_range_are_exact_on_every_launch_grid() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for (what, data) in bottom_f32_inputs(&mut rng) {
        let exact = round_f32(data.iter().map(|&x| units_f32(x)).sum());
        let host = PartialSum::of(data.iter().copied()).value();
        assert_eq!(
            host.to_bits(),
            exact.to_bits(),
            "{what}: the host's fold gives {host:e}, the exact sum is {exact:e}"
        );
        for (block, grid) in some_launch_grids() {
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
fn f64_sums_at_the_bottom_of_the_range_are_exact_on_every_launch_grid() {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    for (what, data) in bottom_f64_inputs(&mut rng) {
        let exact = round_f64(data.iter().map(|&x| units_f64(x)).sum());
        let host = PartialSum::of(data.iter().copied()).value();
        assert_eq!(
            host.to_bits(),
            exact.to_bits(),
            "{what}: the host's fold gives {host:e}, the exact sum is {exact:e}"
        );
        for (block, grid) in some_launch_grids() {
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
    for (block, grid) in some_launch_grids() {
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
