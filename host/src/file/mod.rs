//! `--input FILE`: `.npy` files (any shape, flattened in the order the file stores them; C or
//! Fortran order) and raw `.bin` files of one element type (`--dtype`).
//!
//! A file's bytes are parsed by [`parse`] (no file system: the fuzz target calls it) after
//! [`load`] has read them. A bad file gets one error line naming the file and the problem:
//! missing, unreadable, not a `.npy`, a header that is not a `.npy` header, an element type the
//! kernels do not have, big-endian, a shape whose element or byte count (of its nonzero
//! dimensions, even beside a zero one) does not fit in 64 bits, a shape that promises fewer or
//! more elements than the file holds, a `.bin` that is empty or whose length is not a whole
//! number of elements.
//!
//! The `.npy` header is read here, not by a general Python-literal parser: it is a dict of
//! three keys (`descr`, `fortran_order`, `shape`), and every count in it is checked before
//! anything is allocated, so a header that lies costs nothing but its error line.
//!
//! Its parts: this file reads a file and tells a `.npy` from raw elements; `npy.rs` reads the
//! header, in the Python literals `literal.rs` parses; `error.rs` is the one-line error.

mod error;
mod literal;
mod npy;

use crate::element::{DType, HostElement};
use anyhow::{Result, anyhow, bail};
use error::fail;
use std::path::Path;

pub use error::FileError;
pub use npy::{NPY_MAGIC, NpyHeader, parse_npy_header};

/// A loaded input: its element type, shape and bytes (little-endian elements).
#[derive(Debug)]
pub struct Loaded {
    pub dtype: DType,
    /// The `.npy` shape (`[len]` for `.bin`).
    pub shape: Vec<u64>,
    /// Fortran (column-major) order: the elements are in the file's order, so indices are
    /// column-major too.
    pub fortran_order: bool,
    /// Exactly `len() * dtype.size()` bytes: the data, without the header.
    pub bytes: Vec<u8>,
}

impl Loaded {
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The elements as `T` (which must be `self.dtype`).
    pub fn elements<T: HostElement>(&self) -> Vec<T> {
        assert_eq!(T::DTYPE, self.dtype, "elements of the file's own type");
        let mut elements: Vec<T> = Vec::with_capacity(self.len());
        // SAFETY: `elements` has room for `len` values of `T`, and `bytes` holds exactly
        // `len * size_of::<T>()` bytes of little-endian `T`s (this machine is little-endian:
        // the CUDA driver runs on nothing else); every bit pattern is a valid element.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.bytes.as_ptr(),
                elements.as_mut_ptr().cast::<u8>(),
                self.len() * size_of::<T>(),
            );
            elements.set_len(self.len());
        }
        elements
    }
}

/// Reads `path`: a `.npy` by its header, anything else as raw elements of `dtype`.
/// `max_bytes` refuses, before reading, a file larger than where it must fit.
pub fn load(path: &Path, dtype: Option<DType>, max_bytes: Option<(usize, &str)>) -> Result<Loaded> {
    let name = path.display();
    let metadata = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow!("{name}: no such file"),
        _ => anyhow!("{name}: cannot read it: {e}"),
    })?;
    if metadata.is_dir() {
        bail!("{name}: is a directory, not a file");
    }
    if let Some((limit, what)) = max_bytes
        && metadata.len() > limit as u64
    {
        bail!(
            "{name}: {} MiB do not fit in {what} ({} MiB)",
            metadata.len() >> 20,
            limit >> 20
        );
    }
    let bytes = std::fs::read(path).map_err(|e| anyhow!("{name}: cannot read it: {e}"))?;
    let named_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    from_bytes(bytes, dtype, named_npy).map_err(|e| anyhow!("{name}: {e}"))
}

/// Parses a whole file's bytes: a `.npy` when they start with its magic (`dtype` must then be
/// `None`: the header says the type), else raw elements of `dtype`. `named_npy`: the file's
/// name ends in `.npy`, so bytes without the magic are an error rather than raw elements.
pub fn parse(bytes: &[u8], dtype: Option<DType>, named_npy: bool) -> Result<Loaded, FileError> {
    from_bytes(bytes.to_vec(), dtype, named_npy)
}

/// [`parse`] on bytes it may keep (the data is moved, not copied).
pub fn from_bytes(
    mut bytes: Vec<u8>,
    dtype: Option<DType>,
    named_npy: bool,
) -> Result<Loaded, FileError> {
    if bytes.starts_with(NPY_MAGIC) {
        if dtype.is_some() {
            return fail("a .npy file says its own element type; leave out --dtype");
        }
        let header = parse_npy_header(&bytes)?;
        header.check_data(bytes.len() - header.data_offset)?;
        bytes.drain(..header.data_offset);
        return Ok(Loaded {
            dtype: header.dtype,
            shape: header.shape,
            fortran_order: header.fortran_order,
            bytes,
        });
    }
    if named_npy {
        return fail("not a .npy file (it does not start with the .npy magic \\x93NUMPY)");
    }
    let Some(dtype) = dtype else {
        return fail(
            "a raw file needs --dtype to say what it holds (f32, f64, i32, u32, i64, u64, f16, bf16)",
        );
    };
    let len = bytes.len();
    if len == 0 {
        return fail(format!(
            "is empty: a raw file must hold at least one {dtype} element ({} bytes; an empty input is a .npy of shape (0,))",
            dtype.size()
        ));
    }
    if !len.is_multiple_of(dtype.size()) {
        return fail(format!(
            "{len} bytes is not a whole number of {dtype} elements ({} bytes each)",
            dtype.size()
        ));
    }
    Ok(Loaded {
        dtype,
        shape: vec![(len / dtype.size()) as u64],
        fortran_order: false,
        bytes,
    })
}

#[cfg(test)]
mod npy_bytes;
#[cfg(test)]
mod tests;
