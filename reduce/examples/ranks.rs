//! One process per GPU, as `torchrun` starts them: each process is a [`Rank`], reduces its own
//! shard of one global array on its GPU, and one NCCL collective combines the shards. Start one
//! process per GPU, with a file every rank can read for NCCL's unique id:
//!
//! ```sh
//! cargo build --release -p reduce-rs --example ranks
//! RANK=0 WORLD_SIZE=2 REDUCE_NCCL_ID_FILE=/tmp/id target/release/examples/ranks &
//! RANK=1 WORLD_SIZE=2 REDUCE_NCCL_ID_FILE=/tmp/id target/release/examples/ranks; wait
//! ```
//!
//! (`LOCAL_RANK`, default `RANK`, picks the GPU.) Without a GPU, two simulated ranks run the
//! same code on two threads of this process. The timings of this path are the bench's:
//! `reduce-rs bench --ranks`, launched the same way (README, "Several GPUs").

use reduce_rs::devices::Rank;
use reduce_rs::ops::Sum;
use reduce_rs::{Error, gpu_available};

fn main() -> Result<(), Error> {
    if gpu_available().is_ok() {
        // RANK, WORLD_SIZE, LOCAL_RANK and REDUCE_NCCL_ID_FILE say who this process is; with
        // none of them set, a world of one.
        return run(Rank::from_env()?, 1 << 20);
    }
    println!("no GPU here: two simulated ranks, one thread each, as two processes would run");
    let threads: Vec<_> = Rank::simulated(2)
        .into_iter()
        .map(|rank| std::thread::spawn(move || run(rank, 1 << 12)))
        .collect();
    for thread in threads {
        thread.join().expect("a rank panicked")?;
    }
    Ok(())
}

/// Element `i` of the global array of `len`: small integers, every partial sum an integer
/// below 2^24 (up to 14 ranks of 2^20), so f32 adds them exactly in any order; and one 100,
/// three quarters of the way in.
fn element(i: usize, len: usize) -> f32 {
    if i == len / 4 * 3 {
        100.0
    } else {
        (i % 9) as f32 - 4.0
    }
}

/// What every rank does. The calls are collectives: every rank makes the same ones, in the
/// same order.
fn run(rank: Rank, per_rank: usize) -> Result<(), Error> {
    let (r, world) = (rank.rank(), rank.world_size());
    let len = per_rank * world;
    // This rank's shard: elements [r·n, (r+1)·n). A `CudaSlice` or `CudaView` on this rank's
    // GPU (`rank.stream()`) is a shard too, read where it is.
    let shard: Vec<f32> = (r * per_rank..(r + 1) * per_rank)
        .map(|i| element(i, len))
        .collect();

    // Results on the host of every rank.
    let sum = rank.sum(&shard)?;
    let (at, max) = rank.argmax(&shard)?.expect("the shards are not empty");
    let mean = rank.mean(&shard)?.expect("the shards are not empty");

    // The result left on this rank's GPU (a one-element buffer, the same bits on every rank),
    // for the next kernel to read; nothing waits until `read` copies it to the host.
    let on_device = rank.all_reduce(Sum, &shard)?;
    let read = on_device.read()?;

    println!(
        "rank {r} of {world} ({}): sum {sum} (all_reduce, on the device: {read}), mean {mean}, first largest {max} at {at}",
        rank.nccl_version().unwrap_or_else(|| "no NCCL".into())
    );

    // Every rank can make the whole array: check the results against it.
    let want: i64 = (0..len).map(|i| element(i, len) as i64).sum();
    assert_eq!(f64::from(sum), want as f64, "rank {r}: the sum");
    assert_eq!(read.to_bits(), sum.to_bits(), "rank {r}: the device's sum");
    assert_eq!((at, max), (len / 4 * 3, 100.0), "rank {r}: the argmax");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
