//! Several real GPUs with NCCL: every operation and several types, split over every GPU of the
//! machine (one process driving them all, `Devices`), and one rank per GPU (`Rank`, one thread
//! each, as processes would), against one GPU's result. Without two GPUs and NCCL every trial
//! is reported as ignored, and the reason is printed first.

use libtest_mimic::{Arguments, Failed, Trial};
use reduce_rs::devices::{Devices, IdExchange, Rank, RankConfig, even_split, nccl_available};
use reduce_rs::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};
use reduce_rs::{Element, Operation, Reducer, gpu_available};
use std::sync::{Arc, Mutex};

const SIZES: [usize; 5] = [0, 1, 1000, 1_000_003, (1 << 24) + 5];

/// Why these tests cannot run here, if they cannot.
fn unavailable() -> Option<String> {
    match gpu_available() {
        Err(why) => return Some(why.to_string()),
        Ok(count) if count < 2 => return Some(format!("{count} GPU (two are needed)")),
        Ok(_) => {}
    }
    nccl_available().err().map(|why| why.to_string())
}

fn data<T: Element>(len: usize, make: impl Fn(u64) -> T) -> Vec<T> {
    (0..len as u64)
        .map(|i| make(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40))
        .collect()
}

/// Cuts: even, everything on the last device, and a lopsided one.
fn cuts(len: usize, parts: usize) -> Vec<Vec<std::ops::Range<usize>>> {
    let mut last = vec![0..0; parts];
    last[parts - 1] = 0..len;
    let third = len / 3;
    let mut lopsided = even_split(len - third, parts);
    lopsided[0] = 0..third + lopsided[0].len();
    for k in 1..parts {
        let start = lopsided[k - 1].end;
        lopsided[k] = start..start + lopsided[k].len();
    }
    vec![even_split(len, parts), last, lopsided]
}

/// `op` over `input` split over `devices`, on the host and left on every GPU, against one GPU.
fn check<T, O>(devices: &Devices, op: O, input: &[T], exact: bool) -> Result<(), Failed>
where
    T: Element,
    O: Operation<T> + Copy,
{
    let one = Reducer::gpu(0)?.reduce(op, input)?;
    for cut in cuts(input.len(), devices.len()) {
        let shards = devices.scatter_pieces(input, &cut)?;
        let got = devices.reduce(op, &shards)?;
        let same = format!("{got:?}") == format!("{one:?}");
        if exact && !same {
            return Err(format!("{cut:?}: {got:?}, one GPU {one:?}").into());
        }
        if input.is_empty() {
            continue;
        }
        let results = devices.all_reduce(op, &shards)?;
        let values: Vec<O::Device> = results.iter().map(|r| r.read()).collect::<Result<_, _>>()?;
        if values
            .iter()
            .any(|v| format!("{v:?}") != format!("{:?}", values[0]))
        {
            return Err(format!("{cut:?}: the GPUs disagree: {values:?}").into());
        }
        if format!("{:?}", O::output(values[0])) != format!("{got:?}") {
            return Err(
                format!("{cut:?}: on the GPUs {:?}, on the host {got:?}", values[0]).into(),
            );
        }
    }
    Ok(())
}

fn trials(devices: Arc<Mutex<Devices>>) -> Vec<Trial> {
    let mut trials = Vec::new();
    for len in SIZES {
        macro_rules! trial {
            ($name:literal, $t:ty, $make:expr, $op:expr, $exact:expr) => {{
                let devices = devices.clone();
                trials.push(Trial::test(
                    format!("devices::{}::{len}", $name),
                    move || {
                        let devices = devices.lock().unwrap_or_else(|p| p.into_inner());
                        check::<$t, _>(&devices, $op, &data(len, $make), $exact)
                    },
                ));
            }};
        }
        trial!(
            "f32::argmax",
            f32,
            |h| (h % 1000) as f32 - 500.0,
            ArgMax,
            true
        );
        trial!(
            "f32::argmin",
            f32,
            |h| (h % 1000) as f32 - 500.0,
            ArgMin,
            true
        );
        trial!("f64::max", f64, |h| h as f64 * 1e-3, Max, true);
        trial!(
            "bf16::min",
            half::bf16,
            |h| half::bf16::from_f32((h % 512) as f32),
            Min,
            true
        );
        trial!("i32::sum", i32, |h| h as i32, Sum, true);
        trial!("u64::sum", u64, |h| h.wrapping_mul(h), Sum, true);
        trial!("i64::argmax", i64, |h| (h % 97) as i64, ArgMax, true);
        trial!("f32::sum", f32, |h| (h % 1000) as f32 * 1e-3, Sum, false);
        trial!("u32::mean", u32, |h| h as u32, Mean, false);
    }
    trials.push(Trial::test("ranks::one_thread_per_gpu", move || {
        // NCCL communicators sharing GPUs must not run collectives at the same time: hold the
        // group while the ranks run.
        let _alone = devices.lock().unwrap_or_else(|p| p.into_inner());
        ranks_in_threads()
    }));
    trials
}

/// Two ranks, one thread and one GPU each, joined through NCCL as two processes would be.
fn ranks_in_threads() -> Result<(), Failed> {
    let id = Rank::unique_id_hex()?;
    let input: Vec<f32> = data((1 << 22) + 3, |h| (h % 4093) as f32 - 2000.0);
    let one = Reducer::gpu(0)?.argmax(&input)?;
    let pieces = even_split(input.len(), 2);
    let threads: Vec<_> = (0..2)
        .map(|rank| {
            let id = id.clone();
            let shard = input[pieces[rank].clone()].to_vec();
            std::thread::spawn(move || -> reduce_rs::Result<_> {
                let rank = Rank::new(RankConfig {
                    rank,
                    world_size: 2,
                    device: rank,
                    id: IdExchange::Hex(id),
                })?;
                let stream = rank.stream().expect("a GPU").clone();
                let device =
                    stream
                        .clone_htod(&shard)
                        .map_err(|source| reduce_rs::Error::Driver {
                            what: "copying the shard".into(),
                            source,
                        })?;
                let on_host = rank.argmax(&device)?;
                let on_device = rank.all_reduce(ArgMax, &device)?.read()?;
                let sum = rank.sum(&device)?;
                Ok((on_host, on_device, sum.to_bits()))
            })
        })
        .collect();
    let results: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().expect("a rank thread"))
        .collect::<Result<_, _>>()?;
    for (on_host, on_device, sum) in &results {
        if *on_host != one || Some((on_device.index as usize, on_device.value)) != one {
            return Err(format!("ranks: {on_host:?} / {on_device:?}, one GPU {one:?}").into());
        }
        if *sum != results[0].2 {
            return Err("the ranks' sums differ in their bits".into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let placeholder = |name: String| Trial::test(name, || Ok(())).with_ignored_flag(true);
    let trials = match unavailable() {
        None => match Devices::all() {
            Ok(devices) => {
                eprintln!(
                    "several-GPU tests on {} GPUs, {}",
                    devices.len(),
                    devices.nccl_version().unwrap_or_default()
                );
                trials(Arc::new(Mutex::new(devices)))
            }
            Err(why) => {
                eprintln!("several-GPU tests ignored: {why}");
                vec![placeholder("devices".into())]
            }
        },
        Some(why) => {
            eprintln!("several-GPU tests ignored: {why}");
            let mut names: Vec<String> =
                SIZES.iter().map(|len| format!("devices::{len}")).collect();
            names.push("ranks::one_thread_per_gpu".into());
            names.into_iter().map(placeholder).collect()
        }
    };
    libtest_mimic::run(&args, trials).exit();
}
