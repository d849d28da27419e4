//! `bench --ranks --simulate N`: N simulated ranks, one thread of this process each, through
//! the bench's shards, gathers and checks, untimed: what a world of processes does, anywhere
//! (no GPU, no NCCL). NCCL's all-reduce of one scalar has no simulated twin and is left out.

use super::group::Group;
use super::shards::{Expected, host_shards};
use super::table::Row;
use super::timed::{Found, report};
use anyhow::{Result, anyhow};
use reduce_rs::devices::Rank;

/// The rows of `world` simulated ranks at each of `sizes` elements per rank (rank 0's: every
/// rank's are the same).
pub fn run(world: usize, sizes: &[usize]) -> Result<Vec<Row>> {
    let threads: Vec<_> = Rank::simulated(world)
        .into_iter()
        .map(|rank| {
            let sizes = sizes.to_vec();
            std::thread::spawn(move || -> Result<Vec<Row>> {
                let group = Group::Rank(rank);
                let mut rows = Vec::new();
                for n in sizes {
                    rows.extend(check(&group, n)?);
                }
                Ok(rows)
            })
        })
        .collect();
    let mut results = Vec::new();
    for thread in threads {
        results.push(
            thread
                .join()
                .map_err(|_| anyhow!("a simulated rank panicked"))?,
        );
    }
    let mut results = results.into_iter();
    let first = results.next().unwrap_or_else(|| Ok(Vec::new()));
    // A rank's error is the run's, whichever rank met it.
    results.try_fold(first?, |rows, other| other.map(|_| rows))
}

/// The calls of the timed bench at `n` elements per GPU, each run once and checked.
fn check(group: &Group, n: usize) -> Result<Vec<Row>> {
    let hosts = host_shards(group, n);
    let expected = Expected::gather(group, &hosts)?;
    let locals = group.locals();
    let bytes = n * group.world() * 4;
    let mut wrong = None;
    for (k, host) in hosts.iter().enumerate() {
        let got = group.reducer(k).sum(&host.data)?;
        wrong = wrong.or_else(|| expected.shard_sum(k, got));
    }
    let kernel = report(group, "kernel", n, n * 4, Found::untimed(locals, wrong))?;
    let shards: Vec<&[f32]> = hosts.iter().map(|h| &h.data[..]).collect();
    let mut wrong = None;
    for result in group.sum(&shards)? {
        let got = result.read()?;
        wrong = wrong.or_else(|| expected.sum(got));
    }
    let sum = report(
        group,
        "sum+allreduce",
        n,
        bytes,
        Found::untimed(locals, wrong),
    )?;
    let mut wrong = None;
    for result in group.argmax(&shards)? {
        let got = result.read()?;
        wrong = wrong.or_else(|| expected.argmax(got.index, got.value));
    }
    let argmax = report(
        group,
        "argmax+gather",
        n,
        bytes,
        Found::untimed(locals, wrong),
    )?;
    Ok(vec![kernel, sum, argmax])
}
