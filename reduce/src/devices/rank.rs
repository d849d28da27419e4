//! One process per GPU: a [`Rank`] of a world, set up from torchrun-style environment
//! variables, with NCCL's unique id shared through a file.

use super::comm::{Exchange, Fabric, NcclComms};
use super::group::{self, DeviceResult, Member, Wanted, World};
use super::nccl::{self, UniqueId};
use crate::element::Element;
use crate::error::{DriverContext, Error, Result};
use crate::input::Input;
use crate::op::{ArgMax, ArgMin, Max, Mean, Min, Operation, Sum};
use crate::reducer::Reducer;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How the ranks agree on NCCL's unique id (made by rank 0).
#[derive(Clone, Debug)]
pub enum IdExchange {
    /// Rank 0 writes the id to this file (atomically: a temporary file renamed), the others
    /// wait for it, up to `timeout`. A file older than 60 s when a rank starts waiting is taken
    /// for a previous run's and waited past; rank 0 removes the file once every rank has joined.
    File { path: PathBuf, timeout: Duration },
    /// The id itself, shared by other means (as 256 hex digits: [`Rank::unique_id_hex`]).
    Hex(String),
}

/// Who this rank is, on which GPU, and how it finds the others.
#[derive(Clone, Debug)]
pub struct RankConfig {
    pub rank: usize,
    pub world_size: usize,
    /// The CUDA device ordinal this rank runs on.
    pub device: usize,
    /// Unused for a world of one.
    pub id: IdExchange,
}

impl RankConfig {
    /// From the environment, as torchrun sets it: `RANK` (default 0), `WORLD_SIZE` (default 1),
    /// `LOCAL_RANK` (default `RANK`) as the device, unless `REDUCE_DEVICE` names one; the id
    /// from `REDUCE_NCCL_ID` (hex) or through the file `REDUCE_NCCL_ID_FILE`, waited for
    /// `REDUCE_NCCL_ID_TIMEOUT` seconds (default 120).
    ///
    /// ```
    /// // With none of the variables set: a world of one.
    /// let config = reduce_rs::devices::RankConfig::from_env()?;
    /// assert_eq!((config.rank, config.world_size), (0, 1));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn from_env() -> Result<RankConfig> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let number = |name: &str, default: usize| -> Result<usize> {
            match var(name) {
                None => Ok(default),
                Some(text) => text.trim().parse().map_err(|_| {
                    Error::Devices(format!("{name}={text:?} is not a non-negative integer"))
                }),
            }
        };
        let rank = number("RANK", 0)?;
        let world_size = number("WORLD_SIZE", 1)?;
        let local = number("LOCAL_RANK", rank)?;
        let device = number("REDUCE_DEVICE", local)?;
        let id = match (var("REDUCE_NCCL_ID"), var("REDUCE_NCCL_ID_FILE")) {
            (Some(hex), _) => IdExchange::Hex(hex),
            (None, Some(path)) => IdExchange::File {
                path: PathBuf::from(path),
                timeout: Duration::from_secs(number("REDUCE_NCCL_ID_TIMEOUT", 120)? as u64),
            },
            (None, None) if world_size > 1 => {
                return Err(Error::Devices(format!(
                    "rank {rank} of {world_size}: set REDUCE_NCCL_ID_FILE to a path every rank can read (rank 0 writes NCCL's unique id there), or REDUCE_NCCL_ID"
                )));
            }
            (None, None) => IdExchange::Hex(String::new()),
        };
        let config = RankConfig {
            rank,
            world_size,
            device,
            id,
        };
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<()> {
        if self.world_size == 0 || self.rank >= self.world_size {
            return Err(Error::Devices(format!(
                "RANK={} WORLD_SIZE={}: a rank is 0 … WORLD_SIZE - 1",
                self.rank, self.world_size
            )));
        }
        Ok(())
    }
}

/// This process's rank of a world of processes, one GPU each (or a simulated one): reduces its
/// shard on its GPU and combines with the other ranks through NCCL. Every rank must make the
/// same calls in the same order (they are collectives).
///
/// ```
/// use reduce_rs::devices::Rank;
/// // Four simulated ranks, one thread each, as four processes would run.
/// let threads: Vec<_> = Rank::simulated(4)
///     .into_iter()
///     .map(|rank| {
///         std::thread::spawn(move || {
///             let shard: Vec<u32> = (0..10).map(|i| (rank.rank() * 10 + i) as u32).collect();
///             rank.argmax(&shard)
///         })
///     })
///     .collect();
/// for thread in threads {
///     assert_eq!(thread.join().unwrap()?, Some((39, 39)));
/// }
/// # Ok::<(), reduce_rs::Error>(())
/// ```
pub struct Rank {
    // Dropped first: the communicator goes before the context it runs on.
    fabric: Fabric,
    member: Member,
    rank: usize,
    world_size: usize,
}

impl Rank {
    /// The rank [`RankConfig::from_env`] describes.
    pub fn from_env() -> Result<Rank> {
        Rank::new(RankConfig::from_env()?)
    }

    /// The rank `config` describes: opens its GPU and a stream, then (for a world of more than
    /// one) joins the others through NCCL, which blocks until every rank has joined.
    pub fn new(config: RankConfig) -> Result<Rank> {
        config.check()?;
        // Before any CUDA or NCCL thread exists: no NVLink multicast (see `nccl.rs`).
        nccl::keep_nvls_off();
        let count = crate::backend::gpu::probe()?;
        if config.device >= count {
            return Err(crate::error::GpuUnavailable::NoSuchDevice {
                ordinal: config.device,
                count,
            }
            .into());
        }
        let ctx =
            CudaContext::new(config.device).doing(|| format!("opening GPU {}", config.device))?;
        let stream = ctx
            .new_stream()
            .doing(|| format!("creating a stream on GPU {}", config.device))?;
        let member = Member::new(Reducer::on_stream(stream)?);
        let fabric = if config.world_size == 1 {
            Fabric::Single
        } else {
            let nccl = nccl::nccl()?;
            let id = match &config.id {
                IdExchange::Hex(hex) => parse_id(hex)?,
                IdExchange::File { path, timeout } if config.rank == 0 => {
                    let id = nccl.unique_id()?;
                    write_id(path, &id)?;
                    id
                }
                IdExchange::File { path, timeout } => {
                    let _ = timeout;
                    read_id(path, *timeout, config.rank)?
                }
            };
            ctx.bind_to_thread()
                .doing(|| "making the GPU current for NCCL".into())?;
            let comm = nccl.init_rank(config.world_size, id, config.rank)?;
            if let (IdExchange::File { path, .. }, 0) = (&config.id, config.rank) {
                // Every rank has joined, so every rank has read it.
                let _ = std::fs::remove_file(path);
            }
            Fabric::Nccl(NcclComms {
                nccl,
                comms: vec![comm],
                lock: Mutex::new(()),
            })
        };
        Ok(Rank {
            fabric,
            member,
            rank: config.rank,
            world_size: config.world_size,
        })
    }

    /// A world of `world_size` simulated ranks in this process (no GPU, no NCCL), to move to
    /// one thread each: the per-process logic, testable anywhere.
    pub fn simulated(world_size: usize) -> Vec<Rank> {
        let world_size = world_size.max(1);
        let exchange = Arc::new(Exchange::new(world_size));
        (0..world_size)
            .map(|rank| Rank {
                fabric: Fabric::Sim(exchange.clone()),
                member: Member::new(Reducer::simulator()),
                rank,
                world_size,
            })
            .collect()
    }

    /// A new NCCL unique id as 256 hex digits, for [`IdExchange::Hex`] (made by rank 0, shared
    /// by your own means).
    pub fn unique_id_hex() -> Result<String> {
        let id = nccl::nccl()?.unique_id()?;
        Ok(id
            .internal
            .iter()
            .map(|&b| format!("{:02x}", b as u8))
            .collect())
    }

    /// Sums floats the reproducible way ([`Reducer::with_reproducible`]) and merges the
    /// ranks' binned partial sums: the same bits as one GPU's reproducible sum of the whole
    /// input, for any number of ranks. Every rank must choose the same.
    ///
    /// ```
    /// use reduce_rs::devices::Rank;
    /// let ranks: Vec<Rank> = Rank::simulated(2)
    ///     .into_iter()
    ///     .map(|rank| rank.with_reproducible(true))
    ///     .collect();
    /// let shards = [vec![1e8f32, 1.0], vec![-1e8f32]];
    /// let sums = std::thread::scope(|scope| {
    ///     let handles: Vec<_> = ranks
    ///         .iter()
    ///         .zip(&shards)
    ///         .map(|(rank, shard)| scope.spawn(move || rank.sum(shard)))
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).collect::<Result<Vec<_>, _>>()
    /// })?;
    /// assert_eq!(sums, [1.0, 1.0]);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn with_reproducible(mut self, reproducible: bool) -> Rank {
        self.member.reducer.set_reproducible(reproducible);
        self
    }

    /// This rank's number, 0 … `world_size - 1`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// This rank's reducer (its GPU, its stream), for work of your own.
    pub fn reducer(&self) -> &Reducer {
        &self.member.reducer
    }

    /// This rank's stream (`None` when simulated).
    pub fn stream(&self) -> Option<&Arc<CudaStream>> {
        self.member.stream()
    }

    /// The NCCL in use (`NCCL 2.28.0 (libnccl.so.2)`), if NCCL is.
    pub fn nccl_version(&self) -> Option<String> {
        match &self.fabric {
            Fabric::Nccl(comms) => Some(comms.nccl.describe()),
            _ => None,
        }
    }

    fn world(&self) -> World<'_> {
        World {
            members: std::slice::from_ref(&self.member),
            fabric: &self.fabric,
            size: self.world_size,
            first_rank: self.rank,
        }
    }

    /// `op` over every rank's shard, the result left on this rank's device, on its stream,
    /// without waiting: the same bits on every rank. If every shard is empty the buffer holds
    /// the operation's empty value (`0` for sums, NaN for means, the identity for min and
    /// max, index `u64::MAX` for argmin and argmax), as a rank cannot know without waiting.
    pub fn all_reduce<T, O, S>(&self, op: O, shard: &S) -> Result<DeviceResult<O::Device>>
    where
        T: Element,
        O: Operation<T>,
        S: Input<T> + ?Sized,
    {
        let _ = op;
        let results = group::all_reduce::<T, O, S>(&self.world(), &[shard], Wanted::Every)?;
        results
            .into_iter()
            .flatten()
            .next()
            .ok_or_else(|| Error::Devices("this rank's result is missing".into()))
    }

    /// `op` over every rank's shard, on the host of every rank (this waits for the GPU).
    pub fn reduce<T, O, S>(&self, op: O, shard: &S) -> Result<O::Output>
    where
        T: Element,
        O: Operation<T>,
        S: Input<T> + ?Sized,
    {
        let _ = op;
        group::reduce_to_host::<T, O, S>(&self.world(), &[shard])
    }

    /// `Σ` over every rank's shard.
    pub fn sum<T: Element, S: Input<T> + ?Sized>(&self, shard: &S) -> Result<T::Sum> {
        self.reduce(Sum, shard)
    }

    /// The smallest element of every rank's shard.
    pub fn min<T: Element, S: Input<T> + ?Sized>(&self, shard: &S) -> Result<Option<T>> {
        self.reduce(Min, shard)
    }

    /// The largest element of every rank's shard.
    pub fn max<T: Element, S: Input<T> + ?Sized>(&self, shard: &S) -> Result<Option<T>> {
        self.reduce(Max, shard)
    }

    /// Global index (rank `r`'s shard follows rank `r - 1`'s) and value of the first smallest.
    pub fn argmin<T: Element, S: Input<T> + ?Sized>(
        &self,
        shard: &S,
    ) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMin, shard)
    }

    /// Global index and value of the first largest.
    pub fn argmax<T: Element, S: Input<T> + ?Sized>(
        &self,
        shard: &S,
    ) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMax, shard)
    }

    /// Global sum over global count.
    pub fn mean<T: Element, S: Input<T> + ?Sized>(&self, shard: &S) -> Result<Option<T::Mean>> {
        self.reduce(Mean, shard)
    }

    /// Every rank's `bytes` (the same length on every rank), in rank order, on the host of
    /// every rank: a barrier that also carries data (the benchmark gathers its timings and
    /// checks with it). Waits for this rank's GPU.
    #[doc(hidden)]
    pub fn exchange_host(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        use cudarc::driver::{DevicePtr, DevicePtrMut};
        let Some(stream) = self.member.stream() else {
            let all = self
                .fabric
                .all_gather_host(vec![(self.rank, bytes.to_vec())])?;
            return Ok(all.as_ref().clone());
        };
        let len = bytes.len().max(1);
        let mut padded = bytes.to_vec();
        padded.resize(len, 0);
        let send = stream
            .clone_htod(&padded)
            .doing(|| "copying bytes to exchange to the GPU".into())?;
        let mut recv = stream
            .alloc_zeros::<u8>(len * self.world_size)
            .doing(|| "allocating the exchange's buffer".into())?;
        {
            let (send_ptr, _read) = send.device_ptr(stream);
            let (recv_ptr, _write) = recv.device_ptr_mut(stream);
            self.fabric
                .all_gather_device(&[stream], &[send_ptr], &[recv_ptr], len)?;
        }
        let all = stream
            .clone_dtoh(&recv)
            .doing(|| "copying the exchanged bytes to the host".into())?;
        Ok(all
            .chunks(len)
            .map(|chunk| chunk[..bytes.len()].to_vec())
            .collect())
    }

    /// NCCL's all-reduce (`ncclSum`) of `buffer` in place, alone (for the benchmark).
    #[doc(hidden)]
    pub fn raw_all_reduce_f32(&self, buffer: &mut CudaSlice<f32>) -> Result<()> {
        self.world()
            .raw_all_reduce_f32(std::slice::from_mut(buffer))
    }
}

impl Drop for Rank {
    fn drop(&mut self) {
        if let Some(stream) = self.member.stream() {
            let _ = stream.synchronize();
        }
    }
}

fn parse_id(hex: &str) -> Result<UniqueId> {
    let hex = hex.trim();
    let bad = || {
        Error::Devices(format!(
            "an NCCL unique id is 256 hex digits; got {} characters",
            hex.len()
        ))
    };
    if hex.len() != 256 {
        return Err(bad());
    }
    let mut id = UniqueId { internal: [0; 128] };
    for (k, byte) in id.internal.iter_mut().enumerate() {
        let value = u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).map_err(|_| bad())?;
        *byte = value as std::ffi::c_char;
    }
    Ok(id)
}

fn write_id(path: &Path, id: &UniqueId) -> Result<()> {
    let hex: String = id
        .internal
        .iter()
        .map(|&b| format!("{:02x}", b as u8))
        .collect();
    let temporary = path.with_extension(format!("tmp.{}", std::process::id()));
    let written = std::fs::write(&temporary, format!("{hex}\n"))
        .and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|e| {
        Error::Devices(format!(
            "rank 0 could not write NCCL's unique id to {}: {e}",
            path.display()
        ))
    })
}

fn read_id(path: &Path, timeout: Duration, rank: usize) -> Result<UniqueId> {
    let started = Instant::now();
    let oldest = SystemTime::now() - Duration::from_secs(60);
    loop {
        let fresh = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified >= oldest);
        if fresh && let Ok(text) = std::fs::read_to_string(path) {
            return parse_id(&text);
        }
        if started.elapsed() >= timeout {
            return Err(Error::Devices(format!(
                "rank {rank} waited {} s for rank 0 to write NCCL's unique id to {} (is rank 0 running, with the same REDUCE_NCCL_ID_FILE, on a file system both see?)",
                timeout.as_secs(),
                path.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_travel_through_a_file() {
        let dir = std::env::temp_dir().join(format!("reduce-rs-id-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("id");
        let mut id = UniqueId { internal: [0; 128] };
        for (k, b) in id.internal.iter_mut().enumerate() {
            *b = (k as u8).wrapping_mul(37) as std::ffi::c_char;
        }
        let reader = {
            let path = path.clone();
            std::thread::spawn(move || read_id(&path, Duration::from_secs(10), 1))
        };
        std::thread::sleep(Duration::from_millis(50));
        write_id(&path, &id).unwrap();
        let got = reader.join().unwrap().unwrap();
        assert_eq!(got.internal, id.internal);
        let missing = read_id(&dir.join("none"), Duration::from_millis(50), 3);
        assert!(missing.unwrap_err().to_string().contains("rank 3 waited"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_environments_say_what_is_wrong() {
        let config = RankConfig {
            rank: 2,
            world_size: 2,
            device: 0,
            id: IdExchange::Hex(String::new()),
        };
        assert!(config.check().unwrap_err().to_string().contains("RANK=2"));
        assert!(parse_id("abc").is_err());
    }
}
