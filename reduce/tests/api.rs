//! The library's API on the simulator: what a user sees, whatever the kernels inside.

use half::{bf16, f16};
use reduce_rs::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};
use reduce_rs::{Error, Reducer, Schedule, Shape, Version};

#[test]
fn empty_inputs_follow_numpy() {
    let reducer = Reducer::simulator();
    let nothing: [f32; 0] = [];
    assert!(reducer.sum(&nothing).unwrap().is_sign_positive());
    assert_eq!(reducer.sum(&nothing).unwrap(), 0.0);
    assert_eq!(reducer.sum::<i64, _>(&[]).unwrap(), 0);
    assert_eq!(reducer.min(&nothing).unwrap(), None);
    assert_eq!(reducer.max(&nothing).unwrap(), None);
    assert_eq!(reducer.argmax(&nothing).unwrap(), None);
    assert_eq!(reducer.mean(&nothing).unwrap(), None);
    // Every version says the same.
    for version in Version::all() {
        let r = Reducer::simulator().with_version(version);
        assert_eq!(
            r.sum(&nothing).unwrap().to_bits(),
            0.0f32.to_bits(),
            "{version}"
        );
        assert_eq!(r.max(&nothing).unwrap(), None, "{version}");
    }
}

#[test]
fn every_type_and_operation() {
    let reducer = Reducer::simulator();
    let halves: Vec<f16> = [1.5f32, -2.0, 4.0]
        .iter()
        .map(|&x| f16::from_f32(x))
        .collect();
    assert_eq!(reducer.sum(&halves).unwrap(), 3.5);
    assert_eq!(
        reducer.argmin(&halves).unwrap(),
        Some((1, f16::from_f32(-2.0)))
    );
    let brains: Vec<bf16> = [1.0f32, 8.0, 8.0]
        .iter()
        .map(|&x| bf16::from_f32(x))
        .collect();
    assert_eq!(
        reducer.argmax(&brains).unwrap(),
        Some((1, bf16::from_f32(8.0)))
    );
    assert_eq!(reducer.mean(&brains).unwrap(), Some(17.0 / 3.0));
    assert_eq!(reducer.sum(&[u64::MAX, 2]).unwrap(), 1);
    assert_eq!(
        reducer.mean(&[i64::MAX, i64::MAX]).unwrap(),
        Some(i64::MAX as f64)
    );
    assert_eq!(reducer.reduce(Min, &[3u32, 1, 2]).unwrap(), Some(1));
    assert_eq!(reducer.reduce(Max, &[-3.0f64, -1.0]).unwrap(), Some(-1.0));
    assert_eq!(reducer.reduce(Mean, &[1.0f64, 2.0]).unwrap(), Some(1.5));
    assert_eq!(reducer.reduce(ArgMin, &[2i32, 2]).unwrap(), Some((0, 2)));
}

#[test]
fn nan_wins_and_the_first_nan_is_the_index() {
    let reducer = Reducer::simulator();
    let mut data = vec![1.0f32; 10_000];
    data[1234] = f32::NAN;
    data[7777] = -f32::NAN;
    assert!(reducer.max(&data).unwrap().unwrap().is_nan());
    assert!(reducer.min(&data).unwrap().unwrap().is_nan());
    assert_eq!(reducer.argmax(&data).unwrap().unwrap().0, 1234);
    assert_eq!(reducer.argmin(&data).unwrap().unwrap().0, 1234);
    assert!(reducer.sum(&data).unwrap().is_nan());
}

#[test]
fn device_buffers_are_refused_by_the_simulator_and_device_outputs_need_a_gpu() {
    let reducer = Reducer::simulator();
    let error = reducer.with_kernels_from("target/ptx").err().unwrap();
    assert!(matches!(error, Error::WrongDevice(_)), "{error}");
}

#[test]
fn unsupported_combinations_and_bad_block_sizes_are_errors() {
    let v3 = Reducer::simulator().with_version(Version::find("v3").unwrap());
    let error = v3.argmax(&[1.0f32]).unwrap_err();
    assert!(matches!(error, Error::Unsupported { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("v3 has no argmax kernel for f32")
    );
    assert!(v3.sum(&[bf16::ONE]).is_err());
    let error = Reducer::simulator().with_block_size(96).err().unwrap();
    assert!(error.to_string().contains("block size 96"), "{error}");
}

#[test]
fn a_reducer_is_reused_across_calls_and_types() {
    let reducer = Reducer::simulator_with(Schedule::Shuffled { seed: 3 }).with_max_blocks(3);
    for n in [1usize, 100, 5_000, 40_000, 7] {
        let data: Vec<i32> = (0..n as i32).collect();
        let expected: i64 = (0..n as i64).sum();
        assert_eq!(i64::from(reducer.sum(&data).unwrap()), expected);
        assert_eq!(reducer.max(&data).unwrap(), Some(n as i32 - 1));
        let floats: Vec<f64> = data.iter().map(|&x| f64::from(x)).collect();
        assert_eq!(reducer.sum(&floats).unwrap(), expected as f64);
    }
}

#[test]
fn misaligned_slices_are_reduced_whole() {
    let reducer = Reducer::simulator()
        .with_max_blocks(2)
        .with_block_size(64)
        .unwrap();
    let data: Vec<f32> = (0..10_000).map(|i| (i % 17) as f32).collect();
    for offset in 0..4 {
        for end in [offset, offset + 1, offset + 5, 4099, 10_000] {
            let slice = &data[offset..end];
            let expected: f32 = slice.iter().sum();
            assert_eq!(reducer.sum(slice).unwrap(), expected, "[{offset}..{end}]");
            let arg = reducer.argmax(slice).unwrap();
            let first = slice.iter().enumerate().fold(
                None,
                |best: Option<(usize, f32)>, (i, &x)| match best {
                    Some((_, b)) if b >= x => best,
                    _ => Some((i, x)),
                },
            );
            assert_eq!(arg, first, "[{offset}..{end}]");
        }
    }
}

#[test]
fn shapes() {
    let reducer = Reducer::simulator();
    // Rows of every kernel: short (a warp each), long and many, long and few.
    // Columns of 300 rows are cut into bands (the tickets per tile).
    for (rows, cols) in [
        (5, 3),
        (3, 2000),
        (2, 5000),
        (1, 100_003),
        (10, 1100),
        (300, 50),
        (4, 0),
        (0, 4),
    ] {
        let data: Vec<u32> = (0..rows * cols).map(|i| (i % 97) as u32).collect();
        let sums = reducer
            .reduce_each(Sum, &data, Shape::rows(rows, cols))
            .unwrap();
        let maxes = reducer
            .reduce_each(ArgMax, &data, Shape::rows(rows, cols))
            .unwrap();
        assert_eq!(sums.len(), rows);
        for r in 0..rows {
            let row = &data[r * cols..(r + 1) * cols];
            assert_eq!(
                sums[r],
                row.iter().copied().fold(0u32, u32::wrapping_add),
                "{rows}×{cols} row {r}"
            );
            let best = row
                .iter()
                .enumerate()
                .fold(None, |best: Option<(usize, u32)>, (i, &x)| match best {
                    Some((_, b)) if b >= x => best,
                    _ => Some((i, x)),
                });
            assert_eq!(maxes[r], best, "{rows}×{cols} row {r}");
        }
        let columns = reducer
            .reduce_each(Max, &data, Shape::columns(rows, cols))
            .unwrap();
        for c in 0..cols {
            let expected = (0..rows).map(|r| data[r * cols + c]).max();
            assert_eq!(columns[c], expected, "{rows}×{cols} column {c}");
        }
    }
    let data: Vec<f64> = (0..1000).map(f64::from).collect();
    let offsets = [0, 0, 10, 10, 600, 1000];
    let sums = reducer
        .reduce_each(Sum, &data, Shape::segments(&offsets))
        .unwrap();
    assert_eq!(
        sums,
        [
            0.0,
            45.0,
            0.0,
            (10..600).sum::<i32>() as f64,
            (600..1000).sum::<i32>() as f64
        ]
    );
    let means = reducer
        .reduce_each(Mean, &data, Shape::segments(&offsets))
        .unwrap();
    assert_eq!(means[0], None);
    assert_eq!(means[1], Some(4.5));
    assert!(reducer.reduce_each(Sum, &data, Shape::rows(3, 3)).is_err());
    // Shapes the check refuses are errors before anything is planned: offsets that decrease,
    // counts whose product overflows (debug builds would panic in the planner's arithmetic).
    for shape in [
        Shape::segments(&[7, 3]),
        Shape::rows(usize::MAX, 2),
        Shape::columns(2, usize::MAX),
    ] {
        assert!(reducer.reduce_each(Sum, &data, shape).is_err(), "{shape:?}");
        // Planned alone (no input to check them against), they plan as empty ones.
        let (plan, _) = reducer.plan_each::<f64, Sum>(&shape);
        assert!(plan.launch.grid <= 1, "{shape:?}: {plan:?}");
    }
}

#[test]
fn plans_of_ones_own_run_only_as_the_reducer_makes_them() {
    use reduce_rs::plan::shapes::{Family, ShapeKernel};
    let reducer = Reducer::simulator();
    let shape = Shape::rows(1000, 64);
    let data: Vec<i32> = (0..64_000).map(|i| i % 13 - 6).collect();
    let want = reducer.reduce_each(Max, &data, shape).unwrap();
    // Every power of two of lanes, on the grid the planner counts for it.
    for lanes in [1, 2, 4, 8, 16, 32] {
        let (plan, _) = reducer
            .plan_each_split::<i32, Max>(&shape, ShapeKernel::RowsWarp, lanes)
            .unwrap();
        let got = reducer
            .reduce_each_planned(Max, &data, shape, plan)
            .unwrap();
        assert_eq!(got, want, "{lanes} lanes");
    }
    // A grid the planner would not count for those lanes, and a reproducible plan where the
    // mode has no twin (an i32 max), are no plans of the reducer's.
    let (plan, _) = reducer.plan_each::<i32, Max>(&shape);
    let mut other_grid = plan;
    other_grid.launch.grid += 1;
    let mut reproducible = plan;
    reproducible.family = Family::Reproducible;
    for refused in [other_grid, reproducible] {
        let result = reducer.reduce_each_planned(Max, &data, shape, refused);
        assert!(
            matches!(result, Err(Error::Shape(_))),
            "{refused:?}: {result:?}"
        );
    }
}
