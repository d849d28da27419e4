//! The simulator backend: the same kernels and launch plans as the GPU, each launch run by
//! `simt` on the CPU with every access checked.
//!
//! It holds the kernels to the contracts that span launches, as the GPU backend's reuse of
//! scratch memory does: the counters persist from launch to launch and must be 0 after every
//! one (a kernel that forgets to reset its ticket is reported, not just wrong one launch
//! later), and partials and outputs start every launch as garbage.

use crate::error::{Error, Result};
use crate::plan::{self, LaunchShape, Pass, Sizes};
use crate::version::Version;
use kernels_gpu::params::{Launch, Params};
use simt::{Access, LaunchConfig, LaunchStats, Region, Schedule};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The simulated GPU's multiprocessors: sizes the grid of the grid-filling versions (v6–v8) as
/// a small GPU would, so that they run several blocks with many elements per thread.
pub const SIM_MULTIPROCESSORS: u32 = 2;

/// The byte the simulator fills partials and outputs with before each launch: a kernel that
/// reads a value it did not write this launch gets garbage, as it would on a GPU.
const POISON: u8 = 0x5a;

/// What the simulated launches of the last reduction did.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimReport {
    pub stats: LaunchStats,
    pub launches: usize,
    /// CPU time, not GPU time.
    pub wall_time: Duration,
}

/// Buffers standing for global memory, kept from launch to launch.
#[derive(Default)]
struct Memory {
    /// `u64`s so that every accumulator type is aligned.
    partials: Vec<u64>,
    counters: Vec<u32>,
    between: [Vec<u64>; 2],
    output: Vec<u64>,
    report: SimReport,
}

/// The simulator backend of a [`Reducer`](crate::Reducer).
pub struct Sim {
    schedule: Schedule,
    memory: Mutex<Memory>,
}

fn words_for(bytes: usize) -> usize {
    bytes.div_ceil(size_of::<u64>()).max(1)
}

fn poisoned(buffer: &mut Vec<u64>, bytes: usize) {
    let words = words_for(bytes);
    if buffer.len() < words {
        buffer.resize(words, 0);
    }
    buffer.fill(u64::from_ne_bytes([POISON; 8]));
}

impl Sim {
    pub fn new(schedule: Schedule) -> Sim {
        Sim {
            schedule,
            memory: Mutex::new(Memory::default()),
        }
    }

    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// What the last reduction's launches did.
    pub fn last_report(&self) -> SimReport {
        self.memory.lock().unwrap_or_else(|p| p.into_inner()).report
    }

    /// The passes of `version` over `len` elements with `block` threads, on a GPU of
    /// [`SIM_MULTIPROCESSORS`] (or `max_blocks` blocks, if fewer).
    pub fn plan(
        &self,
        version: Version,
        len: usize,
        block: u32,
        sizes: Sizes,
        max_blocks: Option<u32>,
    ) -> Result<Vec<Pass>> {
        let mut resident = plan::resident_blocks(SIM_MULTIPROCESSORS, block);
        if let Some(max) = max_blocks {
            resident = resident.min(u64::from(max.max(1)));
        }
        plan::passes(version, len, block, sizes, resident)
    }

    /// Runs every pass of a whole-array reduction over `input` (the bytes of `len` elements)
    /// and returns the bytes of its `out_len` results (`out_bytes` in all).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        name: &str,
        passes: &[Pass],
        sizes: Sizes,
        input: &[u8],
        len: usize,
        out_len: usize,
        out_bytes: usize,
    ) -> Result<Vec<u8>> {
        let entry = kernels_gpu::versions::sim_entry(name).ok_or_else(|| {
            Error::Kernels(format!("the simulator has no kernel `{name}`"))
        })?;
        let started = Instant::now();
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        let memory = &mut *memory;
        memory.report = SimReport::default();
        let first_grid = passes[0].shape.grid as usize;
        if memory.counters.is_empty() {
            memory.counters = vec![0; 1];
        }
        let mut source: Option<usize> = None; // which `between` buffer the next pass reads
        for (k, pass) in passes.iter().enumerate() {
            let last = k + 1 == passes.len();
            poisoned(&mut memory.partials, first_grid * sizes.accumulator);
            let target = if last { None } else { Some(k % 2) };
            let (output_len, output_bytes) = match target {
                Some(_) => (
                    pass.shape.grid as usize,
                    pass.shape.grid as usize * sizes.element,
                ),
                None => (out_len, out_bytes),
            };
            // The pass reads the user's input or the previous pass's values, and writes the
            // other buffer (or the result).
            let (read_from, write_to) = split_between(&mut memory.between, source, target);
            let input_bytes: &[u8] = match read_from {
                Some(values) => bytes_of(&values[..words_for(pass.len * sizes.element)]),
                None => input,
            };
            let output: &mut Vec<u64> = match write_to {
                Some(buffer) => buffer,
                None => &mut memory.output,
            };
            poisoned(output, output_bytes);
            let stats = launch(
                name,
                entry,
                pass.shape,
                self.schedule,
                input_bytes,
                if k == 0 { len } else { pass.len },
                &mut memory.partials,
                first_grid,
                &mut memory.counters,
                output,
                output_len,
            )?;
            add(&mut memory.report.stats, &stats);
            memory.report.launches += 1;
            if let Some(left) = memory.counters.iter().find(|&&c| c != 0) {
                let what = format!(
                    "it left a ticket counter at {left} (the counters must be 0 when a kernel ends, or the next launch miscounts)"
                );
                // Reset, so that this report does not break the next, unrelated, reduction.
                memory.counters.fill(0);
                return Err(Error::Contract {
                    kernel: name.to_string(),
                    what,
                });
            }
            source = target;
        }
        memory.report.wall_time = started.elapsed();
        Ok(bytes_of(&memory.output)[..out_bytes].to_vec())
    }
}

/// The buffer a pass reads (`source`) and the one it writes (`target`), borrowed together.
fn split_between(
    between: &mut [Vec<u64>; 2],
    source: Option<usize>,
    target: Option<usize>,
) -> (Option<&[u64]>, Option<&mut Vec<u64>>) {
    let [a, b] = between;
    match (source, target) {
        (None, None) => (None, None),
        (None, Some(0)) => (None, Some(a)),
        (None, Some(_)) => (None, Some(b)),
        (Some(0), None) => (Some(a), None),
        (Some(_), None) => (Some(b), None),
        (Some(0), Some(_)) => (Some(a), Some(b)),
        (Some(_), Some(_)) => (Some(b), Some(a)),
    }
}

fn bytes_of(words: &[u64]) -> &[u8] {
    // SAFETY: any `u64`s are valid bytes; the slice covers exactly their memory.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), size_of_val(words)) }
}

/// One simulated launch of `entry` over the given buffers.
#[allow(clippy::too_many_arguments)]
fn launch(
    name: &str,
    entry: kernels_gpu::registry::SimEntry,
    shape: LaunchShape,
    schedule: Schedule,
    input: &[u8],
    len: usize,
    partials: &mut [u64],
    partials_len: usize,
    counters: &mut [u32],
    output: &mut [u64],
    output_len: usize,
) -> Result<LaunchStats> {
    let regions = [
        Region::of_slice("input", input, Access::ReadOnly),
        Region::of_slice("partials", partials, Access::ReadWrite),
        Region::of_slice("retired", counters, Access::Atomic),
        Region::of_slice("output", output, Access::ReadWrite),
    ];
    let launch = Launch {
        input: input.as_ptr(),
        partials: partials.as_mut_ptr().cast(),
        retired: counters.as_mut_ptr(),
        output: output.as_mut_ptr().cast(),
        offsets: std::ptr::null(),
        sizes: Params {
            len: len as u64,
            partials_len: partials_len as u64,
            retired_len: counters.len() as u64,
            output_len: output_len as u64,
            ..Params::default()
        },
    };
    let config = LaunchConfig {
        grid_dim: shape.grid,
        block_dim: shape.block,
        shared_bytes: shape.shared_bytes,
        schedule,
    };
    // SAFETY: `launch` satisfies the launch contract with host addresses: `input` holds `len`
    // elements (the caller passes the bytes of exactly those, or of the previous pass's
    // values), `partials` at least `partials_len` accumulators, `output` `output_len` results,
    // and the counters are zero; all four are borrowed for the whole launch, registered as
    // the regions above, and every access the kernel makes is checked against them.
    let kernel = || unsafe { entry(launch) };
    Ok(simt::launch(name, &config, &regions, &kernel)?)
}

fn add(total: &mut LaunchStats, launch: &LaunchStats) {
    total.blocks += launch.blocks;
    total.threads += launch.threads;
    total.barriers += launch.barriers;
    total.warp_syncs += launch.warp_syncs;
    total.shuffles += launch.shuffles;
    total.shared_accesses += launch.shared_accesses;
    total.global_accesses += launch.global_accesses;
}
