//! The library's checks of a shape against an input: `Shape::check`, `Shape::results` and
//! `Shape::len_of`, on checked shapes and on any shape (neither may panic).
//!
//! Accepted shapes must describe the input: rows × columns are its elements, segments ascend
//! within it, and every result's length adds up; `len_of` past the last result, and on a
//! segment whose offsets decrease, is `None`.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use reduce_rs::Shape;

/// The input's length relative to the shape's elements, so that accepted shapes are common.
#[derive(Arbitrary, Debug)]
enum Len {
    Exact,
    Plus(u16),
    Minus(u16),
    Any(usize),
}

#[derive(Arbitrary, Debug)]
enum Case {
    Rows {
        rows: usize,
        cols: usize,
        len: Len,
    },
    Columns {
        rows: usize,
        cols: usize,
        len: Len,
    },
    /// Offsets from `start` by `steps` (ascending), or `raw` as given.
    Segments {
        start: u32,
        steps: Vec<u16>,
        raw: Option<Vec<usize>>,
        len: Len,
    },
}

fn input_len(elements: Option<usize>, len: &Len) -> usize {
    match (elements, len) {
        (Some(n), Len::Exact) => n,
        (Some(n), Len::Plus(d)) => n.saturating_add(usize::from(*d)),
        (Some(n), Len::Minus(d)) => n.saturating_sub(usize::from(*d)),
        (_, Len::Any(n)) => *n,
        (None, _) => usize::MAX,
    }
}

/// The indices to ask `len_of` about: all of them when there are few, else both ends.
fn sample(results: usize) -> impl Iterator<Item = usize> {
    let head = 0..results.min(256);
    let tail = results.saturating_sub(256).max(results.min(256))..results;
    head.chain(tail)
}

fuzz_target!(|case: Case| {
    match case {
        Case::Rows { rows, cols, len } | Case::Columns { rows, cols, len } => {
            let len = input_len(rows.checked_mul(cols), &len);
            for (shape, results, each) in [
                (Shape::rows(rows, cols), rows, cols),
                (Shape::columns(rows, cols), cols, rows),
            ] {
                match shape.check(len) {
                    Ok(()) => {
                        assert_eq!(rows.checked_mul(cols), Some(len));
                        assert!(rows <= u32::MAX as usize && cols <= u32::MAX as usize);
                        assert_eq!(shape.results(), results);
                        for i in sample(results) {
                            assert_eq!(shape.len_of(i), Some(each));
                        }
                        assert_eq!(shape.len_of(results), None);
                    }
                    Err(error) => assert!(!error.to_string().contains('\n'), "{error}"),
                }
            }
        }
        Case::Segments {
            start,
            steps,
            raw,
            len,
        } => {
            let offsets: Vec<usize> = raw.unwrap_or_else(|| {
                let mut at = start as usize;
                std::iter::once(at)
                    .chain(steps.iter().map(|&s| {
                        at += usize::from(s);
                        at
                    }))
                    .collect()
            });
            let last = offsets.last().copied();
            let len = input_len(last, &len);
            let shape = Shape::segments(&offsets);
            // Unchecked: any index, any offsets, no panic.
            for i in sample(shape.results() + 2) {
                let got = shape.len_of(i);
                let want = (i + 1 < offsets.len())
                    .then(|| offsets[i + 1].checked_sub(offsets[i]))
                    .flatten();
                assert_eq!(got, want);
            }
            match shape.check(len) {
                Ok(()) => {
                    assert!(!offsets.is_empty());
                    assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
                    assert_eq!(shape.results(), offsets.len() - 1);
                    let total: usize = (0..shape.results())
                        .map(|i| shape.len_of(i).expect("a checked segment has a length"))
                        .sum();
                    assert_eq!(total, offsets[offsets.len() - 1] - offsets[0]);
                    assert!(offsets[offsets.len() - 1] <= len);
                }
                Err(error) => assert!(!error.to_string().contains('\n'), "{error}"),
            }
        }
    }
});
