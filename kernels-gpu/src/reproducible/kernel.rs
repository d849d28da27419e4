//! The reproducible kernels: a thread's batches into two [`Binned`] states, the block's and the
//! grid's merges, and the kernel that merges states computed elsewhere. See the parent module
//! for what changes against v8 and why.

use super::binned::counts::Counts;
use super::binned::{Binned, BinnedFloat};
use super::conclusion::{Conclusion, Reproducible};
use crate::device::{
    FULL_MASK, GlobalSlice, GlobalSliceMut, SharedArray, WARP_SIZE, block_dim_x, block_idx_x,
    grid_dim_x, shared_array, sync_threads, sync_warp, thread_fence, thread_idx_x,
    warp_shuffle_down,
};
use crate::element::{Value, Vector16};
use crate::params::Scratch;

/// Vector loads each thread issues before it deposits them (as v8).
pub const VECTORS_IN_FLIGHT: usize = 4;

/// A thread's two states (even lanes, odd lanes: two independent chains of additions) and the
/// deposits each took at most since they were last renormalised.
struct Accumulators<F> {
    even: Binned<F>,
    odd: Binned<F>,
    pending: u32,
}

impl<F: BinnedFloat> Accumulators<F> {
    #[inline(always)]
    fn new() -> Self {
        Accumulators {
            even: Binned::EMPTY,
            odd: Binned::EMPTY,
            pending: 0,
        }
    }

    /// Renormalises both states first if `deposits` more would pass the endurance.
    #[inline(always)]
    fn make_room(&mut self, deposits: u32) {
        if self.pending + deposits > F::ENDURANCE {
            self.even.renorm();
            self.odd.renorm();
            self.pending = 0;
        }
        self.pending += deposits;
    }

    /// Deposits a batch of vectors: one update to their largest magnitude, then each lane
    /// (even lanes to one state, odd lanes to the other). Returns `false` if the batch held a
    /// NaN or an infinity: the caller then hands the same vectors to [`Self::rescan`].
    #[inline(always)]
    fn add_vectors<T: Reproducible<Fold = F>, const V: usize>(
        &mut self,
        loaded: [T::Vector16; V],
    ) -> bool {
        let lanes = <T::Vector16 as Vector16<T>>::LANES;
        self.make_room((V * lanes / 2) as u32);
        let mut largest = F::ZERO;
        each_vector::<V>(|v| loaded[v].each(|_, x| largest = largest.max_abs(x.to_fold())));
        let index = F::index_for(largest);
        self.even.update(index);
        self.odd.update(index);
        let (even, odd) = (&mut self.even, &mut self.odd);
        if even.in_top_bin() || odd.in_top_bin() {
            // Magnitudes near the type's largest: bin 0 takes its deposits scaled (rare).
            each_vector::<V>(|v| {
                loaded[v].each(|lane, x| {
                    // Each branch names its state: a reference chosen at run time would put
                    // both states in local memory for the whole kernel.
                    if lane % 2 == 0 {
                        even.deposit_any(x.to_fold());
                    } else {
                        odd.deposit_any(x.to_fold());
                    }
                })
            });
        } else {
            // Read once per batch: 0 for a state at the bottom of the range (its last fold adds
            // exactly), else 1. The same `or` per deposit either way.
            let (even_bit, odd_bit) = (even.last_bit(), odd.last_bit());
            each_vector::<V>(|v| {
                loaded[v].each(|lane, x| {
                    if lane % 2 == 0 {
                        even.deposit_with(x.to_fold(), even_bit);
                    } else {
                        odd.deposit_with(x.to_fold(), odd_bit);
                    }
                })
            });
        }
        // A NaN or an infinity anywhere in the batch left a top fold NaN or infinite.
        even.top_is_finite() && odd.top_is_finite()
    }

    /// The batch that [`Self::add_vectors`] found a NaN or an infinity in, read again: its
    /// non-finite values go to the special sum, which is now the result, so the folds are
    /// dropped (the rest of the input still goes through them, unread at the end).
    ///
    /// Inlined although it is rare: a call would take `self` by reference, and an
    /// accumulator whose address is taken lives in local memory for the whole kernel.
    #[inline(always)]
    fn rescan<T: Reproducible<Fold = F>, const V: usize>(&mut self, loaded: [T::Vector16; V]) {
        each_vector::<V>(|v| {
            loaded[v].each(|_, x| {
                let x = x.to_fold();
                if !x.is_finite() {
                    self.even.add_special(x);
                }
            })
        });
        self.even = self.even.only_special();
        self.odd = Binned::EMPTY;
        self.pending = 0;
    }

    /// One scalar (head and tail), into the even state.
    #[inline(always)]
    fn add_one(&mut self, x: F) {
        if !x.is_finite() {
            self.even.add_special(x);
            return;
        }
        self.make_room(1);
        self.even.update(F::index_for(x));
        self.even.deposit_any(x);
    }

    /// The thread's sum: both states renormalised, added as [`Counts`] (the first level of the
    /// merges' tree, two leaves).
    #[inline(always)]
    fn settle(mut self) -> Counts<F> {
        self.even.renorm();
        self.odd.renorm();
        Counts::of(&self.even).plus(&Counts::of(&self.odd))
    }
}

/// `f(v)` for every `v` in `0..V` (`V` ≤ 8), written out one call per `v`: `loaded[v]` then
/// has a constant index, so the loaded vectors stay in registers (a loop is not always unrolled
/// before LLVM decides where an array lives, and then the array lives in local memory).
#[inline(always)]
pub(super) fn each_vector<const V: usize>(mut f: impl FnMut(usize)) {
    const { assert!(V <= 8, "at most 8 vectors in flight") };
    let mut call = |v: usize| {
        if v < V {
            f(v)
        }
    };
    call(0);
    call(1);
    call(2);
    call(3);
    call(4);
    call(5);
    call(6);
    call(7);
}

/// This thread's sum of `input`, as [`Counts`] of two leaves: its vectors four at a time, the
/// ones left one at a time, its head and tail scalars. Thread `thread` of `threads` (any
/// number: a row kernel's few lanes per short row take several head and tail scalars each).
#[inline(always)]
pub(super) fn thread_counts<T: Reproducible>(
    input: &GlobalSlice<T>,
    thread: usize,
    threads: usize,
) -> Counts<T::Fold> {
    let (head, vectors, tail_start) = input.split_vectors();
    let mut acc = Accumulators::new();
    let mut vector = thread;
    let in_flight = VECTORS_IN_FLIGHT * threads;
    while vector + in_flight - threads < vectors.len() {
        let loaded = vectors.load_strided::<VECTORS_IN_FLIGHT>(vector, threads);
        if !acc.add_vectors::<T, VECTORS_IN_FLIGHT>(loaded) {
            acc.rescan::<T, VECTORS_IN_FLIGHT>(
                vectors.load_strided::<VECTORS_IN_FLIGHT>(vector, threads),
            );
        }
        vector += in_flight;
    }
    while vector < vectors.len() {
        if !acc.add_vectors::<T, 1>([vectors.load(vector)]) {
            acc.rescan::<T, 1>([vectors.load(vector)]);
        }
        vector += threads;
    }
    let mut index = thread;
    while index < head {
        acc.add_one(input.load(index).to_fold());
        index += threads;
    }
    let mut index = tail_start + thread;
    while index < input.len() {
        acc.add_one(input.load(index).to_fold());
        index += threads;
    }
    acc.settle()
}

/// Adds the counts of the first `lanes` lanes (a power of two ≤ 32) into lane 0: a few additions
/// a level, where a [`Binned::merge`] also subtracts bins and renormalises every fold. The
/// caller turns the root into a state; the lanes' leaves add up to at most
/// [`Counts::MAX_LEAVES`].
#[inline(always)]
pub(super) fn warp_merge<F: BinnedFloat>(mut counts: Counts<F>, lanes: u32) -> Counts<F> {
    let mut offset = lanes / 2;
    while offset > 0 {
        let other = Counts {
            index: shuffle_down(counts.index, offset),
            carries: [
                shuffle_down(counts.carries[0], offset),
                shuffle_down(counts.carries[1], offset),
                shuffle_down(counts.carries[2], offset),
            ],
            ulps: [
                shuffle_down(counts.ulps[0], offset),
                shuffle_down(counts.ulps[1], offset),
                shuffle_down(counts.ulps[2], offset),
            ],
            special: shuffle_down(counts.special, offset),
        };
        counts = counts.plus(&other);
        offset /= 2;
    }
    counts
}

/// Leaves a lane's counts may hold before a warp's tree adds them: the tree then adds at most
/// [`Counts::MAX_LEAVES`].
pub(super) const LANE_LEAVES: usize = Counts::<f32>::MAX_LEAVES / WARP_SIZE as usize;

// A thread's own counts are two leaves (its even and odd states).
const _: () = assert!(LANE_LEAVES >= 2);

/// The states `first, first + step, …` below `count` (`state(k)` loads state `k`, renormalised)
/// added as counts, for one lane of a tree: every [`LANE_LEAVES`] of them the sum is
/// renormalised and counts as one leaf again, so any number of states fits.
#[inline(always)]
pub(super) fn lane_sum_of_states<F: BinnedFloat>(
    count: usize,
    first: usize,
    step: usize,
    state: impl Fn(usize) -> Binned<F>,
) -> Counts<F> {
    let mut sum = Counts::of(&Binned::EMPTY);
    let mut leaves = 0;
    let mut k = first;
    while k < count {
        if leaves == LANE_LEAVES {
            sum = Counts::of(&sum.to_state());
            leaves = 1;
        }
        sum = sum.plus(&Counts::of(&state(k)));
        leaves += 1;
        k += step;
    }
    sum
}

/// Brings the warp's lanes together before the last block's tree of shuffles. Its lanes come
/// from loops of different lengths (a lane adds none, one or two partials), and where ptxas
/// cannot prove that they meet again it guards each `shfl.sync` with a `WARPSYNC.COLLECTIVE`,
/// which runs the shuffle through a slow emulation when the warp arrives diverged. That cost
/// the `f64` sum 9 µs a launch on the H100 whenever a warp's lanes held different numbers of
/// partials (2^20 `f64` over 132 or 200 blocks: 24.6 and 24.2 µs against 14.8 over 128; over
/// the 396 blocks the GPU holds: 24.1 against 15.7 before the counts; Nsight Compute showed
/// the collective path executed in the last block). One `bar.warp.sync` first: 16.0, 15.8 and
/// 15.6 µs.
///
/// Not in the blocks' own trees (the profile counted no collective there), nor before
/// `rows_warp`'s, where it made 100000 segments of ~300 `f32` 68.6 → 110.7 µs. The merge
/// kernel ([`merge_states`]), whose lanes add uneven numbers of states too, was not profiled.
#[inline(always)]
pub(super) fn converge_warp() {
    sync_warp(FULL_MASK);
}

/// `value` of the lane `offset` above (a lane past the warp's end gets its own back, and the
/// tree never reads it).
#[inline(always)]
fn shuffle_down<T: Value>(value: T, offset: u32) -> T {
    warp_shuffle_down(FULL_MASK, value, offset, WARP_SIZE).0
}

/// The sum of `count` states (`state(k)` loads state `k`, renormalised) in a grid's last block,
/// valid in thread 0. Up to a warp's worth, warp 0 adds them alone in one tree of
/// `⌈log2(count)⌉` levels, with no barrier (the other warps return the empty state at once);
/// more, every thread adds its share and the block merges them ([`block_merge`]). `count` is
/// the same in every thread of the block, so either all of them reach the barrier or none.
#[inline(always)]
pub(super) fn last_block_sum<F: BinnedFloat>(
    count: usize,
    tid: u32,
    block: u32,
    warp_states: &SharedArray<Binned<F>>,
    state: impl Fn(usize) -> Binned<F>,
) -> Binned<F> {
    if count <= WARP_SIZE as usize {
        if tid >= WARP_SIZE {
            return Binned::EMPTY;
        }
        let lane = tid as usize;
        let counts = if lane < count {
            Counts::of(&state(lane))
        } else {
            Counts::of(&Binned::EMPTY)
        };
        converge_warp();
        return warp_merge(counts, (count as u32).next_power_of_two()).to_state();
    }
    let sum = lane_sum_of_states(count, tid as usize, block as usize, state);
    converge_warp();
    block_merge(sum, tid, block, warp_states)
}

/// Adds each thread's counts over the block (v7's shuffle reduction, with counts; at most
/// [`LANE_LEAVES`] leaves a thread): the state is valid in thread 0. Every thread must call it
/// (it has a barrier).
#[inline(always)]
pub(super) fn block_merge<F: BinnedFloat>(
    counts: Counts<F>,
    tid: u32,
    block: u32,
    warp_states: &SharedArray<Binned<F>>,
) -> Binned<F> {
    let warps = block / WARP_SIZE;
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let warp_sum = warp_merge(counts, WARP_SIZE);
    if lane == 0 {
        warp_states.store(warp as usize, warp_sum.to_state());
    }
    sync_threads();
    if warp == 0 {
        let state = if lane < warps {
            warp_states.load(lane as usize)
        } else {
            Binned::EMPTY
        };
        warp_merge(Counts::of(&state), warps).to_state()
    } else {
        Binned::EMPTY
    }
}

/// Every thread's `counts` added over the grid, as v8 hands over: block states to `partials`,
/// fence, ticket; the last block merges them and writes `C`'s conclusion of the whole (of
/// `count` elements) to `output[0]`.
#[inline(always)]
fn conclude_grid<F: BinnedFloat, C: Conclusion<F>>(
    counts: Counts<F>,
    count: usize,
    scratch: Scratch<Binned<F>>,
    output: GlobalSliceMut<C::Out>,
) {
    let tid = thread_idx_x();
    let block = block_dim_x();
    let grid = grid_dim_x();
    let warp_states = shared_array![Binned<F>; (block / WARP_SIZE) as usize];
    let ticket = shared_array![u32; 1; after warp_states];

    let block_state = block_merge(counts, tid, block, &warp_states);
    if grid == 1 {
        if tid == 0 {
            output.store(0, C::conclude(block_state, count));
        }
        return;
    }
    let retired = scratch.retired.at(0);
    if tid == 0 {
        scratch.partials.store(block_idx_x() as usize, block_state);
        // Release: this state is visible device-wide before the ticket is drawn.
        thread_fence();
        ticket.store(0, retired.fetch_add(1));
    }
    sync_threads();
    if ticket.load(0) != grid - 1 {
        return;
    }

    // The last block: every other block's state was fenced before its ticket.
    thread_fence();
    let partials = scratch.partials;
    let total = last_block_sum(grid as usize, tid, block, &warp_states, |k| {
        partials.load(k)
    });
    if tid == 0 {
        output.store(0, C::conclude(total, count));
        retired.reset();
    }
}

/// The reproducible sum, mean or state of `input` (see the module docs of
/// [`crate::reproducible`]). Inlined into its entry point: left to itself, LLVM keeps the
/// 16-bit types' instances apart and calls them, the scratch passed through local memory.
#[inline(always)]
pub fn reduce_reproducible<T: Reproducible, C: Conclusion<T::Fold>>(
    input: GlobalSlice<T>,
    scratch: Scratch<Binned<T::Fold>>,
    output: GlobalSliceMut<C::Out>,
) {
    let thread = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
    let threads = block_dim_x() as usize * grid_dim_x() as usize;
    let counts = thread_counts(&input, thread, threads);
    conclude_grid::<T::Fold, C>(counts, input.len(), scratch, output);
}

/// The sum of `states` (each the state of one shard of an input, from
/// `reproducible_state_*`): the same bits as one launch over the whole input.
#[inline(always)]
pub fn merge_states<F: BinnedFloat, C: Conclusion<F>>(
    states: GlobalSlice<Binned<F>>,
    scratch: Scratch<Binned<F>>,
    output: GlobalSliceMut<C::Out>,
) {
    let thread = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
    let threads = block_dim_x() as usize * grid_dim_x() as usize;
    let sum = lane_sum_of_states(states.len(), thread, threads, |k| {
        // Renormalising a renormalised state changes nothing; one that was not is now.
        let mut shard = states.load(k);
        shard.renorm();
        shard
    });
    conclude_grid::<F, C>(sum, states.len(), scratch, output);
}
