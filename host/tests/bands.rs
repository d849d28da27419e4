//! Splits the planner never chooses but `bench --shapes … --splits` asks for, on the simulator:
//! column reductions with more bands than whole runs of rows (the first bands of a tile then
//! hold no rows: `kernels_gpu::shapes::columns::band_rows`), narrow matrices by either column
//! kernel and any grid, and rows or segments read by every power of two of lanes per row
//! (`rows_warp`, its grid counted by the planner for those lanes, up to its cap of four waves;
//! for the bf16 argmax too). Each launch is the planner's with its split replaced
//! (`Reducer::plan_each_split`), run as the library would run it
//! (`Reducer::reduce_each_planned`); every sum (small integers: exact in any order) is checked,
//! in the plain and the reproducible mode.

use reduce_rs::ops::Sum;
use reduce_rs::plan::shapes::ShapeKernel;
use reduce_rs::{Reducer, Shape};

/// The small integers every test here sums (exact in any order).
fn small_integers(len: usize) -> Vec<f32> {
    (0..len).map(|i| (i % 7) as f32 - 3.0).collect()
}

/// The sums of each row, column or segment of `shape` over `small_integers(len)`, planned by
/// the simulator's reducer in `reproducible_mode` with `split` instead of the planner's split,
/// run as the library runs it (`Reducer::reduce_each_planned`).
fn sums_with_split(
    shape: &Shape<'_>,
    len: usize,
    split: usize,
    reproducible_mode: bool,
) -> Vec<f32> {
    let input = small_integers(len);
    let reducer = Reducer::simulator().with_reproducible(reproducible_mode);
    let (planned, _) = reducer.plan_each::<f32, Sum>(shape);
    let (plan, _) = reducer
        .plan_each_split::<f32, Sum>(shape, planned.kernel, split)
        .expect("a free split");
    assert_eq!((plan.kernel, plan.split), (planned.kernel, split));
    reducer
        .reduce_each_planned(Sum, &input, *shape, plan)
        .expect("the simulator runs the launch")
}

/// Column sums of `rows × cols` by `kernel` (`Columns` or `ColumnsNarrow`), with `split` bands
/// or blocks instead of the planner's.
fn column_sums_by(kernel: ShapeKernel, rows: usize, cols: usize, split: usize) -> Vec<f32> {
    let shape = Shape::columns(rows, cols);
    let input = small_integers(rows * cols);
    let reducer = Reducer::simulator();
    let (plan, name) = reducer
        .plan_each_split::<f32, Sum>(&shape, kernel, split)
        .expect("the kernel reduces columns, a free split");
    assert_eq!(plan.kernel, kernel, "{name}");
    reducer
        .reduce_each_planned(Sum, &input, shape, plan)
        .expect("the simulator runs the launch")
}

/// Column sums of `rows × cols` by the band kernel (in the plain mode, where the planner may
/// read narrow matrices flat: forced), with `split` bands instead of the planner's.
fn column_sums(rows: usize, cols: usize, split: usize, reproducible_mode: bool) -> Vec<f32> {
    if !reproducible_mode {
        return column_sums_by(ShapeKernel::Columns, rows, cols, split);
    }
    sums_with_split(
        &Shape::columns(rows, cols),
        rows * cols,
        split,
        reproducible_mode,
    )
}

fn expected(rows: usize, cols: usize) -> Vec<f32> {
    (0..cols)
        .map(|c| (0..rows).map(|r| ((r * cols + c) % 7) as f32 - 3.0).sum())
        .collect()
}

#[test]
fn bands_beyond_the_whole_runs_hold_no_rows_and_lose_none() {
    // 64 f32 columns: 2 tiles of 8 groups, 32 rows per step, runs of 256 rows. 700 rows are
    // 2 whole runs and 188 rows past them: of 5 bands, three hold no rows.
    for reproducible_mode in [false, true] {
        for (rows, cols, split) in [(700, 64, 5), (700, 64, 2), (100, 64, 3), (300, 24, 7)] {
            let got = column_sums(rows, cols, split, reproducible_mode);
            assert_eq!(
                got,
                expected(rows, cols),
                "{rows} x {cols} in {split} bands (reproducible: {reproducible_mode})"
            );
        }
    }
}

#[test]
fn narrow_matrices_by_either_column_kernel_and_any_grid() {
    // The planner reads 1 to 32 columns flat; the band kernel's narrowest tiles (1 and 2
    // groups: 2, 4 and 8 f32 columns, 256 and 128 rows a step, their row offsets met in 5 and
    // 4 shuffle steps) are still reached, forced, as `bench --shapes` times them. The flat
    // kernel with 1 block, with 3, with more blocks than vectors, and with 1000, whose last
    // block loads its partials eight at a time (past 7 · 256 / cols).
    for (rows, cols) in [(900, 2), (3001, 4), (900, 8), (2000, 16), (513, 32)] {
        for split in [1, 3, 40, 1000] {
            for kernel in [ShapeKernel::Columns, ShapeKernel::ColumnsNarrow] {
                assert_eq!(
                    column_sums_by(kernel, rows, cols, split),
                    expected(rows, cols),
                    "{rows} x {cols} by {kernel:?}, split {split}"
                );
            }
        }
    }
    // Counts that are no power of two take grids that are multiples of their odd part (3, 5,
    // 7): 999 and 1005 blocks load partials eight at a time (past 7 · ⌊256 / cols⌋ blocks),
    // and threads past the last whole group of `cols` in the last block take none.
    for (rows, cols, splits) in [
        (900, 3, [3, 999]),
        (3001, 12, [6, 999]),
        (700, 24, [3, 999]),
        (513, 5, [5, 1005]),
        (999, 7, [7, 1001]),
    ] {
        for split in splits {
            assert_eq!(
                column_sums_by(ShapeKernel::ColumnsNarrow, rows, cols, split),
                expected(rows, cols),
                "{rows} x {cols} flat, split {split}"
            );
        }
        let odd = kernels_gpu::shapes::columns_narrow::grid_multiple(cols);
        let shape = Shape::columns(rows, cols);
        let reducer = Reducer::simulator();
        let split =
            |split| reducer.plan_each_split::<f32, Sum>(&shape, ShapeKernel::ColumnsNarrow, split);
        assert!(split(odd).is_some(), "{cols} columns");
        assert!(split(odd + 1).is_none(), "{cols} columns");
    }
    // No rows (the library answers those itself, never launching): every column's sum is 0.
    for split in [1, 3] {
        let sums = column_sums_by(ShapeKernel::ColumnsNarrow, 0, 4, split);
        assert_eq!(sums, [0.0; 4], "0 x 4, split {split}");
    }
}

/// Row (or segment) sums with `lanes` lanes per row instead of the planner's.
fn row_sums(shape: &Shape<'_>, len: usize, lanes: usize, reproducible_mode: bool) -> Vec<f32> {
    let reducer = Reducer::simulator().with_reproducible(reproducible_mode);
    let (plan, _) = reducer.plan_each::<f32, Sum>(shape);
    assert_eq!(plan.kernel, ShapeKernel::RowsWarp);
    sums_with_split(shape, len, lanes, reproducible_mode)
}

#[test]
fn every_power_of_two_of_lanes_reads_every_row() {
    // 37 rows of 203 (no row starts on a 16-byte boundary but every fourth); segments of 0 to
    // 400 elements.
    let offsets: Vec<usize> = [0, 0, 5, 400, 401, 700, 700, 1003].to_vec();
    let segments = Shape::segments(&offsets);
    let input = small_integers(37 * 203);
    let row_sum = |start: usize, end: usize| input[start..end].iter().sum::<f32>();
    for reproducible_mode in [false, true] {
        for lanes in [1, 2, 4, 8, 16, 32] {
            let rows = row_sums(&Shape::rows(37, 203), 37 * 203, lanes, reproducible_mode);
            let want: Vec<f32> = (0..37).map(|r| row_sum(r * 203, (r + 1) * 203)).collect();
            assert_eq!(
                rows, want,
                "rows, {lanes} lanes (reproducible: {reproducible_mode})"
            );
            let got = row_sums(&segments, 1003, lanes, reproducible_mode);
            let want: Vec<f32> = offsets.windows(2).map(|w| row_sum(w[0], w[1])).collect();
            assert_eq!(
                got, want,
                "segments, {lanes} lanes (reproducible: {reproducible_mode})"
            );
        }
    }
}

#[test]
fn lanes_past_four_waves_take_a_second_row_a_warp() {
    // 1000 rows of 64 at 32 lanes want a block for every 8 rows (125 blocks); the planner caps
    // the grid at four waves, so warps go on to the rows past the grid, as they do on the GPU
    // wherever the rows outnumber four waves' warps.
    let shape = Shape::rows(1000, 64);
    let input = small_integers(1000 * 64);
    let want: Vec<f32> = input.chunks(64).map(|row| row.iter().sum()).collect();
    for reproducible_mode in [false, true] {
        let reducer = Reducer::simulator().with_reproducible(reproducible_mode);
        let (plan, _) = reducer
            .plan_each_split::<f32, Sum>(&shape, ShapeKernel::RowsWarp, 32)
            .expect("32 lanes a row");
        let rows_per_block = (plan.launch.block / 32) as usize;
        assert!(
            (plan.launch.grid as usize) * rows_per_block < 1000,
            "{plan:?} holds every row at once: the cap is not reached"
        );
        let got = reducer
            .reduce_each_planned(Sum, &input, shape, plan)
            .expect("the simulator runs the launch");
        assert_eq!(got, want, "reproducible: {reproducible_mode}");
    }
}

#[test]
fn every_power_of_two_of_lanes_finds_each_rows_bf16_argmax() {
    // The 16-bit floats' arg kernel skips a group of loads by its best key and merges its
    // lanes' (key, index) pairs by shuffles: each width, over 37 rows of 203 whose largest
    // value sits once at a different column of each row (ties to the first elsewhere) and over
    // segments of 0 to 400 elements.
    use half::bf16;
    use host::reference::Checked;
    use reduce_rs::ops::ArgMax;
    let (rows, cols) = (37, 203);
    let mut input: Vec<bf16> = small_integers(rows * cols)
        .into_iter()
        .map(bf16::from_f32)
        .collect();
    for r in 0..rows {
        input[r * cols + (r * 17) % cols] = bf16::from_f32(100.0);
    }
    let offsets = [0, 0, 5, 400, 401, 700, 700, 1003];
    let reducer = Reducer::simulator();
    for (shape, starts) in [
        (
            Shape::rows(rows, cols),
            (0..=rows).map(|r| r * cols).collect::<Vec<_>>(),
        ),
        (Shape::segments(&offsets), offsets.to_vec()),
    ] {
        let len = *starts.last().unwrap();
        let (plan, _) = reducer.plan_each::<bf16, ArgMax>(&shape);
        assert_eq!(plan.kernel, ShapeKernel::RowsWarp);
        let want: Vec<_> = starts
            .windows(2)
            .map(|w| <ArgMax as Checked<bf16>>::reference(&input[w[0]..w[1]]))
            .collect();
        for lanes in [1, 2, 4, 8, 16, 32] {
            let (plan, _) = reducer
                .plan_each_split::<bf16, ArgMax>(&shape, plan.kernel, lanes)
                .expect("a power of two of lanes");
            let got = reducer
                .reduce_each_planned(ArgMax, &input[..len], shape, plan)
                .expect("the simulator runs the launch");
            assert_eq!(got, want, "{shape:?}, {lanes} lanes");
        }
    }
}
