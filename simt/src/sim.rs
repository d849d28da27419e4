//! The runtime: the thread-local simulator state the device functions work on, the launch
//! driver, the per-block scheduler of coroutine threads, and the reports about barriers,
//! faults and panics (the memory checkers and the warp operations word their own).
//!
//! Borrowing discipline: the state lives in a thread-local `RefCell`, which device functions
//! reach through the `RUNNING` pointer (set only while the scheduler has resumed a kernel
//! thread). They borrow it only while they update it, never across a suspension; the scheduler
//! borrows it only between resumptions. A failing device function records the error and
//! suspends for good; the scheduler then stops and unwinds every suspended thread, so the next
//! launch on the same OS thread starts clean.

use crate::global::{GlobalAccessor, GlobalMemory, GlobalOp, sorted_regions};
use crate::lanes::WARP_SIZE;
use crate::report::{ThreadName, Where, thread_set};
use crate::rng::SplitMix64;
use crate::shared::{Accessor, SharedMemory};
use crate::warp::{Completed, WarpOp, WarpOpKind, Warps};
use crate::{ErrorKind, FaultKind, LaunchConfig, LaunchStats, Region, Schedule, SimError};
use core::any::Any;
use core::cell::{Cell, RefCell};
use core::fmt;
use core::panic::Location;
use core::sync::atomic::{AtomicU32, Ordering};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

const MAX_BLOCK_DIM: u32 = 1024;
const MAX_GRID_DIM: u32 = i32::MAX as u32;
/// Hopper's largest dynamic shared memory per block.
const MAX_SHARED_BYTES: usize = 227 * 1024;
/// Kernel code is shallow, but a panic's formatting runs on the coroutine stack too. Only the
/// touched pages cost memory.
const STACK_BYTES: usize = 128 * 1024;

type ThreadYielder = Yielder<(), ()>;
type KernelThread<'a> = Coroutine<(), (), (), &'a mut DefaultStack>;

thread_local! {
    /// This OS thread's simulator state, reused by its launches.
    static SIM: RefCell<Sim> = const { RefCell::new(Sim::new()) };
    /// `SIM` while a kernel thread runs on this OS thread, else null. Device functions go
    /// through this plain pointer: reading it is one load, where `SIM` (which has a destructor)
    /// checks its registration state on every access.
    static RUNNING: Cell<*const RefCell<Sim>> = const { Cell::new(core::ptr::null()) };
    /// Coroutine stacks, reused by every block of every launch on this OS thread.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
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
struct CaughtPanic {
    message: String,
    location: Option<String>,
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

    fn begin_launch(
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

    fn begin_block(&mut self, block: u32) {
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

    fn end_launch(&mut self) -> Result<LaunchStats, SimError> {
        self.launching = false;
        self.aborting = false;
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

    fn thread_exited(&mut self, thread: u32) {
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

    fn thread_panicked(&mut self, thread: u32, payload: &(dyn Any + Send)) {
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

enum Stuck {
    Finished,
    Released,
    Failed,
}

/// Captures the message and location of panics of kernel threads for the report (the default
/// hook would print them to stderr); panics anywhere else go to the hook installed before.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let running = RUNNING.try_with(Cell::get).unwrap_or(core::ptr::null());
            // SAFETY: as in `with_thread`.
            let captured = unsafe { running.as_ref() }
                .map(|cell| match cell.try_borrow_mut() {
                    Ok(mut sim) => {
                        let message = info
                            .payload_as_str()
                            .unwrap_or("a panic with a payload that is not a string");
                        let location = info.location().map(|loc| loc.to_string());
                        sim.panic = Some(CaughtPanic {
                            message: message.to_string(),
                            location,
                        });
                        true
                    }
                    Err(_) => false,
                })
                .unwrap_or(false);
            if !captured {
                previous(info);
            }
        }));
    });
}

fn validate(config: &LaunchConfig) -> Result<(), String> {
    if !(1..=MAX_BLOCK_DIM).contains(&config.block_dim) {
        return Err(format!(
            "block_dim is {}, but a block has 1 to {MAX_BLOCK_DIM} threads",
            config.block_dim
        ));
    }
    if !(1..=MAX_GRID_DIM).contains(&config.grid_dim) {
        return Err(format!(
            "grid_dim is {}, but a grid has 1 to {MAX_GRID_DIM} blocks",
            config.grid_dim
        ));
    }
    if config.shared_bytes > MAX_SHARED_BYTES {
        return Err(format!(
            "{} bytes of dynamic shared memory per block asked for, but a block can have at most \
             {MAX_SHARED_BYTES} (227 KiB)",
            config.shared_bytes
        ));
    }
    Ok(())
}

/// Ends the launch state even if the scheduler itself panics, so the next launch can start.
struct LaunchGuard<'a>(&'a RefCell<Sim>);

impl Drop for LaunchGuard<'_> {
    fn drop(&mut self) {
        RUNNING.set(core::ptr::null());
        if let Ok(mut sim) = self.0.try_borrow_mut() {
            sim.launching = false;
            sim.aborting = false;
        }
    }
}

/// This OS thread's stacks, taken for a launch and given back when it ends.
struct Stacks(Vec<DefaultStack>);

impl Stacks {
    fn take(count: usize) -> std::io::Result<Self> {
        let mut stacks = Self(STACKS.with(|pool| core::mem::take(&mut *pool.borrow_mut())));
        while stacks.0.len() < count {
            stacks.0.push(DefaultStack::new(STACK_BYTES)?);
        }
        Ok(stacks)
    }
}

impl Drop for Stacks {
    fn drop(&mut self) {
        let stacks = core::mem::take(&mut self.0);
        let _ = STACKS.try_with(|pool| *pool.borrow_mut() = stacks);
    }
}

pub(crate) fn launch(
    name: &str,
    config: &LaunchConfig,
    regions: &[Region],
    kernel: &dyn Fn(),
) -> Result<LaunchStats, SimError> {
    let invalid = |why: String| SimError {
        kind: ErrorKind::InvalidLaunch,
        message: format!("invalid launch of kernel `{name}`: {why}"),
    };
    validate(config).map_err(invalid)?;
    let regions = sorted_regions(regions).map_err(invalid)?;
    install_panic_hook();
    // SAFETY: `SIM` lives until this OS thread ends, after this call.
    let sim = unsafe { &*SIM.with(|cell| cell as *const RefCell<Sim>) };
    sim.borrow_mut()
        .begin_launch(name, config, regions)
        .map_err(invalid)?;
    let _guard = LaunchGuard(sim);
    let mut stacks = Stacks::take(config.block_dim as usize)
        .map_err(|error| invalid(format!("cannot allocate the coroutine stacks: {error}")))?;
    let stacks = &mut stacks.0[..config.block_dim as usize];

    let mut rng = match config.schedule {
        Schedule::InOrder => None,
        Schedule::Shuffled { seed } => Some(SplitMix64::new(seed)),
    };
    let order = rng.as_mut().map(|rng| {
        let mut order: Vec<u32> = (0..config.grid_dim).collect();
        rng.shuffle(&mut order);
        order
    });
    let mut round = Vec::with_capacity(stacks.len());
    for index in 0..config.grid_dim {
        let block = order.as_ref().map_or(index, |order| order[index as usize]);
        sim.borrow_mut().begin_block(block);
        if !run_block(sim, kernel, stacks, &mut round, rng.as_mut()) {
            break;
        }
    }
    sim.borrow_mut().end_launch()
}

/// Runs one block to its end; false when the launch failed.
fn run_block(
    sim: &RefCell<Sim>,
    kernel: &dyn Fn(),
    stacks: &mut [DefaultStack],
    round: &mut Vec<u32>,
    rng: Option<&mut SplitMix64>,
) -> bool {
    let mut threads: Vec<KernelThread<'_>> = stacks
        .iter_mut()
        .enumerate()
        .map(|(thread, stack)| {
            let body = move |yielder: &ThreadYielder, ()| {
                with_thread("launch", |sim| sim.threads[thread].yielder = yielder);
                kernel();
            };
            // SAFETY: the coroutine borrows `kernel` and `stack`, which outlive this function,
            // and every coroutine is run to completion or unwound (`unwind`) and dropped before
            // it returns (or, if it unwinds, by the drop of `threads`).
            unsafe { Coroutine::with_stack_unchecked(stack, body) }
        })
        .collect();
    let finished = schedule(sim, &mut threads, round, rng);
    if !finished {
        unwind(sim, &mut threads);
    }
    finished
}

/// Resumes runnable threads, round after round, until the block ends (true) or fails.
fn schedule(
    sim: &RefCell<Sim>,
    threads: &mut [KernelThread<'_>],
    round: &mut Vec<u32>,
    mut rng: Option<&mut SplitMix64>,
) -> bool {
    loop {
        {
            let mut sim = sim.borrow_mut();
            let stuck = if sim.released.is_empty() {
                sim.resolve_stuck()
            } else {
                Stuck::Released
            };
            match stuck {
                Stuck::Finished => return true,
                Stuck::Failed => return false,
                Stuck::Released => {}
            }
            round.clear();
            core::mem::swap(round, &mut sim.released);
        }
        match rng.as_deref_mut() {
            None => round.sort_unstable(),
            Some(rng) => rng.shuffle(round),
        }
        for &thread in round.iter() {
            {
                let mut sim = sim.borrow_mut();
                if !matches!(sim.threads[thread as usize].state, State::Runnable) {
                    continue;
                }
                sim.current = thread;
            }
            RUNNING.set(sim);
            let result =
                panic::catch_unwind(AssertUnwindSafe(|| threads[thread as usize].resume(())));
            RUNNING.set(core::ptr::null());
            let mut sim = sim.borrow_mut();
            match result {
                Ok(CoroutineResult::Yield(())) => {}
                Ok(CoroutineResult::Return(())) => sim.thread_exited(thread),
                Err(payload) => sim.thread_panicked(thread, &*payload),
            }
            if sim.aborting {
                return false;
            }
        }
    }
}

/// Unwinds the threads still suspended in a failed block, dropping what is on their stacks.
/// Device functions they call meanwhile suspend again, which continues the unwinding.
fn unwind(sim: &RefCell<Sim>, threads: &mut [KernelThread<'_>]) {
    for (thread, coroutine) in threads.iter_mut().enumerate() {
        if coroutine.done() {
            continue;
        }
        sim.borrow_mut().current = thread as u32;
        RUNNING.set(sim);
        // A panic of the kernel's own drop code is not a simulator result; the launch has
        // failed already.
        let _ = panic::catch_unwind(AssertUnwindSafe(|| coroutine.force_unwind()));
        RUNNING.set(core::ptr::null());
    }
}
