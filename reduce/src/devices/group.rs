//! The group logic, shared by [`Devices`](super::Devices) (every device in this process) and
//! [`Rank`](super::Rank) (one device per process), on GPUs or simulated devices:
//!
//! 1. `shard_step_gpu` / `shard_step_sim`: every local device reduces its shard on its own
//!    stream (the shard kernel, or the shard's sum), into its send buffer;
//! 2. `collective_step` (or the simulator's exchange): one collective over every device (NCCL,
//!    or a copy for a world of one);
//! 3. the combine kernel on every device that wants the result (`gpu_all_reduce`,
//!    `sim_all_reduce`), or the same fold on the host (`reduce_to_host`).
//!
//! On GPUs nothing waits for the device until a host result is asked for.

use super::combine::{Strategy, host_result, merged_sum, sum_values};
use super::comm::Fabric;
use super::shard::{self, To};
use crate::backend::Feed;
use crate::backend::gpu::DeviceBuffer;
use crate::bytes::read_value;
use crate::element::Element;
use crate::error::{DriverContext, Error, Result};
use crate::input::Input;
use crate::op::Operation;
use crate::op::device_value;
use crate::reducer::Reducer;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DeviceRepr};
use std::sync::{Arc, Mutex};

/// A result of [`Devices::all_reduce`](super::Devices::all_reduce) or
/// [`Rank::all_reduce`](super::Rank::all_reduce) on one device: a one-element GPU buffer on that
/// device's stream, or a simulated device's value.
#[derive(Debug)]
pub enum DeviceResult<D: DeviceRepr> {
    Gpu(CudaSlice<D>),
    Simulated(D),
}

impl<D: DeviceRepr + Copy> DeviceResult<D> {
    /// The value, on the host (for a GPU: a copy once its stream gets there, waiting for it).
    ///
    /// ```
    /// use reduce_rs::{devices::Devices, ops::Max};
    /// let devices = Devices::simulated(2);
    /// let results = devices.all_reduce(Max, &[vec![1u32, 5], vec![3]])?;
    /// assert_eq!(results[1].read()?, 5);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn read(&self) -> Result<D> {
        match self {
            DeviceResult::Simulated(value) => Ok(*value),
            DeviceResult::Gpu(slice) => {
                let host = slice
                    .stream()
                    .clone_dtoh(slice)
                    .doing(|| "copying a device result to the host".into())?;
                Ok(host[0])
            }
        }
    }

    /// The GPU buffer holding the result (`None` on a simulated device).
    pub fn slice(&self) -> Option<&CudaSlice<D>> {
        match self {
            DeviceResult::Gpu(slice) => Some(slice),
            DeviceResult::Simulated(_) => None,
        }
    }

    /// The GPU buffer holding the result (`None` on a simulated device).
    pub fn into_slice(self) -> Option<CudaSlice<D>> {
        match self {
            DeviceResult::Gpu(slice) => Some(slice),
            DeviceResult::Simulated(_) => None,
        }
    }
}

/// One device of a group: its reducer (its own stream) and the buffers its collectives use.
pub(crate) struct Member {
    pub(crate) reducer: Reducer,
    scratch: Mutex<Scratch>,
}

/// A device's send and receive buffers, reused from call to call (GPU only; only this
/// device's stream touches them).
#[derive(Default)]
struct Scratch {
    send: Option<DeviceBuffer>,
    recv: Option<DeviceBuffer>,
}

fn at_least(
    buffer: &mut Option<DeviceBuffer>,
    stream: &Arc<CudaStream>,
    bytes: usize,
) -> Result<u64> {
    if buffer.as_ref().is_none_or(|b| b.bytes() < bytes) {
        *buffer = Some(DeviceBuffer::zeroed(stream, bytes.max(64))?);
    }
    Ok(buffer.as_ref().expect("allocated above").ptr())
}

impl Member {
    pub(crate) fn new(reducer: Reducer) -> Member {
        Member {
            reducer,
            scratch: Mutex::new(Scratch::default()),
        }
    }

    pub(crate) fn stream(&self) -> Option<&Arc<CudaStream>> {
        self.reducer.stream()
    }
}

/// The world: how many ranks, which one local device 0 is, and how they talk.
pub(crate) struct World<'a> {
    pub(crate) members: &'a [Member],
    pub(crate) fabric: &'a Fabric,
    pub(crate) size: usize,
    pub(crate) first_rank: usize,
}

/// Which local devices want the result left on them.
#[derive(Clone, Copy)]
pub(crate) enum Wanted {
    Every,
    Only(usize),
}

impl Wanted {
    fn includes(self, k: usize) -> bool {
        match self {
            Wanted::Every => true,
            Wanted::Only(root) => root == k,
        }
    }
}

fn check_shards<S: ?Sized>(world: &World<'_>, shards: &[&S]) -> Result<()> {
    if shards.len() == world.members.len() {
        Ok(())
    } else {
        Err(Error::Devices(format!(
            "{} shards for {} devices: give one shard per device, in order (an empty one where a device has none)",
            shards.len(),
            world.members.len()
        )))
    }
}

fn is_gpu(world: &World<'_>) -> bool {
    world.members[0].stream().is_some()
}

/// `op` over the shards (one per local device), the result left on the `wanted` devices.
pub(crate) fn all_reduce<T, O, S>(
    world: &World<'_>,
    shards: &[&S],
    wanted: Wanted,
) -> Result<Vec<Option<DeviceResult<O::Device>>>>
where
    T: Element,
    O: Operation<T>,
    S: Input<T> + ?Sized,
{
    check_shards(world, shards)?;
    let strategy = Strategy::of::<T, O>(world.members[0].reducer.reproducible());
    if is_gpu(world) {
        gpu_all_reduce::<T, O, S>(world, shards, wanted, strategy)
    } else {
        let values = sim_all_reduce::<T, O, S>(world, shards, wanted, strategy)?;
        Ok(values
            .into_iter()
            .map(|v| v.map(DeviceResult::Simulated))
            .collect())
    }
}

/// `op` over the shards, the result on the host (the same on every rank).
pub(crate) fn reduce_to_host<T, O, S>(world: &World<'_>, shards: &[&S]) -> Result<O::Output>
where
    T: Element,
    O: Operation<T>,
    S: Input<T> + ?Sized,
{
    check_shards(world, shards)?;
    let strategy = Strategy::of::<T, O>(world.members[0].reducer.reproducible());
    let bytes = strategy.bytes();
    if !is_gpu(world) {
        let sends = shard_step_sim::<T, O, S>(world, shards, strategy)?;
        let all = world.fabric.all_gather_host(sends)?;
        return Ok(match strategy {
            Strategy::SumCollective { dtype, .. } => {
                O::output(read_value(&sum_values(dtype, &all)))
            }
            Strategy::Gather { .. } => host_result::<T, O>(&all.concat(), world.size),
            Strategy::Binned { .. } => merged_sum::<T, O>(&all.concat(), world.size),
        });
    }
    let guards = lock_all(world);
    let streams = streams(world)?;
    let mut sends = Vec::new();
    let mut recvs = Vec::new();
    let mut scratches = Vec::new();
    for (k, member) in world.members.iter().enumerate() {
        let mut scratch = guards[k].lock().unwrap_or_else(|p| p.into_inner());
        let send = at_least(&mut scratch.send, streams[k], bytes)?;
        let recv = at_least(&mut scratch.recv, streams[k], bytes * world.size)?;
        shard_step_gpu::<T, O, S>(member, shards[k], send, strategy)?;
        sends.push(send);
        recvs.push(recv);
        scratches.push(scratch);
    }
    collective_step(world, &streams, &sends, &recvs, strategy)?;
    let gpu = world.members[0]
        .reducer
        .gpu_backend()
        .expect("a GPU member has a GPU backend");
    let received = gpu.read_back_many(recvs[0], bytes * collective_len(world, strategy))?;
    drop(scratches);
    Ok(match strategy {
        Strategy::SumCollective { .. } => O::output(read_value(&received)),
        Strategy::Gather { .. } => host_result::<T, O>(&received, world.size),
        Strategy::Binned { .. } => merged_sum::<T, O>(&received, world.size),
    })
}

fn collective_len(world: &World<'_>, strategy: Strategy) -> usize {
    match strategy {
        Strategy::SumCollective { .. } => 1,
        Strategy::Gather { .. } | Strategy::Binned { .. } => world.size,
    }
}

/// The members' scratch locks, taken in order (one call at a time per member).
fn lock_all<'a>(world: &World<'a>) -> Vec<&'a Mutex<Scratch>> {
    world.members.iter().map(|m| &m.scratch).collect()
}

fn streams<'a>(world: &World<'a>) -> Result<Vec<&'a Arc<CudaStream>>> {
    world
        .members
        .iter()
        .map(|m| {
            m.stream()
                .ok_or_else(|| Error::Devices("a group mixes GPUs and simulated devices".into()))
        })
        .collect()
}

/// Step 1 on a GPU: the shard's partial (or sum) into `send`.
fn shard_step_gpu<T, O, S>(member: &Member, shard: &S, send: u64, strategy: Strategy) -> Result<()>
where
    T: Element,
    O: Operation<T>,
    S: Input<T> + ?Sized,
{
    shard::step::<T, O, S>(&member.reducer, shard, strategy, To::Device(send)).map(|_| ())
}

/// Step 1 on simulated devices: every local device's partial (or sum), with its rank.
fn shard_step_sim<T, O, S>(
    world: &World<'_>,
    shards: &[&S],
    strategy: Strategy,
) -> Result<Vec<(usize, Vec<u8>)>>
where
    T: Element,
    O: Operation<T>,
    S: Input<T> + ?Sized,
{
    world
        .members
        .iter()
        .zip(shards)
        .enumerate()
        .map(|(k, (member, shard))| {
            let bytes = shard::step::<T, O, S>(&member.reducer, *shard, strategy, To::Host)?;
            Ok((world.first_rank + k, bytes))
        })
        .collect()
}

/// Step 2 on GPUs: the strategy's collective from `sends` into `recvs`.
fn collective_step(
    world: &World<'_>,
    streams: &[&Arc<CudaStream>],
    sends: &[u64],
    recvs: &[u64],
    strategy: Strategy,
) -> Result<()> {
    match strategy {
        Strategy::SumCollective { dtype, bytes } => {
            world
                .fabric
                .all_reduce_sum_device(streams, (sends, recvs), dtype, (1, bytes))
        }
        Strategy::Gather { bytes } | Strategy::Binned { bytes } => {
            world.fabric.all_gather_device(streams, sends, recvs, bytes)
        }
    }
}

fn gpu_all_reduce<T, O, S>(
    world: &World<'_>,
    shards: &[&S],
    wanted: Wanted,
    strategy: Strategy,
) -> Result<Vec<Option<DeviceResult<O::Device>>>>
where
    T: Element,
    O: Operation<T>,
    S: Input<T> + ?Sized,
{
    let bytes = strategy.bytes();
    let guards = lock_all(world);
    let streams = streams(world)?;
    let mut results: Vec<CudaSlice<O::Device>> = Vec::new();
    for stream in &streams {
        // SAFETY: every element is written on this stream (by the collective or the combine
        // kernel) before anything else on it can read the buffer.
        let slice = unsafe { stream.alloc::<O::Device>(1) }
            .doing(|| "allocating a device result".into())?;
        results.push(slice);
    }
    let mut sends = Vec::new();
    let mut recvs = Vec::new();
    let mut scratches = Vec::new();
    for (k, member) in world.members.iter().enumerate() {
        let mut scratch = guards[k].lock().unwrap_or_else(|p| p.into_inner());
        let send = at_least(&mut scratch.send, streams[k], bytes)?;
        let recv = match strategy {
            Strategy::SumCollective { .. } => 0,
            Strategy::Gather { .. } | Strategy::Binned { .. } => {
                at_least(&mut scratch.recv, streams[k], bytes * world.size)?
            }
        };
        shard_step_gpu::<T, O, S>(member, shards[k], send, strategy)?;
        sends.push(send);
        recvs.push(recv);
        scratches.push(scratch);
    }
    {
        // The results are written through these pointers; their guards record the writes
        // (cudarc's event tracking) once everything below is enqueued.
        let mut writes = Vec::new();
        let mut outs = Vec::new();
        for (k, slice) in results.iter_mut().enumerate() {
            let (ptr, record) = slice.device_ptr_mut(streams[k]);
            outs.push(ptr);
            writes.push(record);
        }
        match strategy {
            Strategy::SumCollective { .. } => {
                collective_step(world, &streams, &sends, &outs, strategy)?;
            }
            Strategy::Gather { .. } | Strategy::Binned { .. } => {
                collective_step(world, &streams, &sends, &recvs, strategy)?;
                let binned = matches!(strategy, Strategy::Binned { .. });
                for (k, member) in world.members.iter().enumerate() {
                    if wanted.includes(k) {
                        shard::combine::<T, O>(
                            &member.reducer,
                            Feed::Device(recvs[k]),
                            world.size,
                            binned,
                            To::Device(outs[k]),
                        )?;
                    }
                }
            }
        }
        drop(writes);
    }
    drop(scratches);
    Ok(results
        .into_iter()
        .enumerate()
        .map(|(k, slice)| wanted.includes(k).then_some(DeviceResult::Gpu(slice)))
        .collect())
}

fn sim_all_reduce<T, O, S>(
    world: &World<'_>,
    shards: &[&S],
    wanted: Wanted,
    strategy: Strategy,
) -> Result<Vec<Option<O::Device>>>
where
    T: Element,
    O: Operation<T>,
    S: Input<T> + ?Sized,
{
    let sends = shard_step_sim::<T, O, S>(world, shards, strategy)?;
    let all = world.fabric.all_gather_host(sends)?;
    match strategy {
        Strategy::SumCollective { dtype, .. } => {
            let sum: O::Device = read_value(&sum_values(dtype, &all));
            Ok((0..world.members.len())
                .map(|k| wanted.includes(k).then_some(sum))
                .collect())
        }
        Strategy::Binned { .. } | Strategy::Gather { .. } => {
            // Every wanted member combines everything gathered, as each GPU does.
            let gathered = all.concat();
            let binned = matches!(strategy, Strategy::Binned { .. });
            world
                .members
                .iter()
                .enumerate()
                .map(|(k, member)| {
                    if !wanted.includes(k) {
                        return Ok(None);
                    }
                    let bytes = shard::combine::<T, O>(
                        &member.reducer,
                        Feed::Host(&gathered),
                        world.size,
                        binned,
                        To::Host,
                    )?;
                    // The merge writes the sum's float, the combine the operation's result.
                    Ok(Some(if binned {
                        read_value(&bytes)
                    } else {
                        device_value::<T, O>(&bytes)
                    }))
                })
                .collect()
        }
    }
}

/// `ncclAllReduce(ncclSum)` of each local buffer in place (GPUs only).
impl World<'_> {
    pub(crate) fn raw_all_reduce_f32(&self, buffers: &mut [CudaSlice<f32>]) -> Result<()> {
        let world = self;
        use cudarc::driver::DevicePtrMut;
        if buffers.len() != world.members.len() {
            return Err(Error::Devices("one buffer per device".into()));
        }
        let streams: Vec<&Arc<CudaStream>> = world
            .members
            .iter()
            .map(|m| m.stream().ok_or_else(|| Error::Devices("GPUs only".into())))
            .collect::<Result<_>>()?;
        let len = buffers[0].len();
        let mut guards = Vec::new();
        let mut ptrs = Vec::new();
        for (k, buffer) in buffers.iter_mut().enumerate() {
            let (ptr, guard) = buffer.device_ptr_mut(streams[k]);
            ptrs.push(ptr);
            guards.push(guard);
        }
        world.fabric.all_reduce_sum_device(
            &streams,
            (&ptrs, &ptrs),
            super::nccl::DataType::Float32,
            (len, len * size_of::<f32>()),
        )
    }
}
