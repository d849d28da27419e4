//! What the column tests share: small-integer data, one column of a row-major slice, the
//! row of a column's first best value, and reducers of one block and of several.

use half::bf16;
use reduce_rs::Reducer;

/// Small integers: every sum exact in any order, and many ties.
pub fn data(len: usize) -> Vec<f32> {
    (0..len).map(|i| ((i * 7919) % 13) as f32).collect()
}

/// Column `c` of the row-major `values` of `cols` columns, with each value's row.
pub fn column(values: &[f32], cols: usize, c: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
    values.iter().skip(c).step_by(cols).copied().enumerate()
}

/// The row of the first largest (`sign` 1) or smallest (`sign` -1) value of column `c`.
pub fn first_best(values: &[f32], cols: usize, c: usize, sign: f32) -> Option<usize> {
    column(values, cols, c)
        .fold(None, |best: Option<(usize, f32)>, (row, x)| match best {
            Some((_, b)) if sign * x <= sign * b => best,
            _ => Some((row, x)),
        })
        .map(|(row, _)| row)
}

/// Simulated reducers of one block at a time and of as many as the planner likes.
pub fn reducers() -> [(&'static str, Reducer); 2] {
    [
        ("one block", Reducer::simulator().with_max_blocks(1)),
        ("several blocks", Reducer::simulator()),
    ]
}

/// Each column's argmax or argmin: its row and value, `None` for no rows.
pub type Args = [Option<(usize, f32)>];

/// The f32 column results of `values` (`cols` columns) a reduction returned — sums, maxima,
/// argmax and argmin — checked against loops over each column; `at` names the case.
pub fn check_f32_columns(
    values: &[f32],
    cols: usize,
    (sums, maxima): (&[f32], &[Option<f32>]),
    (argmax, argmin): (&Args, &Args),
    at: &str,
) {
    for c in 0..cols {
        let sum: f32 = column(values, cols, c).map(|(_, x)| x).sum();
        assert_eq!(sums[c], sum, "{at}: sum of column {c}");
        let max = column(values, cols, c)
            .map(|(_, x)| x)
            .fold(f32::MIN, f32::max);
        assert_eq!(maxima[c], Some(max), "{at}: max of column {c}");
        assert_eq!(
            argmax[c].map(|(row, _)| row),
            first_best(values, cols, c, 1.0),
            "{at}: argmax {c}"
        );
        assert_eq!(
            argmin[c].map(|(row, _)| row),
            first_best(values, cols, c, -1.0),
            "{at}: argmin {c}"
        );
    }
}

/// Each column's bf16 argmax: its row and value, `None` for no rows.
pub type Bf16Args = [Option<(usize, bf16)>];

/// The two- and eight-lane results of `values` (`cols` columns) — f64 sums, bf16 minima and
/// argmax of the same values widened and narrowed — checked against loops over each column.
pub fn check_f64_and_bf16_columns(
    values: &[f32],
    cols: usize,
    (sums, minima): (&[f64], &[Option<bf16>]),
    argmax: &Bf16Args,
    at: &str,
) {
    for c in 0..cols {
        let sum: f32 = column(values, cols, c).map(|(_, x)| x).sum();
        assert_eq!(sums[c], f64::from(sum), "{at}: f64 sum of column {c}");
        let min = column(values, cols, c)
            .map(|(_, x)| x)
            .fold(f32::MAX, f32::min);
        assert_eq!(minima[c].map(f32::from), Some(min), "{at}: bf16 min {c}");
        assert_eq!(
            argmax[c].map(|(row, _)| row),
            first_best(values, cols, c, 1.0),
            "{at}: bf16 argmax {c}"
        );
    }
}
