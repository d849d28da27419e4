//! # The bandwidth ceiling: a kernel that only reads
//!
//! Not a reduction version: it loads every element once with v8's 16-byte loads and grid
//! size, folds their bits into a register and writes nothing unless that value is impossible, so
//! the loads cannot be optimized away. Its time over the input is the fastest any reduction
//! can be on this device; the benchmark reports every version as a percentage of it.
//!
//! # Output contract
//! `output[0]` is written only if the fold's bits equal `output_len + 0x9E37_79B9`
//! — never, in practice (the host passes a one-element `output`).

use crate::device::{GlobalSlice, GlobalSliceMut, block_idx_x, grid_dim_x, thread_idx_x};
use crate::element::{Element, Vector16};

/// Every 32-bit word of `vector`'s elements, XOR-ed into `acc`: the cheapest use of every
/// loaded byte, for any element type.
#[inline(always)]
fn fold<T: Element>(acc: u32, vector: &T::Vector16) -> u32 {
    vector.lanes().iter().fold(acc, |acc, &x| {
        x.to_words()
            .as_ref()
            .iter()
            .fold(acc, |acc, &word| acc ^ word)
    })
}

pub fn read_probe<T: Element, const BLOCK: u32>(
    input: GlobalSlice<T>,
    output: GlobalSliceMut<u32>,
) {
    let thread = block_idx_x() as usize * BLOCK as usize + thread_idx_x() as usize;
    let threads = BLOCK as usize * grid_dim_x() as usize;
    let (_, vectors, _) = input.split_vectors();
    let mut acc = 0u32;
    let mut vector = thread;
    while vector + 3 * threads < vectors.len() {
        let [a, b, c, d] = vectors.load_strided::<4>(vector, threads);
        acc = fold::<T>(fold::<T>(fold::<T>(fold::<T>(acc, &a), &b), &c), &d);
        vector += 4 * threads;
    }
    while vector < vectors.len() {
        acc = fold::<T>(acc, &vectors.load(vector));
        vector += threads;
    }
    // The tail and head are at most 2 × 7 elements: not worth reading for a bandwidth probe.
    // The store depends on a value only known at run time, so the compiler cannot drop the
    // loads; the host makes it impossible in practice (see the output contract).
    if acc == impossible_bits(output.len()) {
        output.store(0, acc);
    }
}

/// A bit pattern no fold produces in practice, derived from a launch argument.
#[inline(always)]
fn impossible_bits(output_len: usize) -> u32 {
    (output_len as u32).wrapping_add(0x9E37_79B9)
}

/// `read_probe_{type}_b256`: the probe's entry points (GPU only: the simulator has no time).
#[cfg(target_arch = "nvptx64")]
mod entries {
    use crate::element::{Bf16, F16};
    use crate::params::{Launch, Params};
    macro_rules! read_probe_entry {
        ($($name:ident $t:ty),*) => {
            pastey::paste! {
                $(
                    /// # Safety
                    /// The launch contract of [`Launch`] (only `input` and `output` are used).
                    #[unsafe(no_mangle)]
                    #[allow(improper_gpu_kernel_arg)]
                    pub unsafe extern "gpu-kernel" fn [<read_probe_ $name _b256>](
                        input: *const u8,
                        partials: *mut u8,
                        retired: *mut u32,
                        output: *mut u8,
                        offsets: *const u64,
                        sizes: Params,
                    ) {
                        let launch = Launch { input, partials, retired, output, offsets, sizes };
                        // SAFETY: the launch contract.
                        let (input, output) = unsafe { (launch.input::<$t>(), launch.output::<u32>()) };
                        super::read_probe::<$t, 256>(input, output)
                    }
                )*
            }
        };
    }
    read_probe_entry!(f32 f32, f64 f64, i32 i32, u32 u32, i64 i64, u64 u64, f16 F16, bf16 Bf16);
}
