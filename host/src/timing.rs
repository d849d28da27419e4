//! Timing kernels on the GPU: CUDA events behind a pre-roll.
//!
//! CUDA events time the GPU's queue. If the GPU is idle when the host records the start event,
//! the event fires at once and the kernel starts only when the host has finished launching it,
//! so the CPU's launch path (several µs) would be counted as kernel time. A one-thread kernel
//! that spins for [`PREROLL_NS`] on the GPU's clock is launched just before each timed run:
//! the start event and the launches queue behind it, and the events time the GPU alone.
//!
//! Recording an event right after a kernel adds time of its own to the interval (measured with
//! nothing between two events: the README's "How each column is measured" has the figures).
//! So a single-launch reduction is timed with exactly two events around it; a multi-pass
//! version gets a third, after its first pass, for the "first pass" column, and its "to the
//! result" time is the outer two.

use anyhow::{Context, Result, anyhow, bail};
use cudarc::driver::{CudaEvent, CudaFunction, LaunchConfig, PushKernelArg, sys};
use reduce_rs::backend::gpu::Gpu;
use reduce_rs::op::device_value;
use reduce_rs::plan::{self, Job, Pass, Sizes, Work};
use reduce_rs::{Element, Operation, Reducer, Version};

/// GPU time the pre-roll spins: more than the host needs to enqueue a timed run.
pub const PREROLL_NS: u64 = 50_000;

/// Repetitions for timing.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub warmup: u32,
    pub repeat: u32,
}

/// One version timed on the GPU.
#[derive(Clone, Debug)]
pub struct TimedRun<D> {
    /// The result of the first run (every run is compared with it).
    pub value: D,
    pub passes: Vec<Pass>,
    /// Medians over the timed runs (ms).
    pub first_pass_ms: f64,
    pub to_result_ms: f64,
    pub repeat: u32,
    /// Every run gave the same bits.
    pub deterministic: bool,
}

/// Pre-roll and events on one GPU.
pub struct Timer<'g> {
    gpu: &'g Gpu,
    spin: CudaFunction,
    events: [CudaEvent; 3],
}

impl<'g> Timer<'g> {
    pub fn new(gpu: &'g Gpu) -> Result<Timer<'g>> {
        let (spin, _) = gpu.kernel("spin_ns", 1, 0)?;
        let event = || {
            gpu.context()
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .context("creating a timing event")
        };
        Ok(Timer {
            gpu,
            spin,
            events: [event()?, event()?, event()?],
        })
    }

    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// Keeps the GPU busy for [`PREROLL_NS`] while the host enqueues what follows.
    pub fn preroll(&self) -> Result<()> {
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args = self.gpu.stream().launch_builder(&self.spin);
        args.arg(&PREROLL_NS);
        // SAFETY: `spin_ns(nanoseconds: u64)` takes exactly this one argument and touches no
        // memory.
        unsafe { args.launch(config) }.context("launching the pre-roll kernel spin_ns")?;
        Ok(())
    }

    fn record(&self, k: usize) -> Result<()> {
        self.events[k]
            .record(self.gpu.stream())
            .context("recording a timing event")
    }

    fn elapsed_ms(&self, from: usize, to: usize) -> Result<f64> {
        Ok(f64::from(
            self.events[from]
                .elapsed_ms(&self.events[to])
                .context("reading a timing event")?,
        ))
    }

    /// Times `enqueue` (which enqueues one run reading input copy `run`): pre-roll, start
    /// event, the work, end event; `warmup` untimed runs, then the median of `repeat`.
    pub fn time(
        &self,
        timing: Timing,
        mut enqueue: impl FnMut(usize) -> Result<()>,
    ) -> Result<f64> {
        let mut samples = Vec::new();
        for run in 0..(timing.warmup + timing.repeat) as usize {
            self.preroll()?;
            self.record(0)?;
            enqueue(run)?;
            self.record(1)?;
            self.gpu.synchronize("the timed work")?;
            if run >= timing.warmup as usize {
                samples.push(self.elapsed_ms(0, 1)?);
            }
        }
        Ok(median(&mut samples))
    }

    /// Times every pass of `version` reducing `inputs` (device copies of `len` elements; run
    /// `r` reads copy `r % inputs.len()`, so that small inputs are not timed out of the L2
    /// cache), with `block` threads and at most `max_blocks` blocks.
    pub fn reduce<T: Element, O: Operation<T>>(
        &self,
        version: Version,
        block: u32,
        max_blocks: Option<u32>,
        inputs: &[u64],
        len: usize,
        timing: Timing,
    ) -> Result<TimedRun<O::Device>> {
        let name = plan::entry_name::<T, O>(version, block);
        let shared = plan::shared_bytes(version, block, Sizes::of::<T, O>());
        let resident = self.gpu.resident(&name, block, shared, max_blocks)?;
        let job = plan::whole::<T, O>(version, len, block, resident)?;
        self.reduce_job::<T, O>(&job, inputs, timing)
    }

    /// [`Timer::reduce`] of a job planned elsewhere (a tuner's own launch grids): one event
    /// after the first pass and one after the last.
    pub fn reduce_job<T: Element, O: Operation<T>>(
        &self,
        job: &Job<'_>,
        inputs: &[u64],
        timing: Timing,
    ) -> Result<TimedRun<O::Device>> {
        let Work::Passes { passes, .. } = &job.work else {
            bail!("{} is not a job of passes", job.kernel);
        };
        let name = &job.kernel;
        let output = self.gpu.result_buffer()?;
        let single = passes.len() == 1;
        let mut first_pass = Vec::new();
        let mut to_result = Vec::new();
        let mut first: Option<Vec<u8>> = None;
        let mut deterministic = true;
        for run in 0..(timing.warmup + timing.repeat) as usize {
            self.preroll()?;
            self.record(0)?;
            self.gpu
                .run_observed(job, inputs[run % inputs.len()], output, |k| {
                    if k == 0 && !single {
                        self.record(1)
                            .map_err(|e| reduce_rs::Error::Kernels(format!("{e:#}")))?;
                    }
                    Ok(())
                })?;
            self.record(2)?;
            let bits = self.gpu.read_back(output, size_of::<O::Device>()).map_err(|e| {
                anyhow!("kernel `{name}` failed on the GPU: {e} (run the same version with --backend sim to see where)")
            })?;
            match &first {
                None => first = Some(bits),
                Some(first) => deterministic &= *first == bits,
            }
            if run >= timing.warmup as usize {
                let whole = self.elapsed_ms(0, 2)?;
                to_result.push(whole);
                first_pass.push(if single {
                    whole
                } else {
                    self.elapsed_ms(0, 1)?
                });
            }
        }
        let bits = first.ok_or_else(|| anyhow!("no run (warmup + repeat is 0)"))?;
        let value = device_value::<T, O>(&bits);
        Ok(TimedRun {
            value,
            passes: passes.to_vec(),
            first_pass_ms: median(&mut first_pass),
            to_result_ms: median(&mut to_result),
            repeat: timing.repeat,
            deterministic,
        })
    }
}

impl Timer<'_> {
    /// Times the reproducible kernel of `T` × `O` (the library's `with_reproducible(true)`
    /// path, with `reducer`'s block size and grid limit) over `inputs` as [`Timer::reduce`]
    /// does: one launch between two events, every run's bits compared with the first's.
    pub fn reduce_reproducible<T: Element, O: Operation<T>>(
        &self,
        reducer: &Reducer,
        inputs: &[u64],
        len: usize,
        timing: Timing,
    ) -> Result<TimedRun<O::Device>> {
        let output = self.gpu.result_buffer()?;
        let mut times = Vec::new();
        let mut first: Option<Vec<u8>> = None;
        let mut deterministic = true;
        let mut first_launch = None;
        for run in 0..(timing.warmup + timing.repeat) as usize {
            self.preroll()?;
            self.record(0)?;
            let launch =
                reducer.enqueue_reproducible_at::<T, O>(inputs[run % inputs.len()], len, output)?;
            first_launch = Some(launch);
            self.record(2)?;
            let bits = self.gpu.read_back(output, size_of::<O::Device>()).map_err(|e| {
                anyhow!("the reproducible kernel failed on the GPU: {e} (run it with --backend sim to see where)")
            })?;
            match &first {
                None => first = Some(bits),
                Some(first) => deterministic &= *first == bits,
            }
            if run >= timing.warmup as usize {
                times.push(self.elapsed_ms(0, 2)?);
            }
        }
        let bits = first.ok_or_else(|| anyhow!("no run (warmup + repeat is 0)"))?;
        let launch = first_launch.ok_or_else(|| anyhow!("no run"))?;
        let ms = median(&mut times);
        Ok(TimedRun {
            value: device_value::<T, O>(&bits),
            passes: vec![Pass { len, launch }],
            first_pass_ms: ms,
            to_result_ms: ms,
            repeat: timing.repeat,
            deterministic,
        })
    }
}

/// Timed inputs rotate over copies adding up to at least this (over 5× the 50 MB L2 of an
/// H100/H200), so that no run finds its input in the L2 cache; small inputs are also flushed
/// from L2 with a buffer this large (the versions' sweep).
pub const ROTATION_BYTES: usize = 256 << 20;

/// The most copies a rotation makes of a small input.
pub const MAX_COPIES: usize = 64;

/// GPU memory a rotation leaves free (the driver, the loaded module, a peer's process).
pub const ROTATION_MARGIN: usize = 1 << 30;

/// Copies of an input of `bytes` to rotate over: enough to add up to [`ROTATION_BYTES`], at
/// most [`MAX_COPIES`], at least one, and (given the GPU's `free` memory) no more than fit
/// beside [`ROTATION_MARGIN`].
pub fn rotation_copies(bytes: usize, free: Option<usize>) -> usize {
    let bytes = bytes.max(1);
    let wanted = ROTATION_BYTES.div_ceil(bytes).clamp(1, MAX_COPIES);
    match free {
        Some(free) => wanted.min((free.saturating_sub(ROTATION_MARGIN) / bytes).max(1)),
        None => wanted,
    }
}

/// The median of `samples` (NaN for none).
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn rotations_add_up_to_256_mib_within_the_free_memory() {
        assert_eq!(rotation_copies(4 << 20, None), 64);
        assert_eq!(rotation_copies(64 << 20, None), 4);
        assert_eq!(rotation_copies(1 << 30, None), 1);
        assert_eq!(rotation_copies(0, None), 64);
        assert_eq!(
            rotation_copies(64 << 20, Some(ROTATION_MARGIN + (128 << 20))),
            2
        );
        assert_eq!(rotation_copies(64 << 20, Some(0)), 1);
    }
}
