//! The several-GPU bench, `--sizes` elements *per GPU*:
//!
//! - `reduce-rs bench --devices all|N`: one process driving N GPUs ([`Devices`]), then (where
//!   `python3` has torch) the PyTorch + NCCL peer `bench/torch/allreduce_torch.py`, one process
//!   per GPU, over the same GPUs; its rows (`torch-nccl` `sum+allreduce` and
//!   `allreduce-scalar`) are read from its CSV and written beside ours to `devices.csv`;
//! - `reduce-rs bench --ranks`: this process is one rank ([`Rank`]) of a world of processes,
//!   one GPU each, as torchrun starts them; rank 0 prints the table and writes `ranks.csv`.
//!   With `--simulate N`: N simulated ranks in threads of this process, without a GPU, checked
//!   and untimed ([`simulated`]).
//!
//! Both time the same four calls of the library with the same loop ([`timed`]: `kernel`,
//! `allreduce-scalar`, `sum+allreduce`, `argmax+gather`); the `gpus` column says over how many
//! GPUs.
//!
//! Its layers, each importing only those before it: [`table`] (the rows, their table and CSV),
//! [`group`] (a [`Rank`] or [`Devices`] behind one interface), [`shards`] (the input and what
//! each result must be), [`timed`] (the timed loop and its calls), [`simulated`], then this
//! file.

pub mod group;
pub mod shards;
pub mod simulated;
pub mod table;
pub mod timed;

use super::options::BenchOptions;
use super::peers::locate::PeerDirs;
use super::peers::{Notes, Peer, PeerRun, records, torch};
use super::rows::Check;
use crate::devices::{DeviceCount, gpus_for};
use crate::timing::Timing;
use anyhow::{Context, Result, bail};
use group::Group;
use reduce_rs::devices::{Devices, Rank, RankConfig};
use reduce_rs::gpu_available;
use std::path::Path;
use table::Row;
use timed::Clocks;

/// `bench --devices`: one process drives `count` GPUs through the library's [`Devices`], then
/// (unless `--no-torch`) the PyTorch peer runs over the same GPUs; `Ok(false)` when a result was
/// wrong.
pub fn run(count: DeviceCount, options: &BenchOptions) -> Result<bool> {
    let available = gpu_available().context("bench --devices times GPUs")?;
    let n = gpus_for(count, available)?;
    check_sizes(n, &options.sizes)?;
    let out = options.out.as_path();
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut rows = Vec::new();
    {
        let devices = Devices::new(&(0..n).collect::<Vec<_>>())
            .with_context(|| format!("opening {n} GPU(s) with NCCL"))?;
        let group = Group::Devices(devices);
        let clocks = Clocks::new(&group)?;
        println!(
            "bench --devices: one process driving every GPU, f32 sum and argmax of --sizes elements per GPU; {}",
            timed::describe(&group, &clocks, options.timing)?
        );
        for &per_gpu in &options.sizes {
            rows.extend(timed::measure(&group, &clocks, options.timing, per_gpu)?);
        }
        // The GPUs' memory goes back before the peer's processes take theirs.
    }
    if options.torch {
        let dirs = PeerDirs::of_process(options.peers_dir.as_deref());
        rows.extend(torch_peer(&dirs, n, &options.sizes, options.timing, out));
    }
    finish(&rows, &out.join("devices.csv"))
}

/// `bench --ranks`: this process is one rank of a world of processes, one GPU each, started as
/// torchrun starts them (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `REDUCE_NCCL_ID_FILE`; see
/// `reduce_rs::devices::RankConfig::from_env`). Every rank runs the same loop; rank 0 prints
/// the table and writes `ranks.csv`. `Ok(false)` on every rank when a result was wrong.
///
/// `simulate`: that many simulated ranks in threads of this process instead, checked, untimed.
pub fn run_ranks(simulate: Option<usize>, options: &BenchOptions) -> Result<bool> {
    let out = options.out.as_path();
    let create_out =
        || std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()));
    if let Some(world) = simulate {
        check_sizes(world, &options.sizes)?;
        create_out()?;
        println!(
            "bench --ranks --simulate {world}: {world} simulated ranks, threads of this process, in-process exchange (no NCCL); \
             f32 sum and argmax of --sizes elements per rank, each call run once and checked, nothing timed"
        );
        let rows = simulated::run(world, &options.sizes)?;
        return finish(&rows, &out.join("ranks.csv"));
    }
    gpu_available().context("bench --ranks times GPUs, one per process")?;
    let config = RankConfig::from_env().context("reading this process's rank")?;
    check_sizes(config.world_size, &options.sizes)?;
    if config.rank == 0 {
        create_out()?;
    }
    let rank = Rank::new(config)
        .context("joining the other ranks (RANK, WORLD_SIZE, LOCAL_RANK, REDUCE_NCCL_ID_FILE)")?;
    let group = Group::Rank(rank);
    same_on_every_rank(&group, &options.sizes, options.timing)?;
    let clocks = Clocks::new(&group)?;
    let lead = group.first_rank() == 0;
    if lead {
        println!(
            "bench --ranks: one process per GPU, f32 sum and argmax of --sizes elements per GPU; {}",
            timed::describe(&group, &clocks, options.timing)?
        );
    }
    let mut rows = Vec::new();
    for &n in &options.sizes {
        rows.extend(timed::measure(&group, &clocks, options.timing, n)?);
    }
    if !lead {
        return Ok(table::tally(&rows).passed());
    }
    finish(&rows, &out.join("ranks.csv"))
}

/// Every rank was started with the same `--sizes`, `--repeat` and `--warmup`: the collectives
/// and gathers that follow need it.
fn same_on_every_rank(group: &Group, sizes: &[usize], timing: Timing) -> Result<()> {
    let hash = sizes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &n| {
        (h ^ n as u64).wrapping_mul(0x0100_0000_01b3)
    });
    // 52 bits of the hash: an f64 holds them exactly.
    let mine = vec![
        f64::from(timing.warmup),
        f64::from(timing.repeat),
        (hash >> 12) as f64,
    ];
    let all = group.gather(vec![mine.clone()])?;
    match all.iter().position(|theirs| *theirs != mine) {
        Some(other) => bail!(
            "rank {other} was started with other --sizes, --repeat or --warmup than rank {}: every rank needs the same",
            group.first_rank()
        ),
        None => Ok(()),
    }
}

/// Every GPU's elements together countable (`--sizes` are at least 1 already).
fn check_sizes(world: usize, sizes: &[usize]) -> Result<()> {
    match sizes.iter().find(|n| n.checked_mul(world).is_none()) {
        Some(n) => bail!("{n} elements per GPU over {world} GPUs do not fit in 64 bits"),
        None => Ok(()),
    }
}

/// Prints the table, writes it to `csv`, and says whether every result passed.
fn finish(rows: &[Row], csv: &Path) -> Result<bool> {
    print!("\n{}", table::table(rows));
    table::write_csv(rows, csv)?;
    println!("wrote {}", csv.display());
    let tally = table::tally(rows);
    if let Some(summary) = tally.summary() {
        eprintln!("error: {summary}");
    }
    Ok(tally.passed())
}

/// `allreduce_torch.py` over the same GPUs and sizes, where `python3` has torch; what cannot
/// run says why in one note.
fn torch_peer(dirs: &PeerDirs, n: usize, sizes: &[usize], timing: Timing, out: &Path) -> Vec<Row> {
    let mut notes = Notes::default();
    let script = match dirs.find(torch::ALLREDUCE_TORCH) {
        Ok(script) => script,
        Err(why) => {
            notes.not_timed(Peer::Torch, &why);
            return Vec::new();
        }
    };
    let csv = out.join("peers_devices.csv");
    let _ = std::fs::remove_file(&csv);
    if let PeerRun::CouldNotRun(why) = torch::run_allreduce(&script, n, sizes, timing, &csv) {
        notes.not_timed(Peer::Torch, &why);
        return Vec::new();
    }
    // rows = GPUs, cols = elements per GPU.
    match records::read(&csv) {
        Ok(peer_rows) => peer_rows
            .into_iter()
            .map(|r| Row {
                bytes: if r.op == "allreduce-scalar" {
                    0
                } else {
                    r.rows * r.cols * 4
                },
                implementation: r.implementation,
                op: r.op,
                gpus: r.rows,
                per_gpu: r.cols,
                us: Some(r.ms * 1000.0),
                us_min: None,
                late: None,
                check: Check::from_word(&r.check),
            })
            .collect(),
        Err(error) => {
            eprintln!("note: PyTorch's rows are left out: {error:#}");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_started_with_other_sizes_are_refused_on_every_rank() {
        let timing = Timing {
            warmup: 3,
            repeat: 20,
        };
        let agree = |sizes: Vec<Vec<usize>>| -> Vec<String> {
            let threads: Vec<_> = Rank::simulated(sizes.len())
                .into_iter()
                .zip(sizes)
                .map(|(rank, sizes)| {
                    std::thread::spawn(move || {
                        same_on_every_rank(&Group::Rank(rank), &sizes, timing)
                            .map_or_else(|e| e.to_string(), |()| "same".into())
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        };
        assert_eq!(agree(vec![vec![1 << 10, 5]; 3]), ["same"; 3]);
        let refused = agree(vec![vec![1 << 10], vec![1 << 10], vec![1 << 11]]);
        assert!(
            refused[0].starts_with("rank 2 was started with other --sizes"),
            "{refused:?}"
        );
        assert!(refused[2].starts_with("rank 0 was started"), "{refused:?}");
    }
}
