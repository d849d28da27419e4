//! Launch constants shared by the kernels and the host: the one place where block sizes,
//! elements per thread and grid sizing live. The host imports this module; nothing is
//! duplicated with a "must match the kernel" comment.

/// Threads per block used when the user does not choose one (the tutorial's `THREAD_PER_BLOCK`).
pub const DEFAULT_BLOCK_SIZE: u32 = 256;

/// Block sizes every version is built and tested for. Powers of two, so the shared-memory
/// trees halve exactly; at least 64, because the last-warp code of v4–v6 reads `tid + 32`.
pub const BLOCK_SIZES: [u32; 5] = [64, 128, 256, 512, 1024];

/// Threads of one warp.
pub const WARP_SIZE: u32 = 32;

/// Elements each thread adds while loading in v3–v5 ("add during load"): two.
pub const ADD_DURING_LOAD: u32 = 2;

/// Blocks per multiprocessor for the grid-filling versions (v6–v8): enough resident threads
/// (2048 per SM on Hopper) to keep the memory system busy, i.e. `2048 / block` blocks.
pub const RESIDENT_THREADS_PER_SM: u32 = 2048;

/// Vector loads each v8 thread issues before it uses any of them (8 in the experiment
/// `--cfg reduce_exp_loads8`); the row kernels give a short row's lanes about this many each.
#[cfg(not(reduce_exp_loads8))]
pub const VECTORS_IN_FLIGHT: usize = 4;
#[cfg(reduce_exp_loads8)]
pub const VECTORS_IN_FLIGHT: usize = 8;

/// Elements per 16-byte vector load in v8 for an element of `size` bytes.
pub const fn elements_per_vector(size: usize) -> usize {
    16 / size
}

/// Bytes of the smallest element type (`f16`, `bf16`): there is no 1-byte type.
pub const SMALLEST_ELEMENT: usize = 2;

/// Bytes of the largest element type (`f64`, `i64`, `u64`).
pub const LARGEST_ELEMENT: usize = 8;

/// The most lanes a 16-byte vector has (8 of a 16-bit type): the size of the arrays of a
/// thread's per-lane values in the column kernels, of which the first `lanes` are used (the
/// rest are never touched, and vanish).
pub const MAX_LANES: usize = elements_per_vector(SMALLEST_ELEMENT);

/// Partials each thread of a last block (v8's, the narrow column kernel's) loads at once.
pub const PARTIALS_IN_FLIGHT: usize = 8;
