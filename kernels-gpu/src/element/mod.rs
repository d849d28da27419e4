//! What the kernels read: the element types, and the [`Value`]s that move between threads.
//!
//! - [`Element`]: a type the input may hold — `f32`, `f64`, `i32`, `u32`, `i64`, `u64`, and the
//!   16-bit floats [`F16`] (IEEE binary16) and [`Bf16`] (bfloat16). Sealed: the entry points are
//!   generated for exactly these.
//! - [`Value`]: anything a thread keeps in a register, stores to shared or global memory, and
//!   hands to another lane through a warp shuffle: every element, and the operators'
//!   accumulators (for example the `(index, value)` pair of an arg-max, see [`crate::ops`]).
//!
//! # Order
//! Min, max and the arg operators compare elements by their *keys*: unsigned integers of the
//! type's width (`u32` for the 16- and 32-bit types, `u64` for the 64-bit ones) whose order is
//! the elements' order. For floats it is IEEE 754's `totalOrder` on the numbers, so
//! `-0.0 < +0.0` and `-inf` is the smallest number; every NaN gets the largest key
//! ([`Element::key_nan_high`], for max and argmax) or the smallest ([`Element::key_nan_low`],
//! for min and argmin), so that NaN wins and the first NaN wins among NaNs. Comparing keys is
//! one integer instruction, where comparing floats with these rules would take several.
//!
//! The element types' impls are grouped by kind: [`half`] (the 16-bit floats, stored as their
//! bits), `float` (`f32`, `f64`), `int` (the integers); `vector` is the 16-byte load every
//! kernel reads through; `bits` holds the bit casts the [`Value`] impls are written with; `traits` the traits
//! themselves.

/// `totalOrder` of an IEEE float's bits as an unsigned key of the same width, without a
/// branch: negative numbers get every bit flipped (a larger magnitude gives a smaller key),
/// positive ones their sign bit.
macro_rules! float_key {
    ($bits:expr, $unsigned:ty, $signed:ty) => {{
        let bits: $unsigned = $bits;
        let negative = ((bits as $signed) >> (<$unsigned>::BITS - 1)) as $unsigned;
        bits ^ (negative | (1 << (<$unsigned>::BITS - 1)))
    }};
}

/// The bits whose `float_key!` is `key`: keys with the top bit set were positive.
macro_rules! float_from_key {
    ($key:expr, $unsigned:ty) => {{
        let key: $unsigned = $key;
        let top = 1 << (<$unsigned>::BITS - 1);
        if key & top != 0 { key ^ top } else { !key }
    }};
}

mod bits;
mod float;
pub mod half;
mod int;
mod traits;
mod vector;

pub use half::{Bf16, F16, f16_bits_to_f32};
pub use traits::{Accumulator, Element, Key, Value, Words};
pub use vector::{Lanes, Vector16};

#[cfg(test)]
pub(crate) mod tests;
