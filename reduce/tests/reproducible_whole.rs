//! The reproducible mode on whole arrays, on the simulator: the same bits for every block size,
//! grid, input offset and thread schedule, the same bits as the host's fold of `PartialSum`;
//! half-precision inputs and means; the other reductions unchanged.
//!
//! The mode's other tests: `reproducible_each.rs` (rows, columns, segments),
//! `reproducible_edges.rs` (special values, the bottom of the float range),
//! `reproducible_partial.rs` (partial sums and their merging).

mod common;

use common::{launch_grids, reducer, wide_f32};
use half::{bf16, f16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::ops::{Mean, Sum};
use reduce_rs::reproducible::PartialSum;
use reduce_rs::{Reducer, Schedule};

#[test]
fn f32_sums_have_the_same_bits_for_every_launch_grid_and_offset() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // 9 000 elements: with one block of 64 threads each thread deposits ~140 per state, and
    // with 1024 threads some have nothing but a tail.
    let data = wide_f32(&mut rng, 9_003);
    for offset in 0..4 {
        let slice = &data[offset..];
        let host = PartialSum::of(slice.iter().copied()).value();
        let plain = Reducer::simulator().sum(slice).unwrap();
        for (block, grid) in launch_grids() {
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
fn a_last_block_of_a_warp_or_more_of_partials_gives_the_same_bits() {
    // The last block adds up to 32 partials in warp 0 alone, more over the whole block: blocks
    // of 64 threads over 2^16 elements make 64 partials (the simulator holds 64 such blocks),
    // capped at 32 and 33 they make a warp's worth and one more.
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let data = wide_f32(&mut rng, 1 << 16);
    let host = PartialSum::of(data.iter().copied()).value();
    let launches = [(Some(31), 31), (Some(32), 32), (Some(33), 33), (None, 64)];
    for (schedule, (cap, blocks)) in [Schedule::InOrder, Schedule::Shuffled { seed: 5 }]
        .into_iter()
        .flat_map(|schedule| launches.map(|launch| (schedule, launch)))
    {
        let reducer = reducer(64, cap, schedule);
        let launch = reducer.reproducible_launch::<f32, Sum>(data.len()).unwrap();
        assert_eq!((launch.grid, launch.block), (blocks, 64), "cap {cap:?}");
        let got = reducer.sum(&data).unwrap();
        assert_eq!(
            got.to_bits(),
            host.to_bits(),
            "{blocks} blocks, {schedule:?}"
        );
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
