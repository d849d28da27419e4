//! A block's dynamic shared memory: the buffer the kernel reads and writes, per 2-byte unit
//! what the race and initialisation checks need (see the crate docs for the model), and the
//! reports of what they find.
//!
//! The per-word state is a `Vec` indexed by word and tagged with the block and the barrier
//! epoch it describes, so starting a block or releasing a barrier resets it lazily (in O(1))
//! instead of clearing the table.

use crate::lanes::{LaneClocks, UNIT, WARP_SIZE};
use crate::report::{ThreadName, Where, noun, unordered_why, verb};
use crate::types::{ErrorKind, SimError};
use core::panic::Location;

/// One access as the race checks remember it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub loc: &'static Location<'static>,
    /// The thread's own entry of its warp clock when it made the access.
    pub clock: u32,
    /// Thread index in the block (at most 1024).
    pub thread: u16,
}

impl Access {
    pub(crate) fn warp(&self) -> u32 {
        u32::from(self.thread) / WARP_SIZE
    }

    pub(crate) fn lane(&self) -> usize {
        (u32::from(self.thread) % WARP_SIZE) as usize
    }
}

/// Who is accessing, and what orders them against earlier accesses.
pub(crate) struct Accessor<'a> {
    pub thread: u16,
    /// The block's barrier epoch.
    pub epoch: u64,
    /// Identifies the block (unique across launches), for the initialisation check.
    pub block_serial: u64,
    pub clocks: &'a LaneClocks,
    pub loc: &'static Location<'static>,
}

impl Accessor<'_> {
    fn access(&self) -> Access {
        Access {
            loc: self.loc,
            clock: self.clocks[self.lane()],
            thread: self.thread,
        }
    }

    fn warp(&self) -> u32 {
        u32::from(self.thread) / WARP_SIZE
    }

    fn lane(&self) -> usize {
        (u32::from(self.thread) % WARP_SIZE) as usize
    }

    /// Whether `earlier`, an access of the current epoch, happens before this one: same thread,
    /// or a lane of the same warp whose access this thread's warp clock has seen.
    pub(crate) fn is_ordered_after(&self, earlier: &Access) -> bool {
        earlier.thread == self.thread
            || (earlier.warp() == self.warp() && self.clocks[earlier.lane()] >= earlier.clock)
    }
}

/// What went wrong with a shared-memory access.
pub(crate) enum SharedError {
    OutOfRange,
    Uninitialized {
        word: usize,
    },
    Race {
        word: usize,
        earlier: Access,
        earlier_write: bool,
    },
}

/// Index into `SharedMemory::lane_reads`, or none.
const NO_LANES: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Word {
    /// The epoch `write` and the reads describe; older ones are ordered before everything now.
    epoch: u64,
    /// The block (serial) that last wrote the word.
    written_in: u64,
    write: Option<Access>,
    /// A read since `write`, in this epoch.
    read: Option<Access>,
    /// A read by a warp other than `read`'s: then every write of this epoch races with one of
    /// the two, and further reads need not be kept.
    foreign_read: Option<Access>,
    /// The latest read of each lane of `read`'s warp, once a second lane read the word.
    lanes: u32,
}

impl Word {
    const UNUSED: Self = Self {
        epoch: 0,
        written_in: 0,
        write: None,
        read: None,
        foreign_read: None,
        lanes: NO_LANES,
    };
}

pub(crate) struct SharedMemory {
    /// `u128` so the buffer is 16-byte aligned, as vector and `f64` accesses need.
    buffer: Vec<u128>,
    bytes: usize,
    words: Vec<Word>,
    /// Per-lane reads of words read by several lanes of one warp; emptied at every new epoch
    /// (the words pointing here are then stale).
    lane_reads: Vec<[Option<Access>; WARP_SIZE as usize]>,
}

impl SharedMemory {
    pub(crate) const fn new() -> Self {
        Self {
            buffer: Vec::new(),
            bytes: 0,
            words: Vec::new(),
            lane_reads: Vec::new(),
        }
    }

    /// Sizes the memory for a launch. The buffer is only reallocated here, never during one, so
    /// the pointer [`Self::memory`] hands out stays valid for the whole launch.
    pub(crate) fn begin_launch(&mut self, bytes: usize) {
        self.bytes = bytes;
        self.buffer.resize(bytes.div_ceil(16), 0);
        let words = bytes.div_ceil(UNIT);
        if self.words.len() < words {
            self.words.resize(words, Word::UNUSED);
        }
    }

    /// Fills the memory with the `0xAB` poison: a block must not see an earlier block's data.
    pub(crate) fn begin_block(&mut self) {
        self.buffer.fill(u128::from_ne_bytes([0xAB; 16]));
    }

    /// A barrier was released: every access before it is ordered before every later one, so
    /// the per-lane read tables of the old epoch are dropped.
    pub(crate) fn begin_epoch(&mut self) {
        self.lane_reads.clear();
    }

    /// Bytes per block.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn memory(&mut self) -> (*mut u8, usize) {
        (self.buffer.as_mut_ptr().cast(), self.bytes)
    }

    /// Checks an access of `bytes` bytes at `offset` by `me` and records it.
    #[inline]
    pub(crate) fn access(
        &mut self,
        me: &Accessor<'_>,
        offset: usize,
        bytes: usize,
        write: bool,
    ) -> Result<(), SharedError> {
        let end = offset
            .checked_add(bytes)
            .filter(|&end| end <= self.bytes)
            .ok_or(SharedError::OutOfRange)?;
        if bytes == 0 {
            return Ok(());
        }
        for word in offset / UNIT..end.div_ceil(UNIT) {
            self.access_word(me, word, write)?;
        }
        Ok(())
    }

    #[inline]
    fn access_word(
        &mut self,
        me: &Accessor<'_>,
        word: usize,
        write: bool,
    ) -> Result<(), SharedError> {
        let state = &mut self.words[word];
        if state.epoch != me.epoch {
            *state = Word {
                epoch: me.epoch,
                written_in: state.written_in,
                ..Word::UNUSED
            };
        }
        if !write && state.written_in != me.block_serial {
            return Err(SharedError::Uninitialized { word });
        }
        let race = |earlier: Access, earlier_write| SharedError::Race {
            word,
            earlier,
            earlier_write,
        };
        if let Some(last) = state.write
            && !me.is_ordered_after(&last)
        {
            return Err(race(last, true));
        }
        if write {
            if let Some(read) = unordered_read(state, &self.lane_reads, me) {
                return Err(race(read, false));
            }
            // Every earlier access is ordered before this write, so it stands for them all.
            *state = Word {
                epoch: me.epoch,
                written_in: me.block_serial,
                write: Some(me.access()),
                ..Word::UNUSED
            };
        } else {
            self.record_read(word, me);
        }
        Ok(())
    }

    fn record_read(&mut self, word: usize, me: &Accessor<'_>) {
        let state = &mut self.words[word];
        let access = me.access();
        let Some(first) = state.read else {
            state.read = Some(access);
            return;
        };
        if state.foreign_read.is_some() {
            // Any write of this epoch already races with a kept read.
        } else if first.warp() != me.warp() {
            state.foreign_read = Some(access);
        } else if state.lanes != NO_LANES {
            self.lane_reads[state.lanes as usize][me.lane()] = Some(access);
        } else if first.thread == me.thread {
            // A later read of the same thread covers its earlier ones.
            state.read = Some(access);
        } else {
            let mut lanes = [None; WARP_SIZE as usize];
            lanes[first.lane()] = Some(first);
            lanes[me.lane()] = Some(access);
            state.lanes = self.lane_reads.len() as u32;
            self.lane_reads.push(lanes);
        }
    }

    /// The report of `error`, which `accessor` ran into making an access of `bytes` bytes at
    /// `offset`.
    pub(crate) fn report(
        &self,
        error: SharedError,
        at: Where<'_>,
        accessor: &Accessor<'_>,
        offset: usize,
        bytes: usize,
        write: bool,
    ) -> SimError {
        let (kernel, block, loc) = (at.kernel, at.block, accessor.loc);
        let me = ThreadName(accessor.thread.into());
        let (kind, message) = match error {
            SharedError::OutOfRange => (
                ErrorKind::OutOfBounds,
                format!(
                    "out-of-bounds shared memory access in kernel `{kernel}`, block {block}: {me} made a \
                     {} of {bytes} bytes at byte offset {offset} at {loc}, past the end of the block's {} \
                     bytes of dynamic shared memory",
                    noun(write),
                    self.bytes()
                ),
            ),
            SharedError::Uninitialized { word } => (
                ErrorKind::UninitializedSharedRead,
                format!(
                    "read of uninitialized shared memory in kernel `{kernel}`, block {block}: {me} read \
                     byte {} at {loc}, which no thread of this block has written (shared memory holds \
                     garbage at the start of every block)",
                    word * UNIT
                ),
            ),
            SharedError::Race {
                word,
                earlier,
                earlier_write,
            } => (
                ErrorKind::SharedRace,
                format!(
                    "data race on shared memory in kernel `{kernel}`, block {block}: {} {} byte {} \
                     at {}, then {me} {} it at {loc} {}",
                    ThreadName(earlier.thread.into()),
                    verb(earlier_write),
                    word * UNIT,
                    earlier.loc,
                    verb(write),
                    unordered_why(earlier.warp() == accessor.warp())
                ),
            ),
        };
        SimError { kind, message }
    }
}

/// A read of the word's current epoch that a write by `me` would race with.
fn unordered_read(
    state: &Word,
    lane_reads: &[[Option<Access>; WARP_SIZE as usize]],
    me: &Accessor<'_>,
) -> Option<Access> {
    let first = state.read?;
    if let Some(foreign) = state.foreign_read {
        // The two reads are of different warps, so one is of a warp other than the writer's,
        // and nothing but a barrier orders accesses of different warps.
        return Some(if first.warp() != me.warp() {
            first
        } else {
            foreign
        });
    }
    if first.warp() != me.warp() {
        return Some(first);
    }
    if state.lanes == NO_LANES {
        return (!me.is_ordered_after(&first)).then_some(first);
    }
    lane_reads[state.lanes as usize]
        .iter()
        .flatten()
        .find(|read| !me.is_ordered_after(read))
        .copied()
}
