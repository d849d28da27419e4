//! What `bench --shapes` measures: its cases (`dtype:op:kind:size`), the `table` of shape
//! classes users meet, the `others` around them, and the row `sweep`, as parsed from the
//! command line.

use crate::element::{DType, OpKind};
use crate::shapes::ShapeSpec;
use crate::size::{parse_len, size_label};

/// One case per class of shape users reduce: many short, square and few long rows; square,
/// large and narrow (a few columns of millions of rows) column sums; a language model's
/// vocabulary argmax over 1, 8 and 64 rows; a row max; whole arrays small and large, float and
/// 64-bit integer; ragged segments.
pub const TABLE: &str = "f32:sum:rows:8192x8192,f32:sum:rows:65536x512,f32:sum:rows:16x4194304,\
f32:sum:columns:8192x8192,f32:sum:columns:4096x4096,f32:sum:columns:1048576x8,\
bf16:argmax:rows:1x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:64x128256,\
f32:max:rows:32768x4096,f32:argmax:whole:2^28,f32:sum:whole:2^14,f32:sum:whole:2^22,\
f32:sum:whole:2^28,i64:sum:whole:2^27,f32:sum:segments:100000x300";

/// Neighbours of the table's classes, where a rule of the planner changes its kernel or a peer
/// came close: columns from 2 to 16384 wide, bf16 columns, few rows short and long, many short
/// segments, and a 16-bit whole-array argmax (README's "other shapes").
pub const OTHERS: &str = "f32:sum:columns:2048x2048,f32:sum:columns:16384x1024,\
f32:sum:columns:1024x16384,bf16:sum:columns:8192x8192,f32:sum:columns:1048576x2,\
f32:sum:columns:65536x256,f32:sum:columns:262144x64,f32:sum:columns:1048576x16,\
f32:sum:rows:64x512,f32:sum:rows:16x16384,f32:sum:rows:128x16384,\
f32:sum:segments:1000000x30,bf16:argmax:whole:2^28";

/// Elements of the row sweep (rows × row length).
pub const SWEEP_ELEMENTS: usize = 1 << 26;

/// What a case reduces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseShape {
    Whole(usize),
    Rows(usize, usize),
    Columns(usize, usize),
    /// Segments and their mean length (ragged, seeded).
    Segments(usize, usize),
}

impl CaseShape {
    /// `whole`, `rows`, `columns` or `segments`: the word of the case, of the CSV's `case`
    /// column and of the peers' `--case`.
    pub fn kind(&self) -> &'static str {
        match self {
            CaseShape::Whole(_) => "whole",
            CaseShape::Rows(..) => "rows",
            CaseShape::Columns(..) => "columns",
            CaseShape::Segments(..) => "segments",
        }
    }
}

/// One case of `bench --shapes` (`f32:sum:rows:8192x8192`): element type, operation, shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeCase {
    pub dtype: DType,
    pub op: OpKind,
    pub shape: CaseShape,
}

impl ShapeCase {
    /// `f32 sum rows 8192×8192`.
    pub fn label(&self) -> String {
        let shape = match &self.shape {
            CaseShape::Whole(n) => format!("whole {}", size_label(*n)),
            CaseShape::Rows(r, c) => format!("rows {r}×{c}"),
            CaseShape::Columns(r, c) => format!("columns {r}×{c}"),
            CaseShape::Segments(s, m) => format!("segments {s}×~{m}"),
        };
        format!("{} {} {shape}", self.dtype, self.op)
    }

    /// The library's shape (`None`: the whole array).
    pub fn spec(&self) -> Option<ShapeSpec> {
        match self.shape {
            CaseShape::Whole(_) => None,
            CaseShape::Rows(rows, cols) => Some(ShapeSpec::Rows { rows, cols }),
            CaseShape::Columns(rows, cols) => Some(ShapeSpec::Columns { rows, cols }),
            CaseShape::Segments(count, mean) => Some(ShapeSpec::ragged(count, mean, 1)),
        }
    }

    /// Elements of the input.
    pub fn elements(&self) -> usize {
        match self.shape {
            CaseShape::Whole(n) => n,
            // Checked when parsed: rows × columns fits.
            CaseShape::Rows(r, c) | CaseShape::Columns(r, c) => r * c,
            CaseShape::Segments(..) => self.spec().map_or(0, |s| s.len()),
        }
    }
}

/// What `--shapes` asks for.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShapesArg {
    pub cases: Vec<ShapeCase>,
    pub sweep: bool,
}

impl ShapesArg {
    /// The cases to run: those named, then (`sweep`) f32 sums of [`SWEEP_ELEMENTS`] as rows
    /// of 32, 128, … 2^24 elements.
    pub fn all_cases(&self) -> Vec<ShapeCase> {
        let mut cases = self.cases.clone();
        if self.sweep {
            let mut cols = 32usize;
            while cols <= 1 << 24 {
                cases.push(ShapeCase {
                    dtype: DType::F32,
                    op: OpKind::Sum,
                    shape: CaseShape::Rows(SWEEP_ELEMENTS / cols, cols),
                });
                cols *= 4;
            }
        }
        cases
    }
}

/// `table`, `others`, `sweep` and cases `dtype:op:kind:RxC` (`kind` rows, columns, segments — RxC is then
/// segments × mean length — or `whole:N`), comma-separated.
pub fn parse_shapes(text: &str) -> Result<ShapesArg, String> {
    let mut arg = ShapesArg::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.to_ascii_lowercase().as_str() {
            "sweep" => arg.sweep = true,
            "table" => arg.cases.extend(parse_shapes(TABLE)?.cases),
            "others" => arg.cases.extend(parse_shapes(OTHERS)?.cases),
            lower => arg.cases.push(parse_case(lower)?),
        }
    }
    if arg.cases.is_empty() && !arg.sweep {
        return Err(
            "--shapes needs `table`, `others`, `sweep` or cases such as f32:sum:rows:8192x8192"
                .into(),
        );
    }
    Ok(arg)
}

fn parse_case(item: &str) -> Result<ShapeCase, String> {
    let parts: Vec<&str> = item.split(':').collect();
    let [dtype, op, kind, size] = parts[..] else {
        return Err(format!(
            "`{item}`: a case is dtype:op:kind:size, e.g. f32:sum:rows:8192x8192"
        ));
    };
    let dtype = DType::parse(dtype).ok_or_else(|| format!("`{dtype}` is not an element type"))?;
    let op = OpKind::parse(op).ok_or_else(|| format!("`{op}` is not an operation"))?;
    let pair = |size: &str| -> Result<(usize, usize), String> {
        let (a, b) = size
            .split_once('x')
            .ok_or_else(|| format!("`{size}`: write RxC, e.g. 8192x8192"))?;
        let (a, b) = (parse_len(a)?, parse_len(b)?);
        match a.checked_mul(b) {
            Some(_) => Ok((a, b)),
            None => Err(format!(
                "`{size}`: {a} × {b} elements do not fit in 64 bits"
            )),
        }
    };
    let shape = match kind {
        "whole" => CaseShape::Whole(parse_len(size)?),
        "rows" => pair(size).map(|(r, c)| CaseShape::Rows(r, c))?,
        "columns" => pair(size).map(|(r, c)| CaseShape::Columns(r, c))?,
        "segments" => pair(size).map(|(s, m)| CaseShape::Segments(s, m))?,
        other => {
            return Err(format!(
                "`{other}`: the kinds are whole, rows, columns, segments"
            ));
        }
    };
    Ok(ShapeCase { dtype, op, shape })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_parse_and_the_table_covers_every_shape_class() {
        let arg = parse_shapes("table,sweep").unwrap();
        assert!(arg.sweep);
        assert_eq!(arg.cases.len(), 16);
        let others = parse_shapes("Others").unwrap().cases;
        assert_eq!(others.len(), 13);
        assert!(others.iter().all(|case| !arg.cases.contains(case)));
        assert_eq!(
            others.last().unwrap().shape,
            CaseShape::Whole(1 << 28),
            "the bf16 argmax"
        );
        assert_eq!(
            parse_case("bf16:argmax:rows:64x128256").unwrap(),
            ShapeCase {
                dtype: DType::Bf16,
                op: OpKind::ArgMax,
                shape: CaseShape::Rows(64, 128256)
            }
        );
        assert_eq!(
            parse_case("f32:sum:whole:2^28").unwrap().shape,
            CaseShape::Whole(1 << 28)
        );
        assert!(parse_case("f32:sum:rows").is_err());
        assert!(parse_case("f32:sum:diagonal:3x3").is_err());
        assert!(parse_shapes("").is_err());
        assert!(
            parse_case("f32:sum:rows:2^40x2^40")
                .unwrap_err()
                .contains("do not fit")
        );
        let sweep = parse_shapes("sweep").unwrap().all_cases();
        assert_eq!(sweep.len(), 10);
        assert!(sweep.iter().all(|c| c.elements() == SWEEP_ELEMENTS));
        assert_eq!(sweep[0].shape.kind(), "rows");
    }
}
