//! `--devices all|N`: one input split evenly over several GPUs (or simulated devices), reduced
//! by the library's group (`reduce_rs::devices::Devices`), checked against the CPU reference
//! and, on GPUs, timed.

use crate::element::HostElement;
use crate::reference::{Checked, Verdict};
use crate::run::BackendChoice;
use crate::timing::{Timer, Timing, median, rotation_copies};
use anyhow::{Context, Result, bail};
use cudarc::driver::{CudaEvent, sys};
use reduce_rs::devices::{Devices, Shard, even_split, nccl_available};
use reduce_rs::plan::{self, Sizes};
use reduce_rs::{GpuUnavailable, SIM_MULTIPROCESSORS, Schedule, Version, gpu_available};

/// How many devices `--devices` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceCount {
    /// Every GPU (2 simulated devices without a GPU).
    All,
    Count(usize),
}

/// `all` or a whole number from 1.
pub fn parse_devices(text: &str) -> Result<DeviceCount, String> {
    let word = text.trim();
    if word.eq_ignore_ascii_case("all") {
        return Ok(DeviceCount::All);
    }
    match word.parse::<usize>() {
        Ok(0) => Err("--devices must be at least 1 (or `all`)".into()),
        Ok(count) => Ok(DeviceCount::Count(count)),
        Err(_) => Err(format!(
            "`{text}` is not a device count: `all` or a whole number from 1"
        )),
    }
}

/// Simulated devices for `--devices all` without a GPU.
const SIMULATED_ALL: usize = 2;

/// How many GPUs `count` asks for on a machine with `available`: refused where the machine
/// has fewer, or where several need NCCL and it cannot be loaded.
pub fn gpus_for(count: DeviceCount, available: usize) -> Result<usize> {
    let n = match count {
        DeviceCount::All => available,
        DeviceCount::Count(n) if n > available => {
            bail!("--devices {n}: this machine has {available} GPU(s)")
        }
        DeviceCount::Count(n) => n,
    };
    if n > 1
        && let Err(why) = nccl_available()
    {
        bail!("--devices {n} needs NCCL between the GPUs: {why}");
    }
    Ok(n)
}

/// The group `--backend` and `--devices` ask for, and a note when it is simulated for want of
/// a GPU.
pub fn open_devices(
    backend: BackendChoice,
    count: DeviceCount,
    schedule: Schedule,
) -> Result<(Devices, Option<String>)> {
    let simulated = |why: Option<String>| {
        let n = match count {
            DeviceCount::All => SIMULATED_ALL,
            DeviceCount::Count(n) => n,
        };
        Ok((Devices::simulated_with(n, schedule), why))
    };
    let gpus = |available: usize| -> Result<(Devices, Option<String>)> {
        let n = gpus_for(count, available)?;
        let devices = Devices::new(&(0..n).collect::<Vec<_>>())
            .with_context(|| format!("opening {n} GPU(s) with NCCL"))?;
        Ok((devices, None))
    };
    match backend {
        BackendChoice::Sim => simulated(None),
        BackendChoice::Gpu => gpus(gpu_available()?),
        BackendChoice::Auto => match gpu_available() {
            Ok(available) => gpus(available),
            Err(why @ (GpuUnavailable::NoDriver | GpuUnavailable::NoDevice)) => {
                simulated(Some(why.to_string()))
            }
            Err(other) => Err(reduce_rs::Error::from(other).into()),
        },
    }
}

/// One line about the split: `2^25 elements over 2 GPUs: 16777216 + 16777216 (even pieces, in order), NCCL …`.
pub fn split_line(devices: &Devices, len: usize) -> String {
    let pieces: Vec<String> = even_split(len, devices.len())
        .iter()
        .map(|r| r.len().to_string())
        .collect();
    let what = if devices.is_simulated() {
        "simulated devices"
    } else {
        "GPUs"
    };
    let link = match devices.nccl_version() {
        Some(nccl) => format!(", {nccl}"),
        None if devices.is_simulated() => ", in-process exchange (no NCCL)".to_string(),
        None => String::new(),
    };
    format!(
        "split    {len} elements over {} {what}: {} (even pieces, in order){link}",
        devices.len(),
        pieces.join(" + ")
    )
}

/// What a group run measured.
#[derive(Clone, Debug)]
pub struct GroupRun {
    pub verdict: Verdict,
    /// Every device held the same bits.
    pub same_everywhere: bool,
    /// GPUs: median over runs of the slowest and of the fastest GPU's time (ms).
    pub ms: Option<(f64, f64)>,
}

/// Reduces `input` split evenly over `devices` with `O`, checks it against `expected`, and on
/// GPUs times `repeat` runs after `warmup` (per run: every GPU's pre-roll, two events on each,
/// the slowest GPU's time).
pub fn reduce_split<T: HostElement, O: Checked<T> + Default>(
    devices: &Devices,
    input: &[T],
    expected: &O::Expected,
    timing: Timing,
) -> Result<GroupRun> {
    let pieces = even_split(input.len(), devices.len());
    // The float error bound: one device's launch over the largest piece (on a small simulated
    // GPU, so at least as many additions as any GPU makes), plus one per device.
    let largest = pieces.iter().map(|r| r.len()).max().unwrap_or(0);
    let version = Version::fastest();
    let block = version.tuned_block(largest);
    let resident = plan::resident_blocks(SIM_MULTIPROCESSORS, block);
    let passes = plan::passes(version, largest, block, Sizes::of::<T, O>(), resident)?;
    let additions = plan::additions_per_element(version, &passes) + devices.len() as u64;
    if devices.is_simulated() {
        let shards: Vec<&[T]> = pieces.iter().map(|r| &input[r.clone()]).collect();
        let got = devices.reduce(O::default(), &shards)?;
        let mut same_everywhere = true;
        if !input.is_empty() {
            let results = devices.all_reduce(O::default(), &shards)?;
            let first = results[0].read()?;
            for result in &results {
                same_everywhere &= format!("{:?}", result.read()?) == format!("{first:?}");
            }
        }
        return Ok(GroupRun {
            verdict: O::check(got, expected, additions),
            same_everywhere,
            ms: None,
        });
    }
    // Copies of the shards adding up to at least ROTATION_BYTES per GPU, read in turn, so that
    // no run finds its input in the L2 cache.
    let copies = rotation_copies(largest * size_of::<T>(), None);
    let copies: Vec<Vec<Shard<T>>> = (0..copies)
        .map(|_| devices.scatter(input))
        .collect::<reduce_rs::Result<_>>()?;
    let shards = &copies[0];
    if input.is_empty() {
        let got = devices.reduce(O::default(), shards)?;
        return Ok(GroupRun {
            verdict: O::check(got, expected, additions),
            same_everywhere: true,
            ms: None,
        });
    }
    let timers: Vec<Timer<'_>> = (0..devices.len())
        .map(|k| Timer::new(devices.reducer(k).gpu_backend().expect("a GPU")))
        .collect::<Result<_>>()?;
    let event = |k: usize| -> Result<CudaEvent> {
        let gpu = devices.reducer(k).gpu_backend().expect("a GPU");
        gpu.context()
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .context("creating a timing event")
    };
    let events: Vec<(CudaEvent, CudaEvent)> = (0..devices.len())
        .map(|k| Ok((event(k)?, event(k)?)))
        .collect::<Result<_>>()?;
    let (mut slowest, mut fastest) = (Vec::new(), Vec::new());
    let mut first: Option<String> = None;
    let mut got = None;
    let mut same_everywhere = true;
    for run in 0..(timing.warmup + timing.repeat).max(1) {
        for k in 0..devices.len() {
            devices.stream(k).expect("a GPU").synchronize()?;
        }
        for (k, timer) in timers.iter().enumerate() {
            // Two pre-rolls: one process enqueues every GPU's work.
            timer.preroll()?;
            timer.preroll()?;
            events[k].0.record(devices.stream(k).expect("a GPU"))?;
        }
        let results = devices.all_reduce(O::default(), &copies[run as usize % copies.len()])?;
        for (k, (_, end)) in events.iter().enumerate() {
            end.record(devices.stream(k).expect("a GPU"))?;
        }
        let values: Vec<_> = results
            .iter()
            .map(|r| r.read())
            .collect::<reduce_rs::Result<_>>()?;
        let bits = format!("{:?}", values[0]);
        same_everywhere &= values.iter().all(|v| format!("{v:?}") == bits);
        match &first {
            None => {
                first = Some(bits);
                got = Some(O::output(values[0]));
            }
            Some(first) => same_everywhere &= *first == bits,
        }
        if run >= timing.warmup {
            let times: Vec<f64> = events
                .iter()
                .map(|(start, end)| start.elapsed_ms(end).map(f64::from))
                .collect::<Result<_, _>>()?;
            slowest.push(times.iter().copied().fold(f64::MIN, f64::max));
            fastest.push(times.iter().copied().fold(f64::MAX, f64::min));
        }
    }
    let got = got.context("no run")?;
    Ok(GroupRun {
        verdict: O::check(got, expected, additions),
        same_everywhere,
        ms: (!slowest.is_empty()).then(|| (median(&mut slowest), median(&mut fastest))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_counts_parse() {
        assert_eq!(parse_devices("ALL"), Ok(DeviceCount::All));
        assert_eq!(parse_devices("3"), Ok(DeviceCount::Count(3)));
        assert!(parse_devices("0").is_err());
        assert!(parse_devices("-1").is_err());
        assert!(parse_devices("two").is_err());
    }
}
