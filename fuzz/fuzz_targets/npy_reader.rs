//! The program's `--input` reader on any bytes: `host::file::parse`, as `reduce-rs v8 --input
//! FILE [--dtype T]` calls it on a file's contents.
//!
//! The first byte chooses the call (the file's name ends in `.npy` or not, and which
//! `--dtype`, if any); the rest is the file. Whatever the bytes, the reader returns, without a
//! panic or an allocation larger than the file: either a one-line error, or an input whose
//! bytes are exactly its shape's elements.

#![no_main]

use host::element::DType;
use host::file::{NPY_MAGIC, parse, parse_npy_header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, file)) = data.split_first() else {
        return;
    };
    let named_npy = mode & 1 == 1;
    // No --dtype, or one of the eight types.
    let dtype = match (mode >> 1) % 9 {
        0 => None,
        k => Some(DType::ALL[usize::from(k) - 1]),
    };
    match parse(file, dtype, named_npy) {
        Ok(loaded) => {
            let size = loaded.dtype.size();
            assert_eq!(loaded.bytes.len() % size, 0, "whole elements");
            let elements: u64 = loaded
                .shape
                .iter()
                .try_fold(1u64, |n, &d| n.checked_mul(d))
                .expect("an accepted shape's element count fits in 64 bits");
            assert_eq!(elements, loaded.len() as u64, "the shape is the data");
            assert!(
                loaded.bytes.len() <= file.len(),
                "no more data than the file"
            );
            if file.starts_with(NPY_MAGIC) {
                let header = parse_npy_header(file).expect("an accepted file's header parses");
                assert_eq!(header.dtype, loaded.dtype);
                assert_eq!(header.data_offset + loaded.bytes.len(), file.len());
                assert_eq!(dtype, None, "a .npy file with --dtype is refused");
            } else {
                assert_eq!(Some(loaded.dtype), dtype, "raw data is of --dtype");
                assert!(!loaded.is_empty(), "an empty raw file is refused");
            }
        }
        Err(error) => {
            let line = &error.0;
            assert!(
                !line.is_empty() && !line.chars().any(char::is_control),
                "one line: {line:?}"
            );
        }
    }
});
