//! # Reproducible sums: the same bits on any grid, block size, GPU and split of the input
//! (beyond the tutorial series; the library's `with_reproducible(true)`)
//!
//! v8 is bitwise identical from run to run on one GPU, but its float sums are rounded in an
//! order set by the launch: each thread's share, the shuffle tree, the partials. Another grid
//! (another GPU model: the grid is SMs × occupancy), another block size, or the input cut over
//! several GPUs, and the last bits change. This kernel gives one result for every launch
//! shape, by making the sum *exact up to a fixed precision* instead of rounding it as it goes:
//! Demmel and Nguyen's binned accumulation ([`binned`]), as ReproBLAS and CUB's
//! `gpu_to_gpu` determinism do it.
//!
//! Changes against v8, which it is otherwise built like (16-byte loads with a scalar head and
//! tail, four loads in flight, one launch with partials, fence and ticket):
//! - **Each thread keeps two [`Binned`] states** instead of a float: three *folds*, each a
//!   float pinned to one binade (`1.5·2^E`, `E` 13 bits apart for f32) that collects its
//!   inputs' bits of that range, rounded to its ulp in a way that depends on the input and the
//!   bin only. Adding to a fold is then exact integer arithmetic in disguise: any order, any
//!   split, the same bits. Two states, even and odd lanes, so that two chains of additions
//!   run side by side.
//! - **One `update` per batch.** The bins must be coarse enough for every value deposited:
//!   a batch (four vectors, 16 `f32`) takes its largest magnitude first (one `max` per
//!   element) and moves the bins once, then deposits each value (three `or`s and seven adds).
//! - **Renormalisation** every [`BinnedFloat::ENDURANCE`] deposits (512 for f32): each fold's
//!   drift moves into its carry before it could leave its binade; and once more before any
//!   merge, since merges are exact only for renormalised states.
//! - **Merges instead of additions**: a state's folds hold whole numbers of their ulps, so the
//!   thread's two states, the block's shuffle trees and the last block's partials are added as
//!   [`binned::counts::Counts`] (each fold's carry and its offset from the bin as an integer:
//!   8 (15) words a shuffle, a few additions a level), and only each tree's root becomes a
//!   state again; the last block adds up to 32 partials in warp 0 alone (no barrier), more
//!   over the whole block, and converts the total to a float once ([`Binned::value`], added up
//!   in double-double `f64` in a fixed order, rounded once). Merging by counts instead of one
//!   [`Binned::merge`] a level (each subtracts bins and renormalises every fold) made the
//!   whole-array sum of 2^14 `f32` 13.9 → 9.5 µs and of 2^24 41.1 → 34.3 on the H100. Counts
//!   from the threads to the root, a last block of at most 32 partials in warp 0, and the
//!   warp brought together before its tree (`kernel::converge_warp`) made 2^14 `f32` 9.2 →
//!   7.7 µs against the merges by counts in one run (`f64`: 18.7 → 8.6).
//! - **Non-finite values on the side**: a batch with a NaN or an infinity leaves a non-finite
//!   top fold (checked once per batch); it is then read again, its NaNs and infinities are
//!   added to a separate `special` sum, and the thread's folds are dropped (the result is the
//!   special sum: `+inf`, `-inf`, or NaN for a NaN or `+inf` with `-inf`, in any order).
//!
//! ```text
//! x: [head ≤3 scalars | vec vec vec … vec | tail ≤3 scalars]        thread t: vectors t, t+T, …
//! batch:  m = max|x| over 4 vectors;  even.update(m), odd.update(m)
//!         lane 0,2 → even.deposit(x), lane 1,3 → odd.deposit(x)       (every 512: renorm)
//!         top fold not finite? → read the batch again, NaN/inf → special, folds dropped
//! fold:   ┌ bin 1.5·2^E ┐ + Σ round_E(x)       (round_E: to a multiple of 2^(E-23), never a tie)
//!         x ──► fold 0 ──(rest)──► fold 1 ──(rest)──► fold 2 ──(rest dropped)
//! thread: renorm both, counts(even) + counts(odd)   block: shuffles of counts → partials[b]
//! last:   adds partials[0..grid] as counts (warp 0 alone up to 32) → output[0] = value (sum),
//!         value / n (mean), or the state
//! ```
//!
//! # What is reproducible
//! For a given input, the state after all deposits and merges, and so the result, is the same
//! bits for every order, grid, block size and split: the sum of each fold is an exact
//! integer, and which bins the folds use depends only on the largest magnitude. Each input is
//! rounded on its own to the finest fold's ulp: at most `2^-26·max|x|` for f32,
//! `2^-80·max|x|` for f64, and not at all when `max|x|` is below `2^-119` (f32) or `2^-976`
//! (f64), where the last fold is the bottom bin whose ulp is the smallest subnormal (see
//! [`binned`]). Those are summed exactly and converted once (the state's terms added up in
//! double-double, error below `2^-96·Σ|x|`, then one rounding), so
//! `|error| ≤ n·2^-26·max|x| + 2^-96·Σ|x| + ulp/2` (f32; `n·2^-80·max|x|` for f64), for up to
//! 2^32 (f32) or 2^63 (f64) inputs (past that the carries, floats of the type, could round).
//! `f16` and `bf16` are exact in `f32` and summed there; the integer types' means are summed
//! as `f64` (each `i64` rounded once).
//!
//! The bottom of the range costs nothing per element: the last fold's deposit `or`s a bit into
//! the value it adds, 1 (never a tie) or 0 at the bottom bin (exact as it is), read from the
//! state once per batch after its update.
//!
//! # CUB's bugs this avoids (see `notes/cub-research.md`)
//! (a) an empty state is initialised by `update` (CUB sums garbage for all-zero inputs);
//! (b) thread states are renormalised before they merge (CUB merges drifted states when a
//! thread deposits more than `ENDURANCE` values); (c) merges with empty states copy or skip;
//! (d) NaN and infinities are kept aside (CUB turns any infinity into NaN); (e) the `f64`
//! conversion scales back up by 2^66 (CUB by 2^-66).
//!
//! # Thread Mapping
//! As v8: global thread `g` of `T` loads vectors `g, g+T, …` (four at a time), head element
//! `g` and tail element `tail_start + g`. The merging kernel reads states `g, g+T, …`.
//!
//! # Output contract
//! `output[0]`: the sum (`reproducible_{t}_sum`), the mean (`reproducible_{t}_mean`) or the
//! unfinished [`Binned`] state of the input (`reproducible_state_{t}_sum`, a shard's part of a
//! sum split over GPUs); `reproducible_merge_{f}_sum` reads `len` states and writes their sum.
//! Scratch: `partials` holds `gridDim` states, `retired[0]` is 0 before and after.
//!
//! # Rows, columns, segments
//! [`rows`] and [`columns`] are the binned twins of the shape kernels of [`crate::shapes`]
//! (`reproducible_rows_warp_{t}_{sum,mean}`, `…_rows_block_…`, `…_rows_split_…`,
//! `…_columns_…`): the same thread mapping, a state where those keep a float, merges where
//! they add. Since a state does not depend on how its values were cut up, each row's result is
//! the bits this module's whole-array kernel gives for that row alone: batch invariance.

pub mod binned;
pub mod columns;
pub mod conclusion;
pub mod kernel;
pub mod rows;

pub use binned::{Binned, BinnedFloat, FOLDS, PARTS};
pub use columns::reproducible_columns;
pub use conclusion::{Conclusion, Reproducible, State};
pub use kernel::{VECTORS_IN_FLIGHT, merge_states, reduce_reproducible};
pub use rows::{reproducible_rows_block, reproducible_rows_split, reproducible_rows_warp};

/// The grid: at least this many vectors per thread, at most the blocks the GPU keeps resident.
pub const MIN_VECTORS_PER_THREAD: u32 = VECTORS_IN_FLIGHT as u32;

/// Threads per block when the user does not choose (a state is 7 or 14 registers, so blocks of
/// 1024 would limit the registers a thread may use).
pub const DEFAULT_BLOCK: u32 = 256;

/// Bytes of a [`Binned<f32>`] state (what `reproducible_state_{f32,f16,bf16}_sum` writes).
pub const STATE_BYTES_F32: usize = size_of::<Binned<f32>>();
/// Bytes of a [`Binned<f64>`] state.
pub const STATE_BYTES_F64: usize = size_of::<Binned<f64>>();

/// Bytes of the state of a sum whose float is `float_bytes` wide (4 or 8).
pub const fn state_bytes(float_bytes: usize) -> usize {
    PARTS * float_bytes
}

/// The entry points of one reproducible shape kernel, `reproducible_{name}_{type}_{op}`: the
/// sums of the float types and the means of every type (what the mode covers).
macro_rules! reproducible_shape_entries {
    ($mode:tt $family:ident $name:ident $kernel:ident) => {
        pastey::paste! {
            entry!($mode $family [<reproducible_ $name _f32_sum>] reproducible $kernel, f32, $crate::ops::Sum);
            entry!($mode $family [<reproducible_ $name _f64_sum>] reproducible $kernel, f64, $crate::ops::Sum);
            entry!($mode $family [<reproducible_ $name _f16_sum>] reproducible $kernel, $crate::element::F16, $crate::ops::Sum);
            entry!($mode $family [<reproducible_ $name _bf16_sum>] reproducible $kernel, $crate::element::Bf16, $crate::ops::Sum);
            entry!($mode $family [<reproducible_ $name _f32_mean>] reproducible $kernel, f32, $crate::ops::Mean);
            entry!($mode $family [<reproducible_ $name _f64_mean>] reproducible $kernel, f64, $crate::ops::Mean);
            entry!($mode $family [<reproducible_ $name _f16_mean>] reproducible $kernel, $crate::element::F16, $crate::ops::Mean);
            entry!($mode $family [<reproducible_ $name _bf16_mean>] reproducible $kernel, $crate::element::Bf16, $crate::ops::Mean);
            entry!($mode $family [<reproducible_ $name _i32_mean>] reproducible $kernel, i32, $crate::ops::Mean);
            entry!($mode $family [<reproducible_ $name _u32_mean>] reproducible $kernel, u32, $crate::ops::Mean);
            entry!($mode $family [<reproducible_ $name _i64_mean>] reproducible $kernel, i64, $crate::ops::Mean);
            entry!($mode $family [<reproducible_ $name _u64_mean>] reproducible $kernel, u64, $crate::ops::Mean);
        }
    };
}

/// Every entry point: `$cb!` gets `(mode family name kernel, type, conclusion)`.
macro_rules! reproducible_entries {
    ($mode:tt) => {
        entry!($mode reproducible reproducible_f32_sum reproducible reduce_reproducible, f32, $crate::ops::Sum);
        entry!($mode reproducible reproducible_f64_sum reproducible reduce_reproducible, f64, $crate::ops::Sum);
        entry!($mode reproducible reproducible_f16_sum reproducible reduce_reproducible, $crate::element::F16, $crate::ops::Sum);
        entry!($mode reproducible reproducible_bf16_sum reproducible reduce_reproducible, $crate::element::Bf16, $crate::ops::Sum);
        entry!($mode reproducible reproducible_f32_mean reproducible reduce_reproducible, f32, $crate::ops::Mean);
        entry!($mode reproducible reproducible_f64_mean reproducible reduce_reproducible, f64, $crate::ops::Mean);
        entry!($mode reproducible reproducible_f16_mean reproducible reduce_reproducible, $crate::element::F16, $crate::ops::Mean);
        entry!($mode reproducible reproducible_bf16_mean reproducible reduce_reproducible, $crate::element::Bf16, $crate::ops::Mean);
        entry!($mode reproducible reproducible_i32_mean reproducible reduce_reproducible, i32, $crate::ops::Mean);
        entry!($mode reproducible reproducible_u32_mean reproducible reduce_reproducible, u32, $crate::ops::Mean);
        entry!($mode reproducible reproducible_i64_mean reproducible reduce_reproducible, i64, $crate::ops::Mean);
        entry!($mode reproducible reproducible_u64_mean reproducible reduce_reproducible, u64, $crate::ops::Mean);
        entry!($mode reproducible reproducible_state_f32_sum reproducible reduce_reproducible, f32, $crate::reproducible::State);
        entry!($mode reproducible reproducible_state_f64_sum reproducible reduce_reproducible, f64, $crate::reproducible::State);
        entry!($mode reproducible reproducible_state_f16_sum reproducible reduce_reproducible, $crate::element::F16, $crate::reproducible::State);
        entry!($mode reproducible reproducible_state_bf16_sum reproducible reduce_reproducible, $crate::element::Bf16, $crate::reproducible::State);
        entry!($mode merge_states reproducible_merge_f32_sum reproducible merge_states, f32, $crate::ops::Sum);
        entry!($mode merge_states reproducible_merge_f64_sum reproducible merge_states, f64, $crate::ops::Sum);
        // The shape kernels' twins (`crate::shapes`), named after them.
        reproducible_shape_entries!($mode reproducible_segments rows_warp reproducible_rows_warp);
        reproducible_shape_entries!($mode reproducible_segments rows_block reproducible_rows_block);
        reproducible_shape_entries!($mode reproducible_segments rows_split reproducible_rows_split);
        reproducible_shape_entries!($mode reproducible_columns columns reproducible_columns);
    };
}

/// The entry points (PTX kernels on `nvptx64`, simulator functions elsewhere).
pub mod entries {
    reproducible_entries!(define);
}

/// The simulator's entry point called `wanted`, if it is a reproducible kernel.
#[cfg(not(target_arch = "nvptx64"))]
pub fn sim_entry(wanted: &str) -> Option<crate::params::SimEntry> {
    reproducible_entries!((lookup wanted));
    None
}

#[cfg(test)]
mod tests;
