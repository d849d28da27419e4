//! A launch's life on the simulator's state: beginning a launch and each block, ending it,
//! threads that exit or panic, which thread runs next, and what happens when no thread of a
//! block can run (a barrier released, or the divergence reported).

use super::{CaughtPanic, Sim, State, Thread, ThreadYielder};
use crate::report::{ThreadName, Where, thread_set};
use crate::types::{ErrorKind, LaunchConfig, LaunchStats, Region, SimError};
use core::any::Any;
use core::panic::Location;

impl Sim {
    pub(crate) fn begin_launch(
        &mut self,
        name: &str,
        config: &LaunchConfig,
        regions: Vec<Region>,
    ) -> Result<(), String> {
        if self.launching {
            return Err("simt::launch was called from inside a kernel".into());
        }
        self.launching = true;
        self.aborting = false;
        self.kernel = name.to_string();
        self.grid_dim = config.grid_dim;
        self.block_dim = config.block_dim;
        self.stats = LaunchStats::default();
        self.error = None;
        self.panic = None;
        self.shared.begin_launch(config.shared_bytes);
        self.global.begin_launch(regions);
        Ok(())
    }

    pub(crate) fn begin_block(&mut self, block: u32) {
        let threads = self.block_dim as usize;
        self.block = block;
        self.block_serial += 1;
        self.begin_epoch();
        self.threads.clear();
        self.threads.resize(threads, Thread::NEW);
        self.warps.begin_block(self.block_dim);
        self.released.clear();
        self.released.extend(0..self.block_dim);
        self.shared.begin_block();
        self.global.begin_block();
        self.stats.blocks += 1;
        self.stats.threads += u64::from(self.block_dim);
    }

    fn begin_epoch(&mut self) {
        self.epoch += 1;
        self.shared.begin_epoch();
    }

    pub(crate) fn end_launch(&mut self) -> Result<LaunchStats, SimError> {
        self.abandon_launch();
        match self.error.take() {
            Some(error) => Err(error),
            None => Ok(self.stats),
        }
    }

    pub(crate) fn thread_exited(&mut self, thread: u32) {
        self.threads[thread as usize].state = State::Exited;
        let at = Where {
            kernel: &self.kernel,
            block: self.block,
        };
        match self.warps.lane_exited(thread, at) {
            Ok(completed) => {
                for done in completed {
                    self.warp_op_completed(done, None);
                }
            }
            Err(error) => self.record_error(error),
        }
    }

    pub(crate) fn thread_panicked(&mut self, thread: u32, payload: &(dyn Any + Send)) {
        self.threads[thread as usize].state = State::Exited;
        let caught = self.panic.take();
        let message = match &caught {
            Some(caught) => caught.message.clone(),
            None => payload_message(payload).to_string(),
        };
        let location = caught
            .and_then(|caught| caught.location)
            .map(|loc| format!(" at {loc}"))
            .unwrap_or_default();
        let error = SimError {
            kind: ErrorKind::Panic,
            message: format!(
                "kernel `{}` panicked in block {}, {}{location}: {message}",
                self.kernel,
                self.block,
                ThreadName(thread)
            ),
        };
        self.record_error(error);
    }

    /// Ends the launch whatever state it is in, so that the next one can start.
    pub(crate) fn abandon_launch(&mut self) {
        self.launching = false;
        self.aborting = false;
    }

    /// An error was recorded: the launch is ending.
    pub(crate) fn is_aborting(&self) -> bool {
        self.aborting
    }

    /// The coroutine of `thread` has started and suspends through `yielder`.
    pub(crate) fn set_yielder(&mut self, thread: usize, yielder: *const ThreadYielder) {
        self.threads[thread].yielder = yielder;
    }

    /// A kernel thread panicked; its report will say this.
    pub(crate) fn caught_panic(&mut self, caught: CaughtPanic) {
        self.panic = Some(caught);
    }

    /// Makes `thread` the running thread, unless it is not runnable (any more).
    pub(crate) fn switch_to(&mut self, thread: u32) -> bool {
        if !matches!(self.threads[thread as usize].state, State::Runnable) {
            return false;
        }
        self.current = thread;
        true
    }

    /// Moves the threads to run next into `round` (in no particular order); when none were
    /// released, first finds out why.
    pub(crate) fn next_round(&mut self, round: &mut Vec<u32>) -> Stuck {
        if self.released.is_empty() {
            match self.resolve_stuck() {
                Stuck::Released => {}
                stuck => return stuck,
            }
        }
        round.clear();
        core::mem::swap(round, &mut self.released);
        Stuck::Released
    }

    /// Nothing is runnable: the block is done, or a barrier is released, or it is stuck.
    fn resolve_stuck(&mut self) -> Stuck {
        let mut exited = 0;
        let mut barrier = None;
        let mut divergent = false;
        for thread in 0..self.block_dim {
            match self.threads[thread as usize].state {
                State::Exited => exited += 1,
                State::AtBarrier(loc) => match barrier {
                    None => barrier = Some(loc),
                    Some(first) => divergent |= !core::ptr::eq(first, loc) && *first != *loc,
                },
                State::AtWarpOp => {
                    let at = Where {
                        kernel: &self.kernel,
                        block: self.block,
                    };
                    let error = self.warps.deadlock(thread, at, |other| {
                        match self.threads[other as usize].state {
                            State::AtBarrier(loc) => Some(loc),
                            _ => None,
                        }
                    });
                    self.record_error(error);
                    return Stuck::Failed;
                }
                State::Runnable => {
                    unreachable!("simt: runnable {} was not scheduled", ThreadName(thread))
                }
            }
        }
        if barrier.is_none() {
            return Stuck::Finished;
        }
        if exited > 0 || divergent {
            let error = self.barrier_error(exited > 0);
            self.record_error(error);
            return Stuck::Failed;
        }
        self.stats.barriers += 1;
        self.begin_epoch();
        for (thread, state) in self.threads.iter_mut().enumerate() {
            state.state = State::Runnable;
            self.released.push(thread as u32);
        }
        Stuck::Released
    }

    fn barrier_error(&self, exited: bool) -> SimError {
        let mut sites: Vec<(&'static Location<'static>, Vec<u32>)> = Vec::new();
        let mut gone = Vec::new();
        for thread in 0..self.block_dim {
            match self.threads[thread as usize].state {
                State::AtBarrier(loc) => match sites.iter_mut().find(|(site, _)| *site == loc) {
                    Some((_, threads)) => threads.push(thread),
                    None => sites.push((loc, vec![thread])),
                },
                _ => gone.push(thread),
            }
        }
        let waits = sites
            .iter()
            .map(|(loc, threads)| format!("{} wait at sync_threads at {loc}", thread_set(threads)))
            .collect::<Vec<_>>()
            .join(", while ");
        let (kernel, block) = (&self.kernel, self.block);
        if exited {
            SimError {
                kind: ErrorKind::BarrierNotReached,
                message: format!(
                    "barrier not reached in kernel `{kernel}`, block {block}: {} exited without reaching it, \
                     while {waits}; every thread of a block must reach every sync_threads (an early return \
                     skips it)",
                    thread_set(&gone)
                ),
            }
        } else {
            SimError {
                kind: ErrorKind::DivergentBarrier,
                message: format!(
                    "divergent barrier in kernel `{kernel}`, block {block}: {waits}; all threads of a block \
                     must wait at the same sync_threads"
                ),
            }
        }
    }
}

fn payload_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(message) = payload.downcast_ref::<&str>() {
        message
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message
    } else {
        "a panic with a payload that is not a string"
    }
}

/// Where a block stands when nothing released is left to run.
pub(crate) enum Stuck {
    /// Every thread has exited.
    Finished,
    /// A barrier was released: the next round can start.
    Released,
    /// The block cannot go on; the error is recorded.
    Failed,
}
