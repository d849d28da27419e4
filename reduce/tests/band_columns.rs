//! Matrices the band kernel takes (`shapes::columns`), on the simulator against a loop over the
//! rows, where it reads its columns with scalar loads: rows that are no whole number of
//! 16-byte vectors (70, 257, 1023 and 1030 columns), and rows of whole vectors (64 and 1024
//! columns) in a slice that starts mid-vector. Those deal a tile's columns out lane by lane
//! (`GroupPlace::column`): every column must still get its own rows, in one band or several,
//! in the first tile, the last (part of whose lanes have no column) and the ones between; each
//! slice also from a 16-byte boundary, where 64 and 1024 columns take vector loads. One block
//! at a time and several; the planner's bands and 3.

use half::bf16;
use reduce_rs::ops::{ArgMax, ArgMin, Max, Min, Sum};
use reduce_rs::plan::shapes::ShapeKernel;
use reduce_rs::{Element, Operation, Reducer, Shape};

mod common;

use common::columns::{check_f32_columns, check_f64_and_bf16_columns, column, data, reducers};

/// `(rows, cols)`: tiles of 8 to 64 groups, a last tile part full (70 and 1030 columns of
/// f32); each in the bands the planner gives it and in 3 (`Reducer::plan_each_split`).
const MATRICES: [(usize, usize); 6] = [
    (700, 64),
    (301, 70),
    (90, 257),
    (300, 1023),
    (40, 1024),
    (129, 1030),
];

/// The band counts each matrix runs with: the planner's (`None`), and 3.
const SPLITS: [Option<usize>; 2] = [None, Some(3)];

/// `op` over `values` as the columns of `shape`, by the band kernel in `split` bands (or the
/// planner's).
fn in_bands<T: Element, O: Operation<T>>(
    reducer: &Reducer,
    op: O,
    values: &[T],
    shape: Shape<'_>,
    split: Option<usize>,
) -> Vec<O::Output> {
    let (plan, _) = match split {
        Some(split) => reducer
            .plan_each_split::<T, O>(&shape, ShapeKernel::Columns, split)
            .expect("a split the band kernel takes"),
        None => reducer.plan_each::<T, O>(&shape),
    };
    assert_eq!(plan.kernel, ShapeKernel::Columns, "{shape:?}");
    reducer
        .reduce_each_planned(op, values, shape, plan)
        .unwrap()
}

#[test]
fn f32_columns_at_every_offset_get_their_own_rows() {
    let all = data(300 * 1030 + 8);
    for (label, reducer) in reducers() {
        for ((rows, cols), split) in MATRICES.into_iter().flat_map(|m| SPLITS.map(|s| (m, s))) {
            for offset in 0..4 {
                let values = &all[offset..offset + rows * cols];
                let shape = Shape::columns(rows, cols);
                let at = format!("{label}: {rows} × {cols} at +{offset} in {split:?} bands");
                let sums = in_bands(&reducer, Sum, values, shape, split);
                let maxima = in_bands(&reducer, Max, values, shape, split);
                let argmax = in_bands(&reducer, ArgMax, values, shape, split);
                let argmin = in_bands(&reducer, ArgMin, values, shape, split);
                let results = (&sums[..], &maxima[..]);
                check_f32_columns(values, cols, results, (&argmax, &argmin), &at);
            }
        }
    }
}

#[test]
fn two_and_eight_lanes_at_several_offsets() {
    let all = data(300 * 1030 + 8);
    let all_wide: Vec<f64> = all.iter().map(|&x| f64::from(x)).collect();
    let all_narrow: Vec<bf16> = all.iter().map(|&x| bf16::from_f32(x)).collect();
    for (label, reducer) in reducers() {
        for ((rows, cols), split) in MATRICES.into_iter().flat_map(|m| SPLITS.map(|s| (m, s))) {
            for offset in [0, 1, 5] {
                let range = offset..offset + rows * cols;
                let (values, wide, narrow) = (
                    &all[range.clone()],
                    &all_wide[range.clone()],
                    &all_narrow[range],
                );
                let shape = Shape::columns(rows, cols);
                let at = format!("{label}: {rows} × {cols} at +{offset} in {split:?} bands");
                let sums = in_bands(&reducer, Sum, wide, shape, split);
                let minima = in_bands(&reducer, Min, narrow, shape, split);
                let argmax = in_bands(&reducer, ArgMax, narrow, shape, split);
                check_f64_and_bf16_columns(values, cols, (&sums, &minima), &argmax, &at);
            }
        }
    }
}

/// The reproducible twin reads such rows the same way: each column's sum has the bits of the
/// reproducible sum of that column alone, at every offset, in the planner's bands and in 3.
#[test]
fn reproducible_columns_at_every_offset_have_each_column_s_own_bits() {
    let all: Vec<f32> = (0..129 * 1030 + 8)
        .map(|i| ((i * 7919) % 1013) as f32 * 1.0e-3 - 0.5)
        .collect();
    let reducer = Reducer::simulator().with_reproducible(true);
    for ((rows, cols), split) in [(40, 1024), (129, 1030), (301, 70)]
        .into_iter()
        .flat_map(|m| SPLITS.map(|s| (m, s)))
    {
        for offset in 0..4 {
            let values = &all[offset..offset + rows * cols];
            let shape = Shape::columns(rows, cols);
            let (plan, _) = match split {
                Some(split) => reducer
                    .plan_each_split::<f32, Sum>(&shape, ShapeKernel::Columns, split)
                    .expect("a split the twin takes"),
                None => reducer.plan_each::<f32, Sum>(&shape),
            };
            let sums = reducer
                .reduce_each_planned(Sum, values, shape, plan)
                .unwrap();
            for (c, sum) in sums.iter().enumerate() {
                let own: Vec<f32> = column(values, cols, c).map(|(_, x)| x).collect();
                let alone = reducer.reduce(Sum, &own).unwrap();
                assert_eq!(
                    sum.to_bits(),
                    alone.to_bits(),
                    "{rows} × {cols} at +{offset} in {split:?} bands: column {c}"
                );
            }
        }
    }
}
