//! The copies of the kernels the tests plant bugs in: v8 (with the warp and block reductions
//! it calls), `rows_split` and `columns`, written with the kernels' device API. `BUG` says which
//! one change a copy carries, each marked "The bug:" where it is; `NO_BUG` is the real kernel's
//! code. Then the entry points, as `family_call!` (kernels-gpu/src/registry.rs) builds them.

use kernels_gpu::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, SharedArray, WARP_SIZE, block_dim_x, block_idx_x,
    grid_dim_x, require_block_dim, shared_array, sync_threads, thread_fence, thread_idx_x,
    warp_shuffle_down,
};
use kernels_gpu::element::{Element, Vector16};
use kernels_gpu::ops::{Reduction, fold};
use kernels_gpu::params::{Launch, Scratch, Segments};
use kernels_gpu::shapes::columns as columns_kernel;

pub type Bug = u8;
pub const NO_BUG: Bug = 0;
pub const NO_RESET: Bug = 1;
pub const SKIPS_LAST_PARTIAL: Bug = 2;
pub const TAIL_STARTS_EARLY: Bug = 3;
pub const HEAD_STOPS_SHORT: Bug = 4;
pub const REMAINDER_ONCE: Bug = 5;
pub const NO_FENCE: Bug = 6;
pub const NO_BARRIER: Bug = 7;
pub const PIECES_DROP_REMAINDER: Bug = 8;
pub const BANDS_DROP_REMAINDER: Bug = 9;

const VECTORS_IN_FLIGHT: usize = 4;
const PARTIALS_IN_FLIGHT: usize = 8;

/// `thread_reduce_vectorized` of `reduce_v8_single_pass.rs` (pub(crate) there), without its
/// `MAY_PREFETCH` walk (the next group's loads issued before a fold: the same groups in the same
/// order, for the operators that ask, `Reduction::PREFETCH_GROUPS`).
fn thread_reduce<T: Element, R: Reduction<T>, const BUG: Bug>(
    input: &GlobalSlice<T>,
    base: usize,
    thread: usize,
    threads: usize,
) -> R::Acc {
    let (head, vectors, tail_start) = input.split_vectors();
    let lanes = <T::Vector16 as Vector16<T>>::LANES;
    let first_of = |vector: usize| base + head + vector * lanes;

    let mut running = R::START;
    let mut vector = thread;
    let in_flight = VECTORS_IN_FLIGHT * threads;
    while vector + in_flight - threads < vectors.len() {
        let loaded = vectors.load_strided::<VECTORS_IN_FLIGHT>(vector, threads);
        running = R::accumulate_group::<VECTORS_IN_FLIGHT, false>(running, &loaded, |k| {
            first_of(vector + k * threads)
        });
        vector += in_flight;
    }
    let reload = |first: usize| {
        vectors.load_strided::<VECTORS_IN_FLIGHT>((first - base - head) / lanes, threads)
    };
    running = R::resolve(running, reload, threads * lanes);
    if BUG == REMAINDER_ONCE {
        // The bug: `if` for `while`: as if at most one grid stride of vectors were left after
        // the groups of four; up to three are, and the others are never read.
        if vector < vectors.len() {
            running = R::accumulate(running, R::vector(vectors.load(vector), first_of(vector)));
        }
    } else {
        while vector < vectors.len() {
            running = R::accumulate(running, R::vector(vectors.load(vector), first_of(vector)));
            vector += threads;
        }
    }
    // The bug (HEAD_STOPS_SHORT): `thread + 1 < head`: the head's last element is never read
    // (only an input that starts past a 16-byte boundary has a head).
    let in_head = if BUG == HEAD_STOPS_SHORT {
        thread + 1 < head
    } else {
        thread < head
    };
    if in_head {
        running = R::accumulate(running, R::lift(input.load(thread), base + thread));
    }
    // The bug (TAIL_STARTS_EARLY): the tail starts one element early, at the last element
    // before it (the last lane of the last vector, or the last element when there is no
    // tail): nothing out of bounds, that element counted twice.
    let tail_start = if BUG == TAIL_STARTS_EARLY {
        tail_start.saturating_sub(1)
    } else {
        tail_start
    };
    if tail_start + thread < input.len() {
        let index = tail_start + thread;
        running = R::accumulate(running, R::lift(input.load(index), base + index));
    }
    R::settle(running)
}

/// `warp_reduce_shuffle` of `reduce_v7_warp_shuffle.rs`.
fn warp_reduce<T: Element, R: Reduction<T>>(mut value: R::Acc, lanes: u32) -> R::Acc {
    let mut offset = lanes / 2;
    while offset > 0 {
        let (other, _) = warp_shuffle_down(FULL_MASK, value, offset, WARP_SIZE);
        value = R::combine(value, other);
        offset /= 2;
    }
    value
}

/// `block_reduce_shuffle` of `reduce_v7_warp_shuffle.rs`.
fn block_reduce<T: Element, R: Reduction<T>>(
    value: R::Acc,
    tid: u32,
    block: u32,
    warp_partials: &SharedArray<R::Acc>,
) -> R::Acc {
    let warps = block / WARP_SIZE;
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let value = warp_reduce::<T, R>(value, WARP_SIZE);
    if lane == 0 {
        warp_partials.store(warp as usize, value);
    }
    sync_threads();
    if warp == 0 {
        let value = if lane < warps {
            warp_partials.load(lane as usize)
        } else {
            R::IDENTITY
        };
        warp_reduce::<T, R>(value, warps)
    } else {
        R::IDENTITY
    }
}

/// `reduce_v8` of `reduce_v8_single_pass.rs`.
fn v8<T: Element, R: Reduction<T>, const BUG: Bug>(
    input: GlobalSlice<T>,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let grid = grid_dim_x();
    let warp_partials = shared_array![R::Acc; (block / WARP_SIZE) as usize];
    let ticket = shared_array![u32; 1; after warp_partials];

    let thread = block_idx_x() as usize * block as usize + tid as usize;
    let threads = block as usize * grid as usize;
    let acc = thread_reduce::<T, R, BUG>(&input, 0, thread, threads);
    let block_value = block_reduce::<T, R>(acc, tid, block, &warp_partials);

    if grid == 1 {
        if tid == 0 {
            output.store(0, R::finish(block_value, input.len()));
        }
        return;
    }
    let retired = scratch.retired.at(0);
    if tid == 0 {
        scratch.partials.store(block_idx_x() as usize, block_value);
        // The bug (NO_FENCE): no release fence: the ticket may be drawn before this partial is
        // visible to the last block.
        if BUG != NO_FENCE {
            thread_fence();
        }
        ticket.store(0, retired.fetch_add(1));
    }
    // The bug (NO_BARRIER): no barrier: the block's threads read the ticket thread 0 may not
    // have stored yet.
    if BUG != NO_BARRIER {
        sync_threads();
    }
    if ticket.load(0) != grid - 1 {
        return;
    }

    thread_fence();
    let mut acc = R::IDENTITY;
    let mut index = tid as usize;
    let block = block as usize;
    // The bug (SKIPS_LAST_PARTIAL): the last block reads `grid - 1` partials: the last one is
    // left out, whichever block wrote it.
    let partials = if BUG == SKIPS_LAST_PARTIAL {
        grid as usize - 1
    } else {
        grid as usize
    };
    while index + (PARTIALS_IN_FLIGHT - 1) * block < partials {
        let loaded = scratch
            .partials
            .load_strided::<PARTIALS_IN_FLIGHT>(index, block);
        acc = fold(acc, loaded, R::combine);
        index += PARTIALS_IN_FLIGHT * block;
    }
    while index < partials {
        acc = R::combine(acc, scratch.partials.load(index));
        index += block;
    }
    let total = block_reduce::<T, R>(acc, tid, block as u32, &warp_partials);
    if tid == 0 {
        output.store(0, R::finish(total, input.len()));
        // The bug (NO_RESET): the counter is left at `grid`: the next launch's blocks draw
        // tickets from there, and none of them sees `grid - 1`.
        if BUG != NO_RESET {
            retired.reset();
        }
    }
}

/// `reduce_rows_split` of `shapes/rows_split.rs` (512 threads).
fn rows_split<T: Element, R: Reduction<T>, const BUG: Bug>(
    input: GlobalSlice<T>,
    rows: Segments,
    split: usize,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    const BLOCK: u32 = 512;
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x();
    let warp_partials = shared_array![R::Acc; (BLOCK / WARP_SIZE) as usize];
    let ticket = shared_array![u32; 1; after warp_partials];
    let split = split.max(1);
    let (row, piece) = (
        block_idx_x() as usize / split,
        block_idx_x() as usize % split,
    );
    if row >= rows.count() {
        return;
    }
    let (start, end) = rows.bounds(row);
    let len = end - start;
    let (from, to) = if BUG == PIECES_DROP_REMAINDER {
        // The bug: every piece `len / split` long: the row's last `len % split` elements are
        // in no piece.
        (piece * (len / split), (piece + 1) * (len / split))
    } else {
        (piece * len / split, (piece + 1) * len / split)
    };
    let values = input.sub(start + from, to - from);
    let acc = thread_reduce::<T, R, NO_BUG>(&values, from, tid as usize, BLOCK as usize);
    let block_value = block_reduce::<T, R>(acc, tid, BLOCK, &warp_partials);

    let retired = scratch.retired.at(row);
    if tid == 0 {
        scratch.partials.store(row * split + piece, block_value);
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) as usize != split - 1 {
        return;
    }
    thread_fence();
    let mut acc = R::IDENTITY;
    let mut k = tid as usize;
    while k < split {
        acc = R::combine(acc, scratch.partials.load(row * split + k));
        k += BLOCK as usize;
    }
    let total = block_reduce::<T, R>(acc, tid, BLOCK, &warp_partials);
    if tid == 0 {
        output.store(
            row,
            if len == 0 {
                R::EMPTY
            } else {
                R::finish(total, len)
            },
        );
        retired.reset();
    }
}

/// `reduce_columns` of `shapes/columns.rs` (256 threads) as it reads rows that do not start on
/// 16-byte boundaries, simplified: one column per thread per 256, one row per step, scalar
/// loads. The real kernel takes the scalar path for the 70 `f32` columns below (no whole number
/// of vectors per row) in 3 tiles of 32 columns; this copy's first tile holds all 70 (its other
/// tiles' blocks find no column), with the real kernel's bands (`band_rows`) of its one row per
/// step.
fn columns<T: Element, R: Reduction<T>, const BUG: Bug>(
    input: GlobalSlice<T>,
    cols: usize,
    rows: usize,
    split: usize,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    const BLOCK: u32 = 256;
    const LOADS_IN_FLIGHT: usize = 8;
    require_block_dim::<BLOCK>();
    let tid = thread_idx_x() as usize;
    let ticket = shared_array![u32; 1];
    let split = split.max(1);
    let (tile, band) = (
        block_idx_x() as usize / split,
        block_idx_x() as usize % split,
    );
    let column = tile * BLOCK as usize + tid;
    let (first_row, end_row) = if BUG == BANDS_DROP_REMAINDER {
        // The bug: the last band, too, ends on its last whole run of rows, so the rows past
        // the last whole run are in no band.
        let run = columns_kernel::LOADS_IN_FLIGHT;
        let runs = rows / run;
        (band * runs / split * run, (band + 1) * runs / split * run)
    } else {
        columns_kernel::band_rows(band, split, rows, 1)
    };

    if column < cols {
        let mut running = R::START;
        let mut row = first_row;
        while row + LOADS_IN_FLIGHT <= end_row {
            let loaded = input.load_strided::<LOADS_IN_FLIGHT>(row * cols + column, cols);
            let mut group = R::IDENTITY;
            let mut k = 0;
            while k < LOADS_IN_FLIGHT {
                group = R::combine(group, R::lift(loaded[k], row + k));
                k += 1;
            }
            running = R::accumulate(running, group);
            row += LOADS_IN_FLIGHT;
        }
        while row < end_row {
            running = R::accumulate(running, R::lift(input.load(row * cols + column), row));
            row += 1;
        }
        scratch
            .partials
            .store(band * cols + column, R::settle(running));
    }
    sync_threads();
    let retired = scratch.retired.at(tile);
    if tid == 0 {
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) as usize != split - 1 {
        return;
    }
    thread_fence();
    if column < cols {
        let mut acc = R::IDENTITY;
        for k in 0..split {
            acc = R::combine(acc, scratch.partials.load(k * cols + column));
        }
        output.store(
            column,
            if rows == 0 {
                R::EMPTY
            } else {
                R::finish(acc, rows)
            },
        );
    }
    if tid == 0 {
        retired.reset();
    }
}

// The entry points, as `family_call!` (kernels-gpu/src/registry.rs) builds them.

/// # Safety
/// The launch contract of `kernels_gpu::params::Launch` (the simulator backend keeps it).
pub unsafe fn v8_entry<T: Element, R: Reduction<T>, const BUG: Bug>(launch: Launch) {
    // SAFETY: the caller's launch contract is what the views require.
    let (input, scratch, output) = unsafe {
        (
            launch.input::<T>(),
            launch.scratch::<R::Acc>(),
            launch.output::<R::Out>(),
        )
    };
    v8::<T, R, BUG>(input, scratch, output)
}

/// The real v8 (`kernels_gpu::versions::reduce_v8`), with operator `R`.
///
/// # Safety
/// As [`v8_entry`].
pub unsafe fn real_v8_entry<T: Element, R: Reduction<T>>(launch: Launch) {
    // SAFETY: as in `v8_entry`.
    let (input, scratch, output) = unsafe {
        (
            launch.input::<T>(),
            launch.scratch::<R::Acc>(),
            launch.output::<R::Out>(),
        )
    };
    kernels_gpu::versions::reduce_v8::<T, R>(input, scratch, output)
}

/// # Safety
/// As [`v8_entry`].
pub unsafe fn rows_split_entry<T: Element, R: Reduction<T>, const BUG: Bug>(launch: Launch) {
    // SAFETY: as in `v8_entry`.
    let (input, segments, scratch, output) = unsafe {
        (
            launch.input::<T>(),
            launch.segments(),
            launch.scratch::<R::Acc>(),
            launch.output::<R::Out>(),
        )
    };
    let split = launch.sizes.split as usize;
    rows_split::<T, R, BUG>(input, segments, split, scratch, output)
}

/// # Safety
/// As [`v8_entry`].
pub unsafe fn columns_entry<T: Element, R: Reduction<T>, const BUG: Bug>(launch: Launch) {
    // SAFETY: as in `v8_entry`.
    let (input, scratch, output) = unsafe {
        (
            launch.input::<T>(),
            launch.scratch::<R::Acc>(),
            launch.output::<R::Out>(),
        )
    };
    let (cols, rows) = (
        launch.sizes.segments as usize,
        launch.sizes.segment_len as usize,
    );
    let split = launch.sizes.split as usize;
    columns::<T, R, BUG>(input, cols, rows, split, scratch, output)
}
