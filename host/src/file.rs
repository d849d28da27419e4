//! `--input FILE`: `.npy` files (any shape, flattened in the order the file stores them; C or
//! Fortran order) and raw `.bin` files of one element type (`--dtype`).
//!
//! A bad file gets one error line naming the file and the problem: missing, unreadable, not a
//! `.npy`, truncated, an element type the kernels do not have, big-endian, a `.bin` whose
//! length is not a whole number of elements.

use crate::element::{DType, HostElement};
use anyhow::{Result, bail};
use std::io::Read;
use std::path::Path;

/// A loaded input: its element type, shape and bytes (little-endian elements).
#[derive(Debug)]
pub struct Loaded {
    pub dtype: DType,
    /// The `.npy` shape (`[len]` for `.bin`).
    pub shape: Vec<u64>,
    /// Fortran (column-major) order: the elements are in the file's order, so indices are
    /// column-major too.
    pub fortran_order: bool,
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
        std::io::ErrorKind::NotFound => anyhow::anyhow!("{name}: no such file"),
        _ => anyhow::anyhow!("{name}: cannot read it: {e}"),
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
    let mut file =
        std::fs::File::open(path).map_err(|e| anyhow::anyhow!("{name}: cannot open it: {e}"))?;
    let mut magic = [0u8; 6];
    let is_npy = file.read_exact(&mut magic).is_ok() && &magic == b"\x93NUMPY";
    let file =
        std::fs::File::open(path).map_err(|e| anyhow::anyhow!("{name}: cannot open it: {e}"))?;
    if is_npy {
        if dtype.is_some() {
            bail!("{name}: a .npy file says its own element type; leave out --dtype");
        }
        load_npy(path, file)
    } else if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
    {
        bail!("{name}: not a .npy file (it does not start with the .npy magic \\x93NUMPY)")
    } else {
        let Some(dtype) = dtype else {
            bail!(
                "{name}: a raw file needs --dtype to say what it holds (f32, f64, i32, u32, i64, u64, f16, bf16)"
            );
        };
        load_raw(path, file, dtype, metadata.len())
    }
}

fn load_raw(path: &Path, mut file: std::fs::File, dtype: DType, len: u64) -> Result<Loaded> {
    let name = path.display();
    if !len.is_multiple_of(dtype.size() as u64) {
        bail!(
            "{name}: {len} bytes is not a whole number of {dtype} elements ({} bytes each)",
            dtype.size()
        );
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("{name}: cannot read it: {e}"))?;
    Ok(Loaded {
        dtype,
        shape: vec![len / dtype.size() as u64],
        fortran_order: false,
        bytes,
    })
}

fn load_npy(path: &Path, file: std::fs::File) -> Result<Loaded> {
    let name = path.display();
    let mut reader = std::io::BufReader::new(file);
    let npy = npyz::NpyHeader::from_reader(&mut reader)
        .map_err(|e| anyhow::anyhow!("{name}: not a valid .npy file: {e}"))?;
    let descr = npy.dtype().descr();
    let npyz::DType::Plain(type_str) = npy.dtype() else {
        bail!("{name}: holds structured records ({descr}), not numbers");
    };
    if type_str.endianness() == npyz::Endianness::Big {
        bail!(
            "{name}: big-endian elements ({descr}) are not supported: save it little-endian (numpy: a.astype(a.dtype.newbyteorder('<')))"
        );
    }
    let dtype = match (type_str.type_char(), type_str.size_field()) {
        (npyz::TypeChar::Float, 2) => DType::F16,
        (npyz::TypeChar::Float, 4) => DType::F32,
        (npyz::TypeChar::Float, 8) => DType::F64,
        (npyz::TypeChar::Int, 4) => DType::I32,
        (npyz::TypeChar::Int, 8) => DType::I64,
        (npyz::TypeChar::Uint, 4) => DType::U32,
        (npyz::TypeChar::Uint, 8) => DType::U64,
        _ => bail!(
            "{name}: element type {descr} is not supported (f2, f4, f8, i4, i8, u4, u8; bfloat16 data as a raw .bin with --dtype bf16)"
        ),
    };
    let shape = npy.shape().to_vec();
    let fortran_order = npy.order() == npyz::Order::Fortran;
    let len: u64 = shape.iter().product();
    let expected = len * dtype.size() as u64;
    let mut bytes = Vec::with_capacity(expected as usize);
    reader
        .by_ref()
        .take(expected)
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("{name}: cannot read it: {e}"))?;
    if (bytes.len() as u64) < expected {
        bail!(
            "{name}: truncated: the header promises {len} × {dtype} ({expected} bytes) but the file holds {} bytes of data",
            bytes.len()
        );
    }
    Ok(Loaded {
        dtype,
        shape,
        fortran_order,
        bytes,
    })
}
