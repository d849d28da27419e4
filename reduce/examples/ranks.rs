//! Several GPUs, timed: an f32 sum over every GPU's shard, the figures of the README's
//! "Several GPUs" table, with the method of `bench/torch/allreduce_torch.py` (its peer).
//!
//! One process per GPU (the default): launch one per GPU, with torchrun-style variables and a
//! file for NCCL's unique id:
//!
//! ```text
//! RANK=0 WORLD_SIZE=2 REDUCE_NCCL_ID_FILE=/tmp/reduce-id-$$ ranks &
//! RANK=1 WORLD_SIZE=2 REDUCE_NCCL_ID_FILE=/tmp/reduce-id-$$ ranks; wait
//! ```
//!
//! One process driving every GPU: `ranks --single [--gpus N]`. Without a GPU:
//! `ranks --simulate N` runs the same checks on N simulated ranks (threads), untimed.
//!
//! Rank `r` holds elements `[r·n, (r+1)·n)` of one global array (element `i`: splitmix64(i)
//! made uniform in [-1, 1), as the peers make it). Timed, per size `n` per GPU:
//! - `kernel`: the library's kernel (v8) on the shard alone, no collective;
//! - `allreduce-scalar`: NCCL's all-reduce of one f32, alone (called directly);
//! - `sum+allreduce`: `Rank::all_reduce(Sum, shard)`: the shard's sum, then that all-reduce;
//! - `argmax+gather`: `Rank::all_reduce(ArgMax, shard)`: the shard kernel, an all-gather of
//!   the 16-byte partials, the combine kernel.
//!
//! Each run: a barrier and a synchronize on every rank, a GPU pre-roll (a kernel spinning
//! `--preroll-us`), the start event, the call, the end event. Per run the slowest GPU's time
//! counts (`ms`; `ms_min` is the fastest's); the median over `--repeat` runs after `--warmup`.
//! Every run is checked: sums within `n·2^-23·Σ|x|` of the float64 sum of every shard, the
//! scalar exactly, the argmax exactly (the first global index of the largest value).

use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, CudaView, LaunchConfig, PushKernelArg, sys,
};
use reduce_rs::devices::{DeviceResult, Devices, Rank};
use reduce_rs::ops::{ArgMax, Sum};
use reduce_rs::{Arg, Reducer};
use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

/// Inputs rotate over copies adding up to at least this, so the L2 never holds the next one.
const ROTATE_BYTES: usize = 256 << 20;

struct Args {
    per_gpu: Vec<usize>,
    repeat: usize,
    warmup: usize,
    preroll_ns: u64,
    single: bool,
    gpus: Option<usize>,
    simulate: Option<usize>,
}

fn parse_size(text: &str) -> Result<usize> {
    let text = text.trim();
    Ok(match text.split_once('^') {
        Some((base, exp)) => base.parse::<usize>()?.pow(exp.parse()?),
        None => text.parse()?,
    })
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        per_gpu: vec![1 << 24, 1 << 28, 1 << 30],
        repeat: 20,
        warmup: 3,
        preroll_ns: 50_000,
        single: false,
        gpus: None,
        simulate: None,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let mut value = || given.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--per-gpu" => {
                args.per_gpu = value()?.split(',').map(parse_size).collect::<Result<_>>()?
            }
            "--repeat" => args.repeat = value()?.parse()?,
            "--warmup" => args.warmup = value()?.parse()?,
            "--preroll-us" => args.preroll_ns = (value()?.parse::<f64>()? * 1000.0) as u64,
            "--single" => args.single = true,
            "--gpus" => args.gpus = Some(value()?.parse()?),
            "--simulate" => args.simulate = Some(value()?.parse()?),
            "-h" | "--help" => {
                println!(
                    "ranks [--per-gpu 2^24,2^28,2^30] [--repeat 20] [--warmup 3] [--preroll-us 50] [--single [--gpus N]] [--simulate N]\n\
                     one process per GPU: RANK=r WORLD_SIZE=w REDUCE_NCCL_ID_FILE=/tmp/id ranks (one per GPU)"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other} (see --help)").into()),
        }
    }
    if args.repeat == 0 || args.per_gpu.contains(&0) {
        return Err("--repeat and every --per-gpu size must be at least 1".into());
    }
    Ok(args)
}

/// Element `i` of the global array: uniform in [-1, 1), exact in f32 (the peers' generator).
fn element(i: u64) -> f32 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    let h = z ^ (z >> 31);
    (((h >> 40) as i64 - (1 << 23)) as f64 * (-23f64).exp2()) as f32
}

/// A shard on the host: its elements, float64 `Σx`, `Σ|x|`, and its first largest element.
struct HostShard {
    data: Vec<f32>,
    sum: f64,
    abs: f64,
    best: (u64, f32),
}

fn host_shard(first: u64, n: usize) -> HostShard {
    let data: Vec<f32> = (0..n as u64).map(|i| element(first + i)).collect();
    let (mut sum, mut comp, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    let mut best = (u64::MAX, f32::NEG_INFINITY);
    for (i, &x) in data.iter().enumerate() {
        let x64 = f64::from(x);
        let t = sum + x64;
        comp += if sum.abs() >= x64.abs() {
            (sum - t) + x64
        } else {
            (x64 - t) + sum
        };
        sum = t;
        abs += x64.abs();
        if x > best.1 {
            best = (first + i as u64, x);
        }
    }
    HostShard {
        data,
        sum: sum + comp,
        abs,
        best,
    }
}

/// The shard's copies on one GPU, `stride` elements apart.
struct DeviceShard {
    buffer: CudaSlice<f32>,
    n: usize,
    stride: usize,
    copies: usize,
}

impl DeviceShard {
    fn new(stream: &Arc<CudaStream>, host: &[f32]) -> Result<DeviceShard> {
        let n = host.len();
        let stride = (n * 4).div_ceil(256) * 256 / 4;
        let (free, _) = stream.context().mem_get_info()?;
        let mut copies = ROTATE_BYTES.div_ceil((stride * 4).max(1)).max(1);
        copies = copies.min((free / 10 * 6 / (stride * 4).max(1)).max(1));
        let mut buffer = stream.alloc_zeros::<f32>(copies * stride.max(1))?;
        for k in 0..copies {
            let mut view = buffer.slice_mut(k * stride..k * stride + n);
            stream.memcpy_htod(host, &mut view)?;
        }
        stream.synchronize()?;
        Ok(DeviceShard {
            buffer,
            n,
            stride,
            copies,
        })
    }

    fn copy(&self, run: usize) -> CudaView<'_, f32> {
        let k = run % self.copies;
        self.buffer.slice(k * self.stride..k * self.stride + self.n)
    }
}

/// The GPUs this process drives, and how they meet the others.
enum Group {
    Rank(Rank),
    Single(Devices),
}

impl Group {
    fn locals(&self) -> usize {
        match self {
            Group::Rank(_) => 1,
            Group::Single(devices) => devices.len(),
        }
    }

    fn world(&self) -> usize {
        match self {
            Group::Rank(rank) => rank.world_size(),
            Group::Single(devices) => devices.len(),
        }
    }

    fn first_rank(&self) -> usize {
        match self {
            Group::Rank(rank) => rank.rank(),
            Group::Single(_) => 0,
        }
    }

    fn reducer(&self, k: usize) -> &Reducer {
        match self {
            Group::Rank(rank) => rank.reducer(),
            Group::Single(devices) => devices.reducer(k),
        }
    }

    fn stream(&self, k: usize) -> Arc<CudaStream> {
        self.reducer(k).stream().expect("a GPU").clone()
    }

    fn nccl(&self) -> String {
        match self {
            Group::Rank(rank) => rank.nccl_version(),
            Group::Single(devices) => devices.nccl_version(),
        }
        .unwrap_or_else(|| "no NCCL (one GPU)".into())
    }

    /// Every rank has reached this point and its GPUs are idle.
    fn barrier(&self) -> Result<()> {
        if let Group::Rank(rank) = self {
            rank.exchange_host(&[0])?;
        }
        for k in 0..self.locals() {
            self.stream(k).synchronize()?;
        }
        Ok(())
    }

    /// Every GPU's `values` (this process's, one list per local GPU, all the same length), in
    /// rank order.
    fn gather(&self, values: Vec<Vec<f64>>) -> Result<Vec<Vec<f64>>> {
        match self {
            Group::Single(_) => Ok(values),
            Group::Rank(rank) => {
                let bytes: Vec<u8> = values[0].iter().flat_map(|v| v.to_le_bytes()).collect();
                let all = rank.exchange_host(&bytes)?;
                Ok(all
                    .iter()
                    .map(|b| {
                        b.chunks(8)
                            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                            .collect()
                    })
                    .collect())
            }
        }
    }

    fn sum(&self, shards: &[CudaView<'_, f32>]) -> Result<Vec<DeviceResult<f32>>> {
        Ok(match self {
            Group::Rank(rank) => vec![rank.all_reduce(Sum, &shards[0])?],
            Group::Single(devices) => devices.all_reduce(Sum, shards)?,
        })
    }

    fn argmax(&self, shards: &[CudaView<'_, f32>]) -> Result<Vec<DeviceResult<Arg<f32>>>> {
        Ok(match self {
            Group::Rank(rank) => vec![rank.all_reduce(ArgMax, &shards[0])?],
            Group::Single(devices) => devices.all_reduce(ArgMax, shards)?,
        })
    }

    fn scalar_all_reduce(&self, buffers: &mut [CudaSlice<f32>]) -> Result<()> {
        match self {
            Group::Rank(rank) => rank.raw_all_reduce_f32(&mut buffers[0])?,
            Group::Single(devices) => devices.raw_all_reduce_f32(buffers)?,
        }
        Ok(())
    }
}

/// Per local GPU: the pre-roll kernel and two events.
struct Clock {
    spin: CudaFunction,
    start: CudaEvent,
    end: CudaEvent,
}

impl Clock {
    fn new(reducer: &Reducer) -> Result<Clock> {
        let gpu = reducer.gpu_backend().expect("a GPU");
        let (spin, _) = gpu.kernel("spin_ns", 1, 0)?;
        let event = || {
            gpu.context()
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        };
        Ok(Clock {
            spin,
            start: event()?,
            end: event()?,
        })
    }

    fn preroll(&self, stream: &Arc<CudaStream>, ns: u64) -> Result<()> {
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args = stream.launch_builder(&self.spin);
        args.arg(&ns);
        // SAFETY: `spin_ns(nanoseconds: u64)` takes this one argument and touches no memory.
        unsafe { args.launch(config) }?;
        Ok(())
    }
}

/// What one op's timed loop found on this process's GPUs.
struct Timed {
    /// Per local GPU, per timed run (ms).
    times: Vec<Vec<f64>>,
    late: usize,
    wrong: usize,
    first_wrong: Option<String>,
}

/// `warmup + repeat` runs of `call` (which enqueues one run on every local GPU), each checked
/// by `check` after the end events.
fn timed(
    group: &Group,
    clocks: &[Clock],
    args: &Args,
    mut call: impl FnMut(usize) -> Result<()>,
    mut check: impl FnMut(usize) -> Result<Option<String>>,
) -> Result<Timed> {
    let locals = group.locals();
    let streams: Vec<_> = (0..locals).map(|k| group.stream(k)).collect();
    let mut timed = Timed {
        times: vec![Vec::new(); locals],
        late: 0,
        wrong: 0,
        first_wrong: None,
    };
    for run in 0..args.warmup + args.repeat {
        group.barrier()?;
        let began = Instant::now();
        for (clock, stream) in clocks.iter().zip(&streams) {
            clock.preroll(stream, args.preroll_ns)?;
            clock.start.record(stream)?;
        }
        call(run)?;
        for (clock, stream) in clocks.iter().zip(&streams) {
            clock.end.record(stream)?;
        }
        let enqueued = began.elapsed();
        for clock in clocks {
            clock.end.synchronize()?;
        }
        if let Some(message) = check(run)? {
            timed.wrong += 1;
            timed.first_wrong.get_or_insert(message);
        }
        if run >= args.warmup {
            for (k, clock) in clocks.iter().enumerate() {
                timed.times[k].push(f64::from(clock.start.elapsed_ms(&clock.end)?));
            }
            if enqueued.as_nanos() >= u128::from(args.preroll_ns) {
                timed.late += 1;
            }
        }
    }
    Ok(timed)
}

/// `|got - want| <= tolerance`, false for a NaN.
fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Gathers an op's timings from every rank; rank 0 prints its row. `Ok(false)` if a check failed.
fn report(group: &Group, op: &str, n: usize, bytes: usize, timed: Timed) -> Result<bool> {
    if let Some(first) = &timed.first_wrong {
        eprintln!(
            "FAIL rank {} {op} per_gpu={n}: {} runs wrong; first: {first}",
            group.first_rank(),
            timed.wrong
        );
    }
    let runs = timed.times[0].len();
    let rows: Vec<Vec<f64>> = timed
        .times
        .iter()
        .map(|times| {
            let mut row = times.clone();
            row.push(timed.late as f64);
            row.push(timed.wrong as f64);
            row
        })
        .collect();
    let all = group.gather(rows)?;
    let wrong: f64 = all.iter().map(|r| r[runs + 1]).sum();
    if group.first_rank() == 0 {
        let slowest: Vec<f64> = (0..runs)
            .map(|k| all.iter().map(|r| r[k]).fold(f64::MIN, f64::max))
            .collect();
        let fastest: Vec<f64> = (0..runs)
            .map(|k| all.iter().map(|r| r[k]).fold(f64::MAX, f64::min))
            .collect();
        let late: f64 = all.iter().map(|r| r[runs]).sum();
        let (ms, ms_min) = (median(slowest), median(fastest));
        let world = group.world();
        println!(
            "{op:<17} {world:>4} {n:>11} {:>12} {:>10.1} {:>10.1} {:>9.1} {:>4} {}",
            n * world,
            ms * 1000.0,
            ms_min * 1000.0,
            bytes as f64 / (ms * 1e6),
            late as usize,
            if wrong > 0.0 { "FAIL" } else { "PASS" }
        );
    }
    Ok(wrong == 0.0)
}

fn run_size(group: &Group, clocks: &[Clock], args: &Args, n: usize) -> Result<bool> {
    let locals = group.locals();
    let world = group.world();
    let hosts: Vec<HostShard> = (0..locals)
        .map(|k| host_shard(((group.first_rank() + k) * n) as u64, n))
        .collect();
    // Every GPU's (sum, Σ|x|, best index, best value), for the global expectations.
    let mine: Vec<Vec<f64>> = hosts
        .iter()
        .map(|h| vec![h.sum, h.abs, h.best.0 as f64, f64::from(h.best.1)])
        .collect();
    let all = group.gather(mine)?;
    let want: f64 = all.iter().map(|r| r[0]).sum();
    let abs: f64 = all.iter().map(|r| r[1]).sum();
    let tolerance = ((n * world) as f64 * (-23f64).exp2() + 4.0 * (-53f64).exp2()) * abs;
    // The first largest: the largest value, then the smallest index (ranks are in order).
    let best = all.iter().filter(|r| r[2] != u64::MAX as f64).fold(
        (u64::MAX, f32::NEG_INFINITY),
        |best, r| {
            let (index, value) = (r[2] as u64, r[3] as f32);
            if value > best.1 || (value == best.1 && index < best.0) {
                (index, value)
            } else {
                best
            }
        },
    );
    let local: Vec<(f64, f64)> = hosts.iter().map(|h| (h.sum, h.abs)).collect();
    let shards: Vec<DeviceShard> = hosts
        .iter()
        .enumerate()
        .map(|(k, h)| DeviceShard::new(&group.stream(k), &h.data))
        .collect::<Result<_>>()?;
    drop(hosts);
    let views =
        |run: usize| -> Vec<CudaView<'_, f32>> { shards.iter().map(|s| s.copy(run)).collect() };
    let mut pass = true;
    let bytes = n * world * 4;

    // The kernel alone, on every local GPU.
    let outs: Vec<CudaSlice<f32>> = (0..locals)
        .map(|k| group.stream(k).alloc_zeros::<f32>(1))
        .collect::<std::result::Result<_, _>>()?;
    let outs = std::cell::RefCell::new(outs);
    let timing = timed(
        group,
        clocks,
        args,
        |run| {
            let inputs = views(run);
            for (k, out) in outs.borrow_mut().iter_mut().enumerate() {
                group.reducer(k).reduce_into(Sum, &inputs[k], out)?;
            }
            Ok(())
        },
        |run| {
            for (k, out) in outs.borrow().iter().enumerate() {
                let got = f64::from(group.stream(k).clone_dtoh(out)?[0]);
                let (want, abs) = local[k];
                let tolerance = (n as f64 * (-23f64).exp2()) * abs;
                if !within(got, want, tolerance) {
                    return Ok(Some(format!(
                        "run {run}: shard sum {got}, expected {want} within {tolerance:.3e}"
                    )));
                }
            }
            Ok(None)
        },
    )?;
    pass &= report(group, "kernel", n, bytes / world, timing)?;

    // NCCL's all-reduce of one scalar, alone.
    let mut scalars: Vec<CudaSlice<f32>> = (0..locals)
        .map(|k| group.stream(k).alloc_zeros::<f32>(1))
        .collect::<std::result::Result<_, _>>()?;
    let want_scalar = (world * (world + 1) / 2) as f32;
    let timing = {
        let scalars = std::cell::RefCell::new(&mut scalars);
        timed(
            group,
            clocks,
            args,
            |_| {
                let mut scalars = scalars.borrow_mut();
                for (k, scalar) in scalars.iter_mut().enumerate() {
                    let value = (group.first_rank() + k + 1) as f32;
                    group.stream(k).memcpy_htod(&[value][..], scalar)?;
                }
                group.scalar_all_reduce(&mut scalars[..])
            },
            |run| {
                let scalars = scalars.borrow();
                for (k, scalar) in scalars.iter().enumerate() {
                    let got = group.stream(k).clone_dtoh(scalar)?[0];
                    if got != want_scalar {
                        return Ok(Some(format!("run {run}: {got}, expected {want_scalar}")));
                    }
                }
                Ok(None)
            },
        )?
    };
    pass &= report(group, "allreduce-scalar", n, 0, timing)?;

    // The library: the shard's sum, then NCCL's all-reduce.
    let results = std::cell::RefCell::new(Vec::new());
    let timing = timed(
        group,
        clocks,
        args,
        |run| {
            *results.borrow_mut() = group.sum(&views(run))?;
            Ok(())
        },
        |run| {
            for result in results.borrow().iter() {
                let got = f64::from(result.read()?);
                if !within(got, want, tolerance) {
                    return Ok(Some(format!(
                        "run {run}: {got}, expected {want} within {tolerance:.3e}"
                    )));
                }
            }
            Ok(None)
        },
    )?;
    pass &= report(group, "sum+allreduce", n, bytes, timing)?;

    // The library's argmax: shard kernel, all-gather of the partials, combine kernel.
    let args_results = std::cell::RefCell::new(Vec::new());
    let timing = timed(
        group,
        clocks,
        args,
        |run| {
            *args_results.borrow_mut() = group.argmax(&views(run))?;
            Ok(())
        },
        |run| {
            for result in args_results.borrow().iter() {
                let got = result.read()?;
                if (got.index, got.value) != best {
                    return Ok(Some(format!(
                        "run {run}: ({}, {}), expected {best:?}",
                        got.index, got.value
                    )));
                }
            }
            Ok(None)
        },
    )?;
    pass &= report(group, "argmax+gather", n, bytes, timing)?;
    Ok(pass)
}

/// `--simulate N`: the same shards and checks on N simulated ranks (threads), untimed.
fn simulate(world: usize, args: &Args) -> Result<bool> {
    let sizes: Vec<usize> = args.per_gpu.iter().map(|&n| n.min(1 << 14)).collect();
    let threads: Vec<_> = Rank::simulated(world)
        .into_iter()
        .map(|rank| {
            let sizes = sizes.clone();
            std::thread::spawn(move || -> Result<bool> {
                let mut pass = true;
                for n in sizes {
                    let shard = host_shard((rank.rank() * n) as u64, n);
                    let sums = rank.exchange_host(&shard.sum.to_le_bytes())?;
                    let want: f64 = sums
                        .iter()
                        .map(|b| f64::from_le_bytes(b[..8].try_into().expect("8 bytes")))
                        .sum();
                    let got = rank.all_reduce(Sum, &shard.data)?.read()?;
                    let best = rank.reduce(ArgMax, &shard.data)?;
                    let ok = (f64::from(got) - want).abs() <= 1e-3 * (n * world) as f64
                        && best.is_some_and(|(i, v)| element(i as u64) == v);
                    if rank.rank() == 0 {
                        println!(
                            "simulated {world} ranks × {n}: sum {got} (float64 {want:.3}), argmax {best:?}: {}",
                            if ok { "PASS" } else { "FAIL" }
                        );
                    }
                    pass &= ok;
                }
                Ok(pass)
            })
        })
        .collect();
    let mut pass = true;
    for thread in threads {
        pass &= thread.join().map_err(|_| "a simulated rank panicked")??;
    }
    Ok(pass)
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(2),
        Err(error) => {
            eprintln!("ranks: {error}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<bool> {
    let args = parse_args()?;
    if let Some(world) = args.simulate {
        return simulate(world.max(1), &args);
    }
    let group = if args.single {
        match args.gpus {
            Some(count) => Group::Single(Devices::new(&(0..count).collect::<Vec<_>>())?),
            None => Group::Single(Devices::all()?),
        }
    } else {
        Group::Rank(Rank::from_env()?)
    };
    let clocks: Vec<Clock> = (0..group.locals())
        .map(|k| Clock::new(group.reducer(k)))
        .collect::<Result<_>>()?;
    if group.first_rank() == 0 {
        let gpu = group
            .reducer(0)
            .gpu_backend()
            .expect("a GPU")
            .info()
            .name
            .clone();
        println!(
            "# {} x {gpu}; {}; NCCL_NVLS_ENABLE={}; {}",
            group.world(),
            group.nccl(),
            std::env::var("NCCL_NVLS_ENABLE").unwrap_or_default(),
            if args.single {
                "one process driving every GPU"
            } else {
                "one process per GPU"
            }
        );
        println!(
            "# per run: barrier + synchronize, {} us GPU pre-roll, two CUDA events around the call; {} warm-up + {} timed runs; us: median of the slowest GPU's time, us_min: of the fastest's",
            args.preroll_ns / 1000,
            args.warmup,
            args.repeat
        );
        println!(
            "\n{:<17} {:>4} {:>11} {:>12} {:>10} {:>10} {:>9} {:>4} check",
            "op", "gpus", "per_gpu", "n", "us", "us_min", "GB/s", "late"
        );
    }
    let mut pass = true;
    for &n in &args.per_gpu {
        pass &= run_size(&group, &clocks, &args, n)?;
    }
    Ok(pass)
}
