//! The measured rules of shape planning: which kernel a row gets by its length, its operator
//! and how many rows there are; how many lanes share a short row; how many blocks share a
//! long one; how many runs of rows a column band holds; and the two [`Family`]s of kernels
//! whose rules differ. Each constant says what it was measured on, so that the next
//! measurement has something to overturn.

use crate::op::OpKind;
use crate::plan::launch::Wave;
use kernels_gpu::launch::{VECTORS_IN_FLIGHT, WARP_SIZE, elements_per_vector};
use kernels_gpu::shapes::ShapeKernel;

/// Rows of at most this many bytes go to a warp (or a group of its lanes) each; longer rows
/// get a block or more. Measured on the H100 (f32 row sums of 2^28 bytes): rows of 2 KiB, a
/// warp 91.3 µs and a block of 256 threads 199.9; rows of 4 KiB, a warp 89.7 and a block
/// 121.6; rows of 8 KiB, a warp 90.1 and a block 87.9 (`docs/runs/2026-11-25-c/`).
pub const WARP_ROW_BYTES: usize = 4 * 1024;

/// Rows of at most this many bytes go to a warp each for min and max: their block per row
/// (two vectors per thread at 8 KiB, each lifted and compared lane by lane, then a block-wide
/// merge) costs more than the sums'. Measured on the H100 (µs, a warp / a block):
/// `bf16` max 32768 × 4096 (8 KiB) 94.0 / 164.6, 16384 × 8192 (16 KiB) 94.4 / 89.5; `f32`
/// max 32768 × 2048 (8 KiB) 92.1 / 108.2, 16384 × 4096 (16 KiB) 92.8 / 89.4
/// (`docs/runs/2026-11-26-c/`).
pub const EXTREME_WARP_ROW_BYTES: usize = 8 * 1024;

/// Rows of at most this many bytes go to a warp each for argmin and argmax when there are
/// enough of them to give a quarter of the warps the GPU holds a row (from
/// [`ARG_FULL_WARPS_ROW_BYTES`] on, every warp; fewer such rows, longer than
/// [`EXTREME_WARP_ROW_BYTES`]: a block each); for 4- and 8-byte values only below
/// [`ARG_BLOCK_ROW_BYTES`]. Min and argmin were not timed;
/// they take the rules of max and argmax, whose code they share.
/// Measured on the H100 (µs, a warp / a block): `bf16` argmax 32768 × 4096 (8 KiB) 148.1 /
/// 231.1, 16384 × 8192 141.5 / 170.8, 8192 × 16384 136.3 / 151.3, 4096 × 32768 (64 KiB)
/// 126.4 / 139.6, but 2048 × 16384 42.1 / 43.1 (`docs/runs/2026-11-26-c/`; kernels of that day:
/// with today's, 4096 × 32768 takes 104.32 / 103.28, `docs/runs/2026-12-07/`).
pub const ARG_WARP_ROW_BYTES: usize = 64 * 1024;

/// Rows of at least this many bytes go to a block each for argmin and argmax of the other types
/// (4 and 8 bytes), however many: a block's threads then read a whole group of loads each
/// (256 threads × [`VECTORS_IN_FLIGHT`] vectors of 16 bytes), which `rows_block` takes by the
/// group's best key and searches at once (`BY_BEST_KEY` in the kernel crate), where a warp per
/// row has each lane walk many groups. Shorter rows keep the 16-bit floats' rule. Measured on the
/// H100 (µs, a warp / a block, `docs/runs/2026-11-28/call55_this_r2.log`): `f32` argmax 32768 ×
/// 4096 (16 KiB) 180.4 / 173.7, 16384 × 4096 93.9 / 89.4, 4096 × 16384 94.6 / 91.3, argmin 8192
/// × 8192 94.5 / 90.2; `i32` argmax 16384 × 4096 92.2 / 89.5, `u32` argmin 92.1 / 90.1, `f64` argmax
/// 8192 × 4096 94.8 / 91.0, `i64` argmax 16384 × 2048 92.3 / 89.6; but `f32` 32768 × 2048 (8
/// KiB, half a group a thread) 93.0 / 141.6 and `bf16` 16384 × 8192 (16 KiB: the 16-bit
/// floats skip groups in both kernels) 104.0 / 114.0.
pub const ARG_BLOCK_ROW_BYTES: usize =
    // Threads × vectors × bytes a vector holds (as many as one-byte elements).
    ShapeKernel::RowsBlock.block() as usize * VECTORS_IN_FLIGHT * elements_per_vector(1);

/// Rows of at least this many bytes of the 16-bit floats go to a warp each for argmin and argmax
/// only where there are at least as many as the warps the GPU holds of `RowsWarp` (a quarter
/// of them will do for shorter rows, up to [`ARG_WARP_ROW_BYTES`]): fewer rows leave warps
/// without a row, where a block per row fills the SMs. Measured on the H100, whose 132 SMs
/// hold 5280 warps of `rows_warp_bf16_argmax` (µs, a warp / a block,
/// `docs/runs/2026-12-07/call73_line_*.log`):
/// `bf16` argmax 2048 × 16384 (32 KiB) 35.47 / 32.14, 2048 × 32768 56.58 / 55.18, 4096 × 24576
/// 81.95 / 79.74, 4096 × 32768 104.32 / 103.28, `f16` argmin 2048 × 32768 57.07 / 55.15; but
/// with 8192 rows, `bf16` argmax 8192 × 16384 104.21 / 107.12 and `f16` argmin 104.14 / 108.59.
/// Shorter rows keep the warp from a quarter of the warps on (8192 × 12288, 24 KiB: 82.90 /
/// 92.78), with more lanes where they are few ([`FEW_LANES_DIVISOR`]; before, at 8 lanes, the
/// block won: 2048 × 8192 31.14 / 19.28, now 17.60 at 32 lanes; 4096 × 8192 31.34 / 32.50,
/// 2048 × 12288 24.13 / 29.12, `docs/runs/2026-12-07-b/call76_ab_lanes_r2.log`). Timed as
/// planned (`call74_line_r2.log`): 3072 × 16384 45.22 / 44.46, 6144 × 16384 80.46 / 82.16;
/// the rule misses at 4096 rows of exactly 32 KiB, where a warp each was ahead
/// (56.82 / 57.26, `f16` argmin 56.61 / 57.81): there the line lies between 3072 and 4096 rows.
pub const ARG_FULL_WARPS_ROW_BYTES: usize = 2 * ARG_BLOCK_ROW_BYTES;

/// Whether rows of `row_bytes` bytes of `element`-byte values, `rows` of them, go to a warp (or
/// a group of its lanes) each for `op` in the plain kernels, on a GPU that holds `warps` warps
/// of `RowsWarp` at once: sums and means up to [`WARP_ROW_BYTES`], min and max up to
/// [`EXTREME_WARP_ROW_BYTES`], the arg operators that far too, and up to
/// [`ARG_WARP_ROW_BYTES`] where `rows` is at least a quarter of `warps` (from
/// [`ARG_FULL_WARPS_ROW_BYTES`] on, at least `warps`) — but below [`ARG_BLOCK_ROW_BYTES`] for
/// 4- and 8-byte values. Segments take the same rule by their mean length (measured on rows
/// only).
///
/// ```
/// use reduce_rs::OpKind;
/// use reduce_rs::plan::shapes::warp_per_row;
/// // An H100 holds 64 warps per SM where the registers allow (a kernel with more registers
/// // gets fewer: the driver's occupancy is what the planner passes).
/// let h100 = 132 * 64;
/// assert!(!warp_per_row(OpKind::Sum, 4, 8192, 32768, h100));
/// assert!(warp_per_row(OpKind::Max, 4, 8192, 32768, h100));
/// // bf16: rows of 16 KiB a warp each from a quarter of the warps on, of 32–64 KiB from all.
/// assert!(warp_per_row(OpKind::ArgMax, 2, 16384, h100 / 4, h100));
/// assert!(warp_per_row(OpKind::ArgMax, 2, 65536, h100, h100));
/// assert!(!warp_per_row(OpKind::ArgMax, 2, 65536, 4096, h100));
/// // f32: a block from 16 KiB rows on.
/// assert!(!warp_per_row(OpKind::ArgMax, 4, 16384, 32768, h100));
/// ```
pub fn warp_per_row(
    op: OpKind,
    element: usize,
    row_bytes: usize,
    rows: usize,
    warps: usize,
) -> bool {
    match op {
        OpKind::Sum | OpKind::Mean => row_bytes <= WARP_ROW_BYTES,
        OpKind::Min | OpKind::Max => row_bytes <= EXTREME_WARP_ROW_BYTES,
        OpKind::ArgMin | OpKind::ArgMax => {
            let enough_rows = if row_bytes < ARG_FULL_WARPS_ROW_BYTES {
                warps / 4
            } else {
                warps
            };
            row_bytes <= EXTREME_WARP_ROW_BYTES
                || (row_bytes <= ARG_WARP_ROW_BYTES
                    && rows >= enough_rows
                    && (is_16_bit_float(element) || row_bytes < ARG_BLOCK_ROW_BYTES))
        }
    }
}

/// Runs of rows ([`kernels_gpu::shapes::columns::band_rows`]: a group of loads for every
/// thread of the block) in each band of a column reduction: four, so that the band's partials
/// and its hand-over stay a small part of each block's time; but [`FEW_RUNS_PER_BAND`] where
/// four would leave fewer blocks than a quarter of a wave (one per SM at the kernel's four).
/// Measured on the H100 (`docs/runs/2026-11-26/`, µs at 4 runs / 2 runs per band): 4096²
/// `f32` 31.5 / 34.8 (512 / 1024 blocks), 2^20 × 8 21.5 / 23.1 (256 / 512 blocks); 2048² 16.9
/// / 14.4 (128 / 256 blocks), 2^20 × 2 12.9 / 12.4 (128 / 256 blocks).
pub const RUNS_PER_BAND: usize = 4;

/// Runs of rows in each band of a column reduction that would have fewer blocks than a quarter
/// of a wave at [`RUNS_PER_BAND`].
pub const FEW_RUNS_PER_BAND: usize = 2;

/// The arg operators' column bands make at most a wave's blocks divided by this: half a wave.
/// A band then has more rows; why that pays for them and not for sums (which gain from a full
/// wave) is not profiled yet. Measured on the H100 by `bench --splits` (`docs/runs/2026-11-27-e/`,
/// `call35_splits.log`, µs, a full wave's bands → half a wave's): `f32` argmax 4096² 22 → 12
/// bands 47.4 → 39.9, 16384 × 1024 43 → 24 bands 50.7 → 42.6, 8192² 12 → 6 bands 108.0 → about
/// 104 (8 bands 100.9), 4096 × 4094 22 → 12 bands 48.7 → 49.6; bf16 argmax 4096² 32 → 16 bands
/// 117.6 → 60.0 (its kernel's 128 registers hold two blocks an SM, so a wave is 264 blocks). The
/// max of bf16 gains at 4096² (36.5 → 32.9) but loses at 8192² (70.0 → 73.6), that of `f32` loses
/// at 4096² (33.2 → 33.7): max and min keep the full wave.
pub const ARG_BAND_WAVE_DIVISOR: usize = 2;

/// Bands each thread of a column tile's last block adds up at most (four rounds of eight
/// loads in flight): more bands would make that one block the kernel's tail.
pub const MAX_BANDS_PER_THREAD: usize = 32;

/// Vectors each thread of a row split over blocks reads at most before the row is cut into
/// more blocks than one wave (two groups of loads): 16 rows of 2^22 `f32` in 256 blocks of 512
/// threads each took 90.7 µs on the H100, in one wave (33 blocks each) 95.9 (the read-only
/// kernel 90.0).
pub const SPLIT_TILE_VECTORS: usize = 2 * VECTORS_IN_FLIGHT;

/// The 4- and 8-byte arg operators' rows cut over blocks: at most a wave's blocks divided by
/// this (three quarters of a block per SM where three of `rows_split`'s fit, `f32`'s at 38
/// registers by ptxas; the 16-bit floats take a block per SM, counted by the SMs, see
/// [`ARG_SPLIT_TILE_VECTORS`]; the measurements below were made at three, then four of their
/// blocks an SM, where a third, then a quarter of the wave was a block per SM), each thread
/// reading up to
/// [`ARG_SPLIT_TILE_VECTORS`], wherever each thread then still reads a whole group of loads
/// (fewer rows, shorter rows: the old rule's split, as for sums). A warp of an arg operator's
/// block pays several hundred instructions whatever it reads (its first group's search for the
/// best lane, the block's reduction of value and index, the hand-over), more than it pays for
/// five vectors (Nsight Compute, bf16 argmax of 64 × 128256 on the H100, warp instructions by
/// blocks per row: 1: 3.20 M, 2: 4.43 M, 4: 6.61 M, 6: 7.08 M; the read-only kernel 1.11 M):
/// fewer blocks reading more each issue fewer. Measured on the H100 (µs by blocks per row), at
/// three blocks an SM and a divisor of 3 (`docs/runs/2026-11-27-f/`): bf16 argmax 64 × 128256,
/// 1: 20.2, 2: 17.7, 3: 22.2, 4: 20.1, 6 (a wave, the old rule): 19.3; f32 argmax 64 × 100000,
/// 4 (this rule's tiles): 17.4, 7 (the old rule): 20.8; bf16 argmax 64 × 2^20, 16: 65.3, 33:
/// 93.8. Then, at four blocks an SM (`docs/runs/2026-11-27-g/`, `call46_splits.log`), where a
/// third of the wave is no longer a block per SM: bf16 argmax 32 × 200000, 2: 16.1, 4 (a
/// quarter): 14.2, 5 (a third): 17.5; 16 × 2^22, 8 (a quarter): 58.2, 11 (a third): 61.2, 16:
/// 60.7; 64 × 128256, 2 (either): 16.2, 4: 16.8. One and eight vocabulary rows keep the old
/// rule's blocks (a vector or so per thread: 8.2 and 9.8 µs, `call47_ab.log`); four rows of
/// 200000 bf16 too (10.0), though 32 blocks took 9.5 (`call47_splits.log`): the group condition
/// is not settled there. Unmeasured under the quarter: `f32` rows where the share exceeds the
/// tiles (16 × 100000: 8 → 6 blocks a row), and the f64 and integer arg operators.
pub const ARG_SPLIT_WAVE_DIVISOR: usize = 4;

/// Vectors each thread of an arg operator's row split over blocks reads at most within its
/// share of a wave ([`ARG_SPLIT_WAVE_DIVISOR`]): four groups of loads — for 4- and 8-byte
/// elements. The 16-bit floats take no tiles: their arg kernels are bound by instructions, so
/// each block more costs its fixed share, and one wave of a block per SM (two a row at least,
/// which costs little where one a row is faster) was fastest or within 3% on every long row
/// measured. A block per SM counted by the SMs ([`Wave::multiprocessors`]), not as a share of
/// the wave, so that the rule holds when the kernel's registers change: the next group's loads
/// kept in flight across a group's fold (`Reduction::PREFETCH_GROUPS`, in `rows_split` since
/// `docs/runs/2026-12-07/`) take them from 32 to 47, two blocks an SM where four fit, and a
/// quarter of that wave gave 16 × 2^22 bf16 4 blocks a row (68.5 µs) where 8, a block per SM, took 57.1
/// (`docs/runs/2026-11-28-b/`, call 60). On the H100
/// (`call42_tiles.log`, µs by
/// blocks per row): bf16 argmax 64 × 2^20, 2: 58.5, 4: 60.9, 8: 74.8, 16 (these tiles): 65.3;
/// 16 × 2^22, 8: 58.7, 16: 60.9, 32: 74.0, 64 (these tiles): 64.7; 128 × 262144, 1: 34.5, 2:
/// 35.3, 4 (these tiles): 42.1 (a block per row, `rows_block`: 46.6). `f32` argmax keeps them:
/// 64 × 2^20, 2: 99.4, 4: 95.3, 32 (these tiles): 96.8; 16 × 2^22, 8: 99.6, 16: 95.3, 128
/// (these tiles): 96.8; 32 × 2^20, 4: 53.7, 8: 51.6, 32 (these tiles): 53.8.
pub const ARG_SPLIT_TILE_VECTORS: usize = 4 * VECTORS_IN_FLIGHT;

/// Vectors each thread of a row split over blocks reads at least: one. A vocabulary row of
/// 128256 `bf16` in 32 blocks of 512 threads took 8.3 µs on the H100, in 8 blocks (a group of
/// four loads each) 9.8: for a few rows, more SMs reading beats more loads per thread.
pub const SPLIT_MIN_VECTORS: usize = 1;

/// Rows of at most this many bytes are never cut over blocks, however few: one block of 256
/// threads reads such a row in a few groups of loads, and `RowsSplit`'s hand-over costs more
/// than it saves. Measured on the H100 (f32 sums, µs, a block each / split): 64 × 512 4.1 /
/// 6.4, 64 × 4096 4.5 / 6.9, 16 × 16384 (64 KiB) 5.9 / 7.0, but 8 × 65536 (256 KiB) 11.9 /
/// 7.4; the argmax of one 250 KiB bf16 vocabulary row 23.2 / 8.0 (`docs/runs/2026-11-26/`);
/// the reproducible twins alike (64 KiB: 9.9 / 17.0; 256 KiB: 21.5 / 17.7).
pub const SPLIT_ROW_BYTES: usize = 64 * 1024;

/// Rows of at most this many bytes go to a warp (or a group of its lanes) each in the
/// reproducible mode, and longer ones when there are enough of them to give every warp the GPU
/// holds a row: a state's merge costs as much as a few hundred deposits, and a warp per row
/// merges 32 states per row where a block of 256 threads merges 256.
pub const REPRODUCIBLE_WARP_ROW_BYTES: usize = 64 * 1024;

/// Vectors each thread of a reproducible split row reads at least (four batches of
/// `VECTORS_IN_FLIGHT`), so that the deposits outweigh the thread's share of the merges.
pub const REPRODUCIBLE_VECTORS_PER_LANE: usize = 4 * VECTORS_IN_FLIGHT;

/// Whether elements of `element_bytes` bytes are the 16-bit floats (`bf16`, `f16`: the only
/// 2-byte element types), whose arg operators skip groups by their best key and are bound by
/// their instructions.
const fn is_16_bit_float(element_bytes: usize) -> bool {
    element_bytes == 2
}

/// Vectors a lane of `rows_warp` reads at least, by family, operator and element size: the
/// fewer lanes share a row, the fewer shuffle rounds (the reproducible twins' merges) each row
/// costs, and the more groups of loads a lane of an arg operator has over which to amortise its
/// one deferred search (`Reduction::resolve`) — most of all for the 16-bit floats, whose groups
/// are skipped by their best key (`Element::largest_key`) and so cost little each. Measured on
/// the H100 with `bench --shapes … --splits 1,2,…,32` (`docs/runs/2026-11-26-d/call3_lanes.log`
/// and `call6_arg_lanes.log`, µs, lanes per row: time): the bf16 argmax of 65536 rows of 2048,
/// 32: 169.0, 16: 116.5, 8: 112.9, 2: 111.1 (CUB 133.8); of 32768 rows of 4096, 32: 117.3, 16:
/// 111.9, 8: 110.8, 4: 107.1 (CUB 108.1); of 16384 rows of 8192, 32: 111.9, 8: 104.2, 4: 110.1
/// (CUB 103.1) — 128 vectors a lane each time; the f32 argmax of 32768 rows of 2048, 32: 93.6,
/// 16: 94.5, 8: 94.6, and of 65536 rows of 1024, 16: 94.4, 8: 94.8, 32: 96.3 — 16; the
/// reproducible sum of 100000 segments of ~300 f32, 8: 81.4, 4: 68.9, 2: 72.2, and of 65536
/// rows of 512, 8: 57.0, 4: 54.5 — 32; plain sums of those segments, 32: 49.2, 16: 45.3, 8:
/// 45.9 (rows of 512 alike within 0.5%) — 8. Min and max keep the one group per lane they had:
/// no shape measured so far turns on it (the bf16 max of 8 KiB rows is at the 32-lane cap
/// either way: 94.0 at 32 lanes, 94.7 at 16).
///
/// ```
/// use reduce_rs::OpKind;
/// use reduce_rs::plan::shapes::{Family, lane_vectors};
/// assert_eq!(lane_vectors(Family::Plain, OpKind::ArgMax, 2), 128); // bf16, f16
/// assert_eq!(lane_vectors(Family::Plain, OpKind::ArgMax, 4), 16);
/// assert_eq!(lane_vectors(Family::Plain, OpKind::Sum, 2), 8);
/// assert_eq!(lane_vectors(Family::Reproducible, OpKind::Sum, 4), 32);
/// ```
pub const fn lane_vectors(family: Family, op: OpKind, element_bytes: usize) -> usize {
    match (family, op) {
        (Family::Reproducible, _) => 8 * VECTORS_IN_FLIGHT,
        (Family::Plain, OpKind::ArgMin | OpKind::ArgMax) if is_16_bit_float(element_bytes) => {
            32 * VECTORS_IN_FLIGHT
        }
        (Family::Plain, OpKind::ArgMin | OpKind::ArgMax) => 4 * VECTORS_IN_FLIGHT,
        (Family::Plain, OpKind::Sum | OpKind::Mean) => 2 * VECTORS_IN_FLIGHT,
        (Family::Plain, OpKind::Min | OpKind::Max) => VECTORS_IN_FLIGHT,
    }
}

/// Which kernels a plan launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The shape kernels of `kernels_gpu::shapes` (`rows_warp_f32_sum`), each with the block it
    /// is built for.
    Plain,
    /// Their reproducible twins (`reproducible_rows_warp_f32_sum`, `kernels_gpu::reproducible`):
    /// binned sums and means, the block size read at run time, more of a row per lane.
    Reproducible,
}

impl Family {
    /// The entry point of `kernel` of this family for `dtype` and `op` (names as in entry
    /// points): `rows_warp_f32_sum`, `reproducible_rows_warp_f32_sum`.
    ///
    /// ```
    /// use reduce_rs::plan::shapes::{Family, ShapeKernel};
    /// assert_eq!(Family::Reproducible.entry(ShapeKernel::Columns, "bf16", "mean"), "reproducible_columns_bf16_mean");
    /// ```
    pub fn entry(
        self,
        kernel: ShapeKernel,
        dtype: impl std::fmt::Display,
        op: impl std::fmt::Display,
    ) -> String {
        match self {
            Family::Plain => format!("{}_{dtype}_{op}", kernel.name()),
            Family::Reproducible => format!("reproducible_{}_{dtype}_{op}", kernel.name()),
        }
    }

    /// Blocks of `block` threads per row of `cols` elements of `element` bytes for `RowsSplit`,
    /// `rows` rows and `wave` (its blocks resident at once, and the SMs): as many as fill the
    /// GPU in one wave (a
    /// second, partial wave would cost as much as the first); but rows so long that a wave's
    /// blocks would each read more than `SPLIT_TILE_VECTORS` per thread are cut into tiles of
    /// that size, many waves of them, whose last wave is a small part of the time (the
    /// reproducible twins keep one wave). Each block reads at least `SPLIT_MIN_VECTORS` per
    /// thread (four groups in the reproducible mode). The arg operators' rows fill a share of
    /// the wave instead (`ARG_SPLIT_WAVE_DIVISOR`: a quarter), in tiles of
    /// `ARG_SPLIT_TILE_VECTORS`; the 16-bit floats a block per SM, counted by the SMs, without
    /// tiles; where that gives each thread at least a group of loads and each row at least two
    /// blocks.
    pub(super) fn blocks_per_row(
        self,
        op: OpKind,
        rows: usize,
        cols: usize,
        element: usize,
        block: u32,
        wave: Wave,
    ) -> usize {
        let vector_block = block as usize * elements_per_vector(element);
        let blocks = wave.blocks() as usize;
        if self == Family::Plain && matches!(op, OpKind::ArgMin | OpKind::ArgMax) {
            let split = if is_16_bit_float(element) {
                // A block per SM however long the rows and however many of these blocks an SM
                // holds, and two blocks a row at least (see `ARG_SPLIT_TILE_VECTORS`).
                (wave.multiprocessors() as usize / rows.max(1)).max(2)
            } else {
                let share = (blocks / ARG_SPLIT_WAVE_DIVISOR / rows.max(1)).max(1);
                share.max(cols.div_ceil(vector_block * ARG_SPLIT_TILE_VECTORS))
            };
            // Not one block per row: that is `RowsBlock`'s shape, measured on its own rule.
            if split > 1 && cols >= split * vector_block * VECTORS_IN_FLIGHT {
                return split;
            }
        }
        let one_wave = (blocks / rows.max(1)).max(1);
        let (tile_split, least) = match self {
            Family::Plain => (
                cols.div_ceil(vector_block * SPLIT_TILE_VECTORS),
                SPLIT_MIN_VECTORS,
            ),
            Family::Reproducible => (1, REPRODUCIBLE_VECTORS_PER_LANE),
        };
        let most = cols.div_ceil(vector_block * least).max(1);
        one_wave.max(tile_split).min(most)
    }

    /// Lanes that share one row of `row_bytes` bytes of `element_bytes`-byte elements in
    /// `rows_warp`, reducing with `op`.
    pub fn lanes_per_row(self, op: OpKind, element_bytes: usize, row_bytes: usize) -> usize {
        lanes_for(row_bytes, lane_vectors(self, op, element_bytes))
    }

    /// Lanes that share each of `rows` rows of `row_bytes` bytes in `rows_warp`, on a GPU that
    /// holds `warps` warps of it at once: [`Family::lanes_per_row`]'s count, but in the plain
    /// kernels, where the rows at that count would keep fewer than a
    /// [`FEW_LANES_DIVISOR`]th of the lanes busy, doubled (up to a whole warp) until they
    /// keep a [`SPREAD_LANES_DIVISOR`]th busy. The reproducible twins were not measured so.
    ///
    /// ```
    /// use reduce_rs::OpKind;
    /// use reduce_rs::plan::shapes::Family;
    /// // An H100 holds 5280 warps of `rows_warp_bf16_argmax` (40 an SM at its registers).
    /// let (plain, h100) = (Family::Plain, 5280);
    /// let lanes = |rows, bytes| plain.lanes_for_rows(OpKind::ArgMax, 2, bytes, rows, h100);
    /// assert_eq!(lanes(16384, 8192 * 2), 8); // lanes_per_row's count: the rows fill the GPU
    /// assert_eq!(lanes(8192, 8192 * 2), 8); // 65536 lanes: a third of 168960 at least
    /// assert_eq!(lanes(6144, 8192 * 2), 16); // 49152 lanes: doubled once, past half
    /// assert_eq!(lanes(4096, 8192 * 2), 32); // 32768 lanes: doubled past half
    /// assert_eq!(lanes(8192, 4096 * 2), 16);
    /// let repro = Family::Reproducible.lanes_for_rows(OpKind::Sum, 4, 512 * 4, 10, h100);
    /// assert_eq!(repro, 4);
    /// ```
    pub fn lanes_for_rows(
        self,
        op: OpKind,
        element_bytes: usize,
        row_bytes: usize,
        rows: usize,
        warps: usize,
    ) -> usize {
        let mut lanes = self.lanes_per_row(op, element_bytes, row_bytes);
        let resident_lanes = warps * WARP_SIZE as usize;
        let busy = |lanes: usize| rows.saturating_mul(lanes);
        if self == Family::Reproducible || busy(lanes) >= resident_lanes / FEW_LANES_DIVISOR {
            return lanes;
        }
        while lanes < WARP_SIZE as usize && busy(lanes) < resident_lanes / SPREAD_LANES_DIVISOR {
            lanes *= 2;
        }
        lanes
    }
}

/// Rows whose lanes at [`lanes_per_row`]'s count would keep fewer than this share (one in
/// three) of the lanes the GPU holds of `rows_warp` busy get more lanes each
/// ([`Family::lanes_for_rows`]): a warp's lanes then wait on few loads, and a row's lanes
/// issue them side by side. Measured on the H100 (`docs/runs/2026-12-07-b/call76_ab_*_r2.log`,
/// µs, `lanes_per_row`'s count → the lanes that fill half the GPU, planned kernels): bf16
/// argmax 2048 × 8192 (16 KiB) 8 → 32 lanes 31.14 → 17.60 (a block each 19.28), 4096 × 8192
/// 8 → 32 35.95 → 31.34 (a block 32.50), 2048 × 4096 4 → 32 30.98 → 11.89, 8192 × 4096 4 → 16
/// 36.93 → 31.42, 2048 × 12288 16 → 32 28.59 → 24.13, `f16` argmin 2048 × 8192 31.57 → 17.73,
/// segments of ~8000 bf16, 2000 of them, 55.09 → 22.64 (a block each 24.05); `f32` argmax 2000 ×
/// 1000 16 → 32 10.14 → 9.30, sum 1000 × 512 5.34 → 4.99, 300 × 128 4 → 32 4.27 → 4.06. Between
/// a quarter and half (`docs/runs/2026-12-07-c/call77_mid_r{1,2}.log`, the two rounds): rows
/// that keep 29% busy gained by one doubling, bf16 argmax 6144 × 8192 8 → 16 44.96 / 44.99 →
/// 43.36 / 43.76, 12288 × 4096 4 → 8 45.26 / 45.22 → 43.54 / 43.30, 3072 × 12288 16 → 32
/// 35.81 / 35.76 → 33.89 / 34.03, `f16` argmin 6144 × 8192 45.01 / 44.93 → 43.22 / 43.36; rows
/// that keep 39% busy lost, 8192 × 8192 8 → 16 55.74 / 55.47 → 56.91 / 57.42, 16384 × 4096
/// 4 → 8 56.22 / 56.43 → 56.85 / 57.01, 4096 × 12288 16 → 32 43.26 / 43.44 → 44.85 / 44.67 —
/// they keep their count, as do those of 48% (10240 × 8192 66.37 at 8 lanes, 70.21 at 16).
pub const FEW_LANES_DIVISOR: usize = 3;

/// The share of the lanes the GPU holds of `rows_warp` (one in two) that rows with too few
/// lanes ([`FEW_LANES_DIVISOR`]) are given lanes to fill: every case above was measured with
/// its lanes doubled until it filled half (or reached a warp).
pub const SPREAD_LANES_DIVISOR: usize = 2;

/// Lanes that share one row of `row_bytes` bytes of `element_bytes`-byte elements in
/// `rows_warp` (the plain kernels): a power of two from 1 to 32, so that each lane has about
/// [`lane_vectors`] vector loads to issue (more in the reproducible mode:
/// [`Family::lanes_per_row`]).
///
/// ```
/// use reduce_rs::OpKind;
/// use reduce_rs::plan::shapes::{Family, lanes_per_row};
/// assert_eq!(lanes_per_row(OpKind::Max, 4, 128 * 4), 8); // 128 f32: 8 lanes of 4 vectors
/// assert_eq!(lanes_per_row(OpKind::Sum, 4, 128 * 4), 4); // 4 lanes of 8 vectors
/// assert_eq!(lanes_per_row(OpKind::ArgMax, 4, 2048 * 4), 32); // 2048 f32: 32 lanes of 16
/// assert_eq!(lanes_per_row(OpKind::ArgMax, 2, 4096 * 2), 4); // 4096 bf16: 4 lanes of 128
/// assert_eq!(lanes_per_row(OpKind::Sum, 4, 4096 * 4), 32); // a whole warp
/// assert_eq!(lanes_per_row(OpKind::Sum, 4, 12), 1);
/// assert_eq!(Family::Reproducible.lanes_per_row(OpKind::Sum, 4, 512 * 4), 4); // 4 lanes of 32
/// ```
pub fn lanes_per_row(op: OpKind, element_bytes: usize, row_bytes: usize) -> usize {
    Family::Plain.lanes_per_row(op, element_bytes, row_bytes)
}

fn lanes_for(row_bytes: usize, vectors_per_lane: usize) -> usize {
    let vectors = row_bytes.div_ceil(16);
    vectors
        .div_ceil(vectors_per_lane)
        .max(1)
        .next_power_of_two()
        .min(WARP_SIZE as usize)
}

/// Columns the flat read (`ColumnsNarrow`) takes on any grid, of the counts it takes at all
/// (`is_narrow`: for `f32` 1 to 8, 10 and 12; 9 and 11 go in bands).
/// Measured on the H100 (`docs/runs/2026-11-27/call4_narrow.log`, µs, flat against bands and
/// PyTorch): 2^20 rows × 1, 2, 4 and 8 `f32` columns 7.9, 9.7, 14.1 and 19.3 against 10.7,
/// 12.4, 15.0 and 21.5 (PyTorch 10.5, 11.4, 15.1, 22.8); 2^24 × 4 94.6 against 96.7. Counts
/// that are no power of two (`docs/runs/2026-11-27/call12_this_r2.log`): 2^20 × 3, 5, 6 and 7
/// 13.3, 16.6, 17.8 and 19.2 against 14.1, 19.6, 21.9 and 25.5; 2^18 × 12 14.6 against 16.4,
/// 393216 × 12 16.0 against 18.3 (2^20 × 12 even: 26.9 and 27.0, call 11).
pub const NARROW_COLUMNS: usize = 12;

/// Partials (blocks × columns) up to which the flat read takes 16 and 32 columns of 4- and
/// 8-byte elements too: the last block's threads add `gridDim · cols / 256` of them. Over a
/// wave of 792 blocks (`columns_narrow_f32_sum`'s 40 registers leave 6 blocks per SM: 12672 and
/// 25344 partials) the bands won: 2^20 × 16 `f32` 31.5 against 31.8 µs, 2^20 × 32 54.4 against
/// 56.5 (`docs/runs/2026-11-27/call6_narrow.log`); over 24 blocks (768 partials) the flat read,
/// 3001 × 32 `f32` 6.5 against 10.6 (`call6_sweep.log`). 8192, a thread's 32, is in between
/// and not measured.
pub const NARROW_PARTIALS: usize = 8192;

/// Bytes of the elements the flat read takes at any width up to 32 columns: the 16-bit floats,
/// whose band kernel is the slow one (65536 × 32 `bf16` 9.0 against 14.4 µs, 2^20 × 32 32.5
/// against 42.3: `call4_narrow.log`, `call6_narrow.log`).
pub const NARROW_ANY_WIDTH_ELEMENT: usize = 2;

/// Rows from which the flat read takes counts of columns that are no power of two at any
/// width up to 32. Measured on the H100 (µs, flat against bands, `f32` sums,
/// `docs/runs/2026-11-27-c/call21_narrow.log`): 2^18 rows × 20, 24 and 28 columns 18.7, 19.5
/// and 22.6 against 18.1, 19.4 and 20.7; 2^19 rows 25.5, 28.8 and 32.4 against 26.4, 29.5 and
/// 32.1; 2^20 rows 38.5, 44.6 and 51.0 against 44.7, 47.0 and 52.4; 2^21 rows 65.1, 76.8 and
/// 88.3 against 77.5, 85.3 and 98.1; `f64` 20 columns (`call22_narrow.log`) 25.3 against 23.2
/// at 2^18 rows, 39.6 against 43.3 at 2^19, 14 columns at 2^19 29.8 against 29.4 (the one
/// count measured where the bands stay 1% ahead past the line); at 2^20 rows the `f32` max of
/// 20 columns 42.0 against 47.4, the argmax of 24 53.7 against 57.8. The integers take the
/// line of the floats of their size, unmeasured. (16 and 32 columns keep the
/// bands past a wave: 2^20 × 16 31.8 flat against 31.5, × 32 56.5 against 54.4,
/// [`NARROW_PARTIALS`].)
pub const NARROW_FLAT_ROWS: usize = 1 << 19;

/// Whether a matrix of `rows` × `cols` columns of `element`-byte elements is read flat
/// (`ColumnsNarrow`, on `grid` blocks) rather than walked down in bands (`Columns`): 1 to
/// [`NARROW_COLUMNS`] columns, and up to 32 for [`NARROW_ANY_WIDTH_ELEMENT`]-byte elements,
/// where the partials stay within [`NARROW_PARTIALS`], where a row is no whole number of
/// 16-byte vectors (the band kernel then reads scalars: 2^20 × 14 `f32` 79.3 µs in bands,
/// 29.8 flat, PyTorch 33.7; 2^20 × 11 `f64` 72.2 against 40.0, H100,
/// `docs/runs/2026-11-27-b/call16_narrow.log`), or where a count that is no power of two has
/// [`NARROW_FLAT_ROWS`] rows; counts the kernel takes either way
/// ([`kernels_gpu::shapes::columns_narrow::is_narrow`]: powers of two, 3, 6, 12, 24, …).
///
/// ```
/// use reduce_rs::plan::shapes::narrow_columns;
/// let tall = 1 << 20;
/// assert!(narrow_columns(tall, 2, 4, 792) && narrow_columns(tall, 8, 4, 792));
/// assert!(narrow_columns(tall, 32, 4, 256) && !narrow_columns(tall, 32, 4, 792));
/// assert!(narrow_columns(tall, 32, 2, 792)); // bf16
/// assert!(narrow_columns(tall, 3, 4, 792) && narrow_columns(tall, 12, 4, 768));
/// assert!(narrow_columns(1 << 18, 14, 4, 792)); // 56-byte rows
/// assert!(narrow_columns(tall, 20, 4, 792) && !narrow_columns(1 << 18, 20, 4, 792));
/// assert!(narrow_columns(tall, 15, 8, 792) && !narrow_columns(tall, 16, 8, 792));
/// assert!(!narrow_columns(tall, 9, 4, 16) && !narrow_columns(tall, 64, 2, 1));
/// ```
pub fn narrow_columns(rows: usize, cols: usize, element: usize, grid: usize) -> bool {
    kernels_gpu::shapes::columns_narrow::is_narrow(cols, element)
        && (cols <= NARROW_COLUMNS
            || element == NARROW_ANY_WIDTH_ELEMENT
            || grid * cols <= NARROW_PARTIALS
            || !(cols * element).is_multiple_of(16)
            || (rows >= NARROW_FLAT_ROWS && !cols.is_power_of_two()))
}
