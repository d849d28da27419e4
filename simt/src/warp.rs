//! Warp operations: `sync_warp` and `shuffle_down`, the lane vector clocks `sync_warp`
//! advances, and the reports when a warp operation cannot complete.
//!
//! Lanes wait at a warp operation until every non-exited lane of its mask waits at the same
//! operation with the same mask; the last lane to arrive (or the scheduler, when the last
//! missing lane exits) completes it for the whole group.

use crate::lanes::WARP_SIZE;
use crate::report::ThreadName;
use crate::sim::{Sim, State, Step};
use crate::{ErrorKind, SimError};
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
pub(crate) struct Warp {
    pub arrived: u32,
    pub exited: u32,
}

impl Warp {
    /// A warp of a `block_dim`-thread block at its start.
    pub(crate) fn new(warp: u32, block_dim: u32) -> Self {
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

pub(crate) enum Completion {
    Pending,
    Done,
    Failed,
}

impl Sim {
    /// The running thread arrives at `op`.
    pub(crate) fn arrive_warp(&mut self, op: WarpOp) -> Step {
        let thread = self.current;
        let (warp, lane) = (thread / WARP_SIZE, thread % WARP_SIZE);
        let name = match op.kind {
            WarpOpKind::Sync => "sync_warp",
            WarpOpKind::Shuffle => "shuffle_down",
        };
        if op.mask & (1 << lane) == 0 {
            let error = SimError {
                kind: ErrorKind::InvalidWarpMask,
                message: format!(
                    "invalid warp mask in kernel `{}`, block {}: {} called {}, whose mask does not \
                     contain its own lane {lane}",
                    self.kernel,
                    self.block,
                    ThreadName(thread),
                    op.describe()
                ),
            };
            return self.fail(error);
        }
        if op.kind == WarpOpKind::Shuffle && !(op.width.is_power_of_two() && op.width <= WARP_SIZE)
        {
            let error = SimError {
                kind: ErrorKind::InvalidWarpMask,
                message: format!(
                    "invalid {name} in kernel `{}`, block {}: {} called {}; the width must be a \
                     power of two from 1 to 32",
                    self.kernel,
                    self.block,
                    ThreadName(thread),
                    op.describe()
                ),
            };
            return self.fail(error);
        }
        self.threads[thread as usize].state = State::AtWarpOp(op);
        self.warps[warp as usize].arrived |= 1 << lane;
        match self.try_complete(warp, op.mask, Some(thread)) {
            Completion::Done => Step::Go,
            Completion::Pending => Step::Wait(self.yielder()),
            Completion::Failed => Step::Stop(self.yielder()),
        }
    }

    fn pending_op(&self, thread: u32) -> Option<WarpOp> {
        match self.threads[thread as usize].state {
            State::AtWarpOp(op) => Some(op),
            _ => None,
        }
    }

    /// Completes the operation of the lanes of `mask` in `warp` if all of them are there.
    /// `caller` (if any) keeps running; the other lanes are released to the next round.
    pub(crate) fn try_complete(&mut self, warp: u32, mask: u32, caller: Option<u32>) -> Completion {
        let state = self.warps[warp as usize];
        let group = mask & !state.exited;
        if group & !state.arrived != 0 {
            return Completion::Pending;
        }
        let base = warp * WARP_SIZE;
        let first = self
            .pending_op(base + group.trailing_zeros())
            .expect("arrived lanes wait at a warp op");
        // Lanes at another operation may still come here later; only a stuck block is an error.
        if lanes(group).any(|lane| {
            self.pending_op(base + lane)
                .is_none_or(|op| op.kind != first.kind || op.mask != mask)
        }) {
            return Completion::Pending;
        }
        match first.kind {
            WarpOpKind::Sync => {
                self.join_clocks(warp, group);
                self.stats.warp_syncs += 1;
            }
            WarpOpKind::Shuffle => {
                if let Err(error) = self.exchange(warp, group, mask) {
                    self.record_error(error);
                    return Completion::Failed;
                }
                self.stats.shuffles += 1;
            }
        }
        for lane in lanes(group) {
            let thread = base + lane;
            self.threads[thread as usize].state = State::Runnable;
            if Some(thread) != caller {
                self.released.push(thread);
            }
        }
        self.warps[warp as usize].arrived &= !group;
        Completion::Done
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
    fn exchange(&mut self, warp: u32, group: u32, mask: u32) -> Result<(), SimError> {
        let base = warp * WARP_SIZE;
        let mut results = [(0, false); WARP_SIZE as usize];
        for lane in lanes(group) {
            let op = self
                .pending_op(base + lane)
                .expect("group lanes wait at the shuffle");
            let segment_end = (lane & !(op.width - 1)) + op.width;
            let source = lane
                .checked_add(op.delta)
                .filter(|&source| source < segment_end);
            results[lane as usize] = match source {
                None => (op.value, false),
                Some(source) if group & (1 << source) != 0 => {
                    let source_op = self
                        .pending_op(base + source)
                        .expect("group lanes wait at the shuffle");
                    (source_op.value, true)
                }
                Some(source) => {
                    return Err(self.inactive_source(base + lane, op, base + source, mask));
                }
            };
        }
        for lane in lanes(group) {
            self.threads[(base + lane) as usize].shuffled = results[lane as usize];
        }
        Ok(())
    }

    fn inactive_source(&self, thread: u32, op: WarpOp, source: u32, mask: u32) -> SimError {
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
                self.kernel,
                self.block,
                ThreadName(thread),
                op.describe(),
                ThreadName(source)
            ),
        }
    }

    /// `thread` has exited: warp operations that only waited for it may complete now.
    pub(crate) fn warp_lane_exited(&mut self, thread: u32) {
        let (warp, lane) = (thread / WARP_SIZE, thread % WARP_SIZE);
        self.warps[warp as usize].exited |= 1 << lane;
        for waiting in lanes(self.warps[warp as usize].arrived) {
            // A completed group clears its lanes' arrivals, so re-check before each.
            if let Some(op) = self.pending_op(warp * WARP_SIZE + waiting)
                && op.mask & (1 << lane) != 0
                && let Completion::Failed = self.try_complete(warp, op.mask, None)
            {
                return;
            }
        }
    }

    /// Nothing can run and `thread` waits at `op`: why it cannot complete.
    pub(crate) fn warp_deadlock(&self, thread: u32, op: WarpOp) -> SimError {
        let base = thread / WARP_SIZE * WARP_SIZE;
        let exited = self.warps[(thread / WARP_SIZE) as usize].exited;
        let waiting = format!(
            "in kernel `{}`, block {}: {} waits at {}",
            self.kernel,
            self.block,
            ThreadName(thread),
            op.describe()
        );
        for lane in lanes(op.mask & !exited) {
            let other = base + lane;
            let (kind, message) = match self.threads[other as usize].state {
                State::AtBarrier(loc) => (
                    ErrorKind::Deadlock,
                    format!(
                        "deadlock {waiting} for {}, which waits at sync_threads at {loc}",
                        ThreadName(other)
                    ),
                ),
                State::AtWarpOp(other_op) if other_op.kind != op.kind => (
                    ErrorKind::Deadlock,
                    format!(
                        "deadlock {waiting} for {}, which waits at {}",
                        ThreadName(other),
                        other_op.describe()
                    ),
                ),
                State::AtWarpOp(other_op) if other_op.mask != op.mask => (
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
