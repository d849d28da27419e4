//! # Several GPUs: one input spread over them, one result
//!
//! Each GPU holds a shard of the data (a `CudaSlice` on that GPU, or a host slice copied to it)
//! and needs the sum, minimum, maximum, argmin, argmax or mean of *all* of it. Each GPU runs the
//! library's kernel on its own shard, on its own stream, then one NCCL collective combines the
//! partials: the result is left on every GPU ([`Devices::all_reduce`], [`Rank::all_reduce`]),
//! on one ([`Devices::reduce_to`]), or brought to the host ([`Devices::reduce`],
//! [`Rank::reduce`]).
//!
//! Two ways to run, as NCCL users do:
//! - **One process, every GPU** ([`Devices`]): `Devices::all()` or `Devices::new(&[0, 1])`
//!   opens a context, a stream and a [`Reducer`] per GPU and one NCCL
//!   communicator each (`ncclCommInitAll`); a call takes one shard per GPU, in order.
//! - **One process per GPU** ([`Rank`]), which is also how it runs across hosts: each process
//!   is a rank of a world; `Rank::from_env()` reads `RANK`, `WORLD_SIZE` and `LOCAL_RANK` (as
//!   torchrun sets them) and exchanges NCCL's unique id through a file named by
//!   `REDUCE_NCCL_ID_FILE` (rank 0 writes it, the others wait for it). A call takes this
//!   rank's one shard; every rank must make the same calls in the same order.
//!
//! ```no_run
//! // One process, every GPU of the host.
//! use reduce_rs::devices::Devices;
//! let devices = Devices::all()?;
//! let data: Vec<f32> = (0..1 << 20).map(|i| (i % 100) as f32).collect();
//! let shards = devices.scatter(&data)?; // even pieces, one CudaSlice per GPU
//! assert_eq!(devices.argmax(&shards)?, Some((99, 99.0)));
//! let sums = devices.all_reduce(reduce_rs::ops::Sum, &shards)?; // one buffer per GPU, no wait
//! # Ok::<(), reduce_rs::Error>(())
//! ```
//!
//! ```no_run
//! // One process per GPU: RANK=0 WORLD_SIZE=2 REDUCE_NCCL_ID_FILE=/tmp/id ./prog & RANK=1 …
//! use reduce_rs::devices::Rank;
//! let rank = Rank::from_env()?;
//! let stream = rank.stream().unwrap().clone();
//! let shard = stream.clone_htod(&vec![1.0f32; 1 << 20])?;
//! let total = rank.sum(&shard)?; // the same on every rank
//! assert_eq!(total, (rank.world_size() << 20) as f32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Without a GPU, or without NCCL, the same logic runs over *simulated* devices (each a
//! [`Reducer::simulator`](crate::Reducer::simulator), exchanging host buffers): that is how
//! CI tests it.
//!
//! ```
//! use reduce_rs::devices::{Devices, even_split};
//! let devices = Devices::simulated(3);
//! let data: Vec<i32> = (0..1000).map(|i| (i * 37 + 11) % 101 - 50).collect();
//! let shards: Vec<&[i32]> = even_split(data.len(), 3).into_iter().map(|r| &data[r]).collect();
//! assert_eq!(devices.max(&shards)?, Some(50));
//! let first = data.iter().position(|&x| x == -50).unwrap();
//! assert_eq!(devices.argmin(&shards)?, Some((first, -50))); // the first global index
//! assert_eq!(devices.sum(&shards)?, data.iter().sum::<i32>());
//! # Ok::<(), reduce_rs::Error>(())
//! ```
//!
//! # Semantics, whatever the number of GPUs
//! The library's (see [`crate::op`]): NaN is both the largest and the smallest value, argmin
//! and argmax give the first *global* index (ties go to the earlier shard), `-0.0 < +0.0`,
//! integer sums wrap, the mean is the global sum over the global count, and empty shards (or an
//! empty input) give what one GPU gives. Min, max, argmin, argmax and integer sums are the
//! bits one GPU gives; float sums and means are rounded in another order (as any change of
//! launch grid does), except in the reproducible mode ([`Devices::with_reproducible`],
//! [`Rank::with_reproducible`]): its f32/f64 sums are one device's bits for any number of
//! devices and any split. The result is the same bits on every GPU. How each operation
//! combines: `combine.rs`.
//!
//! # NCCL
//! Loaded at run time from `libnccl.so.2` ([`nccl_available`]); without it, a GPU group says
//! so in one line. NVLink SHARP (multicast) stays off: `NCCL_NVLS_ENABLE=0` is set in the
//! process unless the environment sets it.

mod combine;
mod comm;
mod group;
mod nccl;
mod rank;
mod shard;
mod split;

pub use crate::error::NcclUnavailable;
pub use group::DeviceResult;
pub use nccl::nccl_available;
pub use rank::{IdExchange, Rank, RankConfig};
pub use split::even_split;

use crate::element::Element;
use crate::error::{DriverContext, Error, Result};
use crate::input::Input;
use crate::op::{ArgMax, ArgMin, Max, Mean, Min, Operation, Sum};
use crate::reducer::Reducer;
use comm::{Exchange, Fabric, NcclComms};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use group::{Member, Wanted, World};
use simt::Schedule;
use std::sync::{Arc, Mutex};

/// Every GPU of a group driven by this process, each with its own stream and reducer, and the
/// NCCL communicators between them; or the same number of simulated devices.
///
/// ```
/// use reduce_rs::{devices::Devices, ops::ArgMax};
/// let devices = Devices::simulated(2);
/// let shards = [vec![3.0f32, 9.0], vec![9.0, f32::NAN, 1.0]];
/// assert_eq!(devices.reduce(ArgMax, &shards)?.map(|(i, _)| i), Some(3)); // the first NaN
/// assert_eq!(devices.mean(&shards)?.map(f32::is_nan), Some(true));
/// # Ok::<(), reduce_rs::Error>(())
/// ```
pub struct Devices {
    // Dropped first: the communicators go before the contexts they run on.
    fabric: Fabric,
    members: Vec<Member>,
}

impl Devices {
    /// Every GPU of this machine, with NCCL between them (one GPU needs no NCCL).
    ///
    /// ```no_run
    /// let devices = reduce_rs::devices::Devices::all()?;
    /// println!("{} GPUs", devices.len());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn all() -> Result<Devices> {
        let count = crate::backend::gpu::probe()?;
        Devices::new(&(0..count).collect::<Vec<_>>())
    }

    /// The GPUs `ordinals` (distinct), rank `k` on `ordinals[k]`.
    ///
    /// ```no_run
    /// let devices = reduce_rs::devices::Devices::new(&[0, 1])?;
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn new(ordinals: &[usize]) -> Result<Devices> {
        if ordinals.is_empty() {
            return Err(Error::Devices("a group needs at least one GPU".into()));
        }
        // Before any CUDA or NCCL thread exists: no NVLink multicast (see `nccl.rs`).
        nccl::keep_nvls_off();
        let mut seen = ordinals.to_vec();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::Devices(format!(
                "GPUs {ordinals:?}: a GPU may appear once in a group (NCCL needs one rank per GPU)"
            )));
        }
        let count = crate::backend::gpu::probe()?;
        if let Some(&missing) = ordinals.iter().find(|&&o| o >= count) {
            return Err(crate::error::GpuUnavailable::NoSuchDevice {
                ordinal: missing,
                count,
            }
            .into());
        }
        let mut members = Vec::new();
        for &ordinal in ordinals {
            let ctx = CudaContext::new(ordinal).doing(|| format!("opening GPU {ordinal}"))?;
            let stream = ctx
                .new_stream()
                .doing(|| format!("creating a stream on GPU {ordinal}"))?;
            members.push(Member::new(Reducer::on_stream(stream)?));
        }
        let fabric = if ordinals.len() == 1 {
            Fabric::Single
        } else {
            let nccl = nccl::nccl()?;
            Fabric::Nccl(NcclComms {
                nccl,
                comms: nccl.init_all(ordinals)?,
                lock: Mutex::new(()),
            })
        };
        Ok(Devices { fabric, members })
    }

    /// `count` simulated devices (no GPU, no NCCL): each a CPU simulator, exchanging host
    /// buffers. Shards are host slices.
    ///
    /// ```
    /// let devices = reduce_rs::devices::Devices::simulated(5);
    /// assert!(devices.is_simulated());
    /// assert_eq!(devices.sum(&[vec![1u64, 2], vec![], vec![3], vec![], vec![4]])?, 10);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn simulated(count: usize) -> Devices {
        Devices::simulated_with(count, Schedule::InOrder)
    }

    /// `count` simulated devices whose simulators use `schedule`.
    pub fn simulated_with(count: usize, schedule: Schedule) -> Devices {
        let count = count.max(1);
        Devices {
            fabric: Fabric::Sim(Arc::new(Exchange::new(count))),
            members: (0..count)
                .map(|_| Member::new(Reducer::simulator_with(schedule)))
                .collect(),
        }
    }

    /// Sums floats the reproducible way on every device ([`Reducer::with_reproducible`]), and
    /// merges the devices' binned partial sums: the same bits as one device's reproducible
    /// sum of the whole input, however many devices hold it and however it is cut.
    ///
    /// ```
    /// use reduce_rs::{Reducer, devices::Devices};
    /// let data: Vec<f32> = (0..10_000).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
    /// let one = Reducer::simulator().with_reproducible(true).sum(&data)?;
    /// let three = Devices::simulated(3).with_reproducible(true);
    /// let shards = [&data[..17], &data[17..6000], &data[6000..]];
    /// assert_eq!(three.sum(&shards)?.to_bits(), one.to_bits());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn with_reproducible(mut self, reproducible: bool) -> Devices {
        for member in &mut self.members {
            member.reducer.set_reproducible(reproducible);
        }
        self
    }

    /// How many devices.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// No devices (never: a group has at least one).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Simulated devices rather than GPUs.
    pub fn is_simulated(&self) -> bool {
        matches!(self.fabric, Fabric::Sim(_))
    }

    /// Device `k`'s reducer (its stream, its GPU), for work of your own on that device.
    pub fn reducer(&self, k: usize) -> &Reducer {
        &self.members[k].reducer
    }

    /// Device `k`'s stream (`None` on simulated devices).
    pub fn stream(&self, k: usize) -> Option<&Arc<CudaStream>> {
        self.members[k].stream()
    }

    /// The NCCL in use (`NCCL 2.28.0 (libnccl.so.2)`), if NCCL is.
    pub fn nccl_version(&self) -> Option<String> {
        match &self.fabric {
            Fabric::Nccl(comms) => Some(comms.nccl.describe()),
            _ => None,
        }
    }

    /// `data` cut into [`even_split`] pieces, piece `k` copied to GPU `k` (on its stream).
    /// GPUs only.
    pub fn scatter<T: Element>(&self, data: &[T]) -> Result<Vec<Shard<T>>> {
        self.scatter_pieces(data, &even_split(data.len(), self.len()))
    }

    /// `data[pieces[k]]` copied to GPU `k` (on its stream), one piece per GPU, any lengths
    /// (empty ones too). GPUs only.
    pub fn scatter_pieces<T: Element>(
        &self,
        data: &[T],
        pieces: &[std::ops::Range<usize>],
    ) -> Result<Vec<Shard<T>>> {
        if pieces.len() != self.len() {
            return Err(Error::Devices(format!(
                "{} pieces for {} devices",
                pieces.len(),
                self.len()
            )));
        }
        pieces
            .iter()
            .enumerate()
            .map(|(k, range)| {
                let stream = self.stream(k).ok_or_else(|| {
                    Error::WrongDevice(
                        "simulated devices read host slices: pass the pieces themselves".into(),
                    )
                })?;
                let piece = data.get(range.clone()).ok_or_else(|| {
                    Error::Devices(format!(
                        "piece {range:?} is outside {} elements",
                        data.len()
                    ))
                })?;
                // CUDA allocates nothing of zero bytes: an empty piece holds one unused element.
                let buffer = if piece.is_empty() {
                    stream.alloc_zeros::<T>(1)
                } else {
                    stream.clone_htod(piece)
                }
                .doing(|| format!("copying a shard to device {k}"))?;
                Ok(Shard {
                    buffer,
                    len: piece.len(),
                })
            })
            .collect()
    }

    fn world(&self) -> World<'_> {
        World {
            members: &self.members,
            fabric: &self.fabric,
            size: self.members.len(),
            first_rank: 0,
        }
    }

    /// `op` over the shards (shard `k` on device `k`), the result left on every device: one
    /// buffer per device, written on its stream, nothing waited for. The same bits on every
    /// device. If every shard is empty, a sum writes `0` and the other operations are an
    /// error, as [`Reducer::reduce_into`](crate::Reducer::reduce_into) says.
    ///
    /// ```
    /// use reduce_rs::{devices::Devices, ops::ArgMin};
    /// let devices = Devices::simulated(3);
    /// let shards = [vec![5i64, 2], vec![], vec![7, 2, -1]];
    /// for result in devices.all_reduce(ArgMin, &shards)? {
    ///     let arg = result.read()?;
    ///     assert_eq!((arg.index, arg.value), (4, -1));
    /// }
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn all_reduce<T, O, S>(&self, op: O, shards: &[S]) -> Result<Vec<DeviceResult<O::Device>>>
    where
        T: Element,
        O: Operation<T>,
        S: Input<T>,
    {
        let _ = op;
        self.check_not_all_empty::<T, O, S>(shards)?;
        let shards: Vec<&S> = shards.iter().collect();
        let results = group::all_reduce::<T, O, S>(&self.world(), &shards, Wanted::Every)?;
        Ok(results.into_iter().flatten().collect())
    }

    /// `op` over the shards, the result left on device `root` only (see
    /// [`Devices::all_reduce`]).
    ///
    /// ```
    /// use reduce_rs::{devices::Devices, ops::Min};
    /// let devices = Devices::simulated(2);
    /// let on_one = devices.reduce_to(Min, &[vec![4u32, 1], vec![3]], 1)?;
    /// assert_eq!(on_one.read()?, 1);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn reduce_to<T, O, S>(
        &self,
        op: O,
        shards: &[S],
        root: usize,
    ) -> Result<DeviceResult<O::Device>>
    where
        T: Element,
        O: Operation<T>,
        S: Input<T>,
    {
        let _ = op;
        if root >= self.len() {
            return Err(Error::Devices(format!(
                "root {root} is not one of the {} devices",
                self.len()
            )));
        }
        self.check_not_all_empty::<T, O, S>(shards)?;
        let shards: Vec<&S> = shards.iter().collect();
        let results = group::all_reduce::<T, O, S>(&self.world(), &shards, Wanted::Only(root))?;
        results
            .into_iter()
            .flatten()
            .next()
            .ok_or_else(|| Error::Devices("the root's result is missing".into()))
    }

    /// `op` over the shards, the result on the host (this waits for device 0).
    ///
    /// ```
    /// use reduce_rs::{devices::Devices, ops::Mean};
    /// let devices = Devices::simulated(2);
    /// assert_eq!(devices.reduce(Mean, &[vec![1u32, 2], vec![6]])?, Some(3.0));
    /// assert_eq!(devices.reduce(Mean, &[Vec::<u32>::new(), vec![]])?, None);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn reduce<T, O, S>(&self, op: O, shards: &[S]) -> Result<O::Output>
    where
        T: Element,
        O: Operation<T>,
        S: Input<T>,
    {
        let _ = op;
        if shards.iter().all(|s| s.is_empty()) && shards.len() == self.len() {
            return Ok(O::empty());
        }
        let shards: Vec<&S> = shards.iter().collect();
        group::reduce_to_host::<T, O, S>(&self.world(), &shards)
    }

    /// `Σ` of every shard (see [`Reducer::sum`](crate::Reducer::sum)).
    pub fn sum<T: Element, S: Input<T>>(&self, shards: &[S]) -> Result<T::Sum> {
        self.reduce(Sum, shards)
    }

    /// The smallest element of every shard (see [`Reducer::min`](crate::Reducer::min)).
    pub fn min<T: Element, S: Input<T>>(&self, shards: &[S]) -> Result<Option<T>> {
        self.reduce(Min, shards)
    }

    /// The largest element of every shard (see [`Reducer::max`](crate::Reducer::max)).
    pub fn max<T: Element, S: Input<T>>(&self, shards: &[S]) -> Result<Option<T>> {
        self.reduce(Max, shards)
    }

    /// Global index (shard `k`'s elements follow shard `k - 1`'s) and value of the first
    /// smallest element.
    pub fn argmin<T: Element, S: Input<T>>(&self, shards: &[S]) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMin, shards)
    }

    /// Global index and value of the first largest element.
    pub fn argmax<T: Element, S: Input<T>>(&self, shards: &[S]) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMax, shards)
    }

    /// Global sum over global count (see [`Reducer::mean`](crate::Reducer::mean)).
    pub fn mean<T: Element, S: Input<T>>(&self, shards: &[S]) -> Result<Option<T::Mean>> {
        self.reduce(Mean, shards)
    }

    /// NCCL's all-reduce (`ncclSum`) of `buffers[k]` in place on device `k`, alone: what the
    /// collective costs without a reduction before it (for the benchmark).
    #[doc(hidden)]
    pub fn raw_all_reduce_f32(&self, buffers: &mut [CudaSlice<f32>]) -> Result<()> {
        self.world().raw_all_reduce_f32(buffers)
    }

    fn check_not_all_empty<T: Element, O: Operation<T>, S: Input<T>>(
        &self,
        shards: &[S],
    ) -> Result<()> {
        if shards.iter().all(|s| s.is_empty()) && O::empty_device().is_none() {
            return Err(Error::Empty { op: O::KIND });
        }
        Ok(())
    }
}

/// One device's piece of an input, made by [`Devices::scatter`]: a GPU buffer of `len`
/// elements (an empty piece keeps one unused element, as CUDA allocates nothing of zero bytes).
/// An [`Input`] like a `CudaSlice`.
pub struct Shard<T: Element> {
    buffer: CudaSlice<T>,
    len: usize,
}

impl<T: Element> Shard<T> {
    /// The piece's elements as a view of the buffer.
    pub fn view(&self) -> cudarc::driver::CudaView<'_, T> {
        self.buffer.slice(0..self.len)
    }

    /// The buffer holding the piece (one element longer than the piece when it is empty).
    pub fn buffer(&self) -> &CudaSlice<T> {
        &self.buffer
    }
}

impl<T: Element> Input<T> for Shard<T> {
    fn len(&self) -> usize {
        self.len
    }
    fn source(&self) -> crate::input::Source<'_, T> {
        // An empty input is never read (every path checks `is_empty` first), so the one
        // unused element of an empty piece is never seen.
        crate::input::Source::Device(&self.buffer)
    }
}

impl Drop for Devices {
    fn drop(&mut self) {
        // NCCL communicators are destroyed once their work is done.
        for member in &self.members {
            if let Some(stream) = member.stream() {
                let _ = stream.synchronize();
            }
        }
    }
}
