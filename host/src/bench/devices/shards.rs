//! The input and what it must give: rank `r` holds elements `[r·n, (r+1)·n)` of one global f32
//! array, element `i` splitmix64(i) made uniform in [-1, 1), as the PyTorch peer
//! (`bench/torch/allreduce_torch.py`) makes it; every rank knows its own shard and learns the
//! others' sums, magnitudes and largest elements through the group.

use super::group::Group;
use crate::timing::rotation_copies;
use anyhow::{Context, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView};
use std::sync::Arc;

/// Element `i` of the global array: uniform in [-1, 1), exact in f32 (the peers' generator).
pub fn element(i: u64) -> f32 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    let h = z ^ (z >> 31);
    (((h >> 40) as i64 - (1 << 23)) as f64 * (-23f64).exp2()) as f32
}

/// A shard on the host: its elements, float64 `Σx` (compensated), `Σ|x|`, and its first
/// largest element (global index, value).
pub struct HostShard {
    pub data: Vec<f32>,
    pub sum: f64,
    pub abs: f64,
    pub best: (u64, f32),
}

impl HostShard {
    /// Elements `[first, first + n)`.
    pub fn new(first: u64, n: usize) -> HostShard {
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
}

/// The shards of this process's GPUs, `n` elements each, in rank order.
pub fn host_shards(group: &Group, n: usize) -> Vec<HostShard> {
    (0..group.locals())
        .map(|k| HostShard::new(((group.first_rank() + k) * n) as u64, n))
        .collect()
}

/// What every result must be, the same on every rank; each check says why a result is wrong.
pub struct Expected {
    /// Per local GPU: its shard's float64 `Σx` and `Σ|x|`.
    local: Vec<(f64, f64)>,
    /// Elements per GPU.
    n: usize,
    /// The float64 sum of every shard.
    sum: f64,
    /// How far an f32 sum of every shard may be from `sum`: `n·world·2^-23·Σ|x|` (and the
    /// float64 sum's own error).
    tolerance: f64,
    /// The first largest element of the global array.
    best: (u64, f32),
}

impl Expected {
    /// From this process's `shards`, every rank's sums and largest elements gathered.
    pub fn gather(group: &Group, shards: &[HostShard]) -> Result<Expected> {
        let n = shards.first().map_or(0, |s| s.data.len());
        let mine: Vec<Vec<f64>> = shards
            .iter()
            .map(|s| vec![s.sum, s.abs, s.best.0 as f64, f64::from(s.best.1)])
            .collect();
        let all = group.gather(mine)?;
        let sum: f64 = all.iter().map(|r| r[0]).sum();
        let abs: f64 = all.iter().map(|r| r[1]).sum();
        let elements = (n * group.world()) as f64;
        let tolerance = (elements * (-23f64).exp2() + 4.0 * (-53f64).exp2()) * abs;
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
        Ok(Expected {
            local: shards.iter().map(|s| (s.sum, s.abs)).collect(),
            n,
            sum,
            tolerance,
            best,
        })
    }

    /// Local GPU `k`'s sum of its own shard: within `n·2^-23·Σ|x|` of the shard's float64 sum.
    pub fn shard_sum(&self, k: usize, got: f32) -> Option<String> {
        let (want, abs) = self.local.get(k).copied().unwrap_or((f64::NAN, 0.0));
        let tolerance = self.n as f64 * (-23f64).exp2() * abs;
        (!within(f64::from(got), want, tolerance))
            .then(|| format!("shard sum {got}, expected {want} within {tolerance:.3e}"))
    }

    /// The sum of every shard.
    pub fn sum(&self, got: f32) -> Option<String> {
        (!within(f64::from(got), self.sum, self.tolerance))
            .then(|| format!("{got}, expected {} within {:.3e}", self.sum, self.tolerance))
    }

    /// The argmax of every shard: exactly the first largest element.
    pub fn argmax(&self, index: u64, value: f32) -> Option<String> {
        ((index, value) != self.best)
            .then(|| format!("({index}, {value}), expected {:?}", self.best))
    }
}

/// `|got - want| <= tolerance`, false for a NaN.
fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

/// A shard's copies on one GPU, 256 bytes apart, adding up to the bench's rotation (runs read
/// them in turn, so no run finds its input in the L2 cache).
pub struct DeviceShard {
    buffer: CudaSlice<f32>,
    n: usize,
    stride: usize,
    copies: usize,
}

impl DeviceShard {
    pub fn new(stream: &Arc<CudaStream>, host: &[f32]) -> Result<DeviceShard> {
        let n = host.len();
        let stride = (n * 4).div_ceil(256) * 256 / 4;
        let (free, _) = stream
            .context()
            .mem_get_info()
            .context("reading the GPU's free memory")?;
        let copies = rotation_copies(stride * 4, Some(free));
        let mut buffer = stream
            .alloc_zeros::<f32>(copies * stride.max(1))
            .with_context(|| format!("allocating {copies} copies of {n} f32 on the GPU"))?;
        for k in 0..copies {
            let mut view = buffer.slice_mut(k * stride..k * stride + n);
            stream
                .memcpy_htod(host, &mut view)
                .context("copying a shard to the GPU")?;
        }
        stream.synchronize().context("copying a shard to the GPU")?;
        Ok(DeviceShard {
            buffer,
            n,
            stride,
            copies,
        })
    }

    /// The copy run `run` reads.
    pub fn copy(&self, run: usize) -> CudaView<'_, f32> {
        let k = run % self.copies;
        self.buffer.slice(k * self.stride..k * self.stride + self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduce_rs::devices::Devices;

    #[test]
    fn the_generator_is_the_peers() {
        // bench/torch/reduce_torch.py's value_py(i, "f32").
        assert_eq!(element(0), 6430888.0 * (-23f32).exp2());
        assert_eq!(element(1), 1116717.0 * (-23f32).exp2());
        assert_eq!(element(12345), -6155902.0 * (-23f32).exp2());
        assert_eq!(element((1 << 30) + 7), 3851042.0 * (-23f32).exp2());
    }

    #[test]
    fn expectations_cover_every_shard_and_name_the_wrong_results() {
        let group = Group::Devices(Devices::simulated(3));
        let shards = host_shards(&group, 1000);
        assert_eq!(shards[2].data[0], element(2000));
        let expected = Expected::gather(&group, &shards).unwrap();
        let all = HostShard::new(0, 3000);
        assert!((expected.sum - all.sum).abs() < 1e-9);
        assert_eq!(expected.best, all.best);
        let sum: f32 = shards[1].data.iter().sum();
        assert_eq!(expected.shard_sum(1, sum), None);
        assert!(expected.shard_sum(1, sum + 1.0).is_some());
        assert_eq!(expected.sum(all.sum as f32), None);
        assert!(expected.sum(f32::NAN).is_some());
        assert_eq!(expected.argmax(all.best.0, all.best.1), None);
        let wrong = expected.argmax(all.best.0 + 1, all.best.1).unwrap();
        assert!(wrong.contains("expected"), "{wrong}");
    }
}
