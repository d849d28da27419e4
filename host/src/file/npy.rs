//! The header of a `.npy` file: its magic and version, the length of its text, and the dict
//! that text holds (`descr`, `fortran_order`, `shape`), each value checked; and the check of the
//! data against the shape, before anything is allocated.

use super::error::{FileError, fail};
use super::literal::{Literal, shown};
use crate::element::DType;

/// The first bytes of every `.npy` file.
pub const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// What a `.npy` header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    pub dtype: DType,
    pub shape: Vec<u64>,
    pub fortran_order: bool,
    /// Where the data starts: the magic, the version, the header's length and the header.
    pub data_offset: usize,
}

impl NpyHeader {
    /// `(a, b)`, `(a,)` or `()`, as numpy writes a shape.
    pub fn shape_text(&self) -> String {
        match self.shape.as_slice() {
            [one] => format!("({one},)"),
            dims => format!(
                "({})",
                dims.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The elements the shape promises, or `None` when their count does not fit in 64 bits.
    ///
    /// A zero dimension does not excuse the others: `(2^32, 2^32, 0)` is refused, so that an
    /// accepted shape's dimensions multiply without overflow in any order a caller takes them.
    /// (numpy refuses it too, and more: it caps the nonzero dimensions' bytes at 2^63 - 1.)
    pub fn elements(&self) -> Option<u64> {
        let nonzero = self
            .shape
            .iter()
            .filter(|&&dim| dim != 0)
            .try_fold(1u64, |count, &dim| count.checked_mul(dim))?;
        Some(if self.shape.contains(&0) { 0 } else { nonzero })
    }

    /// The data's bytes the shape promises, or `None` when they do not fit in 64 bits.
    pub fn data_bytes(&self) -> Option<u64> {
        self.elements()?.checked_mul(self.dtype.size() as u64)
    }

    /// Refuses data of `held` bytes unless it is exactly what the shape promises.
    pub fn check_data(&self, held: usize) -> Result<(), FileError> {
        let (dtype, shape) = (self.dtype, self.shape_text());
        let Some(count) = self.elements() else {
            return fail(format!(
                "the header's shape {shape} multiplies to 2^64 or more (its nonzero dimensions), but the file holds {held} bytes of data"
            ));
        };
        let Some(expected) = self.data_bytes() else {
            return fail(format!(
                "the header's shape {shape} promises {count} × {dtype}: 2^64 bytes or more, but the file holds {held} bytes of data"
            ));
        };
        let held_bytes = held as u64;
        if held_bytes < expected {
            return fail(format!(
                "truncated: the header promises {count} × {dtype} ({expected} bytes) but the file holds {held} bytes of data"
            ));
        }
        if held_bytes > expected {
            return fail(format!(
                "the header promises {count} × {dtype} ({expected} bytes) but the file holds {held} bytes of data, {} bytes more: refused, as a shape must account for all of the data",
                held_bytes - expected
            ));
        }
        Ok(())
    }
}

/// Reads the header at the start of `bytes` (which must start with [`NPY_MAGIC`]); the data
/// is not looked at (see [`NpyHeader::check_data`]).
pub fn parse_npy_header(bytes: &[u8]) -> Result<NpyHeader, FileError> {
    if !bytes.starts_with(NPY_MAGIC) {
        return fail("not a .npy file (it does not start with the .npy magic \\x93NUMPY)");
    }
    let (Some(&major), Some(&minor)) = (bytes.get(6), bytes.get(7)) else {
        return fail("truncated: the file ends inside the .npy version");
    };
    // Versions 1.0 and 2.0 differ in the width of the header's length; 3.0 allows UTF-8.
    let width = match (major, minor) {
        (1, 0) => 2,
        (2, 0) | (3, 0) => 4,
        _ => {
            return fail(format!(
                "unsupported .npy format version {major}.{minor} (1.0, 2.0 and 3.0 are read)"
            ));
        }
    };
    let start = 8 + width;
    let Some(length) = bytes.get(8..start) else {
        return fail("truncated: the file ends inside the .npy header's length");
    };
    let length = length
        .iter()
        .rev()
        .fold(0usize, |sum, &byte| (sum << 8) | usize::from(byte));
    let Some(text) = start
        .checked_add(length)
        .and_then(|end| bytes.get(start..end))
    else {
        return fail(format!(
            "truncated: the .npy header is {length} bytes long but the file ends {} bytes after it starts",
            bytes.len() - start
        ));
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return fail("not a valid .npy file: its header is not text");
    };
    let (dtype, shape, fortran_order) = read_dict(text)?;
    Ok(NpyHeader {
        dtype,
        shape,
        fortran_order,
        data_offset: start + length,
    })
}

/// The three keys of the header's dict.
fn read_dict(text: &str) -> Result<(DType, Vec<u64>, bool), FileError> {
    let invalid = |why: String| FileError(format!("not a valid .npy header: {why}"));
    let mut parser = Literal::parser(text);
    let value = parser.value(0).map_err(invalid)?;
    parser.end().map_err(invalid)?;
    let Literal::Dict(entries) = value else {
        return Err(invalid("it is not a dict".into()));
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (key, value) in entries {
        let slot = match &key {
            Literal::Str(key) if key == "descr" => &mut descr,
            Literal::Str(key) if key == "fortran_order" => &mut fortran,
            Literal::Str(key) if key == "shape" => &mut shape,
            other => {
                return Err(invalid(format!(
                    "unknown key {} (a header holds descr, fortran_order and shape)",
                    other.text()
                )));
            }
        };
        if slot.replace(value).is_some() {
            return Err(invalid(format!("{} is given twice", key.text())));
        }
    }
    let missing = |key: &str| invalid(format!("it has no '{key}'"));
    let dtype = match descr.ok_or_else(|| missing("descr"))? {
        Literal::Str(descr) => element_type(&descr)?,
        records @ Literal::Seq(_) => {
            return fail(format!(
                "holds structured records ({}), not numbers",
                records.text()
            ));
        }
        other => {
            return Err(invalid(format!(
                "'descr' is {}, not a type string",
                other.text()
            )));
        }
    };
    let fortran_order = match fortran.ok_or_else(|| missing("fortran_order"))? {
        Literal::Bool(b) => b,
        other => {
            return Err(invalid(format!(
                "'fortran_order' is {}, not True or False",
                other.text()
            )));
        }
    };
    let shape = match shape.ok_or_else(|| missing("shape"))? {
        Literal::Seq(dims) => dims
            .iter()
            .map(|dim| match dim {
                Literal::Int {
                    negative: false,
                    value: Some(value),
                } => Ok(*value),
                Literal::Int {
                    negative: false,
                    value: None,
                } => Err(invalid(format!(
                    "the shape's dimension {} is 2^64 or more",
                    dim.text()
                ))),
                other => Err(invalid(format!(
                    "the shape's dimension {} is not a count",
                    other.text()
                ))),
            })
            .collect::<Result<Vec<u64>, FileError>>()?,
        other => {
            return Err(invalid(format!(
                "the shape is {}, not a tuple of counts",
                other.text()
            )));
        }
    };
    Ok((dtype, shape, fortran_order))
}

/// The element type of a `descr` such as `<f4`.
fn element_type(descr: &str) -> Result<DType, FileError> {
    let (order, rest) = match descr.as_bytes().first() {
        Some(b'<' | b'>' | b'|' | b'=') => (descr.as_bytes()[0], &descr[1..]),
        _ => (b'=', descr),
    };
    let mut chars = rest.chars();
    let kind = chars.next();
    let size: Option<usize> = chars.as_str().parse().ok();
    let descr = shown(descr);
    if order == b'>' && size.is_some_and(|s| s > 1) {
        return fail(format!(
            "big-endian elements ({descr}) are not supported: save it little-endian (numpy: a.astype(a.dtype.newbyteorder('<')))"
        ));
    }
    match (kind, size) {
        (Some('f'), Some(2)) => Ok(DType::F16),
        (Some('f'), Some(4)) => Ok(DType::F32),
        (Some('f'), Some(8)) => Ok(DType::F64),
        (Some('i'), Some(4)) => Ok(DType::I32),
        (Some('i'), Some(8)) => Ok(DType::I64),
        (Some('u'), Some(4)) => Ok(DType::U32),
        (Some('u'), Some(8)) => Ok(DType::U64),
        _ => fail(format!(
            "element type {descr} is not supported (f2, f4, f8, i4, i8, u4, u8; bfloat16 data as a raw .bin with --dtype bf16)"
        )),
    }
}
