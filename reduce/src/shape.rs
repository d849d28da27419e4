//! What a reduction of each row, column or segment reduces: [`Shape`], checked against the input
//! (which kernel runs a shape, and how: `crate::plan::shapes`).

use crate::element::Element;
use crate::error::{Error, Result};
use crate::op::{Operation, device_value};

/// What to reduce each of: rows or columns of a row-major matrix, or segments of a list.
///
/// ```
/// use reduce_rs::{Reducer, Shape, ops::Sum};
/// let reducer = Reducer::simulator();
/// let matrix = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 rows of 3
/// assert_eq!(reducer.reduce_each(Sum, &matrix, Shape::rows(2, 3))?, [6.0, 15.0]);
/// assert_eq!(reducer.reduce_each(Sum, &matrix, Shape::columns(2, 3))?, [5.0, 7.0, 9.0]);
/// let offsets = [0, 1, 1, 6]; // segments [0, 1), [1, 1) (empty), [1, 6)
/// assert_eq!(reducer.reduce_each(Sum, &matrix, Shape::segments(&offsets))?, [1.0, 0.0, 20.0]);
/// # Ok::<(), reduce_rs::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape<'a> {
    /// Every row of a `rows × cols` row-major matrix: `rows` results.
    Rows {
        /// Rows of the matrix.
        rows: usize,
        /// Columns of the matrix (elements per row).
        cols: usize,
    },
    /// Every column of a `rows × cols` row-major matrix: `cols` results (the arg operations
    /// return the row).
    Columns {
        /// Rows of the matrix (elements per column).
        rows: usize,
        /// Columns of the matrix.
        cols: usize,
    },
    /// Segment `i` is `offsets[i]..offsets[i + 1]` (CSR style, ascending, possibly empty):
    /// `offsets.len() - 1` results.
    Segments(&'a [usize]),
}

impl<'a> Shape<'a> {
    /// Every row of a `rows × cols` row-major matrix.
    pub fn rows(rows: usize, cols: usize) -> Shape<'a> {
        Shape::Rows { rows, cols }
    }

    /// Every column of a `rows × cols` row-major matrix.
    pub fn columns(rows: usize, cols: usize) -> Shape<'a> {
        Shape::Columns { rows, cols }
    }

    /// The segments between consecutive `offsets`.
    pub fn segments(offsets: &'a [usize]) -> Shape<'a> {
        Shape::Segments(offsets)
    }

    /// How many results: rows, columns or segments.
    pub fn results(&self) -> usize {
        match *self {
            Shape::Rows { rows, .. } => rows,
            Shape::Columns { cols, .. } => cols,
            Shape::Segments(offsets) => offsets.len().saturating_sub(1),
        }
    }

    /// The results of every row, column or segment of this shape in `bytes`, as a kernel of
    /// [`Reducer::reduce_each`](crate::Reducer::reduce_each) left them in device memory (one
    /// `O::Device` each, read back): an empty row or segment gives [`Operation::empty`],
    /// whatever the kernel wrote for it.
    ///
    /// ```
    /// use reduce_rs::{Shape, ops::Max};
    /// let bytes = [2.5f32.to_ne_bytes(), f32::NEG_INFINITY.to_ne_bytes()].concat();
    /// let got = Shape::segments(&[0, 3, 3]).outputs_of::<f32, Max>(&bytes);
    /// assert_eq!(got, [Some(2.5), None]);
    /// ```
    pub fn outputs_of<T: Element, O: Operation<T>>(&self, bytes: &[u8]) -> Vec<O::Output> {
        debug_assert_eq!(bytes.len(), self.results() * size_of::<O::Device>());
        bytes
            .chunks_exact(size_of::<O::Device>())
            .enumerate()
            .map(|(i, chunk)| match self.len_of(i) {
                Some(0) | None => O::empty(),
                Some(_) => O::output(device_value::<T, O>(chunk)),
            })
            .collect()
    }

    /// The number of elements result `i` reduces: `None` past the last result, and for a
    /// segment whose offsets decrease (which [`Shape::check`] refuses).
    ///
    /// ```
    /// use reduce_rs::Shape;
    /// assert_eq!(Shape::rows(2, 5).len_of(1), Some(5));
    /// assert_eq!(Shape::segments(&[0, 4, 9]).len_of(1), Some(5));
    /// assert_eq!(Shape::segments(&[0, 4, 9]).len_of(2), None);
    /// assert_eq!(Shape::segments(&[7, 3]).len_of(0), None);
    /// ```
    pub fn len_of(&self, i: usize) -> Option<usize> {
        if i >= self.results() {
            return None;
        }
        match *self {
            Shape::Rows { cols, .. } => Some(cols),
            Shape::Columns { rows, .. } => Some(rows),
            Shape::Segments(offsets) => offsets[i + 1].checked_sub(offsets[i]),
        }
    }

    /// Checks the shape against an input of `len` elements.
    pub fn check(&self, len: usize) -> Result<()> {
        match *self {
            Shape::Rows { rows, cols } | Shape::Columns { rows, cols } => {
                let elements = rows.checked_mul(cols).ok_or_else(|| {
                    Error::Shape(format!(
                        "{rows} × {cols} elements do not fit in this machine's address space"
                    ))
                })?;
                if elements != len {
                    return Err(Error::Shape(format!(
                        "a {rows} × {cols} matrix has {elements} elements, but the input has {len}"
                    )));
                }
                if rows > u32::MAX as usize || cols > u32::MAX as usize {
                    return Err(Error::Shape(format!(
                        "{rows} × {cols}: at most 2^32 - 1 rows and columns"
                    )));
                }
                Ok(())
            }
            Shape::Segments(offsets) => {
                if offsets.is_empty() {
                    return Err(Error::Shape(
                        "segment offsets need at least one entry (n segments have n + 1 offsets)"
                            .into(),
                    ));
                }
                if let Some(at) = offsets.windows(2).position(|pair| pair[0] > pair[1]) {
                    return Err(Error::Shape(format!(
                        "segment offsets must not decrease: offsets[{at}] = {} > offsets[{}] = {}",
                        offsets[at],
                        at + 1,
                        offsets[at + 1]
                    )));
                }
                let last = offsets[offsets.len() - 1];
                if last > len {
                    return Err(Error::Shape(format!(
                        "the last segment ends at {last}, past the input's {len} elements"
                    )));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked_against_the_input() {
        assert!(Shape::rows(3, 4).check(12).is_ok());
        assert!(
            Shape::rows(3, 4)
                .check(13)
                .unwrap_err()
                .to_string()
                .contains("has 13")
        );
        assert!(Shape::rows(usize::MAX, 2).check(0).is_err());
        assert!(Shape::segments(&[]).check(0).is_err());
        assert!(
            Shape::segments(&[0, 5, 3])
                .check(9)
                .unwrap_err()
                .to_string()
                .contains("must not decrease")
        );
        assert!(
            Shape::segments(&[0, 10])
                .check(9)
                .unwrap_err()
                .to_string()
                .contains("past the input")
        );
        assert!(Shape::segments(&[2, 2, 5]).check(9).is_ok());
        assert_eq!(Shape::segments(&[2, 2, 5]).results(), 2);
    }
}
