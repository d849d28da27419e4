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
use crate::report::{ThreadName, Where};
use crate::shared::{Accessor, SharedMemory};
use crate::types::{FaultKind, LaunchStats, SimError};
use crate::warp::{Completed, WarpOp, WarpOpKind, Warps};
use core::cell::{Cell, RefCell};
use core::fmt;
use core::panic::Location;
use core::sync::atomic::{AtomicU32, Ordering};
use corosensei::Yielder;

pub(crate) mod schedule;

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
}
