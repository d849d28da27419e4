//! The reproducible mode over rows, columns and segments (`reduce_each`) on the simulator: each
//! result is the bits of the reproducible sum (or mean) of its row, column or segment alone,
//! whatever else shares the batch, whichever kernel the shape picks, and whatever the grid,
//! block size and thread schedule.

mod common;

use common::{reducer, wide_f32};
use half::{bf16, f16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::reproducible::BinnedFloat as _;
use reduce_rs::reproducible::PartialSum;
use reduce_rs::{Element, Operation, Reducer, Schedule, Shape};
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
/// whole-array tests of `reproducible_whole.rs` hold the kernels to): the sum, or the mean
/// (`None` when empty).
fn fold_bits<T: Row>(mean: bool, row: &[T]) -> u64 {
    let sum = PartialSum::of(row.iter().map(|x| x.fold())).value();
    match (mean, row.len()) {
        (false, _) => sum.bits(),
        (true, 0) => None::<T::F>.bits(),
        (true, n) => Some(sum.divide(n)).bits(),
    }
}

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
    // Two short rows: a block each (a row that one block would read alone is not split).
    assert_eq!(
        r.plan_each::<i32, Mean>(&Shape::rows(2, 64)).1,
        "reproducible_rows_block_i32_mean"
    );
    assert_eq!(
        r.plan_each::<i32, Mean>(&Shape::rows(2, 1 << 20)).1,
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

/// A plan made in the reproducible mode launches the reproducible twin it was counted for (its
/// block, grid and scratch of states), even when a reducer in the plain mode builds its job:
/// as `bench --shapes` times the twins beside the plain kernels. Each result is the bits the
/// reproducible `reduce_each` gives.
#[test]
fn a_reproducible_plan_runs_its_twin_whatever_mode_builds_the_job() {
    use reduce_rs::backend::sim::Sim;
    use reduce_rs::ops::Sum;
    use reduce_rs::plan::SegmentOffsets;
    use reduce_rs::plan::shapes::ShapeKernel;
    let plain = Reducer::simulator();
    let reproducible = Reducer::simulator().with_reproducible(true);
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let (rows, cols) = (6, 3000);
    let values = wide_f32(&mut rng, rows * cols);
    let input: Vec<bf16> = values.iter().map(|&v| bf16::from_f32(v)).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    for shape in [Shape::rows(rows, cols), Shape::columns(rows, cols)] {
        let expected: Vec<f32> = reproducible.reduce_each(Sum, &input, shape).unwrap();
        for &kernel in ShapeKernel::ALL {
            let Some((chosen, name)) = reproducible.plan_each_with::<bf16, Sum>(&shape, kernel)
            else {
                continue;
            };
            // Its own split, and where the split is free a few and more than a warp's worth
            // (a split row's last block adds up to 32 pieces in one warp, more over the block).
            // 300 pieces: some of the last block's threads add two.
            let others = [3, 40, 300].map(|split| {
                let (plan, _) = reproducible.plan_each_split::<bf16, Sum>(&shape, kernel, split)?;
                Some(plan)
            });
            for plan in std::iter::once(chosen).chain(others.into_iter().flatten()) {
                let job =
                    plain.job_each::<bf16, Sum>(&shape, plan, SegmentOffsets::None, input.len());
                assert_eq!(job.kernel, name);
                let out = Sim::new(Schedule::InOrder)
                    .run(&job, &bytes)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let got: Vec<f32> = out
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                assert_eq!(
                    got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    "{name} over {shape:?}, split {}",
                    plan.split
                );
            }
        }
    }
}
