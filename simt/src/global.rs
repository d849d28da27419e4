//! Global memory: the regions registered for a launch, the race checks on `ReadWrite` words
//! (within a block as in shared memory, between blocks through fence + atomic release and
//! acquire; see the crate docs), the atomics' bookkeeping, and the reports of what the checks
//! find.
//!
//! Global accesses are far fewer than shared ones in the kernels this crate checks, so per-word
//! state lives in a hash map keyed by word address (only words actually touched cost memory),
//! and the region of an access is found by a last-hit cache and a binary search.

use crate::lanes::{LaneClocks, UNIT, WARP_SIZE};
use crate::report::{ThreadName, Where, unordered_why, verb};
use crate::types::{Access as Mode, ErrorKind, Region, SimError};
use core::hash::{BuildHasherDefault, Hasher};
use core::panic::Location;
use std::collections::HashMap;

/// A multiplicative hash for integer keys: word addresses are sequential, not adversarial.
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// One access to a `ReadWrite` word as the race checks remember it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GlobalAccess {
    pub loc: &'static Location<'static>,
    /// The barrier epoch of the accessing block.
    pub epoch: u64,
    pub block: u32,
    /// The thread's own entry of its warp clock.
    pub clock: u32,
    /// How many `thread_fence`s the thread had executed before the access.
    pub fences: u32,
    pub thread: u16,
}

/// Who is accessing, and what orders them against earlier accesses.
pub(crate) struct GlobalAccessor<'a> {
    pub block: u32,
    pub thread: u16,
    pub epoch: u64,
    pub clocks: &'a LaneClocks,
    pub fences: u32,
    /// The epoch of the thread's latest fence (0: none yet).
    pub fence_epoch: u64,
    pub loc: &'static Location<'static>,
}

impl GlobalAccessor<'_> {
    fn access(&self) -> GlobalAccess {
        let lane = (u32::from(self.thread) % WARP_SIZE) as usize;
        GlobalAccess {
            loc: self.loc,
            epoch: self.epoch,
            block: self.block,
            clock: self.clocks[lane],
            fences: self.fences,
            thread: self.thread,
        }
    }
}

/// What went wrong with a global access.
pub(crate) enum GlobalError {
    /// The address is in no region.
    NoRegion,
    /// The access starts inside `region` but ends past it.
    PastEnd { region: Region },
    /// The region's access mode does not allow this kind of access.
    Forbidden { region: Region },
    /// An atomic at an address that is not a multiple of 4.
    Misaligned { region: Region },
    Race {
        region: Region,
        word_addr: usize,
        earlier: GlobalAccess,
        earlier_write: bool,
    },
}

/// Which kind of global access a report is about.
#[derive(Clone, Copy)]
pub(crate) enum GlobalOp {
    Plain { write: bool },
    Atomic,
}

impl GlobalOp {
    /// "a read", "a write", "an atomic".
    fn with_article(self) -> &'static str {
        match self {
            GlobalOp::Plain { write: false } => "a read",
            GlobalOp::Plain { write: true } => "a write",
            GlobalOp::Atomic => "an atomic",
        }
    }
}

/// An atomic by a thread that had fenced: it releases the thread's accesses before its latest
/// fence, and its block's accesses before the barrier preceding that fence.
#[derive(Clone, Copy)]
struct Release {
    counter: usize,
    /// Position of the atomic in the counter's modification order.
    seq: u64,
    thread: u16,
    fences: u32,
    fence_epoch: u64,
}

impl Release {
    fn covers(&self, access: &GlobalAccess) -> bool {
        (access.thread == self.thread && access.fences < self.fences)
            || access.epoch < self.fence_epoch
    }
}

/// An atomic of the running block: it acquires the releases earlier in the counter's
/// modification order, for its own thread and, after the next barrier, for the whole block.
#[derive(Clone, Copy)]
struct Acquisition {
    counter: usize,
    seq: u64,
    thread: u16,
    epoch: u64,
}

#[derive(Default)]
struct Word {
    write: Option<GlobalAccess>,
    /// The reads since `write`, the latest per thread.
    reads: Vec<GlobalAccess>,
}

pub(crate) struct GlobalMemory {
    /// Sorted by address, not overlapping.
    regions: Vec<Region>,
    last_hit: usize,
    words: IntMap<usize, Word>,
    /// Atomics so far on each counter address: the next one's place in the modification order.
    counters: IntMap<usize, u64>,
    releases: IntMap<u32, Vec<Release>>,
    /// The running block's.
    acquisitions: Vec<Acquisition>,
}

/// Sorts `regions` by address and checks that they do not overlap or wrap around.
pub(crate) fn sorted_regions(regions: &[Region]) -> Result<Vec<Region>, String> {
    let mut sorted = regions.to_vec();
    sorted.sort_by_key(|region| region.addr);
    for region in &sorted {
        if region.addr.checked_add(region.bytes).is_none() {
            return Err(format!(
                "region `{}` ({} bytes at {:#x}) wraps around the address space",
                region.name, region.bytes, region.addr
            ));
        }
    }
    let non_empty: Vec<&Region> = sorted.iter().filter(|region| region.bytes > 0).collect();
    for pair in non_empty.windows(2) {
        if pair[0].addr + pair[0].bytes > pair[1].addr {
            return Err(format!(
                "regions `{}` and `{}` overlap",
                pair[0].name, pair[1].name
            ));
        }
    }
    Ok(sorted)
}

impl GlobalMemory {
    pub(crate) const fn new() -> Self {
        Self {
            regions: Vec::new(),
            last_hit: 0,
            words: HashMap::with_hasher(BuildHasherDefault::new()),
            counters: HashMap::with_hasher(BuildHasherDefault::new()),
            releases: HashMap::with_hasher(BuildHasherDefault::new()),
            acquisitions: Vec::new(),
        }
    }

    /// Launches are ordered against each other, so nothing of an earlier launch is kept.
    pub(crate) fn begin_launch(&mut self, regions: Vec<Region>) {
        self.regions = regions;
        self.last_hit = 0;
        self.words.clear();
        self.counters.clear();
        self.releases.clear();
        self.acquisitions.clear();
    }

    pub(crate) fn begin_block(&mut self) {
        self.acquisitions.clear();
    }

    /// The region that holds all `bytes` bytes at `addr`.
    #[inline]
    fn find(&mut self, addr: usize, bytes: usize) -> Result<Region, GlobalError> {
        let inside = |region: &Region| addr >= region.addr && addr - region.addr < region.bytes;
        let index = match self.regions.get(self.last_hit) {
            Some(region) if inside(region) => self.last_hit,
            _ => {
                let after = self.regions.partition_point(|region| region.addr <= addr);
                // Empty regions may share an address with the one that holds `addr`.
                let index = (0..after)
                    .rev()
                    .find(|&i| self.regions[i].bytes > 0)
                    .ok_or(GlobalError::NoRegion)?;
                if !inside(&self.regions[index]) {
                    return Err(GlobalError::NoRegion);
                }
                self.last_hit = index;
                index
            }
        };
        let region = self.regions[index];
        if bytes > region.bytes - (addr - region.addr) {
            return Err(GlobalError::PastEnd { region });
        }
        Ok(region)
    }

    /// Checks a plain access of `bytes` bytes at `addr` by `me` and records it.
    #[inline]
    pub(crate) fn access(
        &mut self,
        me: &GlobalAccessor<'_>,
        addr: usize,
        bytes: usize,
        write: bool,
    ) -> Result<(), GlobalError> {
        if bytes == 0 {
            return Ok(());
        }
        let region = self.find(addr, bytes)?;
        match (region.access, write) {
            (Mode::ReadOnly, false) => Ok(()),
            (Mode::ReadOnly, true) | (Mode::Atomic, _) => Err(GlobalError::Forbidden { region }),
            (Mode::ReadWrite, _) => {
                for word in addr / UNIT..(addr + bytes).div_ceil(UNIT) {
                    self.access_word(me, region, word, write)?;
                }
                Ok(())
            }
        }
    }

    fn access_word(
        &mut self,
        me: &GlobalAccessor<'_>,
        region: Region,
        word: usize,
        write: bool,
    ) -> Result<(), GlobalError> {
        if let Some(state) = self.words.get(&word) {
            let race = |earlier: GlobalAccess, earlier_write| GlobalError::Race {
                region,
                word_addr: word * UNIT,
                earlier,
                earlier_write,
            };
            if let Some(last) = state.write
                && !self.is_ordered_after(&last, me)
            {
                return Err(race(last, true));
            }
            if write
                && let Some(read) = state
                    .reads
                    .iter()
                    .find(|read| !self.is_ordered_after(read, me))
            {
                return Err(race(*read, false));
            }
        }
        let state = self.words.entry(word).or_default();
        let access = me.access();
        if write {
            // Every earlier access is ordered before this write, so it stands for them all.
            state.write = Some(access);
            state.reads.clear();
        } else if let Some(read) = state
            .reads
            .iter_mut()
            .find(|read| read.block == me.block && read.thread == me.thread)
        {
            // A thread's later read is ordered after, and released with, its earlier ones.
            *read = access;
        } else {
            state.reads.push(access);
        }
        Ok(())
    }

    /// Whether `earlier` happens before an access by `me` now.
    fn is_ordered_after(&self, earlier: &GlobalAccess, me: &GlobalAccessor<'_>) -> bool {
        if earlier.block == me.block {
            let (warp, lane) = (
                u32::from(earlier.thread) / WARP_SIZE,
                (u32::from(earlier.thread) % WARP_SIZE) as usize,
            );
            return earlier.thread == me.thread
                || earlier.epoch < me.epoch
                || (warp == u32::from(me.thread) / WARP_SIZE && me.clocks[lane] >= earlier.clock);
        }
        let Some(releases) = self.releases.get(&earlier.block) else {
            return false;
        };
        self.acquisitions
            .iter()
            .filter(|acquired| acquired.thread == me.thread || acquired.epoch < me.epoch)
            .any(|acquired| {
                releases.iter().any(|released| {
                    released.counter == acquired.counter
                        && released.seq < acquired.seq
                        && released.covers(earlier)
                })
            })
    }

    /// Checks an atomic on the `u32` at `addr` by `me` and records its release and acquire.
    pub(crate) fn atomic(
        &mut self,
        me: &GlobalAccessor<'_>,
        addr: usize,
    ) -> Result<(), GlobalError> {
        let region = self.find(addr, 4)?;
        if region.access != Mode::Atomic {
            return Err(GlobalError::Forbidden { region });
        }
        if !addr.is_multiple_of(4) {
            return Err(GlobalError::Misaligned { region });
        }
        let next = self.counters.entry(addr).or_insert(0);
        let seq = *next;
        *next += 1;

        // A thread's atomic supersedes its earlier ones on the counter in the same epoch.
        match self
            .acquisitions
            .iter_mut()
            .rev()
            .take_while(|acquired| acquired.epoch == me.epoch)
            .find(|acquired| acquired.thread == me.thread && acquired.counter == addr)
        {
            Some(acquired) => acquired.seq = seq,
            None => self.acquisitions.push(Acquisition {
                counter: addr,
                seq,
                thread: me.thread,
                epoch: me.epoch,
            }),
        }

        if me.fences > 0 {
            let release = Release {
                counter: addr,
                seq,
                thread: me.thread,
                fences: me.fences,
                fence_epoch: me.fence_epoch,
            };
            let releases = self.releases.entry(me.block).or_default();
            // An earlier release of the same accesses on the same counter is seen by more.
            let known = releases.iter().any(|r| {
                r.counter == addr
                    && r.thread == me.thread
                    && r.fences == me.fences
                    && r.fence_epoch == me.fence_epoch
            });
            if !known {
                releases.push(release);
            }
        }
        Ok(())
    }

    /// The report of `error`, which `accessor` ran into making `op` on `bytes` bytes at `addr`.
    pub(crate) fn report(
        &self,
        error: GlobalError,
        at: Where<'_>,
        accessor: &GlobalAccessor<'_>,
        addr: usize,
        bytes: usize,
        op: GlobalOp,
    ) -> SimError {
        let (kernel, block, loc) = (at.kernel, at.block, accessor.loc);
        let me = ThreadName(accessor.thread.into());
        let access = format!(
            "{me} made {} of {bytes} bytes at address {addr:#x} at {loc}",
            op.with_article()
        );
        let out_of_bounds = |why: String| SimError {
            kind: ErrorKind::OutOfBounds,
            message: format!(
                "out-of-bounds global memory access in kernel `{kernel}`, block {block}: {access}, {why}"
            ),
        };
        match error {
            GlobalError::NoRegion => {
                let regions = self
                    .regions
                    .iter()
                    .map(|r| format!("`{}` {:#x}..{:#x}", r.name, r.addr, r.addr + r.bytes))
                    .collect::<Vec<_>>()
                    .join(", ");
                out_of_bounds(format!(
                    "which is in no buffer registered for this launch (regions: {regions})"
                ))
            }
            GlobalError::PastEnd { region } => out_of_bounds(format!(
                "which runs past the end of region `{}` ({} bytes at {:#x}; the access starts at its byte {})",
                region.name,
                region.bytes,
                region.addr,
                addr - region.addr
            )),
            GlobalError::Forbidden { region } => {
                let why = match (region.access, op) {
                    (Mode::ReadOnly, GlobalOp::Plain { .. }) => {
                        "which this launch gives as read-only".to_string()
                    }
                    (Mode::Atomic, _) => "which this launch gives for atomics only".to_string(),
                    (mode, _) => format!(
                        "but atomics need a region given as Access::Atomic, and this one is {mode:?}"
                    ),
                };
                out_of_bounds(format!("in region `{}`, {why}", region.name))
            }
            GlobalError::Misaligned { region } => out_of_bounds(format!(
                "in region `{}`, at an address that is not a multiple of 4 as an atomic needs",
                region.name
            )),
            GlobalError::Race {
                region,
                word_addr,
                earlier,
                earlier_write,
            } => {
                let GlobalOp::Plain { write } = op else {
                    unreachable!("atomics do not race")
                };
                let word = format!(
                    "the bytes at {word_addr:#x} (byte {} of region `{}`)",
                    word_addr - region.addr,
                    region.name
                );
                let message = if earlier.block == block {
                    format!(
                        "data race on global memory in kernel `{kernel}`, block {block}: {} {} {word} at {}, \
                         then {me} {} it at {loc} {}",
                        ThreadName(earlier.thread.into()),
                        verb(earlier_write),
                        earlier.loc,
                        verb(write),
                        unordered_why(
                            u32::from(earlier.thread) / WARP_SIZE
                                == u32::from(accessor.thread) / WARP_SIZE
                        )
                    )
                } else {
                    format!(
                        "data race on global memory in kernel `{kernel}`: block {}, {} {} {word} at {}, then \
                         block {block}, {me} {} it at {loc}. Blocks run concurrently, and nothing orders these \
                         accesses: the first thread must call thread_fence after its access and then update a \
                         counter with an atomic, and the second block must read that counter with an atomic \
                         (its other threads after a following sync_threads)",
                        earlier.block,
                        ThreadName(earlier.thread.into()),
                        verb(earlier_write),
                        earlier.loc,
                        verb(write)
                    )
                };
                SimError {
                    kind: ErrorKind::GlobalRace,
                    message,
                }
            }
        }
    }
}
