//! The launch driver: it checks a launch, then runs the blocks one after another on the
//! calling OS thread. Each thread of a block is a coroutine on a stack that later blocks and
//! launches reuse; the runnable ones are resumed round after round (in index order or
//! shuffled) until the block ends or fails, and after a failure the suspended ones are unwound.
//!
//! It changes the simulator state (`sim.rs`) only through `Sim`'s methods, and only between
//! resumptions (see the borrowing discipline there).

use crate::global::sorted_regions;
use crate::rng::SplitMix64;
use crate::sim::schedule::Stuck;
use crate::sim::{CaughtPanic, RUNNING, SIM, Sim, ThreadYielder, with_thread};
use crate::types::{ErrorKind, LaunchConfig, LaunchStats, Region, Schedule, SimError};
use core::cell::{Cell, RefCell};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

const MAX_BLOCK_DIM: u32 = 1024;
const MAX_GRID_DIM: u32 = i32::MAX as u32;
/// Hopper's largest dynamic shared memory per block.
const MAX_SHARED_BYTES: usize = 227 * 1024;
/// Kernel code is shallow, but a panic's formatting runs on the coroutine stack too. Only the
/// touched pages cost memory.
const STACK_BYTES: usize = 128 * 1024;

type KernelThread<'a> = Coroutine<(), (), (), &'a mut DefaultStack>;

thread_local! {
    /// Coroutine stacks, reused by every block of every launch on this OS thread.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// Captures the message and location of panics of kernel threads for the report (the default
/// hook would print them to stderr); panics anywhere else go to the hook installed before.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let running = RUNNING.try_with(Cell::get).unwrap_or(core::ptr::null());
            // SAFETY: as in `sim::with_thread`.
            let captured = unsafe { running.as_ref() }
                .map(|cell| match cell.try_borrow_mut() {
                    Ok(mut sim) => {
                        let message = info
                            .payload_as_str()
                            .unwrap_or("a panic with a payload that is not a string");
                        let location = info.location().map(|loc| loc.to_string());
                        sim.caught_panic(CaughtPanic {
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
            sim.abandon_launch();
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
                with_thread("launch", |sim| sim.set_yielder(thread, yielder));
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
        match sim.borrow_mut().next_round(round) {
            Stuck::Finished => return true,
            Stuck::Failed => return false,
            Stuck::Released => {}
        }
        match rng.as_deref_mut() {
            None => round.sort_unstable(),
            Some(rng) => rng.shuffle(round),
        }
        for &thread in round.iter() {
            if !sim.borrow_mut().switch_to(thread) {
                continue;
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
            if sim.is_aborting() {
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
