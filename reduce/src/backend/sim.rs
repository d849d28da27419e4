//! The simulator backend: the same kernels and launch plans as the GPU, each launch run by
//! `simt` on the CPU with every access checked.
//!
//! It holds the kernels to the contracts that span launches, as the GPU backend's reuse of
//! scratch memory does: the counters persist from launch to launch and must be 0 after every
//! one (a kernel that forgets to reset its ticket is reported, not just wrong one launch
//! later), and partials and outputs start every launch as garbage.

use crate::error::{Error, Result};
use crate::plan::shapes::ShapePlan;
use crate::plan::{self, Job, LaunchGrid, Pass, SegmentOffsets, Sizes, Work};
use kernels_gpu::params::SimEntry;
use kernels_gpu::params::{Launch, Params};
use simt::{Access, LaunchConfig, LaunchStats, Region, Schedule};
use std::collections::HashMap;
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
    /// What the launches did, added up (threads, barriers, memory accesses, …).
    pub stats: LaunchStats,
    /// How many kernel launches the reduction took.
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
    offsets: Vec<u64>,
    report: SimReport,
}

/// The simulator backend of a [`Reducer`](crate::Reducer).
pub struct Sim {
    schedule: Schedule,
    memory: Mutex<Memory>,
    /// Kernels run instead of the registered ones of the same name (tests plant broken
    /// kernels this way).
    overrides: HashMap<String, SimEntry>,
}

fn words_for(bytes: usize) -> usize {
    bytes.div_ceil(size_of::<u64>()).max(1)
}

/// `buffer` with at least `bytes` bytes, every one of them garbage.
fn poisoned(buffer: &mut Vec<u64>, bytes: usize) {
    let words = words_for(bytes);
    if buffer.len() < words {
        buffer.resize(words, 0);
    }
    buffer.fill(u64::from_ne_bytes([POISON; 8]));
}

/// `counters` with at least `count` counters; new ones start at 0, old ones keep their value
/// (the kernels must have left them at 0).
fn counters_for(counters: &mut Vec<u32>, count: usize) {
    if counters.len() < count.max(1) {
        counters.resize(count.max(1), 0);
    }
}

fn bytes_of(words: &[u64]) -> &[u8] {
    // SAFETY: any `u64`s are valid bytes; the slice covers exactly their memory.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), size_of_val(words)) }
}

/// The global memory of one launch.
struct Buffers<'a> {
    input: &'a [u8],
    offsets: &'a [u64],
    partials: &'a mut [u64],
    counters: &'a mut [u32],
    output: &'a mut [u64],
}

impl Sim {
    pub fn new(schedule: Schedule) -> Sim {
        Sim {
            schedule,
            memory: Mutex::new(Memory::default()),
            overrides: HashMap::new(),
        }
    }

    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// Runs `entry` wherever the kernel `name` would run.
    pub fn override_kernel(&mut self, name: &str, entry: SimEntry) {
        self.overrides.insert(name.to_string(), entry);
    }

    /// What the last reduction's launches did.
    pub fn last_report(&self) -> SimReport {
        self.memory.lock().unwrap_or_else(|p| p.into_inner()).report
    }

    fn entry(&self, name: &str) -> Result<SimEntry> {
        self.overrides
            .get(name)
            .copied()
            .or_else(|| kernels_gpu::entry_points::sim_entry(name))
            .ok_or_else(|| Error::Kernels(format!("the simulator has no kernel `{name}`")))
    }

    /// Runs every launch of `job` over `input` (the bytes of `job.len` items) and returns the
    /// bytes of its results.
    pub fn run(&self, job: &Job<'_>, input: &[u8]) -> Result<Vec<u8>> {
        let out_bytes = job.output_bytes();
        match &job.work {
            Work::Passes {
                passes,
                sizes,
                results,
            } => self.run_passes(
                &job.kernel,
                passes,
                *sizes,
                input,
                job.len,
                *results,
                out_bytes,
            ),
            Work::Single {
                launch,
                partials_bytes,
            } => self.run_single(
                &job.kernel,
                *launch,
                *partials_bytes,
                input,
                job.len,
                out_bytes,
            ),
            Work::Shape {
                plan,
                sizes,
                offsets,
                segments,
                segment_len,
                results,
            } => {
                let offsets = match *offsets {
                    SegmentOffsets::None => None,
                    SegmentOffsets::Host(offsets) => Some(offsets),
                    SegmentOffsets::Device(_) => {
                        return Err(Error::WrongDevice(
                            "the simulator reads segment offsets from host memory".into(),
                        ));
                    }
                };
                self.run_shape(
                    &job.kernel,
                    plan,
                    *sizes,
                    input,
                    job.len,
                    offsets,
                    (*segments, *segment_len),
                    *results,
                    out_bytes,
                )
            }
        }
    }

    /// Blocks of `block` threads the simulated GPU runs at once (at most `max_blocks`).
    pub fn resident_blocks(&self, block: u32, max_blocks: Option<u32>) -> u64 {
        let resident = plan::resident_blocks(SIM_MULTIPROCESSORS, block);
        max_blocks.map_or(resident, |max| resident.min(u64::from(max.max(1))))
    }

    /// Runs `launches` (one or more simulated launches of `name`'s entry point, over the
    /// reducer's reused memory) with a fresh report, times them, and returns the first
    /// `out_bytes` bytes of the output they left.
    fn simulate(
        &self,
        name: &str,
        out_bytes: usize,
        launches: impl FnOnce(SimEntry, &mut Memory) -> Result<()>,
    ) -> Result<Vec<u8>> {
        let entry = self.entry(name)?;
        let started = Instant::now();
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        let memory = &mut *memory;
        memory.report = SimReport::default();
        launches(entry, memory)?;
        memory.report.wall_time = started.elapsed();
        Ok(bytes_of(&memory.output)[..out_bytes].to_vec())
    }

    /// Runs every pass of a whole-array reduction over `input` (the bytes of `len` elements)
    /// and returns the bytes of its `out_len` results (`out_bytes` in all).
    #[allow(clippy::too_many_arguments)]
    fn run_passes(
        &self,
        name: &str,
        passes: &[Pass],
        sizes: Sizes,
        input: &[u8],
        len: usize,
        out_len: usize,
        out_bytes: usize,
    ) -> Result<Vec<u8>> {
        self.simulate(name, out_bytes, |entry, memory| {
            let first_grid = passes[0].launch.grid as usize;
            counters_for(&mut memory.counters, 1);
            let mut source: Option<usize> = None; // which `between` buffer the next pass reads
            for (k, pass) in passes.iter().enumerate() {
                let last = k + 1 == passes.len();
                poisoned(&mut memory.partials, first_grid * sizes.accumulator);
                let target = if last { None } else { Some(k % 2) };
                let (output_len, output_bytes) = match target {
                    Some(_) => (
                        pass.launch.grid as usize,
                        pass.launch.grid as usize * sizes.element,
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
                let sizes = Params {
                    len: if k == 0 { len } else { pass.len } as u64,
                    partials_len: first_grid as u64,
                    retired_len: 1,
                    output_len: output_len as u64,
                    ..Params::default()
                };
                let buffers = Buffers {
                    input: input_bytes,
                    offsets: &[],
                    partials: &mut memory.partials,
                    counters: &mut memory.counters[..1],
                    output,
                };
                launch_checked(
                    name,
                    entry,
                    pass.launch,
                    self.schedule,
                    buffers,
                    sizes,
                    &mut memory.report,
                )?;
                source = target;
            }
            Ok(())
        })
    }

    /// Runs one launch of a single-pass kernel that needs `partials_bytes` of scratch and one
    /// counter (the reproducible kernels) over `input` (the bytes of `len` elements) and
    /// returns the `out_bytes` bytes of its result.
    fn run_single(
        &self,
        name: &str,
        launch_grid: LaunchGrid,
        partials_bytes: usize,
        input: &[u8],
        len: usize,
        out_bytes: usize,
    ) -> Result<Vec<u8>> {
        self.simulate(name, out_bytes, |entry, memory| {
            poisoned(&mut memory.partials, partials_bytes);
            poisoned(&mut memory.output, out_bytes);
            counters_for(&mut memory.counters, 1);
            let params = Params {
                len: len as u64,
                partials_len: u64::from(launch_grid.grid),
                retired_len: 1,
                output_len: 1,
                ..Params::default()
            };
            let buffers = Buffers {
                input,
                offsets: &[],
                partials: &mut memory.partials,
                counters: &mut memory.counters[..1],
                output: &mut memory.output,
            };
            launch_checked(
                name,
                entry,
                launch_grid,
                self.schedule,
                buffers,
                params,
                &mut memory.report,
            )?;
            Ok(())
        })
    }

    /// Runs a shape kernel's launch over `input` (the bytes of `len` elements) and returns the
    /// bytes of its `results` results (`out_bytes` in all). `(segments, segment_len)` are the
    /// kernel's `Params` fields of those names; `offsets` the segments' offsets, if any.
    #[allow(clippy::too_many_arguments)]
    fn run_shape(
        &self,
        name: &str,
        plan: &ShapePlan,
        sizes: Sizes,
        input: &[u8],
        len: usize,
        offsets: Option<&[usize]>,
        (segments, segment_len): (usize, usize),
        results: usize,
        out_bytes: usize,
    ) -> Result<Vec<u8>> {
        self.simulate(name, out_bytes, |entry, memory| {
            poisoned(&mut memory.partials, plan.partials * sizes.accumulator);
            poisoned(&mut memory.output, out_bytes);
            counters_for(&mut memory.counters, plan.counters);
            memory.offsets.clear();
            if let Some(offsets) = offsets {
                memory.offsets.extend(offsets.iter().map(|&o| o as u64));
            }
            let params = Params {
                len: len as u64,
                partials_len: plan.partials as u64,
                retired_len: plan.counters as u64,
                output_len: results as u64,
                segments: segments as u64,
                segment_len: segment_len as u64,
                split: plan.split as u64,
            };
            let buffers = Buffers {
                input,
                offsets: &memory.offsets,
                partials: &mut memory.partials,
                counters: &mut memory.counters[..plan.counters.max(1)],
                output: &mut memory.output,
            };
            launch_checked(
                name,
                entry,
                plan.launch,
                self.schedule,
                buffers,
                params,
                &mut memory.report,
            )?;
            Ok(())
        })
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

/// One simulated launch of `entry` over `buffers`, then the checks of what it left behind for
/// the next launch.
fn launch_checked(
    name: &str,
    entry: SimEntry,
    launch_grid: LaunchGrid,
    schedule: Schedule,
    buffers: Buffers<'_>,
    sizes: Params,
    report: &mut SimReport,
) -> Result<()> {
    let mut regions = vec![
        Region::of_slice("input", buffers.input, Access::ReadOnly),
        Region::of_slice("partials", buffers.partials, Access::ReadWrite),
        Region::of_slice("retired", buffers.counters, Access::Atomic),
        Region::of_slice("output", buffers.output, Access::ReadWrite),
    ];
    if !buffers.offsets.is_empty() {
        regions.push(Region::of_slice(
            "offsets",
            buffers.offsets,
            Access::ReadOnly,
        ));
    }
    let launch = Launch {
        input: buffers.input.as_ptr(),
        partials: buffers.partials.as_mut_ptr().cast(),
        retired: buffers.counters.as_mut_ptr(),
        output: buffers.output.as_mut_ptr().cast(),
        offsets: if buffers.offsets.is_empty() {
            std::ptr::null()
        } else {
            buffers.offsets.as_ptr()
        },
        sizes,
    };
    let config = LaunchConfig {
        grid_dim: launch_grid.grid,
        block_dim: launch_grid.block,
        shared_bytes: launch_grid.shared_bytes,
        schedule,
    };
    // SAFETY: `launch` satisfies the launch contract with host addresses: the callers size
    // `input`, `partials`, `output`, `offsets` and the counters from the same plan as `sizes`;
    // all are borrowed for the whole launch, registered as the regions above, and every access
    // the kernel makes is checked against them. Counters left non-zero are reported below.
    let kernel = || unsafe { entry(launch) };
    let stats = simt::launch(name, &config, &regions, &kernel)?;
    add(&mut report.stats, &stats);
    report.launches += 1;
    if let Some(left) = buffers.counters.iter().find(|&&c| c != 0) {
        let what = format!(
            "it left a ticket counter at {left} (the counters must be 0 when a kernel ends, or the next launch miscounts)"
        );
        // Reset, so that this report does not break the next, unrelated, reduction.
        buffers.counters.fill(0);
        return Err(Error::Contract {
            kernel: name.to_string(),
            what,
        });
    }
    Ok(())
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
