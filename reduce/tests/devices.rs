//! Several devices, simulated (no GPU, no NCCL): the sharding and combining logic against one
//! device's result, for every operation, several types, 1, 2, 3 and 5 devices, even, uneven and
//! empty shards. Min, max, argmin, argmax and integer sums must be the one-device bits; float
//! sums and means are rounded in another order, so they are compared within a tolerance —
//! except reproducible sums (`with_reproducible`), which are the one-device bits too.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::devices::{Devices, Rank, even_split};
use reduce_rs::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};
use reduce_rs::{Element, Operation, Reducer};
use std::fmt::Debug;

const COUNTS: [usize; 4] = [1, 2, 3, 5];

/// Ways to cut `len` elements over `parts` devices: even, everything on the last device, and a
/// random cut with empty pieces.
fn cuts(len: usize, parts: usize, seed: u64) -> Vec<Vec<std::ops::Range<usize>>> {
    let mut all = vec![even_split(len, parts)];
    let mut last = vec![0..0; parts];
    last[parts - 1] = 0..len;
    all.push(last);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut bounds: Vec<usize> = (1..parts).map(|_| rng.random_range(0..=len)).collect();
    bounds.sort_unstable();
    bounds.insert(0, 0);
    bounds.push(len);
    all.push(bounds.windows(2).map(|w| w[0]..w[1]).collect());
    all
}

fn shards_of<T: Copy>(data: &[T], cut: &[std::ops::Range<usize>]) -> Vec<Vec<T>> {
    cut.iter().map(|r| data[r.clone()].to_vec()).collect()
}

/// `op` on every group size and cut equals one device's result, exactly; and every device of
/// the group holds the same bits.
fn exact<T, O>(op: O, data: &[T])
where
    T: Element,
    O: Operation<T> + Copy,
    O::Output: Debug,
{
    let one = Reducer::simulator().reduce(op, data).unwrap();
    for count in COUNTS {
        let devices = Devices::simulated(count);
        for cut in cuts(data.len(), count, data.len() as u64 + count as u64) {
            let shards = shards_of(data, &cut);
            let got = devices.reduce(op, &shards).unwrap();
            assert!(
                format!("{got:?}") == format!("{one:?}"),
                "{:?} of {} {} over {count} devices cut {cut:?}: {got:?}, one device {one:?}",
                O::KIND,
                data.len(),
                T::DTYPE
            );
            if data.is_empty() && O::empty_device().is_none() {
                assert!(devices.all_reduce(op, &shards).is_err());
                continue;
            }
            let on_devices = devices.all_reduce(op, &shards).unwrap();
            assert_eq!(on_devices.len(), count);
            let first = format!("{:?}", on_devices[0].read().unwrap());
            for result in &on_devices {
                assert_eq!(format!("{:?}", result.read().unwrap()), first);
            }
            if !data.is_empty() {
                assert_eq!(
                    format!("{:?}", O::output(on_devices[0].read().unwrap())),
                    format!("{one:?}")
                );
            }
        }
    }
}

fn floats(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..len)
        .map(|_| rng.random_range(-100.0f32..100.0))
        .collect()
}

#[test]
fn min_max_and_the_arg_operations_are_the_one_device_bits() {
    for len in [0, 1, 2, 7, 1000, 4099] {
        let data = floats(len, 11);
        exact(Min, &data);
        exact(Max, &data);
        exact(ArgMin, &data);
        exact(ArgMax, &data);
        let ints: Vec<i64> = data.iter().map(|&x| (x as i64) % 7).collect();
        exact(ArgMax, &ints);
        exact(ArgMin, &ints);
        exact(Max, &ints);
        let halves: Vec<half::bf16> = data.iter().map(|&x| half::bf16::from_f32(x)).collect();
        exact(ArgMin, &halves);
        exact(Min, &halves);
    }
}

#[test]
fn nans_ties_and_signed_zeros_follow_the_library_across_shards() {
    // Ties: the first global occurrence; NaN: the first NaN, both for argmin and argmax.
    let mut data = vec![1.0f64; 600];
    data[250] = 5.0;
    data[480] = 5.0;
    exact(ArgMax, &data);
    data[400] = f64::NAN;
    data[520] = f64::NAN;
    exact(ArgMax, &data);
    exact(ArgMin, &data);
    exact(Max, &data);
    let zeros = [0.0f32, -0.0, 0.0, -0.0, -0.0];
    exact(Min, &zeros);
    exact(Max, &zeros);
    exact(ArgMin, &zeros);
    exact(ArgMax, &zeros);
}

#[test]
fn integer_sums_wrap_and_are_exact() {
    for len in [0, 1, 3, 1000, 5003] {
        let mut rng = ChaCha8Rng::seed_from_u64(len as u64);
        let data: Vec<i32> = (0..len).map(|_| rng.random()).collect();
        exact(Sum, &data);
        let unsigned: Vec<u64> = (0..len).map(|_| rng.random()).collect();
        exact(Sum, &unsigned);
        let small: Vec<u32> = (0..len).map(|_| rng.random_range(0..10)).collect();
        exact(Sum, &small);
    }
}

#[test]
fn float_sums_and_means_agree_within_rounding() {
    for len in [1, 5, 1000, 4099] {
        let data = floats(len, 3);
        let one_sum = Reducer::simulator().sum(&data).unwrap();
        let one_mean = Reducer::simulator().mean(&data).unwrap().unwrap();
        let bound = data.iter().map(|x| x.abs()).sum::<f32>() * 1e-5;
        for count in COUNTS {
            let devices = Devices::simulated(count);
            for cut in cuts(len, count, 5) {
                let shards = shards_of(&data, &cut);
                let sum = devices.sum(&shards).unwrap();
                assert!((sum - one_sum).abs() <= bound, "{sum} vs {one_sum}");
                let mean = devices.mean(&shards).unwrap().unwrap();
                assert!(
                    (mean - one_mean).abs() <= bound / len as f32,
                    "{mean} vs {one_mean}"
                );
            }
        }
    }
    // The integers' mean is the global sum over the global count, in f64.
    let ints = [1u32, 2, 4, 8, 16, 32, 64];
    let devices = Devices::simulated(3);
    let shards = shards_of(&ints, &even_split(ints.len(), 3));
    assert_eq!(devices.mean(&shards).unwrap(), Some(127.0 / 7.0));
    let halves = [half::f16::from_f32(1.5), half::f16::from_f32(2.5)];
    assert_eq!(
        Devices::simulated(2)
            .sum(&[&halves[..1], &halves[1..]])
            .unwrap(),
        4.0f32
    );
}

#[test]
fn global_indices_cross_shards() {
    let data: Vec<u32> = (0..100).map(|i| (i * 7919) % 101).collect();
    let best = data
        .iter()
        .enumerate()
        .max_by_key(|&(i, &x)| (x, std::cmp::Reverse(i)))
        .unwrap();
    for count in COUNTS {
        let devices = Devices::simulated(count);
        let shards = shards_of(&data, &even_split(100, count));
        assert_eq!(devices.argmax(&shards).unwrap(), Some((best.0, *best.1)));
        let root = count - 1;
        let on_root = devices
            .reduce_to(ArgMax, &shards, root)
            .unwrap()
            .read()
            .unwrap();
        assert_eq!(on_root.index as usize, best.0);
    }
}

#[test]
fn empty_inputs_give_what_one_device_gives() {
    let devices = Devices::simulated(3);
    let none: [Vec<f32>; 3] = [vec![], vec![], vec![]];
    assert_eq!(devices.sum(&none).unwrap(), 0.0);
    assert_eq!(devices.min(&none).unwrap(), None);
    assert_eq!(devices.argmax(&none).unwrap(), None);
    assert_eq!(devices.mean(&none).unwrap(), None);
    let sums = devices.all_reduce(Sum, &none).unwrap();
    assert_eq!(sums[2].read().unwrap(), 0.0);
    assert!(devices.all_reduce(Max, &none).is_err());
    assert!(devices.sum(&none[..2]).is_err(), "one shard per device");
}

#[test]
fn ranks_in_threads_agree_with_one_device() {
    let data = floats(3001, 8);
    let one_argmin = Reducer::simulator().argmin(&data).unwrap();
    let one_max = Reducer::simulator().max(&data).unwrap();
    for world in COUNTS {
        let pieces = even_split(data.len(), world);
        let threads: Vec<_> = Rank::simulated(world)
            .into_iter()
            .map(|rank| {
                let shard = data[pieces[rank.rank()].clone()].to_vec();
                std::thread::spawn(move || {
                    let argmin = rank.argmin(&shard).unwrap();
                    let max = rank.max(&shard).unwrap();
                    let sum = rank.sum(&shard).unwrap();
                    let on_device = rank.all_reduce(ArgMin, &shard).unwrap().read().unwrap();
                    let mean = rank.all_reduce(Mean, &shard).unwrap().read().unwrap();
                    (argmin, max, sum, on_device, mean.to_bits())
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        for result in &results {
            assert_eq!(result.0, one_argmin, "world {world}");
            assert_eq!(result.1, one_max);
            assert_eq!(
                result.2.to_bits(),
                results[0].2.to_bits(),
                "the same bits on every rank"
            );
            assert_eq!(Some((result.3.index as usize, result.3.value)), one_argmin);
            assert_eq!(result.4, results[0].4);
        }
    }
}

/// Reproducible float sums over `data`: every group size and cut, on the host (`reduce`, the
/// host's merge) and on every device (`all_reduce`, the merge kernel), give one device's
/// reproducible bits.
fn reproducible_bits<T>(data: &[T], bits: impl Fn(T::Sum) -> u64)
where
    T: Element,
    Sum: Operation<T, Output = T::Sum, Device = T::Sum>,
{
    let one = Reducer::simulator()
        .with_reproducible(true)
        .sum(data)
        .unwrap();
    for count in COUNTS {
        let devices = Devices::simulated(count).with_reproducible(true);
        for cut in cuts(data.len(), count, data.len() as u64 ^ count as u64) {
            let shards = shards_of(data, &cut);
            let label = format!(
                "{} × {} over {count} devices cut {cut:?}",
                data.len(),
                T::DTYPE
            );
            assert_eq!(
                bits(devices.sum(&shards).unwrap()),
                bits(one),
                "host: {label}"
            );
            for result in devices.all_reduce(Sum, &shards).unwrap() {
                assert_eq!(bits(result.read().unwrap()), bits(one), "device: {label}");
            }
        }
    }
}

#[test]
fn reproducible_sums_are_the_one_device_bits_for_any_count_and_cut() {
    // Wide magnitudes, so that the order of ordinary additions would show in the last bits.
    let wide: Vec<f32> = floats(5003, 11)
        .iter()
        .enumerate()
        .map(|(i, x)| x * 10f32.powi((i % 13) as i32 - 6))
        .collect();
    reproducible_bits(&wide, |x: f32| u64::from(x.to_bits()));
    let wide64: Vec<f64> = wide
        .iter()
        .zip(wide.iter().skip(1))
        .map(|(&a, &b)| f64::from(a) * 1e100 + f64::from(b) * 1e-100)
        .collect();
    reproducible_bits(&wide64, f64::to_bits);
    let halves: Vec<half::bf16> = wide.iter().map(|&x| half::bf16::from_f32(x)).collect();
    reproducible_bits(&halves, |x: f32| u64::from(x.to_bits()));
    let f16s: Vec<half::f16> = floats(777, 12)
        .iter()
        .map(|&x| half::f16::from_f32(x))
        .collect();
    reproducible_bits(&f16s, |x: f32| u64::from(x.to_bits()));
    // Cancellation, special values, nothing at all.
    reproducible_bits(&[1e30f32, 1.0, -1e30, 2.5], |x: f32| u64::from(x.to_bits()));
    reproducible_bits(&[1.0f64, f64::INFINITY, 3.0], f64::to_bits);
    reproducible_bits(&[1.0f32, f32::NAN, 3.0], |x: f32| u64::from(x.to_bits()));
    reproducible_bits::<f32>(&[], |x: f32| u64::from(x.to_bits()));
}

#[test]
fn reproducible_ranks_in_threads_are_the_one_device_bits() {
    let data = floats(4099, 13);
    let one = Reducer::simulator()
        .with_reproducible(true)
        .sum(&data)
        .unwrap();
    for world in COUNTS {
        let pieces = even_split(data.len(), world);
        let threads: Vec<_> = Rank::simulated(world)
            .into_iter()
            .map(|rank| {
                let rank = rank.with_reproducible(true);
                let shard = data[pieces[rank.rank()].clone()].to_vec();
                std::thread::spawn(move || {
                    let host = rank.sum(&shard).unwrap();
                    let device = rank.all_reduce(Sum, &shard).unwrap().read().unwrap();
                    (host.to_bits(), device.to_bits())
                })
            })
            .collect();
        for thread in threads {
            assert_eq!(
                thread.join().unwrap(),
                (one.to_bits(), one.to_bits()),
                "world {world}"
            );
        }
    }
}
