//! The simulator state: the thread-local state the device functions work on, what each of
//! them does to it, how a block where nothing can run is resolved (barrier release or error),
//! and the reports about barriers, faults and panics (the memory checkers and the warp
//! operations word their own). The launch driver in `driver.rs` runs the threads.
//!
//! Borrowing discipline: the state lives in a thread-local `RefCell`, which device functions
//! reach through the `RUNNING` pointer (set only while the scheduler has resumed a kernel
//! thread). They borrow it only while they update it, never across a suspension; the scheduler
//! borrows it only between resumptions. A failing device function records the error and
//! suspends for good; the scheduler then stops and unwinds every suspended thread, so the next
//! launch on the same OS thread starts clean.

use crate::global::{GlobalAccessor, GlobalMemory, GlobalOp};
use crate::lanes::WARP_SIZE;
use crate::report::{ThreadName, Where, thread_set};
use crate::shared::{Accessor, SharedMemory};
use crate::types::{ErrorKind, FaultKind, LaunchConfig, LaunchStats, Region, SimError};
use crate::warp::{Completed, WarpOp, WarpOpKind, Warps};
use core::any::Any;
use core::cell::{Cell, RefCell};
use core::fmt;
use core::panic::Location;
use core::sync::atomic::{AtomicU32, Ordering};
use corosensei::Yielder;

pub(crate) type ThreadYielder = Yielder<(), ()>;

thread_local! {
    /// This OS thread's simulator state, reused by its launches.
    pub(crate) static SIM: RefCell<Sim> = const { RefCell::new(Sim::new()) };
    /// `SIM` while a kernel thread runs on this OS thread, else null. Device functions go
    /// through this plain pointer: reading it is one load, where `SIM` (which has a destructor)
    /// checks its registration state on every access.
    pub(crate) static RUNNING: Cell<*const RefCell<Sim>> = const { Cell::new(core::ptr::null()) };
}

#[derive(Clone, Copy, Debug)]
enum State {
    Runnable,
    AtBarrier(&'static Location<'static>),
    /// Exactly while `Sim::warps` holds the thread's pending operation.
    AtWarpOp,
    Exited,
}

#[derive(Clone, Copy)]
struct Thread {
    state: State,
    /// Set when the thread starts; valid until its coroutine returns.
    yielder: *const ThreadYielder,
    fences: u32,
    /// The epoch of the latest fence (0: none yet).
    fence_epoch: u64,
}

impl Thread {
    const NEW: Self = Self {
        state: State::Runnable,
        yielder: core::ptr::null(),
        fences: 0,
        fence_epoch: 0,
    };
}

/// What a device function does once it has updated the state.
enum Step {
    /// Carry on.
    Go,
    /// Suspend until the scheduler resumes the thread.
    Wait(*const ThreadYielder),
    /// Suspend for good: the launch has failed.
    Stop(*const ThreadYielder),
}

/// A panic of a kernel thread, as the panic hook saw it.
pub(crate) struct CaughtPanic {
    pub message: String,
    pub location: Option<String>,
}

pub(crate) struct Sim {
    launching: bool,
    /// An error was recorded; the launch is ending.
    aborting: bool,
    kernel: String,
    pub grid_dim: u32,
    pub block_dim: u32,
    pub block: u32,
    /// The running thread's index in the block.
    pub current: u32,
    /// Numbers blocks across launches, for the shared-memory initialisation check.
    block_serial: u64,
    /// The barrier epoch, increasing across blocks and launches.
    epoch: u64,
    threads: Vec<Thread>,
    warps: Warps,
    /// Threads made runnable by others (barrier release, warp operation): the next round.
    released: Vec<u32>,
    pub shared: SharedMemory,
    global: GlobalMemory,
    stats: LaunchStats,
    error: Option<SimError>,
    panic: Option<CaughtPanic>,
}

/// Runs `f` on the state, for a device function called `api`. Panics outside a kernel thread.
#[inline]
#[track_caller]
pub(crate) fn with_thread<R>(api: &'static str, f: impl FnOnce(&mut Sim) -> R) -> R {
    let sim = RUNNING.get();
    if sim.is_null() {
        outside_launch(api);
    }
    // SAFETY: `RUNNING` is non-null only while the scheduler runs a kernel thread, and then
    // points to this OS thread's `SIM`, which lives until the OS thread ends.
    f(&mut unsafe { &*sim }.borrow_mut())
}

#[cold]
#[inline(never)]
#[track_caller]
fn outside_launch(api: &str) -> ! {
    panic!(
        "simt::{api}() called outside a kernel launch: device functions only work inside the \
         kernel closure that simt::launch runs, on the OS thread that called it"
    )
}

/// A device function that checks or blocks: once the launch is failing, every such call
/// suspends, which unwinds the thread while the scheduler cleans up.
#[inline]
#[track_caller]
fn device_op(api: &'static str, f: impl FnOnce(&mut Sim) -> Step) -> Step {
    with_thread(api, |sim| {
        if sim.aborting {
            Step::Wait(sim.yielder())
        } else {
            f(sim)
        }
    })
}

#[inline]
fn finish(step: Step) {
    match step {
        Step::Go => {}
        Step::Wait(yielder) => suspend(yielder),
        Step::Stop(yielder) => {
            suspend(yielder);
            unreachable!("simt: a kernel thread stopped by an error was resumed");
        }
    }
}

fn suspend(yielder: *const ThreadYielder) {
    // SAFETY: device functions run only on a kernel thread's coroutine, and `Sim::yielder`
    // gave the running thread's yielder, which lives on this coroutine's stack until the
    // coroutine returns — after this call.
    unsafe { (*yielder).suspend(()) }
}

#[track_caller]
pub(crate) fn sync_threads(loc: &'static Location<'static>) {
    finish(device_op("sync_threads", |sim| {
        let thread = sim.current as usize;
        sim.threads[thread].state = State::AtBarrier(loc);
        Step::Wait(sim.yielder())
    }));
}

#[track_caller]
pub(crate) fn sync_warp(mask: u32, loc: &'static Location<'static>) {
    finish(device_op("sync_warp", |sim| {
        sim.arrive_warp(WarpOp {
            kind: WarpOpKind::Sync,
            mask,
            loc,
            value: 0,
            delta: 0,
            width: WARP_SIZE,
        })
    }));
}

#[track_caller]
pub(crate) fn shuffle_down(
    mask: u32,
    value: u64,
    delta: u32,
    width: u32,
    loc: &'static Location<'static>,
) -> (u64, bool) {
    finish(device_op("shuffle_down", |sim| {
        sim.arrive_warp(WarpOp {
            kind: WarpOpKind::Shuffle,
            mask,
            loc,
            value,
            delta,
            width,
        })
    }));
    with_thread("shuffle_down", |sim| sim.warps.shuffled(sim.current))
}

#[track_caller]
pub(crate) fn thread_fence() {
    with_thread("thread_fence", |sim| {
        let epoch = sim.epoch;
        let thread = &mut sim.threads[sim.current as usize];
        thread.fences += 1;
        thread.fence_epoch = epoch;
    });
}

/// An atomic read-modify-write of the `u32` at `ptr`: `update` maps the old value to the new.
#[track_caller]
pub(crate) fn atomic(
    ptr: *mut u32,
    loc: &'static Location<'static>,
    update: impl FnOnce(u32) -> u32,
) -> u32 {
    finish(device_op("atomic", |sim| sim.atomic(ptr as usize, loc)));
    // SAFETY: `Sim::atomic` checked that `ptr` is 4-byte aligned and inside a registered
    // `Atomic` region, which the launch's caller keeps valid and unaliased for the launch.
    let atomic = unsafe { AtomicU32::from_ptr(ptr) };
    let old = atomic.load(Ordering::Relaxed);
    atomic.store(update(old), Ordering::Relaxed);
    old
}

#[track_caller]
pub(crate) fn shared_access(
    offset: usize,
    bytes: usize,
    write: bool,
    loc: &'static Location<'static>,
) {
    finish(device_op("shared_access", |sim| {
        sim.shared_access(offset, bytes, write, loc)
    }));
}

#[track_caller]
pub(crate) fn global_access(
    addr: usize,
    bytes: usize,
    write: bool,
    loc: &'static Location<'static>,
) {
    finish(device_op("global_access", |sim| {
        sim.global_access(addr, bytes, write, loc)
    }));
}

#[track_caller]
pub(crate) fn fault(
    kind: FaultKind,
    message: fmt::Arguments<'_>,
    loc: &'static Location<'static>,
) -> ! {
    // Formatted before borrowing the state: the message's `Display` impls may ask for indices.
    let message = message.to_string();
    finish(device_op("fault", |sim| {
        let error = SimError {
            kind: kind.error_kind(),
            message: format!(
                "kernel `{}` faulted in block {}, {} at {loc}: {message}",
                sim.kernel,
                sim.block,
                ThreadName(sim.current)
            ),
        };
        sim.fail(error)
    }));
    unreachable!("simt: a faulted kernel thread was resumed");
}

impl Sim {
    const fn new() -> Self {
        Self {
            launching: false,
            aborting: false,
            kernel: String::new(),
            grid_dim: 0,
            block_dim: 0,
            block: 0,
            current: 0,
            block_serial: 0,
            epoch: 0,
            threads: Vec::new(),
            warps: Warps::new(),
            released: Vec::new(),
            shared: SharedMemory::new(),
            global: GlobalMemory::new(),
            stats: LaunchStats {
                blocks: 0,
                threads: 0,
                barriers: 0,
                warp_syncs: 0,
                shuffles: 0,
                shared_accesses: 0,
                global_accesses: 0,
            },
            error: None,
            panic: None,
        }
    }

    /// The running thread's yielder.
    fn yielder(&self) -> *const ThreadYielder {
        self.threads[self.current as usize].yielder
    }

    /// Records `error` (the first one wins) and stops the running thread.
    fn fail(&mut self, error: SimError) -> Step {
        self.record_error(error);
        Step::Stop(self.yielder())
    }

    fn record_error(&mut self, error: SimError) {
        self.error.get_or_insert(error);
        self.aborting = true;
    }

    /// The running thread arrives at a warp operation.
    fn arrive_warp(&mut self, op: WarpOp) -> Step {
        let thread = self.current;
        let at = Where {
            kernel: &self.kernel,
            block: self.block,
        };
        match self.warps.arrive(thread, op, at) {
            Ok(Some(done)) => {
                self.warp_op_completed(done, Some(thread));
                Step::Go
            }
            Ok(None) => {
                self.threads[thread as usize].state = State::AtWarpOp;
                Step::Wait(self.yielder())
            }
            Err(error) => self.fail(error),
        }
    }

    /// The lanes of `done` may run again: `caller` (if any) keeps running, the others are
    /// released to the next round.
    fn warp_op_completed(&mut self, done: Completed, caller: Option<u32>) {
        match done.kind {
            WarpOpKind::Sync => self.stats.warp_syncs += 1,
            WarpOpKind::Shuffle => self.stats.shuffles += 1,
        }
        for thread in done.threads() {
            self.threads[thread as usize].state = State::Runnable;
            if Some(thread) != caller {
                self.released.push(thread);
            }
        }
    }

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

    fn shared_access(
        &mut self,
        offset: usize,
        bytes: usize,
        write: bool,
        loc: &'static Location<'static>,
    ) -> Step {
        self.stats.shared_accesses += 1;
        let thread = self.current as usize;
        let me = Accessor {
            thread: thread as u16,
            epoch: self.epoch,
            block_serial: self.block_serial,
            clocks: self.warps.clocks(thread as u32),
            loc,
        };
        match self.shared.access(&me, offset, bytes, write) {
            Ok(()) => Step::Go,
            Err(error) => {
                let at = Where {
                    kernel: &self.kernel,
                    block: self.block,
                };
                let error = self.shared.report(error, at, &me, offset, bytes, write);
                self.fail(error)
            }
        }
    }

    /// The global memory, who the running thread is to it, and where it runs (for reports).
    fn global_accessor(
        &mut self,
        loc: &'static Location<'static>,
    ) -> (&mut GlobalMemory, GlobalAccessor<'_>, Where<'_>) {
        let thread = self.current as usize;
        let state = &self.threads[thread];
        let me = GlobalAccessor {
            block: self.block,
            thread: thread as u16,
            epoch: self.epoch,
            clocks: self.warps.clocks(thread as u32),
            fences: state.fences,
            fence_epoch: state.fence_epoch,
            loc,
        };
        let at = Where {
            kernel: &self.kernel,
            block: self.block,
        };
        (&mut self.global, me, at)
    }

    fn global_access(
        &mut self,
        addr: usize,
        bytes: usize,
        write: bool,
        loc: &'static Location<'static>,
    ) -> Step {
        self.stats.global_accesses += 1;
        let (global, me, at) = self.global_accessor(loc);
        match global.access(&me, addr, bytes, write) {
            Ok(()) => Step::Go,
            Err(error) => {
                let error = global.report(error, at, &me, addr, bytes, GlobalOp::Plain { write });
                self.fail(error)
            }
        }
    }

    fn atomic(&mut self, addr: usize, loc: &'static Location<'static>) -> Step {
        self.stats.global_accesses += 1;
        let (global, me, at) = self.global_accessor(loc);
        match global.atomic(&me, addr) {
            Ok(()) => Step::Go,
            Err(error) => {
                let error = global.report(error, at, &me, addr, 4, GlobalOp::Atomic);
                self.fail(error)
            }
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
