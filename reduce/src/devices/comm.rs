//! The communicator between devices: NCCL, the simulator's in-process exchange, or nothing
//! (one GPU). The group logic (`group.rs`) calls the same two collectives on each.

use super::nccl::{DataType, Nccl, RawComm};
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaStream, result};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How the devices of a group (or the ranks of a world) talk.
pub(crate) enum Fabric {
    /// NCCL communicators, one per local device, local device `k` being rank `first_rank + k`.
    Nccl(NcclComms),
    /// The simulator's exchange of host buffers between simulated devices (threads or not).
    Sim(Arc<Exchange>),
    /// A world of one GPU: a collective is a copy (no NCCL needed).
    Single,
}

/// NCCL communicators this process owns (destroyed on drop).
pub(crate) struct NcclComms {
    pub(crate) nccl: &'static Nccl,
    pub(crate) comms: Vec<RawComm>,
    /// NCCL calls on these communicators are issued by one thread at a time.
    pub(crate) lock: Mutex<()>,
}

// SAFETY: NCCL communicators may be used from any thread, one call at a time: `lock` serialises
// every call that enqueues on them, and they are destroyed once, in `Drop`.
unsafe impl Send for NcclComms {}
// SAFETY: as above.
unsafe impl Sync for NcclComms {}

impl Drop for NcclComms {
    fn drop(&mut self) {
        for &comm in &self.comms {
            self.nccl.destroy(comm);
        }
    }
}

fn stream_ptr(stream: &CudaStream) -> *mut std::ffi::c_void {
    stream.cu_stream().cast()
}

impl Fabric {
    /// All-gather on the GPU: local device `k` sends `bytes` bytes at `sends[k]` and receives
    /// `world × bytes` at `recvs[k]`, in rank order, on `streams[k]`.
    pub(crate) fn all_gather_device(
        &self,
        streams: &[&Arc<CudaStream>],
        sends: &[u64],
        recvs: &[u64],
        bytes: usize,
    ) -> Result<()> {
        match self {
            Fabric::Nccl(nccl) => nccl.grouped(|k, comm| {
                // SAFETY: the group logic sized `sends[k]` to `bytes` and `recvs[k]` to `world ×
                // bytes` bytes on device `k`, and keeps both until its stream has run this.
                unsafe {
                    nccl.nccl.all_gather(
                        (sends[k], recvs[k]),
                        bytes,
                        DataType::Uint8,
                        comm,
                        stream_ptr(streams[k]),
                    )
                }
            }),
            Fabric::Single => copy(streams[0], sends[0], recvs[0], bytes),
            Fabric::Sim(_) => Err(Error::WrongDevice(
                "simulated devices exchange host buffers".into(),
            )),
        }
    }

    /// All-reduce with `ncclSum` on the GPU: `count` values of `dtype` (`bytes` in all) at
    /// `sends[k]` into `recvs[k]` (the same address for in place), on `streams[k]`.
    pub(crate) fn all_reduce_sum_device(
        &self,
        streams: &[&Arc<CudaStream>],
        (sends, recvs): (&[u64], &[u64]),
        dtype: DataType,
        (count, bytes): (usize, usize),
    ) -> Result<()> {
        match self {
            Fabric::Nccl(nccl) => nccl.grouped(|k, comm| {
                // SAFETY: as in `all_gather_device`: one `dtype` value each, alive until run.
                unsafe {
                    nccl.nccl.all_reduce_sum(
                        (sends[k], recvs[k]),
                        count,
                        dtype,
                        comm,
                        stream_ptr(streams[k]),
                    )
                }
            }),
            Fabric::Single if sends[0] == recvs[0] => Ok(()),
            Fabric::Single => copy(streams[0], sends[0], recvs[0], bytes),
            Fabric::Sim(_) => Err(Error::WrongDevice(
                "simulated devices exchange host buffers".into(),
            )),
        }
    }

    /// All-gather on the simulator: `(rank, bytes)` from each local device; every rank's bytes
    /// in rank order.
    pub(crate) fn all_gather_host(
        &self,
        sends: Vec<(usize, Vec<u8>)>,
    ) -> Result<Arc<Vec<Vec<u8>>>> {
        match self {
            Fabric::Sim(exchange) => exchange.all_gather(sends),
            _ => Err(Error::WrongDevice(
                "GPUs exchange device buffers, not host buffers".into(),
            )),
        }
    }
}

impl NcclComms {
    /// Calls `each(k, comm)` for every local communicator inside one NCCL group (required when
    /// one thread drives several GPUs; harmless for one).
    fn grouped(&self, mut each: impl FnMut(usize, RawComm) -> Result<()>) -> Result<()> {
        let _one_at_a_time = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.nccl.group_start()?;
        let mut outcome = Ok(());
        for (k, &comm) in self.comms.iter().enumerate() {
            outcome = each(k, comm);
            if outcome.is_err() {
                break;
            }
        }
        let ended = self.nccl.group_end();
        outcome.and(ended)
    }
}

/// `bytes` bytes from `src` to `dst` on `stream`: the collective of a world of one.
fn copy(stream: &Arc<CudaStream>, src: u64, dst: u64, bytes: usize) -> Result<()> {
    crate::backend::gpu::make_current(stream)?;
    // SAFETY: both hold `bytes` bytes on this stream's device, alive until the stream has run
    // the copy (the group logic's contract).
    unsafe { result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }
        .doing(|| "copying the partial (a world of one GPU)".into())
}

/// The simulator's collective: simulated ranks deposit their bytes, and once every rank of the
/// world has, each gets all of them in rank order. Ranks may be threads of their own (one
/// [`Rank`](super::Rank) each) or one caller for all (a simulated
/// [`Devices`](super::Devices)).
pub(crate) struct Exchange {
    world: usize,
    state: Mutex<Round>,
    turn: Condvar,
    timeout: Duration,
}

#[derive(Default)]
struct Round {
    slots: Vec<Option<Vec<u8>>>,
    deposited: usize,
    callers: usize,
    /// The finished round's bytes, until every caller of that round has taken them.
    done: Option<Arc<Vec<Vec<u8>>>>,
    readers: usize,
}

impl Exchange {
    pub(crate) fn new(world: usize) -> Exchange {
        Exchange {
            world,
            state: Mutex::new(Round {
                slots: vec![None; world],
                ..Round::default()
            }),
            turn: Condvar::new(),
            timeout: Duration::from_secs(60),
        }
    }

    fn all_gather(&self, sends: Vec<(usize, Vec<u8>)>) -> Result<Arc<Vec<Vec<u8>>>> {
        let stuck = || {
            Error::Devices(format!(
                "a simulated collective waited {} s for the other ranks (does every rank call it?)",
                self.timeout.as_secs()
            ))
        };
        let lock = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // A new round starts once every caller of the last one has its bytes.
        let (mut round, waited) = self
            .turn
            .wait_timeout_while(lock, self.timeout, |r| r.done.is_some())
            .unwrap_or_else(|p| p.into_inner());
        if waited.timed_out() {
            return Err(stuck());
        }
        for (rank, bytes) in sends {
            if rank >= self.world || round.slots[rank].is_some() {
                return Err(Error::Devices(format!(
                    "simulated rank {rank} sent twice or is outside a world of {}",
                    self.world
                )));
            }
            round.slots[rank] = Some(bytes);
            round.deposited += 1;
        }
        round.callers += 1;
        if round.deposited == self.world {
            let all: Vec<Vec<u8>> = round
                .slots
                .iter_mut()
                .map(|s| s.take().unwrap_or_default())
                .collect();
            let all = Arc::new(all);
            round.deposited = 0;
            round.readers = round.callers - 1;
            round.callers = 0;
            if round.readers > 0 {
                round.done = Some(all.clone());
            }
            self.turn.notify_all();
            return Ok(all);
        }
        let (mut round, waited) = self
            .turn
            .wait_timeout_while(round, self.timeout, |r| r.done.is_none())
            .unwrap_or_else(|p| p.into_inner());
        if waited.timed_out() {
            return Err(stuck());
        }
        let all = round.done.clone().expect("the round is done");
        round.readers -= 1;
        if round.readers == 0 {
            round.done = None;
            self.turn.notify_all();
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_exchange_in_rank_order_round_after_round() {
        let exchange = Arc::new(Exchange::new(3));
        let threads: Vec<_> = (0..3)
            .map(|rank| {
                let exchange = exchange.clone();
                std::thread::spawn(move || {
                    (0..20u8)
                        .map(|round| {
                            let got = exchange.all_gather(vec![(rank, vec![rank as u8, round])]);
                            got.unwrap().as_ref().clone()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for thread in threads {
            for (round, got) in thread.join().unwrap().into_iter().enumerate() {
                assert_eq!(got, [[0, round as u8], [1, round as u8], [2, round as u8]]);
            }
        }
    }

    #[test]
    fn one_caller_for_every_rank() {
        let exchange = Exchange::new(2);
        let got = exchange.all_gather(vec![(1, vec![1]), (0, vec![0])]);
        assert_eq!(*got.unwrap(), [[0], [1]]);
    }
}
