//! The GPUs this process times and how it meets the others: one [`Rank`] of a world of
//! processes (`bench --ranks`), or [`Devices`], one process driving every GPU
//! (`bench --devices`). The bench's loop is written once against this.

use anyhow::{Context, Result, anyhow};
use cudarc::driver::{CudaSlice, CudaStream};
use reduce_rs::Input;
use reduce_rs::backend::gpu::Gpu;
use reduce_rs::devices::{DeviceResult, Devices, Rank};
use reduce_rs::ops::{ArgMax, Sum};
use reduce_rs::{Arg, Reducer};
use std::sync::Arc;

pub enum Group {
    /// This process is one rank (one GPU, or a simulated rank on a thread).
    Rank(Rank),
    /// This process drives every GPU of the world.
    Devices(Devices),
}

impl Group {
    /// The GPUs of this process.
    pub fn locals(&self) -> usize {
        match self {
            Group::Rank(_) => 1,
            Group::Devices(devices) => devices.len(),
        }
    }

    /// The GPUs of every process.
    pub fn world(&self) -> usize {
        match self {
            Group::Rank(rank) => rank.world_size(),
            Group::Devices(devices) => devices.len(),
        }
    }

    /// The rank of this process's first GPU (rank 0 prints and writes the results).
    pub fn first_rank(&self) -> usize {
        match self {
            Group::Rank(rank) => rank.rank(),
            Group::Devices(_) => 0,
        }
    }

    pub fn reducer(&self, k: usize) -> &Reducer {
        match self {
            Group::Rank(rank) => rank.reducer(),
            Group::Devices(devices) => devices.reducer(k),
        }
    }

    /// Local GPU `k` (an error on simulated ranks, which nothing times).
    pub fn gpu(&self, k: usize) -> Result<&Gpu> {
        self.reducer(k)
            .gpu_backend()
            .ok_or_else(|| anyhow!("timing needs a GPU, and this group is simulated"))
    }

    pub fn stream(&self, k: usize) -> Result<&Arc<CudaStream>> {
        Ok(self.gpu(k)?.stream())
    }

    /// `NCCL 2.28.0 (libnccl.so.2)`, or what joins the GPUs instead.
    pub fn link(&self) -> String {
        let nccl = match self {
            Group::Rank(rank) => rank.nccl_version(),
            Group::Devices(devices) => devices.nccl_version(),
        };
        nccl.unwrap_or_else(|| match self.reducer(0).gpu_backend() {
            None => "in-process exchange (no NCCL)".into(),
            Some(_) => "one GPU, no NCCL".into(),
        })
    }

    /// Returns once every rank has reached it and this process's GPUs are idle.
    pub fn barrier(&self) -> Result<()> {
        if let Group::Rank(rank) = self {
            rank.exchange_host(&[0])
                .context("a barrier between the ranks")?;
        }
        for k in 0..self.locals() {
            if let Some(gpu) = self.reducer(k).gpu_backend() {
                gpu.stream()
                    .synchronize()
                    .with_context(|| format!("waiting for GPU {k}"))?;
            }
        }
        Ok(())
    }

    /// Every GPU's `values` in rank order, on every rank: `values` holds this process's, one
    /// list per local GPU, every list of every rank the same length.
    pub fn gather(&self, values: Vec<Vec<f64>>) -> Result<Vec<Vec<f64>>> {
        let rank = match self {
            Group::Devices(_) => return Ok(values),
            Group::Rank(rank) => rank,
        };
        let mine = values.first().context("no values to gather")?;
        let bytes: Vec<u8> = mine.iter().flat_map(|v| v.to_le_bytes()).collect();
        let all = rank
            .exchange_host(&bytes)
            .context("gathering every rank's figures")?;
        Ok(all
            .iter()
            .map(|b| {
                b.chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect()
            })
            .collect())
    }

    /// The library's sum over every rank's shard (`shards`: this process's, one per local
    /// GPU), the result on every local GPU.
    pub fn sum<S: Input<f32>>(&self, shards: &[S]) -> Result<Vec<DeviceResult<f32>>> {
        Ok(match self {
            Group::Rank(rank) => vec![rank.all_reduce(Sum, first(shards)?)?],
            Group::Devices(devices) => devices.all_reduce(Sum, shards)?,
        })
    }

    /// The library's argmax over every rank's shard, on every local GPU.
    pub fn argmax<S: Input<f32>>(&self, shards: &[S]) -> Result<Vec<DeviceResult<Arg<f32>>>> {
        Ok(match self {
            Group::Rank(rank) => vec![rank.all_reduce(ArgMax, first(shards)?)?],
            Group::Devices(devices) => devices.all_reduce(ArgMax, shards)?,
        })
    }

    /// NCCL's all-reduce of one f32 per local GPU, in place, alone.
    pub fn scalar_all_reduce(&self, buffers: &mut [CudaSlice<f32>]) -> Result<()> {
        match self {
            Group::Rank(rank) => {
                let buffer = buffers.first_mut().context("no buffer to all-reduce")?;
                rank.raw_all_reduce_f32(buffer)?
            }
            Group::Devices(devices) => devices.raw_all_reduce_f32(buffers)?,
        }
        Ok(())
    }
}

fn first<S>(shards: &[S]) -> Result<&S> {
    shards
        .first()
        .context("a rank reduces one shard, and none was given")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_ranks_gather_in_rank_order_and_reduce_together() {
        let threads: Vec<_> = Rank::simulated(3)
            .into_iter()
            .map(|rank| {
                std::thread::spawn(move || -> Result<(Vec<Vec<f64>>, f32, Arg<f32>)> {
                    let group = Group::Rank(rank);
                    group.barrier()?;
                    let r = group.first_rank() as f64;
                    let all = group.gather(vec![vec![r, -r]])?;
                    let shard: Vec<f32> = (0..4)
                        .map(|i| (group.first_rank() * 4 + i) as f32)
                        .collect();
                    let sum = group.sum(&[&shard[..]])?[0].read()?;
                    let best = group.argmax(&[&shard[..]])?[0].read()?;
                    Ok((all, sum, best))
                })
            })
            .collect();
        for thread in threads {
            let (all, sum, best) = thread.join().expect("a rank").expect("no error");
            assert_eq!(all, [[0.0, -0.0], [1.0, -1.0], [2.0, -2.0]]);
            assert_eq!(sum, 66.0);
            assert_eq!((best.index, best.value), (11, 11.0));
        }
    }

    #[test]
    fn simulated_devices_are_one_process_and_have_no_gpu_to_time() {
        let group = Group::Devices(Devices::simulated(2));
        assert_eq!(
            (group.locals(), group.world(), group.first_rank()),
            (2, 2, 0)
        );
        assert_eq!(
            group.gather(vec![vec![1.0], vec![2.0]]).unwrap(),
            [[1.0], [2.0]]
        );
        assert_eq!(group.link(), "in-process exchange (no NCCL)");
        assert!(group.gpu(0).is_err());
        let sums = group.sum(&[vec![1.0f32, 2.0], vec![3.0]]).unwrap();
        assert_eq!(sums.len(), 2);
        assert_eq!(sums[1].read().unwrap(), 6.0);
    }
}
