//! Narrow columns (1 to 32 of them: powers of two and the counts whose warp values fit, such
//! as 3, 6, 12 and 24), which the planner reads flat with `columns_narrow`, on the simulator
//! against a loop over the rows: slices that start at every element of a vector (scalars
//! before the first whole vector, each in its column), tails, one block and several, every
//! lane count (f64: 2, f32: 4, bf16: 8), ties for the arg operators (the first row wins).
//! Column counts the flat read does not take for a type (5 of bf16, 9 of f32) go in bands,
//! checked the same way.

use half::bf16;
use reduce_rs::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};
use reduce_rs::plan::shapes::ShapeKernel;
use reduce_rs::{Reducer, Shape};

mod common;

use common::columns::{check_f32_columns, check_f64_and_bf16_columns, column, data, reducers};

/// Powers of two, counts the flat read takes for every type (3, 6, 12, 24), for 4- and 8-byte
/// elements (5, 7, 20), for 8-byte ones (9), and for none (31).
const COLUMNS: [usize; 15] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 20, 24, 31, 32];

/// The counts of `COLUMNS` that `f32` matrices are read flat with.
const F32_FLAT: [usize; 13] = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32];

#[test]
fn narrow_columns_are_read_flat() {
    let reducer = Reducer::simulator();
    for cols in F32_FLAT {
        let (plan, name) = reducer.plan_each::<f32, Sum>(&Shape::columns(1000, cols));
        assert_eq!(plan.kernel, ShapeKernel::ColumnsNarrow, "{cols} columns");
        assert_eq!(name, "columns_narrow_f32_sum");
    }
    for cols in [9, 31, 33, 64] {
        let (plan, _) = reducer.plan_each::<f32, Sum>(&Shape::columns(1000, cols));
        assert_eq!(plan.kernel, ShapeKernel::Columns, "{cols} columns");
    }
    // Counts that are no power of two: f64's two lanes take 9 columns, bf16's eight not 5.
    let (plan, _) = reducer.plan_each::<f64, Sum>(&Shape::columns(1000, 9));
    assert_eq!(plan.kernel, ShapeKernel::ColumnsNarrow);
    let (plan, _) = reducer.plan_each::<bf16, Sum>(&Shape::columns(1000, 5));
    assert_eq!(plan.kernel, ShapeKernel::Columns);
    // Their grid is a multiple of the count's odd part: 12 columns, 3.
    let (plan, _) = reducer.plan_each::<f32, Sum>(&Shape::columns(100_000, 12));
    assert_eq!(plan.kernel, ShapeKernel::ColumnsNarrow);
    assert_eq!(plan.launch.grid % 3, 0, "{plan:?}");
    let split = |split| {
        let shape = Shape::columns(100_000, 12);
        reducer.plan_each_split::<f32, Sum>(&shape, ShapeKernel::ColumnsNarrow, split)
    };
    assert!(split(4).is_none() && split(6).is_some());
    // No reproducible twin: the reproducible mode keeps its column kernel.
    let reproducible = Reducer::simulator().with_reproducible(true);
    let (plan, _) = reproducible.plan_each::<f32, Sum>(&Shape::columns(1000, 2));
    assert_eq!(plan.kernel, ShapeKernel::Columns);
    assert!(
        reproducible
            .plan_each_with::<f32, Sum>(&Shape::columns(1000, 2), ShapeKernel::ColumnsNarrow)
            .is_none()
    );
}

#[test]
fn every_offset_tail_and_grid_gives_each_column_its_own() {
    let all = data(40_000 + 40);
    for (label, reducer) in reducers() {
        for cols in COLUMNS {
            for rows in [1, 3, 257, 40_000 / cols] {
                for offset in 0..4 {
                    let values = &all[offset..offset + rows * cols];
                    let shape = Shape::columns(rows, cols);
                    let at = format!("{label}: {rows} × {cols} at +{offset}");
                    let sums = reducer.reduce_each(Sum, values, shape).unwrap();
                    let maxima = reducer.reduce_each(Max, values, shape).unwrap();
                    let argmax = reducer.reduce_each(ArgMax, values, shape).unwrap();
                    let argmin = reducer.reduce_each(ArgMin, values, shape).unwrap();
                    let results = (&sums[..], &maxima[..]);
                    check_f32_columns(values, cols, results, (&argmax, &argmin), &at);
                }
            }
        }
    }
}

#[test]
fn two_and_eight_lanes_a_vector() {
    let all = data(20_000 + 8);
    let all_wide: Vec<f64> = all.iter().map(|&x| f64::from(x)).collect();
    let all_narrow: Vec<bf16> = all.iter().map(|&x| bf16::from_f32(x)).collect();
    for (label, reducer) in reducers() {
        for cols in COLUMNS {
            let rows = 20_000 / cols;
            for offset in [0, 1, 5] {
                let range = offset..offset + rows * cols;
                let (values, wide, narrow) = (
                    &all[range.clone()],
                    &all_wide[range.clone()],
                    &all_narrow[range],
                );
                let shape = Shape::columns(rows, cols);
                let at = format!("{label}: {rows} × {cols} at +{offset}");
                let sums = reducer.reduce_each(Sum, wide, shape).unwrap();
                let means = reducer.reduce_each(Mean, narrow, shape).unwrap();
                let minima = reducer.reduce_each(Min, narrow, shape).unwrap();
                let argmax = reducer.reduce_each(ArgMax, narrow, shape).unwrap();
                check_f64_and_bf16_columns(values, cols, (&sums, &minima), &argmax, &at);
                for (c, mean_of_column) in means.iter().enumerate() {
                    let sum: f32 = column(values, cols, c).map(|(_, x)| x).sum();
                    let mean = f64::from(sum) / rows as f64;
                    let got = f64::from(mean_of_column.expect("rows"));
                    assert!(
                        (got - mean).abs() <= 1e-3 * mean.abs().max(1.0),
                        "{at}: mean {c}"
                    );
                }
            }
        }
    }
}
