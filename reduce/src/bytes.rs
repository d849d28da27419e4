//! The library's byte casts, in one place: plain data (elements, results, partials, states)
//! seen as the bytes a device buffer holds, and read back from them.
//!
//! Every type these are used with is `Copy` plain data — integers, floats, and `repr(C)`
//! structs of them — whose every bit pattern is a valid value: what a GPU wrote, read back.

/// The bytes of `values`.
pub(crate) fn bytes_of<V: Copy>(values: &[V]) -> &[u8] {
    // SAFETY: plain data (see the module docs); the slice covers exactly the values' memory,
    // padding included (as a copy to the device reads it).
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), size_of_val(values)) }
}

/// The bytes of one value, as a device buffer holds it.
pub(crate) fn value_bytes<V: Copy>(value: &V) -> Vec<u8> {
    bytes_of(std::slice::from_ref(value)).to_vec()
}

/// The value of type `V` at the start of `bytes` (at least `size_of::<V>()` of them).
pub(crate) fn read_value<V: Copy>(bytes: &[u8]) -> V {
    assert!(bytes.len() >= size_of::<V>(), "a whole value was read");
    // SAFETY: `bytes` holds a `V` that a kernel (or `value_bytes`) wrote: plain data, any bits
    // of which are a valid `V` (see the module docs).
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) }
}
