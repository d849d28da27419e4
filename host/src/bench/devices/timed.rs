//! The timed loop of the several-GPU bench, the method of its PyTorch peer
//! (`bench/torch/allreduce_torch.py`), for a group of GPUs in this process or one rank of a
//! world of processes:
//!
//! per run: the call's untimed preparation, a barrier and a synchronize on every rank, a GPU
//! pre-roll ([`PREROLL_NS`] of spinning, twice when one process enqueues on several GPUs), the
//! start event, the call, the end event, then the call's check on the host. Per run the slowest
//! GPU's time counts (`µs`; `µs_min`: the fastest's); the medians over `repeat` runs after
//! `warmup`. Every run is checked on every GPU.
//!
//! The calls, per size `n` per GPU:
//! - `kernel`: the library's kernel (v8) on each GPU's shard alone, no collective;
//! - `allreduce-scalar`: NCCL's all-reduce of one f32, alone;
//! - `sum+allreduce`: `all_reduce(Sum, shards)`: each shard's sum, then that all-reduce;
//! - `argmax+gather`: `all_reduce(ArgMax, shards)`: the shard kernel, an all-gather of the
//!   16-byte partials, the combine kernel.

use super::group::Group;
use super::shards::{DeviceShard, Expected, host_shards};
use super::table::{OURS, Row};
use crate::bench::rows::Check;
use crate::timing::{PREROLL_NS, Timer, Timing, median};
use anyhow::{Context, Result, bail};
use cudarc::driver::{CudaEvent, CudaSlice, CudaView, sys};
use reduce_rs::devices::DeviceResult;
use reduce_rs::ops::Sum;
use reduce_rs::{Arg, Reducer};
use std::time::Instant;

/// Per local GPU: the pre-roll and two events.
struct Clock<'g> {
    timer: Timer<'g>,
    start: CudaEvent,
    end: CudaEvent,
}

/// The clocks of this process's GPUs, and how many pre-rolls each run starts with.
pub struct Clocks<'g> {
    clocks: Vec<Clock<'g>>,
    prerolls: u32,
}

impl<'g> Clocks<'g> {
    pub fn new(group: &'g Group) -> Result<Clocks<'g>> {
        let clocks = (0..group.locals())
            .map(|k| {
                let gpu = group.gpu(k)?;
                let event = || {
                    gpu.context()
                        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                        .context("creating a timing event")
                };
                Ok(Clock {
                    timer: Timer::new(gpu)?,
                    start: event()?,
                    end: event()?,
                })
            })
            .collect::<Result<_>>()?;
        // One process enqueueing every GPU's work needs longer than one pre-roll.
        let prerolls = if group.locals() > 1 { 2 } else { 1 };
        Ok(Clocks { clocks, prerolls })
    }

    /// The GPU time each run starts with (ns): enqueueing a run must take less.
    pub fn preroll_ns(&self) -> u64 {
        u64::from(self.prerolls) * PREROLL_NS
    }
}

/// One measured call: enqueued on every local GPU each run, then checked.
trait Call {
    /// Untimed, before the run's barrier (an all-reduce in place resets its input here).
    fn prepare(&mut self, _run: usize) -> Result<()> {
        Ok(())
    }
    /// Enqueues run `run` on every local GPU (between the events).
    fn enqueue(&mut self, run: usize) -> Result<()>;
    /// After the end events: why the run's result is wrong, if it is.
    fn check(&mut self) -> Result<Option<String>>;
}

/// What a call's loop found on this process's GPUs.
pub struct Found {
    /// Per local GPU, per timed run (ms).
    pub times: Vec<Vec<f64>>,
    pub late: usize,
    pub wrong: usize,
    pub first_wrong: Option<String>,
}

impl Found {
    /// Nothing timed: the outcome of untimed checks (simulated ranks).
    pub fn untimed(locals: usize, wrong: Option<String>) -> Found {
        Found {
            times: vec![Vec::new(); locals],
            late: 0,
            wrong: usize::from(wrong.is_some()),
            first_wrong: wrong,
        }
    }
}

/// `warmup + repeat` runs of `call`.
fn timed(
    group: &Group,
    clocks: &Clocks<'_>,
    timing: Timing,
    call: &mut impl Call,
) -> Result<Found> {
    let streams: Vec<_> = (0..group.locals())
        .map(|k| group.stream(k))
        .collect::<Result<_>>()?;
    let mut found = Found::untimed(group.locals(), None);
    let warmup = timing.warmup as usize;
    for run in 0..warmup + timing.repeat as usize {
        call.prepare(run)?;
        group.barrier()?;
        let began = Instant::now();
        for (clock, stream) in clocks.clocks.iter().zip(&streams) {
            for _ in 0..clocks.prerolls {
                clock.timer.preroll()?;
            }
            clock
                .start
                .record(stream)
                .context("recording a timing event")?;
        }
        call.enqueue(run)?;
        for (clock, stream) in clocks.clocks.iter().zip(&streams) {
            clock
                .end
                .record(stream)
                .context("recording a timing event")?;
        }
        let enqueued = began.elapsed();
        for clock in &clocks.clocks {
            clock.end.synchronize().context("waiting for a timed run")?;
        }
        if let Some(message) = call.check()? {
            found.wrong += 1;
            found
                .first_wrong
                .get_or_insert(format!("run {run}: {message}"));
        }
        if run >= warmup {
            for (k, clock) in clocks.clocks.iter().enumerate() {
                let ms = clock
                    .start
                    .elapsed_ms(&clock.end)
                    .context("reading a timing event")?;
                found.times[k].push(f64::from(ms));
            }
            if enqueued.as_nanos() >= u128::from(clocks.preroll_ns()) {
                found.late += 1;
            }
        }
    }
    Ok(found)
}

/// A call's row from every GPU's runs, on every rank (so every rank knows whether the bench
/// passed); a wrong result is also a line on stderr from the rank that saw it.
pub fn report(group: &Group, op: &str, n: usize, bytes: usize, found: Found) -> Result<Row> {
    if let Some(first) = &found.first_wrong {
        eprintln!(
            "FAIL rank {} {op} per_gpu={n}: {} run(s) wrong; first: {first}",
            group.first_rank(),
            found.wrong
        );
    }
    let runs = found.times.first().map_or(0, Vec::len);
    let mine: Vec<Vec<f64>> = found
        .times
        .iter()
        .map(|times| {
            let mut row = times.clone();
            row.extend([found.late as f64, found.wrong as f64]);
            row
        })
        .collect();
    let all = group.gather(mine)?;
    if all.iter().any(|r| r.len() != runs + 2) {
        bail!("{op}: the ranks timed different numbers of runs");
    }
    let slowest = |k: usize| all.iter().map(|r| r[k]).fold(f64::MIN, f64::max);
    let fastest = |k: usize| all.iter().map(|r| r[k]).fold(f64::MAX, f64::min);
    let (mut slow, mut fast): (Vec<f64>, Vec<f64>) =
        (0..runs).map(|k| (slowest(k), fastest(k))).unzip();
    // Every process counted its late runs once, over all its GPUs.
    let late: f64 = all.iter().step_by(group.locals()).map(|r| r[runs]).sum();
    let wrong: f64 = all.iter().map(|r| r[runs + 1]).sum();
    let timed = runs > 0;
    Ok(Row {
        implementation: OURS.into(),
        op: op.into(),
        gpus: group.world(),
        per_gpu: n,
        bytes,
        us: timed.then(|| median(&mut slow) * 1000.0),
        us_min: timed.then(|| median(&mut fast) * 1000.0),
        late: timed.then_some(late as usize),
        check: Check::of(wrong == 0.0),
    })
}

/// The header lines of a timed bench (printed by rank 0).
pub fn describe(group: &Group, clocks: &Clocks<'_>, timing: Timing) -> Result<String> {
    Ok(format!(
        "{} × {}, {}, NCCL_NVLS_ENABLE={}\n\
         per run: barrier + synchronize, {} µs GPU pre-roll, two CUDA events around the call; \
         {} warm-up + {} timed runs; µs: median of the slowest GPU's time, µs_min: of the fastest's",
        group.world(),
        group.gpu(0)?.info().name,
        group.link(),
        std::env::var("NCCL_NVLS_ENABLE").unwrap_or_default(),
        clocks.preroll_ns() / 1000,
        timing.warmup,
        timing.repeat
    ))
}

/// The four calls at `n` elements per GPU: their rows (on every rank).
pub fn measure(group: &Group, clocks: &Clocks<'_>, timing: Timing, n: usize) -> Result<Vec<Row>> {
    let world = group.world();
    let hosts = host_shards(group, n);
    let expected = Expected::gather(group, &hosts)?;
    let shards: Vec<DeviceShard> = hosts
        .iter()
        .enumerate()
        .map(|(k, h)| DeviceShard::new(group.stream(k)?, &h.data))
        .collect::<Result<_>>()?;
    drop(hosts);
    let outputs = || -> Result<Vec<CudaSlice<f32>>> {
        (0..group.locals())
            .map(|k| Ok(group.stream(k)?.alloc_zeros::<f32>(1)?))
            .collect()
    };
    let bytes = n * world * 4;
    let mut rows = Vec::new();
    let mut kernel = Kernel {
        group,
        shards: &shards,
        outputs: outputs()?,
        expected: &expected,
    };
    let found = timed(group, clocks, timing, &mut kernel)?;
    rows.push(report(group, "kernel", n, n * 4, found)?);
    let mut scalar = Scalar {
        group,
        buffers: outputs()?,
        want: (world * (world + 1) / 2) as f32,
    };
    let found = timed(group, clocks, timing, &mut scalar)?;
    rows.push(report(group, "allreduce-scalar", n, 0, found)?);
    let mut sum = AllReduceSum {
        group,
        shards: &shards,
        results: Vec::new(),
        expected: &expected,
    };
    let found = timed(group, clocks, timing, &mut sum)?;
    rows.push(report(group, "sum+allreduce", n, bytes, found)?);
    let mut argmax = ArgMaxGather {
        group,
        shards: &shards,
        results: Vec::new(),
        expected: &expected,
    };
    let found = timed(group, clocks, timing, &mut argmax)?;
    rows.push(report(group, "argmax+gather", n, bytes, found)?);
    Ok(rows)
}

fn views(shards: &[DeviceShard], run: usize) -> Vec<CudaView<'_, f32>> {
    shards.iter().map(|s| s.copy(run)).collect()
}

/// The library's kernel on each local GPU's shard, into a buffer on that GPU.
struct Kernel<'a> {
    group: &'a Group,
    shards: &'a [DeviceShard],
    outputs: Vec<CudaSlice<f32>>,
    expected: &'a Expected,
}

impl Call for Kernel<'_> {
    fn enqueue(&mut self, run: usize) -> Result<()> {
        let inputs = views(self.shards, run);
        for (k, (input, output)) in inputs.iter().zip(&mut self.outputs).enumerate() {
            let reducer: &Reducer = self.group.reducer(k);
            reducer.reduce_into(Sum, input, output)?;
        }
        Ok(())
    }

    fn check(&mut self) -> Result<Option<String>> {
        for (k, output) in self.outputs.iter().enumerate() {
            let got = self.group.stream(k)?.clone_dtoh(output)?[0];
            if let Some(wrong) = self.expected.shard_sum(k, got) {
                return Ok(Some(wrong));
            }
        }
        Ok(None)
    }
}

/// NCCL's all-reduce of one f32 per local GPU (rank `r` contributes `r + 1`), in place.
struct Scalar<'a> {
    group: &'a Group,
    buffers: Vec<CudaSlice<f32>>,
    want: f32,
}

impl Call for Scalar<'_> {
    fn prepare(&mut self, _run: usize) -> Result<()> {
        for (k, buffer) in self.buffers.iter_mut().enumerate() {
            let value = (self.group.first_rank() + k + 1) as f32;
            self.group.stream(k)?.memcpy_htod(&[value][..], buffer)?;
        }
        Ok(())
    }

    fn enqueue(&mut self, _run: usize) -> Result<()> {
        self.group.scalar_all_reduce(&mut self.buffers)
    }

    fn check(&mut self) -> Result<Option<String>> {
        for (k, buffer) in self.buffers.iter().enumerate() {
            let got = self.group.stream(k)?.clone_dtoh(buffer)?[0];
            if got != self.want {
                return Ok(Some(format!("{got}, expected {}", self.want)));
            }
        }
        Ok(None)
    }
}

/// The library's sum over every GPU, on every GPU.
struct AllReduceSum<'a> {
    group: &'a Group,
    shards: &'a [DeviceShard],
    results: Vec<DeviceResult<f32>>,
    expected: &'a Expected,
}

impl Call for AllReduceSum<'_> {
    fn enqueue(&mut self, run: usize) -> Result<()> {
        self.results = self.group.sum(&views(self.shards, run))?;
        Ok(())
    }

    fn check(&mut self) -> Result<Option<String>> {
        for result in &self.results {
            if let Some(wrong) = self.expected.sum(result.read()?) {
                return Ok(Some(wrong));
            }
        }
        Ok(None)
    }
}

/// The library's argmax over every GPU, on every GPU.
struct ArgMaxGather<'a> {
    group: &'a Group,
    shards: &'a [DeviceShard],
    results: Vec<DeviceResult<Arg<f32>>>,
    expected: &'a Expected,
}

impl Call for ArgMaxGather<'_> {
    fn enqueue(&mut self, run: usize) -> Result<()> {
        self.results = self.group.argmax(&views(self.shards, run))?;
        Ok(())
    }

    fn check(&mut self) -> Result<Option<String>> {
        for result in &self.results {
            let got = result.read()?;
            if let Some(wrong) = self.expected.argmax(got.index, got.value) {
                return Ok(Some(wrong));
            }
        }
        Ok(None)
    }
}
