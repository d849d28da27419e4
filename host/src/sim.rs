//! The simulator backend: the same version table and passes as the GPU, each launch run by
//! `simt` on the CPU with every access checked.

use crate::element::HostElement;
use crate::versions::{LaunchShape, Version, resident_blocks};
use anyhow::{Context, Result, anyhow};
use kernels_gpu::element::ReduceOp;
use kernels_gpu::simulate::{LaunchConfig, LaunchStats, Schedule, kernel, simulate};
use std::time::{Duration, Instant};

/// The simulated device's multiprocessors: sizes the grid of the grid-filling versions
/// (v6–v8) as a small GPU would, so they run several blocks with many elements per thread.
pub const SIM_MULTIPROCESSORS: u32 = 2;

/// The default size when the simulator runs and the user gave no `--n`: under a second for
/// the slowest version (v0) on a 2-core machine, about 4 s for `all`.
pub const SIM_DEFAULT_LEN: usize = 1 << 20;

#[derive(Clone, Debug)]
pub struct SimRun<T> {
    pub value: T,
    pub passes: Vec<(usize, LaunchShape)>,
    pub wall_time: Duration,
    pub stats: LaunchStats,
}

pub fn reduce<T: HostElement, Op: ReduceOp<T>>(
    version: &Version,
    block: u32,
    input: &[T],
    schedule: Schedule,
) -> Result<SimRun<T>> {
    let passes = version.passes(
        input.len(),
        block,
        size_of::<T>(),
        resident_blocks(SIM_MULTIPROCESSORS, block),
    )?;
    let kernel = kernel::<T, Op>(version.index, block)
        .ok_or_else(|| anyhow!("{} has no build for block size {block}", version.name()))?;
    let name = version.entry_point(T::NAME, Op::NAME, block);
    let started = Instant::now();
    let mut stats = LaunchStats::default();
    let mut source: Vec<T> = Vec::new();
    let mut retired = 0u32;
    for (pass, &(len, shape)) in passes.iter().enumerate() {
        let config = LaunchConfig {
            grid_dim: shape.grid,
            block_dim: shape.block,
            shared_bytes: shape.shared_bytes,
            schedule,
        };
        // Partials start as garbage on a GPU too: the kernels must write every one they read.
        let mut partials = vec![T::from_small(0x5A5A); shape.grid as usize];
        let pass_input = if pass == 0 { input } else { &source[..len] };
        let launch = simulate(
            &name,
            kernel,
            &config,
            pass_input,
            &mut partials,
            &mut retired,
        )
        .with_context(|| {
            format!(
                "simulating {name}, pass {} ({} × {})",
                pass + 1,
                shape.grid,
                shape.block
            )
        })?;
        add_stats(&mut stats, &launch);
        source = partials;
    }
    let value = *source
        .first()
        .ok_or_else(|| anyhow!("{name} produced no output"))?;
    Ok(SimRun {
        value,
        passes,
        wall_time: started.elapsed(),
        stats,
    })
}

fn add_stats(total: &mut LaunchStats, launch: &LaunchStats) {
    total.blocks += launch.blocks;
    total.threads += launch.threads;
    total.barriers += launch.barriers;
    total.warp_syncs += launch.warp_syncs;
    total.shuffles += launch.shuffles;
    total.shared_accesses += launch.shared_accesses;
    total.global_accesses += launch.global_accesses;
}
