//! The PTX entry points: every version × element type × operator (× block size for the
//! versions whose block size is a const generic), all with one parameter list:
//!
//! `(input: *const T, len: usize, partials: *mut T, partials_len: usize, retired: *mut u32)`
//!
//! The host's version table builds the same names (`reduce_v5_f32_sum_b256`).

use crate::device::{GlobalCounter, GlobalSlice, GlobalSliceMut};
use crate::element::{Max, Min, Sum};

macro_rules! entry {
    ($name:ident, $kernel:ident, $t:ty, $op:ty $(, $block:literal)?) => {
        /// # Safety
        /// The host's launch contract: `input` holds `len` elements, `partials` holds
        /// `partials_len` elements (at least `gridDim`), `retired` is a zeroed `u32`; all are
        /// device allocations that nothing else touches during the launch. The block's
        /// dynamic shared memory holds every `shared_array!` of the kernel (the host's
        /// version table gives `shared_bytes` for the block size and element type).
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(input: *const $t, len: usize, partials: *mut $t, partials_len: usize, retired: *mut u32) {
            // SAFETY: the launch contract above is exactly what the wrappers require.
            let (input, partials, retired) = unsafe {
                (GlobalSlice::from_raw(input, len), GlobalSliceMut::from_raw(partials, partials_len), GlobalCounter::from_raw(retired))
            };
            crate::$kernel::<$t, $op $(, $block)?>(input, partials, retired)
        }
    };
}

macro_rules! for_types_and_ops {
    ($version:ident, $kernel:ident $(, $block:literal)?) => {
        pastey::paste! {
            entry!([<$version _f32_sum $(_b $block)?>], $kernel, f32, Sum $(, $block)?);
            entry!([<$version _f32_min $(_b $block)?>], $kernel, f32, Min $(, $block)?);
            entry!([<$version _f32_max $(_b $block)?>], $kernel, f32, Max $(, $block)?);
            entry!([<$version _f64_sum $(_b $block)?>], $kernel, f64, Sum $(, $block)?);
            entry!([<$version _f64_min $(_b $block)?>], $kernel, f64, Min $(, $block)?);
            entry!([<$version _f64_max $(_b $block)?>], $kernel, f64, Max $(, $block)?);
            entry!([<$version _i32_sum $(_b $block)?>], $kernel, i32, Sum $(, $block)?);
            entry!([<$version _i32_min $(_b $block)?>], $kernel, i32, Min $(, $block)?);
            entry!([<$version _i32_max $(_b $block)?>], $kernel, i32, Max $(, $block)?);
            entry!([<$version _u32_sum $(_b $block)?>], $kernel, u32, Sum $(, $block)?);
            entry!([<$version _u32_min $(_b $block)?>], $kernel, u32, Min $(, $block)?);
            entry!([<$version _u32_max $(_b $block)?>], $kernel, u32, Max $(, $block)?);
        }
    };
}

/// The block sizes of `launch::BLOCK_SIZES`, spelled out because macro repetition needs
/// literals (a unit test in the host checks that every size has its entry points).
macro_rules! for_block_sizes {
    ($version:ident, $kernel:ident) => {
        for_types_and_ops!($version, $kernel, 64);
        for_types_and_ops!($version, $kernel, 128);
        for_types_and_ops!($version, $kernel, 256);
        for_types_and_ops!($version, $kernel, 512);
        for_types_and_ops!($version, $kernel, 1024);
    };
}

for_types_and_ops!(reduce_v0, reduce_v0);
for_types_and_ops!(reduce_v1, reduce_v1);
for_types_and_ops!(reduce_v2, reduce_v2);
for_types_and_ops!(reduce_v3, reduce_v3);
for_types_and_ops!(reduce_v4, reduce_v4);
for_block_sizes!(reduce_v5, reduce_v5);
for_block_sizes!(reduce_v6, reduce_v6);
for_block_sizes!(reduce_v7, reduce_v7);
for_block_sizes!(reduce_v8, reduce_v8);

macro_rules! read_probe_entry {
    ($($t:ty),*) => {
        pastey::paste! {
            $(
                /// # Safety
                /// As the reduction entry points.
                #[unsafe(no_mangle)]
                pub unsafe extern "gpu-kernel" fn [<read_probe_ $t _b256>](
                    input: *const $t,
                    len: usize,
                    partials: *mut $t,
                    partials_len: usize,
                    retired: *mut u32,
                ) {
                    // SAFETY: the launch contract above.
                    let (input, partials, retired) = unsafe {
                        (
                            GlobalSlice::from_raw(input, len),
                            GlobalSliceMut::from_raw(partials, partials_len),
                            GlobalCounter::from_raw(retired),
                        )
                    };
                    crate::read_probe::read_probe::<$t, 256>(input, partials, retired)
                }
            )*
        }
    };
}
read_probe_entry!(f32, f64, i32, u32);

/// The pre-roll kernel (see `spin.rs`); launched with one thread.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn spin_ns(nanoseconds: u64) {
    crate::spin::spin(nanoseconds)
}
