//! Max, min, argmax and argmin of the 16-bit floats and `f32` where every thread reads several
//! groups of vectors, on the simulator: the kernels find each group's best key (two lanes at a
//! time for the 16-bit floats, by `max.f32`/`min.f32` for `f32` max and min, and for `f32`'s
//! and `f64`'s argmax and argmin too where a block or a warp reduces each row, `BY_BEST_KEY`, which
//! searches a later winner at once where the 16-bit floats defer it) and skip the groups that
//! cannot beat a thread's running best (`Reduction::accumulate_group` in the kernel crate), so
//! the values the order rules single out (NaNs of both signs, the two zeros, ties, infinities
//! everywhere) are planted in a thread's first group and again in a later one, where the skip
//! decides.

use half::{bf16, f16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reduce_rs::ops::{ArgMax, ArgMin, Max, Min};
use reduce_rs::plan::shapes::ShapeKernel;
use reduce_rs::{Element, Reducer, Shape};
use std::cmp::Ordering;

/// Where the plants go: `first` and `first + stride`, the same thread's first group and its
/// next one (a thread's groups are `stride` elements apart: [`Layout::stride`]), in inputs of
/// `len` elements read by `threads` threads.
struct Layout {
    name: &'static str,
    len: usize,
    first: usize,
    threads: usize,
}

impl Layout {
    /// Elements between a thread's groups of `element`-byte values: a round of every thread's
    /// four vectors of 16 bytes.
    fn stride(&self, element: usize) -> usize {
        self.threads * 4 * (16 / element)
    }
}

/// v8 as one block of 64 threads: four vectors a group, 64 · 32 elements a round of 16-bit
/// floats, 64 · 16 of `f32`.
const ONE_SMALL_BLOCK: Layout = Layout {
    name: "v8, one block of 64",
    len: 8192,
    first: 4101,
    threads: 64,
};

/// A few rows of 32 KiB (64 KiB of `f32`: a block of 256 threads each): two groups per thread
/// (four of `f32`).
const BLOCK_PER_ROW: Layout = Layout {
    name: "a block per row",
    len: 16384,
    first: 29,
    threads: 256,
};

/// A block per row of 64 KiB of `f64` (`BLOCK_PER_ROW`'s 128 KiB would be split over blocks):
/// four groups a thread.
const BLOCK_PER_ROW_F64: Layout = Layout {
    name: "a block per row of f64",
    len: 8192,
    first: 29,
    threads: 256,
};

/// A warp per segment of 8 KiB (`RowsWarp`, 32 lanes a segment for `f32` max and argmax alike):
/// four groups a lane.
const WARP_PER_SEGMENT: Layout = Layout {
    name: "a warp per segment",
    len: 2048,
    first: 29,
    threads: 32,
};

/// A warp per segment of 8 KiB of `f64`: four groups a lane.
const WARP_PER_SEGMENT_F64: Layout = Layout {
    name: "a warp per segment of f64",
    len: 1024,
    first: 29,
    threads: 32,
};

/// The inputs, as `f32` (every one exact in both 16-bit types): each with its special values
/// at `first` and `first + stride`.
fn planted(layout: &Layout, stride: usize, rng: &mut ChaCha8Rng) -> Vec<(&'static str, Vec<f32>)> {
    let (len, p, q) = (layout.len, layout.first, layout.first + stride);
    let random = |rng: &mut ChaCha8Rng, low: f32, high: f32| -> Vec<f32> {
        (0..len).map(|_| rng.random_range(low..high)).collect()
    };
    let mut nans = random(rng, -1.0, 1.0);
    (nans[p], nans[q]) = (-f32::NAN, f32::NAN);
    let mut zeros_up = random(rng, -1.0, -0.5);
    (zeros_up[p], zeros_up[q]) = (-0.0, 0.0);
    let mut zeros_down = random(rng, 0.5, 1.0);
    (zeros_down[p], zeros_down[q]) = (0.0, -0.0);
    // Both zeros in one vector of one group, in either order: the group's own maximum or
    // minimum must tell them apart (`max.f32` does; a `maxnum` may not).
    let mut together_up = random(rng, -1.0, -0.5);
    (together_up[p], together_up[p + 1]) = (-0.0, 0.0);
    let mut together_up_swapped = random(rng, -1.0, -0.5);
    (together_up_swapped[p], together_up_swapped[p + 1]) = (0.0, -0.0);
    let mut together_down = random(rng, 0.5, 1.0);
    (together_down[p], together_down[p + 1]) = (0.0, -0.0);
    let mut together_down_swapped = random(rng, 0.5, 1.0);
    (together_down_swapped[p], together_down_swapped[p + 1]) = (-0.0, 0.0);
    let mut ties = random(rng, -1.0, 0.5);
    (ties[p], ties[q], ties[p + 1], ties[q + 1]) = (1.0, 1.0, -2.0, -2.0);
    let mut late_infinities = random(rng, -1.0, 1.0);
    (late_infinities[q], late_infinities[q + 1]) = (f32::INFINITY, f32::NEG_INFINITY);
    vec![
        ("a NaN of each sign", nans),
        ("-0.0 then +0.0 among negatives", zeros_up),
        ("+0.0 then -0.0 among positives", zeros_down),
        ("-0.0, +0.0 in one vector among negatives", together_up),
        (
            "+0.0, -0.0 in one vector among negatives",
            together_up_swapped,
        ),
        ("+0.0, -0.0 in one vector among positives", together_down),
        (
            "-0.0, +0.0 in one vector among positives",
            together_down_swapped,
        ),
        ("the extremes tied in two groups", ties),
        ("both infinities in a later group", late_infinities),
        ("all -inf", vec![f32::NEG_INFINITY; len]),
        ("all +inf", vec![f32::INFINITY; len]),
        (
            "rising: every group beats the last",
            (0..len).map(|i| i as f32 / len as f32).collect(),
        ),
    ]
}

/// The reference: the index of the first NaN, else of the first best element by `total_cmp`
/// (`-0.0 < +0.0`); `largest` for max and argmax.
fn best(xs: &[f32], largest: bool) -> usize {
    if let Some(nan) = xs.iter().position(|x| x.is_nan()) {
        return nan;
    }
    let mut best = 0;
    for (i, x) in xs.iter().enumerate() {
        let beats = match x.total_cmp(&xs[best]) {
            Ordering::Greater => largest,
            Ordering::Less => !largest,
            Ordering::Equal => false,
        };
        if beats {
            best = i;
        }
    }
    best
}

/// Both 16-bit types and `f32` through the same checks.
trait Float: Element + Copy + PartialEq + std::fmt::Debug {
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
}
impl Float for f32 {
    fn from_f32(x: f32) -> Self {
        x
    }
    fn to_f32(self) -> f32 {
        self
    }
}
impl Float for f64 {
    fn from_f32(x: f32) -> Self {
        f64::from(x)
    }
    fn to_f32(self) -> f32 {
        self as f32
    }
}
impl Float for bf16 {
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}
impl Float for f16 {
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}

/// The four operators agree with the reference: the index, and the value's bits (a NaN as
/// a NaN). `results` gives what the library returned for one input.
fn check<T: Float>(what: &str, xs: &[T], results: (usize, usize, T, T)) {
    let exact: Vec<f32> = xs.iter().map(|x| x.to_f32()).collect();
    let (argmax, argmin, max, min) = results;
    assert_eq!(argmax, best(&exact, true), "argmax of {what}");
    assert_eq!(argmin, best(&exact, false), "argmin of {what}");
    for (name, got, index) in [("max", max, argmax), ("min", min, argmin)] {
        let want = xs[index].to_f32();
        let got = got.to_f32();
        let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
        assert!(same, "{name} of {what}: {got:?}, want {want:?}");
    }
}

fn whole_arrays_in_one_small_block<T: Float>() {
    let reducer = Reducer::simulator()
        .with_block_size(64)
        .unwrap()
        .with_max_blocks(1);
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let stride = ONE_SMALL_BLOCK.stride(size_of::<T>());
    for (name, values) in planted(&ONE_SMALL_BLOCK, stride, &mut rng) {
        let xs: Vec<T> = values.into_iter().map(T::from_f32).collect();
        let results = (
            reducer.argmax(&xs).unwrap().unwrap().0,
            reducer.argmin(&xs).unwrap().unwrap().0,
            reducer.max(&xs).unwrap().unwrap(),
            reducer.min(&xs).unwrap().unwrap(),
        );
        check(&format!("{name} ({})", ONE_SMALL_BLOCK.name), &xs, results);
    }
}

/// Every input a row of one matrix (`kernel` `RowsBlock`) or a segment of one list
/// (`RowsWarp`: few rows of 8 KiB would get a block each).
fn rows_each<T: Float>(layout: &Layout, kernel: ShapeKernel) {
    let reducer = Reducer::simulator();
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let inputs = planted(layout, layout.stride(size_of::<T>()), &mut rng);
    // Every input a row of one matrix: each row's result is that row's alone.
    let len = layout.len;
    let matrix: Vec<T> = inputs
        .iter()
        .flat_map(|(_, row)| row.iter().map(|&x| T::from_f32(x)))
        .collect();
    let offsets: Vec<usize> = (0..=inputs.len()).map(|row| row * len).collect();
    let shape = match kernel {
        ShapeKernel::RowsWarp => Shape::segments(&offsets),
        _ => Shape::rows(inputs.len(), len),
    };
    for (op, planned) in [
        ("max", reducer.plan_each::<T, Max>(&shape).0),
        ("argmax", reducer.plan_each::<T, ArgMax>(&shape).0),
    ] {
        assert_eq!(planned.kernel, kernel, "{} ({op})", layout.name);
        if kernel == ShapeKernel::RowsWarp {
            // The lanes a row: the plants' stride is that many lanes' groups.
            assert_eq!(planned.split, layout.threads, "{} ({op})", layout.name);
        }
    }
    let argmax = reducer.reduce_each(ArgMax, &matrix, shape).unwrap();
    let argmin = reducer.reduce_each(ArgMin, &matrix, shape).unwrap();
    let max = reducer.reduce_each(Max, &matrix, shape).unwrap();
    let min = reducer.reduce_each(Min, &matrix, shape).unwrap();
    for (row, (name, _)) in inputs.iter().enumerate() {
        let results = (
            argmax[row].unwrap().0,
            argmin[row].unwrap().0,
            max[row].unwrap(),
            min[row].unwrap(),
        );
        let xs = &matrix[row * len..(row + 1) * len];
        check(&format!("{name} ({})", layout.name), xs, results);
    }
}

/// Every input a column of one matrix of `cols` columns (the inputs repeated to fill them), so
/// that each column's groups of rows hold the plants: read flat (`kernel`
/// `ColumnsNarrow`, four rows a group) or in bands (`Columns`, eight), where `f32` max and min
/// compare each lane's extreme by `max.f32`/`min.f32` with the column's running best.
fn columns_of_one_matrix<T: Float>(cols: usize, kernel: ShapeKernel) {
    let reducer = Reducer::simulator();
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    let inputs = planted(&COLUMNS, COLUMNS.stride(size_of::<T>()), &mut rng);
    let rows = COLUMNS.len;
    let column = |c: usize| &inputs[c % inputs.len()];
    let matrix: Vec<T> = (0..rows * cols)
        .map(|i| T::from_f32(column(i % cols).1[i / cols]))
        .collect();
    let shape = Shape::columns(rows, cols);
    let (plan, _) = reducer.plan_each::<T, Max>(&shape);
    assert_eq!(plan.kernel, kernel, "{cols} columns");
    let argmax = reducer.reduce_each(ArgMax, &matrix, shape).unwrap();
    let argmin = reducer.reduce_each(ArgMin, &matrix, shape).unwrap();
    let max = reducer.reduce_each(Max, &matrix, shape).unwrap();
    let min = reducer.reduce_each(Min, &matrix, shape).unwrap();
    for c in 0..cols {
        let results = (
            argmax[c].unwrap().0,
            argmin[c].unwrap().0,
            max[c].unwrap(),
            min[c].unwrap(),
        );
        let xs: Vec<T> = column(c).1.iter().map(|&x| T::from_f32(x)).collect();
        check(
            &format!("{} (column {c} of {cols})", column(c).0),
            &xs,
            results,
        );
    }
}

/// Columns of 2048 rows, the plants at rows 37 and 37 + `stride` (the stride matters not: any
/// two rows in different groups of a column).
const COLUMNS: Layout = Layout {
    name: "columns",
    len: 2048,
    first: 37,
    threads: 8,
};

#[test]
fn f32_column_extremes_compare_each_lanes_extreme_as_the_order_rules_say() {
    columns_of_one_matrix::<f32>(12, ShapeKernel::ColumnsNarrow);
    columns_of_one_matrix::<f32>(64, ShapeKernel::Columns);
    columns_of_one_matrix::<bf16>(64, ShapeKernel::Columns);
}

#[test]
fn bf16_extremes_skip_and_search_groups_as_the_order_rules_say() {
    whole_arrays_in_one_small_block::<bf16>();
    rows_each::<bf16>(&BLOCK_PER_ROW, ShapeKernel::RowsBlock);
}

#[test]
fn f16_extremes_skip_and_search_groups_as_the_order_rules_say() {
    whole_arrays_in_one_small_block::<f16>();
    rows_each::<f16>(&BLOCK_PER_ROW, ShapeKernel::RowsBlock);
}

#[test]
fn f32_extremes_skip_groups_by_max_f32_as_the_order_rules_say() {
    whole_arrays_in_one_small_block::<f32>();
    rows_each::<f32>(&BLOCK_PER_ROW, ShapeKernel::RowsBlock);
    rows_each::<f32>(&WARP_PER_SEGMENT, ShapeKernel::RowsWarp);
}

/// `f64` has no fast group key: a block or a warp per row takes its groups by the best key lane
/// by lane (`BY_BEST_KEY`), and searches each winner at once.
#[test]
fn f64_arg_rows_of_a_block_search_groups_by_their_best_key() {
    rows_each::<f64>(&BLOCK_PER_ROW_F64, ShapeKernel::RowsBlock);
    rows_each::<f64>(&WARP_PER_SEGMENT_F64, ShapeKernel::RowsWarp);
}
