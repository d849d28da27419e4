//! The reproducible mode's partial sums (`PartialSum`, `Reducer::partial_sum`,
//! `Reducer::merge_partial_sums`) on the simulator: partial sums of any split, merged in any
//! order on the GPU or the host, give the bits of the whole; at the bottom of the float range,
//! the exact sum.

mod common;

use common::bottom::{
    bottom_f32_inputs, bottom_f64_inputs, round_f32, round_f64, shuffle, units_f32, units_f64,
};
use common::{reducer, wide_f32};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::reproducible::PartialSum;
use reduce_rs::{Reducer, Schedule};

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
    // More partial sums than a lane of the merging tree holds (64): one block of 64 threads
    // over 4200 of them, 65 or 66 each, renormalised on the way (its overflow with the largest
    // offsets is tested on `lane_sum_of_states` itself, in kernels-gpu).
    let parts: Vec<PartialSum<f32>> = (0..4200)
        .map(|k| PartialSum::of((0..3).map(|i| ((k * 3 + i) as f32).sqrt() * 1e3)))
        .collect();
    let all = PartialSum::of((0..12600).map(|i| (i as f32).sqrt() * 1e3)).value();
    let mut one_block = Reducer::simulator().with_block_size(64).unwrap();
    one_block.set_max_blocks(Some(1));
    assert_eq!(
        one_block.merge_partial_sums(&parts).unwrap().to_bits(),
        all.to_bits()
    );
    assert_eq!(r.merge_partial_sums::<f32>(&[]).unwrap().to_bits(), 0);
    assert_eq!(r.partial_sum::<f32, _>(&[]).unwrap(), PartialSum::EMPTY);
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
