//! The launch contract: what every entry point takes (five pointers and [`Params`]), gathered
//! in a [`Launch`], and the typed views a kernel gets from it: [`GlobalSlice`]s, [`Scratch`] and
//! [`Segments`], so that kernels never see a raw pointer.

use crate::device::{GlobalCounters, GlobalSlice, GlobalSliceMut};
use crate::element::Value;

/// The sizes every entry point receives (by value), beside its pointers. Fields a kernel family
/// does not use are 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Params {
    /// Elements of the input.
    pub len: u64,
    /// Accumulators `partials` holds.
    pub partials_len: u64,
    /// Counters `retired` holds.
    pub retired_len: u64,
    /// Results `output` holds.
    pub output_len: u64,
    /// Row and segment kernels: how many rows (segments) there are.
    pub segments: u64,
    /// Row kernels: the length of every row; 0 when `offsets` gives the segments.
    pub segment_len: u64,
    /// Kernels that split a row (or the rows of a column reduction) over several blocks: how
    /// many blocks share one.
    pub split: u64,
}

/// One launch's arguments: the pointers and the sizes.
///
/// The pointers are kernel parameters of their own, not fields of [`Params`]: the compiler
/// knows a kernel's pointer parameters point to global memory and loads through them with
/// `ld.global` (a pointer read out of a struct would be a generic address, and every load a
/// generic `ld`).
///
/// # The contract (what the host promises at every launch)
/// - `input` holds `len` elements of the entry point's element type, readable and unchanged
///   for the whole launch.
/// - `partials` holds `partials_len` accumulators (at least one per block for the single-pass
///   kernels), `output` holds `output_len` results, `offsets` (if not null) holds `segments + 1`
///   ascending `u64` offsets into the input; all readable and writable by this launch only.
/// - `retired` holds `retired_len` `u32` counters, all 0; every kernel leaves them at 0.
/// - The block's dynamic shared memory is the size the host's plan gives for this kernel,
///   which covers every `shared_array!` of it (the simulator checks this at every launch).
///
/// On the GPU the addresses are device addresses; on the simulator they are host addresses of
/// buffers the simulator registered as global memory.
#[derive(Clone, Copy, Debug)]
pub struct Launch {
    pub input: *const u8,
    pub partials: *mut u8,
    pub retired: *mut u32,
    pub output: *mut u8,
    pub offsets: *const u64,
    pub sizes: Params,
}

// SAFETY: addresses and sizes only; what may be done with them is the contract above, which the
// simulator (the one place a `Launch` crosses threads, into its coroutines) checks.
unsafe impl Send for Launch {}
// SAFETY: as above.
unsafe impl Sync for Launch {}

/// What single-pass kernels hand between blocks: one partial per block, and the counters of
/// blocks that finished (the last one to finish combines the partials).
#[derive(Clone, Copy)]
pub struct Scratch<A> {
    pub partials: GlobalSliceMut<A>,
    pub retired: GlobalCounters,
}

/// The segments of a row or segment reduction: rows of equal length, or CSR offsets.
#[derive(Clone, Copy)]
pub struct Segments {
    count: usize,
    uniform_len: usize,
    offsets: Option<GlobalSlice<u64>>,
}

impl Segments {
    /// How many segments (rows) there are.
    #[inline(always)]
    pub fn count(&self) -> usize {
        self.count
    }

    /// `start..end` of segment `index` in the input.
    #[inline(always)]
    #[track_caller]
    pub fn bounds(&self, index: usize) -> (usize, usize) {
        match self.offsets {
            Some(offsets) => {
                let [start, end] = offsets.load_strided::<2>(index, 1);
                (start as usize, end as usize)
            }
            None => (index * self.uniform_len, (index + 1) * self.uniform_len),
        }
    }

    /// Every segment has the same length (rows of a matrix).
    #[inline(always)]
    pub fn uniform_len(&self) -> Option<usize> {
        self.offsets.is_none().then_some(self.uniform_len)
    }
}

impl Launch {
    /// # Safety
    /// The launch contract above, for element type `T`.
    #[inline(always)]
    pub unsafe fn input<T: Value>(&self) -> GlobalSlice<T> {
        // SAFETY: the contract: `input` holds `len` elements of `T` for the launch (the
        // element type, or the states a merging kernel reads).
        unsafe { GlobalSlice::from_raw(self.input.cast(), self.sizes.len as usize) }
    }

    /// # Safety
    /// The launch contract above, with `A` the kernel's accumulator type.
    #[inline(always)]
    pub unsafe fn scratch<A: Value>(&self) -> Scratch<A> {
        // SAFETY: the contract: `partials` holds `partials_len` accumulators and `retired`
        // `retired_len` zeroed counters, used by this launch only.
        unsafe {
            Scratch {
                partials: GlobalSliceMut::from_raw(
                    self.partials.cast(),
                    self.sizes.partials_len as usize,
                ),
                retired: GlobalCounters::from_raw(self.retired, self.sizes.retired_len as usize),
            }
        }
    }

    /// # Safety
    /// The launch contract above, with `O` the kernel's result type.
    #[inline(always)]
    pub unsafe fn output<O: Value>(&self) -> GlobalSliceMut<O> {
        // SAFETY: the contract: `output` holds `output_len` results, written by this launch only.
        unsafe { GlobalSliceMut::from_raw(self.output.cast(), self.sizes.output_len as usize) }
    }

    /// # Safety
    /// The launch contract above.
    #[inline(always)]
    pub unsafe fn segments(&self) -> Segments {
        let offsets = (!self.offsets.is_null()).then(|| {
            // SAFETY: the contract: `offsets` holds `segments + 1` offsets for the launch.
            unsafe { GlobalSlice::from_raw(self.offsets, self.sizes.segments as usize + 1) }
        });
        Segments {
            count: self.sizes.segments as usize,
            uniform_len: self.sizes.segment_len as usize,
            offsets,
        }
    }
}

/// A simulator entry point: the same function the PTX entry point runs, called on the host.
#[cfg(not(target_arch = "nvptx64"))]
pub type SimEntry = unsafe fn(Launch);
