//! Test support, shared by the reader's unit tests and the CLI's tests
//! (`#[path]`-included by `host/tests/cli.rs`): `.npy` files written by hand, so that a header
//! may say anything — a shape that overflows, or promises more or fewer elements than follow.

/// A `.npy` file's bytes as numpy writes them: magic, version 1.0, the header's length, the
/// dict padded with spaces to a multiple of 64 bytes and ended by a newline, then `data`.
pub fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let fortran = if fortran { "True" } else { "False" };
    let mut dict =
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}
