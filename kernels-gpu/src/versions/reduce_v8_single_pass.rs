//! # v8 — single pass: vector loads, and the last block finishes the job
//! (beyond the tutorial series and Harris's slides)
//!
//! Changes against v7, each aimed at what is left between v7 and the memory's bandwidth:
//! - **16-byte vector loads.** Each thread loads four `f32` (two `f64`) per instruction: a
//!   quarter of the load instructions, and more bytes in flight per thread. The slice may
//!   start anywhere, so a scalar *head* runs up to the first 16-byte boundary and a scalar
//!   *tail* covers what is left after the last whole vector.
//! - **Unrolled register accumulation.** Four independent vector loads are issued before any
//!   of them is used, so every thread keeps 64 bytes in flight. Each group of four vectors is
//!   combined as a tree and then added to the thread's running value (for float sums with
//!   Neumaier's compensation), so a thread that adds tens of thousands of elements is as
//!   accurate as a tree over them, at no cost a memory-bound kernel would notice (the 16-bit
//!   extremes take a shortcut, next).
//! - **Groups that cannot win are skipped.** For max, min and the arg operators on the 16-bit
//!   floats, a thread first finds a group's best key with integer instructions on two lanes
//!   at a time (no indices, no NaN branches), and looks for its lane only when it beats the
//!   running best: after the first few groups, rarely ([`Reduction::accumulate_group`]). f32
//!   max and min find it with `max.f32`/`min.f32`, a lane an instruction (their arg operators
//!   keep the tree: `Element::ARG_SKIPS_GROUPS`).
//!   The arg operators then search only the last group that won, once, after the loop
//!   ([`Reduction::resolve`]): a warp's lanes win at different groups, and a search at each
//!   win would keep the lanes that lost waiting.
//! - **The next group's loads in flight during a fold.** For those 16-bit arg operators a
//!   group's fold is long integer work that waits on the group's loads at its head; they issue
//!   the next group's four loads first ([`Reduction::PREFETCH_GROUPS`]), at the cost of a second
//!   group of registers (whole bf16 argmax of 2^24 on the H100 22.75 → 21.15 µs). The other
//!   operators' folds are short, and they lost by it.
//! - **One launch.** Every block writes its partial, then `thread_fence()` and an atomic
//!   ticket; the block that draws the last ticket knows all partials are visible and reduces
//!   them itself (CUDA's "threadFenceReduction" pattern). No second kernel, no host round trip.
//!   A grid of one block (small inputs) has nothing to hand over and skips fence and ticket:
//!   about 1.5 µs less at 2^10 elements, where the launch is all there is.
//!
//! ```text
//! x: [head ≤3 scalars | vec vec vec … vec | tail ≤3 scalars]
//!          thread t: vectors t, t+T, t+2T, … (T = threads in the grid), 4 at a time
//! block:   v7's shuffle reduction → partials[b];  fence;  ticket = retired++
//! last:    the block with ticket gridDim-1 reduces partials[0..gridDim] → output[0];  retired = 0
//! ```
//!
//! # Determinism
//! No floating-point atomics: each partial, and the final reduction over the partials in
//! index order, is computed the same way whichever block happens to finish last, so the
//! result is bitwise identical from run to run (for a given grid).
//!
//! # Thread Mapping
//! Global thread `g = b*BLOCK + t` of `T` loads vectors `g, g+T, …`, head element `g` if
//! `g < head`, and tail element `tail_start + g` if it exists.
//!
//! # Output contract
//! The result, finished (a mean divided by the count), in `output[0]`. Scratch: `partials`
//! holds `gridDim` accumulators; `retired[0]` must be 0 before the launch, and the last block
//! sets it back to 0.
//!
//! # Block size
//! Read at run time (`blockDim.x`, any multiple of 32): v5 needed a compile-time block size to
//! unroll its shared-memory tree, but v8's tree is shuffles, so one entry point serves every
//! block size its registers allow: the 16-bit arg operators' prefetch takes them to 72, and
//! their blocks of 1024 (72 × 1024 registers, more than an SM's 65536) run as 512 (the host's
//! `Reducer::block_for`).
//!
//! # Every operator
//! v8 is also the library's kernel, so it reduces with any [`Reduction`]: the arg operators get
//! each element's index through `lift`, the 16-bit floats are added up in `f32`.

use crate::device::{
    GlobalSlice, GlobalSliceMut, WARP_SIZE, block_dim_x, block_idx_x, grid_dim_x, shared_array,
    sync_threads, thread_fence, thread_idx_x,
};
use crate::element::{Element, Vector16};
use crate::launch::{PARTIALS_IN_FLIGHT, VECTORS_IN_FLIGHT};
use crate::ops::{Reduction, fold};
use crate::params::Scratch;
use crate::versions::reduce_v7_warp_shuffle::block_reduce_shuffle;


/// This thread's share of `input`: its head scalar, its vectors (`VECTORS_IN_FLIGHT` at a
/// time, each group folded into the thread's running value by `R::accumulate_group`: as a
/// tree, or by the group's best key, whose lane `R::resolve` finds after the loop; the next
/// group's loads issued before this one is folded where `R::PREFETCH_GROUPS`), its tail
/// scalar. Thread `thread` of `threads`; element `i` of `input` has index `base + i` (for the
/// arg operators: a row kernel passes where its piece of the row starts). `BY_BEST_KEY`: the
/// caller's threads read few groups each, and the arg operators take every type's groups by
/// their best key ([`Reduction::accumulate_group`]). `MAY_PREFETCH`: the caller lets the
/// operators that ask for it issue their next group's loads early (v8, the shards and
/// `rows_split` do; `rows_warp` says no, its registers cost short rows more than the loads
/// gained; `rows_block` too, it lost on 16 KiB rows and on rows that fit one wave, and gained
/// on many rows of 32–64 KiB).
#[inline(always)]
pub(crate) fn thread_reduce_vectorized<
    T: Element,
    R: Reduction<T>,
    const BY_BEST_KEY: bool,
    const MAY_PREFETCH: bool,
>(
    input: &GlobalSlice<T>,
    base: usize,
    thread: usize,
    threads: usize,
) -> R::Acc {
    let (head, vectors, tail_start) = input.split_vectors();
    let lanes = <T::Vector16 as Vector16<T>>::LANES;
    let first_of = |vector: usize| base + head + vector * lanes;

    let fold_group = |running, loaded: &[T::Vector16; VECTORS_IN_FLIGHT], vector: usize| {
        R::accumulate_group::<VECTORS_IN_FLIGHT, BY_BEST_KEY>(running, loaded, |k| {
            first_of(vector + k * threads)
        })
    };

    let mut running = R::START;
    let mut vector = thread;
    let in_flight = VECTORS_IN_FLIGHT * threads;
    if !(MAY_PREFETCH && R::PREFETCH_GROUPS) {
        while vector + in_flight - threads < vectors.len() {
            let loaded = vectors.load_strided::<VECTORS_IN_FLIGHT>(vector, threads);
            running = fold_group(running, &loaded, vector);
            vector += in_flight;
        }
    } else if vector + in_flight - threads < vectors.len() {
        // The next group's loads issued before this group is folded
        // ([`Reduction::PREFETCH_GROUPS`]); the last group is folded with nothing to issue.
        let mut loaded = vectors.load_strided::<VECTORS_IN_FLIGHT>(vector, threads);
        loop {
            let next = vector + in_flight;
            let more = next + in_flight - threads < vectors.len();
            let following = if more {
                vectors.load_strided::<VECTORS_IN_FLIGHT>(next, threads)
            } else {
                loaded
            };
            running = fold_group(running, &loaded, vector);
            vector = next;
            if !more {
                break;
            }
            loaded = following;
        }
    }
    // The arg operators' search for the lane of their best, in the one group that holds it.
    let reload = |first: usize| {
        vectors.load_strided::<VECTORS_IN_FLIGHT>((first - base - head) / lanes, threads)
    };
    running = R::resolve(running, reload, threads * lanes);
    while vector < vectors.len() {
        let value = R::vector(vectors.load(vector), first_of(vector));
        running = R::accumulate(running, value);
        vector += threads;
    }
    // Head and tail hold fewer elements than a vector: one each for the first threads, or
    // several for a thread when fewer threads than that share the input (a row kernel's few
    // lanes per short row).
    let mut index = thread;
    while index < head {
        running = R::accumulate(running, R::lift(input.load(index), base + index));
        index += threads;
    }
    let mut index = tail_start + thread;
    while index < input.len() {
        running = R::accumulate(running, R::lift(input.load(index), base + index));
        index += threads;
    }
    R::settle(running)
}

pub fn reduce_v8<T: Element, R: Reduction<T>>(
    input: GlobalSlice<T>,
    scratch: Scratch<R::Acc>,
    output: GlobalSliceMut<R::Out>,
) {
    single_pass::<T, R>(input, scratch, |total| {
        output.store(0, R::finish(total, input.len()))
    });
}

/// v8's whole reduction of `input`: `write` receives the combined accumulator, unfinished, in
/// thread 0 of the block that finishes (the only call). `reduce_v8` finishes it into the
/// result; the shard kernel of [`crate::shards`] hands it to other GPUs as it is.
#[inline(always)]
pub(crate) fn single_pass<T: Element, R: Reduction<T>>(
    input: GlobalSlice<T>,
    scratch: Scratch<R::Acc>,
    write: impl FnOnce(R::Acc),
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let grid = grid_dim_x();
    let warp_partials = shared_array![R::Acc; (block / WARP_SIZE) as usize];
    let ticket = shared_array![u32; 1; after warp_partials];

    // Many groups a thread: each taken as it comes, the next one's loads early where the
    // operator asks.
    const BY_BEST_KEY: bool = false;
    const MAY_PREFETCH: bool = true;
    #[cfg(not(reduce_exp_v8_runs))]
    let acc = {
        let thread = block_idx_x() as usize * block as usize + tid as usize;
        let threads = block as usize * grid as usize;
        thread_reduce_vectorized::<T, R, BY_BEST_KEY, MAY_PREFETCH>(&input, 0, thread, threads)
    };
    // An experiment (`cargo xtask build-ptx --cfg reduce_exp_v8_runs`): each block sums one
    // contiguous run of the input, its threads striding over the run alone, as CUB's even
    // share and Inductor's split reductions tile a whole array (`shapes/PROFILES.md`,
    // "`torch.compile`'s kernels beside ours"); `rows_split` cuts a row the same way.
    #[cfg(reduce_exp_v8_runs)]
    let acc = {
        let (piece, pieces, len) = (block_idx_x() as usize, grid as usize, input.len());
        let (from, to) = (piece * len / pieces, (piece + 1) * len / pieces);
        thread_reduce_vectorized::<T, R, BY_BEST_KEY, MAY_PREFETCH>(
            &input.sub(from, to - from),
            from,
            tid as usize,
            block as usize,
        )
    };
    let block_value = block_reduce_shuffle::<T, R>(acc, tid, block, &warp_partials);

    if grid == 1 {
        if tid == 0 {
            write(block_value);
        }
        return;
    }
    let retired = scratch.retired.at(0);
    if tid == 0 {
        scratch.partials.store(block_idx_x() as usize, block_value);
        // Release: this partial is visible device-wide before the ticket is drawn.
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) != grid - 1 {
        return;
    }

    // The last block: every other block's partial was fenced before its ticket.
    thread_fence();
    let mut acc = R::IDENTITY;
    let mut index = tid as usize;
    // All of this thread's partials in flight at once (up to 8 per thread: 2048 partials for
    // 256 threads), not one load latency after another.
    let block = block as usize;
    while index + (PARTIALS_IN_FLIGHT - 1) * block < grid as usize {
        let loaded = scratch.partials.load_strided::<PARTIALS_IN_FLIGHT>(index, block);
        acc = fold(acc, loaded, R::combine);
        index += PARTIALS_IN_FLIGHT * block;
    }
    while index < grid as usize {
        acc = R::combine(acc, scratch.partials.load(index));
        index += block;
    }
    let total = block_reduce_shuffle::<T, R>(acc, tid, block as u32, &warp_partials);
    if tid == 0 {
        write(total);
        retired.reset();
    }
}
