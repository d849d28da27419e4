//! # Columns: one result per column of a row-major matrix
//!
//! Reduces every column of a `rows × cols` row-major matrix. Each thread owns a *group* of
//! neighbouring columns — as many as one 16-byte vector holds (4 `f32`, 8 `bf16`, 2 `f64`) —
//! and walks down them, one vector per row, several rows in flight; every lane of a vector
//! goes into its own column's running value. A warp then reads 512 consecutive bytes of a row
//! per load: long runs the memory serves well.
//!
//! A block covers a *tile* of up to [`MAX_TILE_GROUPS`] groups ([`groups_per_tile`]). A tile of
//! fewer groups than the block has threads gives each row fewer threads and the block several
//! rows at a time (`rows_per_step`); those rows' values meet at the end, by shuffles and shared
//! memory. Tall matrices are cut into `split` bands of whole runs of rows ([`band_rows`]), one
//! block each per tile; the bands of a tile meet as v8's blocks meet: partials, fence, a ticket
//! per tile, and the tile's last block adds the bands up, again spread over all its threads.
//!
//! When the rows do not start on 16-byte boundaries (a column count that is no multiple of a
//! vector's lanes, or an input that starts mid-vector), no vector holds a group: threads read
//! scalars, with the same tiles, but the tile's columns are dealt out lane by lane
//! ([`GroupPlace::column`]), so that the threads of a warp read consecutive columns with each
//! load (32 of them where a tile has 32 groups or more, else a tile's width in each of several
//! rows). (A group's own columns, `L` apart from thread to thread, made every load touch `L`
//! times the lines it used, and those rows took 3–4× the time of aligned ones.)
//!
//! ```text
//! 4096 f32 columns = 1024 groups: tile = 64 groups (256 columns), four rows per step
//!   block (tile t, band k), thread c: group t·64 + c % 64 of rows band k, every 4th
//!   →  the 4 row offsets combined  →  partials[k][columns]
//! 64 f32 columns = 16 groups: 2 tiles of 8 groups (at most √(8·16)), 32 rows per step
//!   thread c: group t·8 + c % 8 of rows r0 + c / 8, r0 + c / 8 + 32, …
//!   →  the 32 row offsets combined (shuffles, then shared memory)  →  partials[k][columns]
//! last block of tile t: bands of each column, spread over the block's threads  →  output
//! ```
//!
//! # Thread Mapping
//! Block `b` is band `b % split` of tile `b / split`. Thread `c` owns group
//! `tile · groups_per_tile + c % groups_per_tile` (columns `group · L … group · L + L - 1`;
//! rows not of whole vectors: `(tile · L + lane) · groups_per_tile + c % groups_per_tile` for
//! lanes `0 … L - 1`) and starts at row offset `c / groups_per_tile` of its band, stepping
//! `rows_per_step` rows; in the tile's last block it adds up bands `c / groups_per_tile`,
//! `+ rows_per_step`, … of the same columns.
//!
//! # Output contract
//! `output[c]` = the finished result of column `c` over all rows (`EMPTY` when there are no
//! rows); the arg operators' index is the row. Scratch: `partials` holds `split·cols`
//! accumulators, `retired` one counter per tile, 0 before the launch and set back to 0. Shared
//! memory: [`shared_accumulators`] accumulators and the ticket.

use crate::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, SharedArray, VectorSlice, WARP_SIZE, block_idx_x,
    require_block_dim, shared_array, sync_threads, thread_fence, thread_idx_x, warp_shuffle_down,
};
use crate::element::{Element, Vector16};
use crate::launch::{MAX_LANES, elements_per_vector};
use crate::ops::Reduction;
use crate::params::Scratch;

/// Rows each thread loads before combining them.
pub const LOADS_IN_FLIGHT: usize = 8;

/// Rows each thread loads at a time where the rows are no whole number of vectors
/// ([`ScalarColumns`]): 4, or 8 of the 8-byte types. A scalar load each, with an address of its
/// own: as many rows as a vector load takes ([`LOADS_IN_FLIGHT`]) held 32 loads of `f32`, and
/// the kernel took 80 registers where it takes 64, in its vector path as well (the registers
/// decide how many blocks a wave holds, and so the planner's bands). Measured on the H100
/// (`docs/runs/2026-11-27-e/`, µs): `f32` sums of 4096 × 4094 at 4 rows 33.0, at 8 rows 37.2
/// (aligned 4096² 31.7 and 35.3); bf16 sums of 8192 × 8190 at 2 rows 76.0, at 4 rows 65.3;
/// `f64` sums of 4096 × 4095 at 8 rows 54.6, at 16 rows 53.0 but 96 registers where 56 do.
#[inline(always)]
pub const fn scalar_rows_in_flight(element: usize) -> usize {
    if element >= 8 { 8 } else { 4 }
}

// `reduce_columns` compiles an arm for 8 rows and one for 4, and `walk_rows` needs a divisor of
// `LOADS_IN_FLIGHT` (a band's whole runs then leave no rows over).
const _: () = {
    let mut element = 1;
    while element <= 8 {
        let rows = scalar_rows_in_flight(element);
        assert!((rows == 8 || rows == 4) && LOADS_IN_FLIGHT.is_multiple_of(rows));
        element *= 2;
    }
};

/// The most groups of columns one tile spans: 256 `f32` columns, a warp reading 512 bytes of a
/// row and a block 4 rows at a time. Wider tiles made too few blocks for a square matrix (4096²
/// `f32` on the H100, mean of two rounds: 4 tiles × 32 bands = 128 blocks, 37.5 µs; tiles of 64
/// groups, 16 × 33 = 528 blocks then, 32.7 µs; 16384 rows × 1024 columns 73.7 → 35.1 µs), and
/// each thread of a tile's last block added up 32 bands per column where it now adds about 8.
/// Narrower matrices get narrower tiles ([`groups_per_tile`]). The reproducible twin
/// (`reproducible::columns`) tiles with the same function.
pub const MAX_TILE_GROUPS: usize = 64;

/// Groups of columns (one vector's worth each) a block of `block` threads covers for a matrix
/// of `cols` columns of `element`-byte elements: all of them up to `block` and
/// [`MAX_TILE_GROUPS`], but at most `√(8 · groups)`, so that a wave of about 256 blocks still
/// has every tile's last block add up about 8 bands per thread (tiles × bands = 256 with bands
/// = 8 × rows per step gives tile² ≤ 8 × groups for a block of 256). Measured on the H100 in
/// one call (`docs/runs/2026-11-26/call3_cols_*`, µs, the previous tiles and bands against
/// these tiles and the bands of whole runs): 16384 rows × 1024 `f32` columns in tiles of 64
/// groups (4 tiles, whose last blocks added 128 bands each) 35.0, of 32 groups 31.7; 65536 ×
/// 256 in one tile of 64 groups (128 blocks) 37.4, in four of 16 31.4 (the bands alone had
/// left them at 35.2 and 37.8 in call 2; call 3 had the first cut below, which tiles both
/// alike). That first cut, tile² ≤ 4 × groups, also gave 2048² tiles of 32 groups and cost it
/// 14.5 → 15.4, hence 8. Powers of two, so that the rows a block walks at once (`block /
/// groups`) are a whole number. The host plans the tiles with the same function.
#[inline(always)]
pub const fn groups_per_tile(cols: usize, element: usize, block: u32) -> usize {
    let total = cols.div_ceil(elements_per_vector(element));
    let groups = total.next_power_of_two();
    let mut most = if MAX_TILE_GROUPS < block as usize {
        MAX_TILE_GROUPS
    } else {
        block as usize
    };
    while most > 1 && most * most > 8 * total {
        most /= 2;
    }
    if groups < most { groups } else { most }
}

/// The rows `start..end` of band `band` of `split`, for a block that walks `rows_per_step`
/// rows at a time: whole *runs* of `rows_per_step × LOADS_IN_FLIGHT` rows (one full group of
/// loads for every thread), spread evenly; the last band also takes the rows past the last
/// whole run. A band that ended mid-run left each thread a tail of single loads, each issued
/// only after the one before had been added: 4096² `f32` in 33 bands (3 groups and 7 single
/// loads per thread) took 32.7 µs on the H100, in 32 bands (4 groups) 31.5, in 48 bands 39.0
/// (`docs/runs/2026-11-26/`). The host plans the bands in runs too; the reproducible twin
/// (4 rows in flight) walks the same bands.
#[inline(always)]
pub const fn band_rows(
    band: usize,
    split: usize,
    rows: usize,
    rows_per_step: usize,
) -> (usize, usize) {
    let (run, runs) = whole_runs(rows, rows_per_step);
    // Never 0 (the kernels' `split` is at least 1); saying so spares the kernels a division
    // check, which would pull in a panic.
    let split = if split == 0 { 1 } else { split };
    let start = band * runs / split * run;
    let end = if band + 1 >= split {
        rows
    } else {
        (band + 1) * runs / split * run
    };
    (start, end)
}

/// The rows of one run for a block that walks `rows_per_step` rows at a time, and how many
/// whole runs `rows` holds: what [`band_rows`] cuts into bands, and the host plans them by.
#[inline(always)]
pub const fn whole_runs(rows: usize, rows_per_step: usize) -> (usize, usize) {
    // Never 0 (the kernels' `rows_per_step` is at least 1); saying so spares the kernels a
    // division check, which would pull in a panic.
    let run = rows_per_step * LOADS_IN_FLIGHT;
    let run = if run == 0 { 1 } else { run };
    (run, rows / run)
}

/// Accumulators of shared memory a block of `block` threads needs (one per thread and lane),
/// when the tile has more than one row per step; none otherwise.
#[inline(always)]
pub const fn shared_accumulators(cols: usize, element: usize, block: u32) -> usize {
    if groups_per_tile(cols, element, block) < block as usize {
        block as usize * elements_per_vector(element)
    } else {
        0
    }
}

/// The columns of the row-major `rows × cols` matrix `input` into `output` (see the module
/// docs for the mapping and the contract). Inlined into its entry point: left to itself, LLVM
/// called it from the 16-bit max, min and arg operators' entry points, with its arguments on
/// the stack.
#[inline(always)]
pub fn reduce_columns<T: Element, R: Reduction<T>, const BLOCK: u32>(
    input: GlobalSlice<T>,
    cols: usize,
    rows: usize,
    split: usize,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    require_block_dim::<BLOCK>();
    let lanes = elements_per_vector(size_of::<T>());
    // Never 0 (a power of two); `max` tells the compiler so, with no division check.
    let groups = groups_per_tile(cols, size_of::<T>(), BLOCK).max(1);
    let rows_per_step = BLOCK as usize / groups;
    let tid = thread_idx_x() as usize;
    let shared = shared_array![R::Acc; shared_accumulators(cols, size_of::<T>(), BLOCK).max(1)];
    let ticket = shared_array![u32; 1; after shared];
    // At least one piece (the host never passes 0; the kernel must not divide by it either).
    let split = split.max(1);
    let (tile, band) = (
        block_idx_x() as usize / split,
        block_idx_x() as usize % split,
    );
    let place = GroupPlace::of(tile, groups, tid % groups, lanes);
    let row_offset = tid / groups;
    let (band_start, band_end) = band_rows(band, split, rows, rows_per_step);

    // This thread's rows of the band: its columns' running values.
    let (head, vectors, _) = input.split_vectors();
    let row = band_start + row_offset;
    let step = rows_per_step;
    let whole_vectors = head == 0 && cols.is_multiple_of(lanes);
    let column = |k: usize| place.column(whole_vectors, k);
    let running = if whole_vectors {
        match VectorColumns::new(vectors, cols, place) {
            Some(source) => walk_rows::<T, R, _, LOADS_IN_FLIGHT>(source, row, band_end, step),
            None => [R::START; MAX_LANES],
        }
    } else {
        match ScalarColumns::new(input, cols, column) {
            // A constant of the element type: one arm is compiled.
            Some(source) => match scalar_rows_in_flight(size_of::<T>()) {
                8 => walk_rows::<T, R, _, 8>(source, row, band_end, step),
                _ => walk_rows::<T, R, _, 4>(source, row, band_end, step),
            },
            None => [R::START; MAX_LANES],
        }
    };

    // The block's rows meet: one accumulator per column of the tile.
    let mut settled = [R::IDENTITY; MAX_LANES];
    T::Vector16::for_lanes(|k| settled[k] = R::settle(running[k]));
    let settled = gather_rows::<T, R>(settled, tid, groups, rows_per_step, &shared);
    if row_offset == 0 {
        T::Vector16::for_lanes(|k| {
            let column = column(k);
            if column < cols {
                scratch.partials.store(band * cols + column, settled[k]);
            }
        });
    }
    sync_threads();
    let retired = scratch.retired.at(tile);
    if tid == 0 {
        // Release: the barrier orders every thread's partial before this fence, which makes
        // them visible device-wide before the ticket is drawn (fences are cumulative).
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) as usize != split - 1 {
        return;
    }

    // The tile's last band: every band's partials were fenced before its ticket. Thread `c`
    // adds bands `row_offset`, `+ rows_per_step`, … of its columns, all of its loads
    // for eight bands in flight at once; the row offsets then meet as above.
    thread_fence();
    let mut acc = [R::IDENTITY; MAX_LANES];
    let mut band = row_offset;
    while band + (LOADS_IN_FLIGHT - 1) * step < split {
        T::Vector16::for_lanes(|k| {
            let column = column(k);
            if column < cols {
                let loaded = scratch
                    .partials
                    .load_strided::<LOADS_IN_FLIGHT>(band * cols + column, step * cols);
                let mut j = 0;
                while j < LOADS_IN_FLIGHT {
                    acc[k] = R::combine(acc[k], loaded[j]);
                    j += 1;
                }
            }
        });
        band += LOADS_IN_FLIGHT * step;
    }
    while band < split {
        T::Vector16::for_lanes(|k| {
            let column = column(k);
            if column < cols {
                acc[k] = R::combine(acc[k], scratch.partials.load(band * cols + column));
            }
        });
        band += step;
    }
    let total = gather_rows::<T, R>(acc, tid, groups, rows_per_step, &shared);
    if row_offset == 0 {
        T::Vector16::for_lanes(|k| {
            let column = column(k);
            if column < cols {
                output.store(
                    column,
                    if rows == 0 {
                        R::EMPTY
                    } else {
                        R::finish(total[k], rows)
                    },
                );
            }
        });
    }
    if tid == 0 {
        retired.reset();
    }
}

/// The values of the block's `rows_per_step` row offsets combined, per lane: valid in the
/// threads of row offset 0. Every thread must call it (it has barriers).
///
/// Threads `groups` apart hold the same columns. When a warp holds several row offsets
/// (`groups < 32`), shuffles combine them first, `log2(32 / groups)` steps; then one
/// *carrier* per group and warp (or per row offset, when `groups ≥ 32`) leaves its values in
/// shared memory, and the threads of row offset 0 add up the carriers of their group: at most
/// `block / 32` of them. (Adding every row offset one by one in those threads, as this did
/// before, was 255 serial loads per lane for a matrix of 2 `f32` columns — most of the
/// kernel's time on narrow matrices.)
///
/// ```text
/// 8 f32 columns, block 256: groups = 2, rows_per_step = 128
///   shuffles 16, 8, 4, 2: lanes 0 and 1 of each warp hold its 16 row offsets' sums
///   shared: 8 warps × 2 carriers  →  threads 0 and 1 add up their 8 carriers
/// ```
#[inline(always)]
fn gather_rows<T: Element, R: Reduction<T>>(
    values: [R::Acc; MAX_LANES],
    tid: usize,
    groups: usize,
    rows_per_step: usize,
    shared: &SharedArray<R::Acc>,
) -> [R::Acc; MAX_LANES] {
    if rows_per_step == 1 {
        return values;
    }
    // v7's `warp_reduce_shuffle` stopping at `groups`, but every lane's shuffle of one step
    // issued together: called once per lane, each lane's five steps waited on each other, and
    // 2^20 × 2 `f32` columns took 13.4 µs on the H100 against 12.3 (`docs/runs/2026-11-26/`).
    let mut values = values;
    let mut offset = WARP_SIZE as usize / 2;
    while offset >= groups {
        T::Vector16::for_lanes(|k| {
            let (other, _) = warp_shuffle_down(FULL_MASK, values[k], offset as u32, WARP_SIZE);
            values[k] = R::combine(values[k], other);
        });
        offset /= 2;
    }
    // Carriers: lanes below `groups` of each warp (groups < 32), else every thread; a
    // group's carriers are `stride` threads apart. Slot of (thread, lane): lanes of one thread
    // apart by the block, so a warp's stores of one lane are consecutive.
    let block = groups * rows_per_step;
    let stride = if groups < WARP_SIZE as usize {
        WARP_SIZE as usize
    } else {
        groups
    };
    sync_threads();
    if tid % stride < groups {
        T::Vector16::for_lanes(|k| shared.store(k * block + tid, values[k]));
    }
    sync_threads();
    if tid < groups {
        T::Vector16::for_lanes(|k| {
            let mut acc = values[k];
            let mut carrier = tid + stride;
            while carrier < block {
                acc = R::combine(acc, shared.load(k * block + carrier));
                carrier += stride;
            }
            values[k] = acc;
        });
    }
    values
}

/// Where a thread's group sits. Which columns its lanes reduce depends on how the rows are read
/// ([`column`](GroupPlace::column)).
#[derive(Clone, Copy)]
pub struct GroupPlace {
    tile: usize,
    groups: usize,
    index: usize,
    lanes: usize,
}

impl GroupPlace {
    /// The group `index` of tile `tile`'s `groups` groups, each of `lanes` columns.
    #[inline(always)]
    pub const fn of(tile: usize, groups: usize, index: usize, lanes: usize) -> Self {
        Self {
            tile,
            groups,
            index,
            lanes,
        }
    }

    /// The group's number among all of the matrix's groups.
    #[inline(always)]
    pub const fn group(self) -> usize {
        self.tile * self.groups + self.index
    }

    /// The column lane `lane` reduces. Rows of whole vectors: the group's own vector, columns
    /// `group · L … group · L + L - 1`. Otherwise the tile's columns are dealt out lane by
    /// lane (`tile · groups · L + lane · groups + index`): the threads of a warp then read
    /// consecutive columns with each scalar load (128 bytes of `f32`), where a vector's worth
    /// each left every load touching four times the lines it used.
    ///
    /// ```text
    /// tile of 4 groups, f32 (L = 4): columns of the tile, by (group index, lane)
    ///   whole vectors:  (0,0) (0,1) (0,2) (0,3) (1,0) (1,1) … (3,3)
    ///   dealt out:      (0,0) (1,0) (2,0) (3,0) (0,1) (1,1) … (3,3)
    /// ```
    #[inline(always)]
    pub const fn column(self, whole_vectors: bool, lane: usize) -> usize {
        if whole_vectors {
            self.group() * self.lanes + lane
        } else {
            (self.tile * self.lanes + lane) * self.groups + self.index
        }
    }
}

/// Where a thread of the column kernels finds its columns, row after row.
pub trait ColumnSource<T: Element>: Copy {
    /// Rows `row, row + step, …, row + (K - 1) · step` of the thread's columns, a vector a
    /// row, lane `k` holding the column [`GroupPlace::column`] gives lane `k`; every load
    /// in flight before the first is used.
    fn rows<const K: usize>(self, row: usize, step: usize) -> [T::Vector16; K];
}

/// Rows that start on 16-byte boundaries: the group is one vector of each row.
#[derive(Clone, Copy)]
pub struct VectorColumns<T: Element> {
    vectors: VectorSlice<T>,
    per_row: usize,
    group: usize,
}

impl<T: Element> VectorColumns<T> {
    /// The group's vectors of a matrix of `cols` columns (a multiple of the lanes) held
    /// whole by `vectors`; `None` for a group past the last column.
    #[inline(always)]
    pub fn new(vectors: VectorSlice<T>, cols: usize, place: GroupPlace) -> Option<Self> {
        let per_row = cols / place.lanes.max(1);
        (place.group() < per_row).then_some(Self {
            vectors,
            per_row,
            group: place.group(),
        })
    }
}

impl<T: Element> ColumnSource<T> for VectorColumns<T> {
    #[inline(always)]
    fn rows<const K: usize>(self, row: usize, step: usize) -> [T::Vector16; K] {
        self.vectors
            .load_strided::<K>(row * self.per_row + self.group, step * self.per_row)
    }
}

/// Rows that do not: a scalar load per lane and row. A lane whose column is past the last
/// reads the last column, so that every lane's loads are issued alike; its value is never
/// stored.
#[derive(Clone, Copy)]
pub struct ScalarColumns<T: Element> {
    input: GlobalSlice<T>,
    cols: usize,
    columns: [usize; MAX_LANES],
}

impl<T: Element> ScalarColumns<T> {
    /// The lanes' columns `column(k)` of a matrix of `cols` columns; `None` when even lane 0's
    /// is past the last (the dealt-out columns grow with the lane).
    #[inline(always)]
    pub fn new(
        input: GlobalSlice<T>,
        cols: usize,
        column: impl Fn(usize) -> usize,
    ) -> Option<Self> {
        if column(0) >= cols {
            return None;
        }
        let mut columns = [0; MAX_LANES];
        T::Vector16::for_lanes(|k| columns[k] = column(k).min(cols - 1));
        Some(Self {
            input,
            cols,
            columns,
        })
    }
}

impl<T: Element> ColumnSource<T> for ScalarColumns<T> {
    #[inline(always)]
    fn rows<const K: usize>(self, row: usize, step: usize) -> [T::Vector16; K] {
        // Any value: every lane of the type is overwritten, and the others are never read.
        let mut by_lane = [[T::LOWEST; K]; MAX_LANES];
        T::Vector16::for_lanes(|k| {
            by_lane[k] = self
                .input
                .load_strided::<K>(row * self.cols + self.columns[k], step * self.cols);
        });
        core::array::from_fn(|j| T::Vector16::from_fn(|k| by_lane[k][j]))
    }
}

/// The thread's columns over rows `row, row + step, …` below `end_row`: `K` rows at a time (a
/// divisor of `LOADS_IN_FLIGHT`, so that a band's whole runs leave no rows over), then the
/// rows left one by one; a running value per lane.
#[inline(always)]
fn walk_rows<T: Element, R: Reduction<T>, S: ColumnSource<T>, const K: usize>(
    source: S,
    mut row: usize,
    end_row: usize,
    step: usize,
) -> [R::Running; MAX_LANES] {
    let mut running = [R::START; MAX_LANES];
    while row + (K - 1) * step < end_row {
        let loaded = source.rows::<K>(row, step);
        T::Vector16::for_lanes(|k| {
            running[k] = R::accumulate_column_group(running[k], &loaded, k, |j| row + j * step);
        });
        row += K * step;
    }
    while row < end_row {
        let [vector] = source.rows::<1>(row, step);
        T::Vector16::for_lanes(|k| {
            running[k] = R::accumulate(running[k], R::lift(vector.lanes()[k], row))
        });
        row += step;
    }
    running
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bands of every split cover the rows once, in order, and end on whole runs but the
    /// last; more bands than runs leave the first ones empty.
    #[test]
    fn bands_are_whole_runs_that_cover_the_rows() {
        for rows_per_step in [1, 4, 128] {
            let run = rows_per_step * LOADS_IN_FLIGHT;
            for rows in [0, 1, run - 1, run, 3 * run + 5, 100 * run] {
                for split in 1..=12 {
                    let mut next = 0;
                    for band in 0..split {
                        let (start, end) = band_rows(band, split, rows, rows_per_step);
                        assert_eq!(start, next, "{rows} rows, band {band} of {split}");
                        assert!(start <= end);
                        if band + 1 < split {
                            assert_eq!(end % run, 0);
                        }
                        next = end;
                    }
                    assert_eq!(next, rows);
                }
            }
        }
        // 5 runs in 3 bands: 1, 2 and 2 runs, the last with the 60 rows past them.
        let bands: [_; 3] = core::array::from_fn(|band| band_rows(band, 3, 700, 16));
        assert_eq!(bands, [(0, 128), (128, 384), (384, 700)]);
        // More bands than runs (3 runs of 32 rows in 4 bands): the first is empty.
        assert_eq!(band_rows(0, 4, 100, 4), (0, 0));
        assert_eq!(band_rows(3, 4, 100, 4), (64, 100));
    }
}
