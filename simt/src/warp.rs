//! Warp operations: `sync_warp` and `shuffle_down`, the lane vector clocks `sync_warp`
//! advances, and the reports when a warp operation cannot complete.
//!
//! Lanes wait at a warp operation until every non-exited lane of its mask waits at the same
//! operation with the same mask; the last lane to arrive (or the scheduler, when the last
//! missing lane exits) completes it for the whole group.
//!
//! [`Warps`] keeps all of a block's warp state. It knows nothing of the scheduler: it says
//! which lanes a completed operation lets go, and the scheduler resumes them.

use crate::lanes::{LaneClocks, WARP_SIZE};
use crate::report::{ThreadName, Where};
use crate::types::{ErrorKind, SimError};
use core::panic::Location;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WarpOpKind {
    Sync,
    Shuffle,
}

/// A lane's pending warp operation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WarpOp {
    pub kind: WarpOpKind,
    pub mask: u32,
    pub loc: &'static Location<'static>,
    /// Shuffles only: the value offered, and where to read from.
    pub value: u64,
    pub delta: u32,
    pub width: u32,
}

impl WarpOp {
    fn describe(&self) -> String {
        match self.kind {
            WarpOpKind::Sync => format!("sync_warp(mask {:#010x}) at {}", self.mask, self.loc),
            WarpOpKind::Shuffle => format!(
                "shuffle_down(mask {:#010x}, delta {}, width {}) at {}",
                self.mask, self.delta, self.width, self.loc
            ),
        }
    }
}

/// Which lanes of a warp wait at a warp operation, and which have exited (lanes past the end
/// of the block count as exited from the start).
#[derive(Clone, Copy, Debug)]
struct Warp {
    arrived: u32,
    exited: u32,
}

impl Warp {
    /// A warp of a `block_dim`-thread block at its start.
    fn new(warp: u32, block_dim: u32) -> Self {
        let lanes = (block_dim - warp * WARP_SIZE).min(WARP_SIZE);
        let present = if lanes == WARP_SIZE {
            u32::MAX
        } else {
            (1 << lanes) - 1
        };
        Self {
            arrived: 0,
            exited: !present,
        }
    }
}

/// The lanes set in `mask`, ascending.
fn lanes(mut mask: u32) -> impl Iterator<Item = u32> {
    core::iter::from_fn(move || {
        (mask != 0).then(|| {
            let lane = mask.trailing_zeros();
            mask &= mask - 1;
            lane
        })
    })
}

/// A warp operation that completed: its lanes may run again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Completed {
    pub kind: WarpOpKind,
    /// The first thread of the warp.
    base: u32,
    /// The lanes of the group, exited ones left out.
    group: u32,
}

impl Completed {
    /// The threads of the group, ascending.
    pub(crate) fn threads(&self) -> impl Iterator<Item = u32> + use<> {
        let base = self.base;
        lanes(self.group).map(move |lane| base + lane)
    }
}

/// The warp state of the running block.
pub(crate) struct Warps {
    block_dim: u32,
    warps: Vec<Warp>,
    /// Per thread: the warp operation it waits at.
    pending: Vec<Option<WarpOp>>,
    /// Per thread: its vector clock over the lanes of its warp.
    clocks: Vec<LaneClocks>,
    /// Per thread: the result of its latest shuffle.
    shuffled: Vec<(u64, bool)>,
}

impl Warps {
    pub(crate) const fn new() -> Self {
        Self {
            block_dim: 0,
            warps: Vec::new(),
            pending: Vec::new(),
            clocks: Vec::new(),
            shuffled: Vec::new(),
        }
    }

    /// Every lane of a `block_dim`-thread block at its start.
    pub(crate) fn begin_block(&mut self, block_dim: u32) {
        let threads = block_dim as usize;
        self.block_dim = block_dim;
        self.warps.clear();
        self.warps
            .extend((0..block_dim.div_ceil(WARP_SIZE)).map(|warp| Warp::new(warp, block_dim)));
        self.pending.clear();
        self.pending.resize(threads, None);
        // Fresh clocks per block: a lane's own entry starts at 1, so it is new to every other.
        self.clocks.clear();
        self.clocks.extend((0..threads).map(|thread| {
            let mut clocks = [0; WARP_SIZE as usize];
            clocks[thread % WARP_SIZE as usize] = 1;
            clocks
        }));
        self.shuffled.clear();
        self.shuffled.resize(threads, (0, false));
    }

    /// `thread`'s vector clock.
    #[inline]
    pub(crate) fn clocks(&self, thread: u32) -> &LaneClocks {
        &self.clocks[thread as usize]
    }

    /// The result of `thread`'s latest shuffle.
    pub(crate) fn shuffled(&self, thread: u32) -> (u64, bool) {
        self.shuffled[thread as usize]
    }

    /// The warp operation `thread` waits at, if any.
    pub(crate) fn pending(&self, thread: u32) -> Option<WarpOp> {
        self.pending[thread as usize]
    }

    /// `thread` arrives at `op`: the operation, if this completed it, or `None` while the
    /// thread has to wait for other lanes.
    pub(crate) fn arrive(
        &mut self,
        thread: u32,
        op: WarpOp,
        at: Where<'_>,
    ) -> Result<Option<Completed>, SimError> {
        let (warp, lane) = (thread / WARP_SIZE, thread % WARP_SIZE);
        let name = match op.kind {
            WarpOpKind::Sync => "sync_warp",
            WarpOpKind::Shuffle => "shuffle_down",
        };
        if op.mask & (1 << lane) == 0 {
            return Err(SimError {
                kind: ErrorKind::InvalidWarpMask,
                message: format!(
                    "invalid warp mask in kernel `{}`, block {}: {} called {}, whose mask does not \
                     contain its own lane {lane}",
                    at.kernel,
                    at.block,
                    ThreadName(thread),
                    op.describe()
                ),
            });
        }
        if op.kind == WarpOpKind::Shuffle && !(op.width.is_power_of_two() && op.width <= WARP_SIZE)
        {
            return Err(SimError {
                kind: ErrorKind::InvalidWarpMask,
                message: format!(
                    "invalid {name} in kernel `{}`, block {}: {} called {}; the width must be a \
                     power of two from 1 to 32",
                    at.kernel,
                    at.block,
                    ThreadName(thread),
                    op.describe()
                ),
            });
        }
        self.pending[thread as usize] = Some(op);
        self.warps[warp as usize].arrived |= 1 << lane;
        self.try_complete(warp, op.mask, at)
    }

    /// Completes the operation of the lanes of `mask` in `warp` if all of them are there.
    fn try_complete(
        &mut self,
        warp: u32,
        mask: u32,
        at: Where<'_>,
    ) -> Result<Option<Completed>, SimError> {
        let state = self.warps[warp as usize];
        let group = mask & !state.exited;
        if group & !state.arrived != 0 {
            return Ok(None);
        }
        let base = warp * WARP_SIZE;
        let first = self
            .pending(base + group.trailing_zeros())
            .expect("arrived lanes wait at a warp op");
        // Lanes at another operation may still come here later; only a stuck block is an error.
        if lanes(group).any(|lane| {
            self.pending(base + lane)
                .is_none_or(|op| op.kind != first.kind || op.mask != mask)
        }) {
            return Ok(None);
        }
        match first.kind {
            WarpOpKind::Sync => self.join_clocks(warp, group),
            WarpOpKind::Shuffle => self.exchange(warp, group, mask, at)?,
        }
        for lane in lanes(group) {
            self.pending[(base + lane) as usize] = None;
        }
        self.warps[warp as usize].arrived &= !group;
        Ok(Some(Completed {
            kind: first.kind,
            base,
            group,
        }))
    }

    /// `sync_warp`: every lane of `group` learns what the others have seen, then ticks its own
    /// clock so its later accesses are new to them.
    fn join_clocks(&mut self, warp: u32, group: u32) {
        let base = (warp * WARP_SIZE) as usize;
        let mut joined = [0; WARP_SIZE as usize];
        for lane in lanes(group) {
            let clocks = &self.clocks[base + lane as usize];
            for (j, c) in joined.iter_mut().zip(clocks) {
                *j = (*j).max(*c);
            }
        }
        for lane in lanes(group) {
            let lane = lane as usize;
            self.clocks[base + lane] = joined;
            self.clocks[base + lane][lane] += 1;
        }
    }

    /// `shuffle_down`: each lane of `group` gets its source lane's value.
    fn exchange(
        &mut self,
        warp: u32,
        group: u32,
        mask: u32,
        at: Where<'_>,
    ) -> Result<(), SimError> {
        let base = warp * WARP_SIZE;
        let mut results = [(0, false); WARP_SIZE as usize];
        for lane in lanes(group) {
            let op = self
                .pending(base + lane)
                .expect("group lanes wait at the shuffle");
            let segment_end = (lane & !(op.width - 1)) + op.width;
            let source = lane
                .checked_add(op.delta)
                .filter(|&source| source < segment_end);
            results[lane as usize] = match source {
                None => (op.value, false),
                Some(source) if group & (1 << source) != 0 => {
                    let source_op = self
                        .pending(base + source)
                        .expect("group lanes wait at the shuffle");
                    (source_op.value, true)
                }
                Some(source) => {
                    return Err(self.inactive_source(base + lane, op, base + source, mask, at));
                }
            };
        }
        for lane in lanes(group) {
            self.shuffled[(base + lane) as usize] = results[lane as usize];
        }
        Ok(())
    }

    fn inactive_source(
        &self,
        thread: u32,
        op: WarpOp,
        source: u32,
        mask: u32,
        at: Where<'_>,
    ) -> SimError {
        let why = if mask & (1 << (source % WARP_SIZE)) == 0 {
            "which is not in the mask".to_string()
        } else if source >= self.block_dim {
            format!(
                "which does not exist (the block has {} threads)",
                self.block_dim
            )
        } else {
            "which has already exited".to_string()
        };
        SimError {
            kind: ErrorKind::InactiveShuffleSource,
            message: format!(
                "inactive shuffle source in kernel `{}`, block {}: {} called {} and reads \
                 {}, {why}; its result would be undefined",
                at.kernel,
                at.block,
                ThreadName(thread),
                op.describe(),
                ThreadName(source)
            ),
        }
    }

    /// `thread` has exited: the warp operations that only waited for it, which complete now.
    pub(crate) fn lane_exited(
        &mut self,
        thread: u32,
        at: Where<'_>,
    ) -> Result<Vec<Completed>, SimError> {
        let (warp, lane) = (thread / WARP_SIZE, thread % WARP_SIZE);
        self.warps[warp as usize].exited |= 1 << lane;
        let mut completed = Vec::new();
        for waiting in lanes(self.warps[warp as usize].arrived) {
            // A completed group clears its lanes' arrivals, so re-check before each.
            if let Some(op) = self.pending(warp * WARP_SIZE + waiting)
                && op.mask & (1 << lane) != 0
                && let Some(done) = self.try_complete(warp, op.mask, at)?
            {
                completed.push(done);
            }
        }
        Ok(completed)
    }

    /// Nothing can run and `thread` waits at a warp operation: why it cannot complete.
    /// `barrier` gives the `sync_threads` a thread waits at, if it does.
    pub(crate) fn deadlock(
        &self,
        thread: u32,
        at: Where<'_>,
        barrier: impl Fn(u32) -> Option<&'static Location<'static>>,
    ) -> SimError {
        let op = self
            .pending(thread)
            .expect("a thread stuck at a warp op waits at one");
        let base = thread / WARP_SIZE * WARP_SIZE;
        let exited = self.warps[(thread / WARP_SIZE) as usize].exited;
        let waiting = format!(
            "in kernel `{}`, block {}: {} waits at {}",
            at.kernel,
            at.block,
            ThreadName(thread),
            op.describe()
        );
        for lane in lanes(op.mask & !exited) {
            let other = base + lane;
            let (kind, message) = match (barrier(other), self.pending(other)) {
                (Some(loc), _) => (
                    ErrorKind::Deadlock,
                    format!(
                        "deadlock {waiting} for {}, which waits at sync_threads at {loc}",
                        ThreadName(other)
                    ),
                ),
                (None, Some(other_op)) if other_op.kind != op.kind => (
                    ErrorKind::Deadlock,
                    format!(
                        "deadlock {waiting} for {}, which waits at {}",
                        ThreadName(other),
                        other_op.describe()
                    ),
                ),
                (None, Some(other_op)) if other_op.mask != op.mask => (
                    ErrorKind::InvalidWarpMask,
                    format!(
                        "mismatched warp masks {waiting}, but {} waits at {}; every lane named in \
                         a mask must reach the operation with the same mask",
                        ThreadName(other),
                        other_op.describe()
                    ),
                ),
                _ => continue,
            };
            return SimError { kind, message };
        }
        SimError {
            kind: ErrorKind::Deadlock,
            message: format!("deadlock {waiting}, which can never complete"),
        }
    }
}
