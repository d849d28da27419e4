//! Device support: the small piece of `cuda_std` the kernels need, under `cuda_std`'s names.
//!
//! One API, two backends chosen at compile time:
//! - `nvptx64`: rustc's NVPTX target; every function is an intrinsic or a single instruction,
//!   and the memory wrappers compile to plain `ld`/`st` (plus one bounds compare).
//! - any other target: the [`simt`] CPU simulator, which sees every index query, barrier,
//!   shuffle and memory access, and reports races, out-of-bounds accesses and divergent
//!   barriers instead of running into undefined behaviour.
//!
//! Kernel files use only this module; they never touch raw pointers. `unsafe` lives in the
//! backends, in the `from_raw` constructors below and in `shared_array!`, each with its
//! `SAFETY:` argument.

#[cfg(target_arch = "nvptx64")]
#[path = "nvptx.rs"]
mod backend;
#[cfg(not(target_arch = "nvptx64"))]
#[path = "sim.rs"]
mod backend;

use crate::element::{Element, Value, Vector16};
use core::marker::PhantomData;

pub use crate::launch::WARP_SIZE;

/// Every lane of a warp.
pub const FULL_MASK: u32 = u32::MAX;

/// `threadIdx.x`
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    backend::thread_idx_x()
}
/// `blockIdx.x`
#[inline(always)]
pub fn block_idx_x() -> u32 {
    backend::block_idx_x()
}
/// `blockDim.x`
#[inline(always)]
pub fn block_dim_x() -> u32 {
    backend::block_dim_x()
}
/// `gridDim.x`
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    backend::grid_dim_x()
}
/// This thread's lane within its warp (`%laneid`).
#[inline(always)]
pub fn lane_id() -> u32 {
    backend::lane_id()
}

/// `__syncthreads()`: waits until every thread of the block arrives; orders the block's
/// shared- and global-memory accesses before it against those after it.
#[inline(always)]
#[track_caller]
pub fn sync_threads() {
    backend::sync_threads()
}

/// `__syncwarp(mask)`: waits for the lanes in `mask` (which must include the caller) and
/// orders their memory accesses. Needed since Volta, whose lanes are scheduled independently.
#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    backend::sync_warp(mask)
}

/// `__shfl_down_sync(mask, value, delta, width)`: returns `value` of lane `lane + delta`
/// within this lane's `width`-wide segment, and whether that lane existed; lanes whose source
/// falls outside the segment get their own `value` back and `false`. Values wider than 32 bits
/// move as several 32-bit shuffles.
#[inline(always)]
#[track_caller]
pub fn warp_shuffle_down<T: Value>(mask: u32, value: T, delta: u32, width: u32) -> (T, bool) {
    let mut words = value.to_words();
    let mut in_range = false;
    for word in words.as_mut() {
        (*word, in_range) = backend::shuffle_down(mask, *word, delta, width);
    }
    (T::from_words(words), in_range)
}

/// `__threadfence()`: makes this thread's earlier global writes visible to the whole device
/// before its later ones (used with an atomic counter to hand partials to the last block).
#[inline(always)]
pub fn thread_fence() {
    backend::thread_fence()
}

/// The GPU's nanosecond clock (`%globaltimer`). GPU only: the simulator has no GPU time.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn global_timer_ns() -> u64 {
    backend::global_timer_ns()
}

/// What went wrong when a kernel stops itself (on the GPU: `trap`, the launch fails).
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    OutOfBounds {
        space: Space,
        index: usize,
        len: usize,
    },
    SharedTooSmall {
        wanted: usize,
        available: usize,
    },
    BlockSizeMismatch {
        compiled: u32,
        launched: u32,
    },
}

/// Which memory an access went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
}

/// Stops the kernel unless `ok`. On the GPU a predicated `trap` with no branch around it, so
/// the compiler can still predicate the surrounding code (a branch per check made v2's tree
/// 20% slower); on the simulator a report of `fault()` with the caller's location.
#[inline(always)]
#[track_caller]
fn ensure(ok: bool, fault: impl FnOnce() -> Fault) {
    backend::ensure(ok, fault)
}

/// Faults unless the block has `BLOCK` threads: for kernels whose block size is a compile-time
/// constant, so a launch with another size fails loudly instead of reducing garbage.
#[inline(always)]
#[track_caller]
pub fn require_block_dim<const BLOCK: u32>() {
    let launched = block_dim_x();
    ensure(launched == BLOCK, || Fault::BlockSizeMismatch {
        compiled: BLOCK,
        launched,
    });
}

/// A read-only view of `len` elements of global memory: the kernels' input.
#[derive(Clone, Copy)]
pub struct GlobalSlice<T> {
    ptr: *const T,
    len: usize,
}

impl<T: Value> GlobalSlice<T> {
    /// # Safety
    /// `ptr` must be valid for reads of `len` elements for the whole launch, and nothing may
    /// write them during it.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *const T, len: usize) -> Self {
        Self { ptr, len }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements `start..start + len` as a slice of their own; a fault unless they are inside.
    #[inline(always)]
    #[track_caller]
    pub fn sub(&self, start: usize, len: usize) -> Self {
        let end = start.checked_add(len);
        ensure(end.is_some_and(|end| end <= self.len), || {
            Fault::OutOfBounds {
                space: Space::Global,
                index: end.unwrap_or(usize::MAX),
                len: self.len,
            }
        });
        // SAFETY: start + len <= self.len (checked above), so the new slice lies inside this one.
        Self {
            ptr: unsafe { self.ptr.add(start) },
            len,
        }
    }

    /// Element `index`; a fault if `index >= len`.
    #[inline(always)]
    #[track_caller]
    pub fn load(&self, index: usize) -> T {
        ensure(index < self.len, || Fault::OutOfBounds {
            space: Space::Global,
            index,
            len: self.len,
        });
        // SAFETY: index < len, and `from_raw`'s contract makes the first `len` elements
        // readable and unchanging for the launch.
        let ptr = unsafe { self.ptr.add(index) };
        backend::global_access(ptr as usize, size_of::<T>(), false);
        // SAFETY: as above.
        unsafe { ptr.read() }
    }

    /// `K` elements, `first + k·stride` for k = 0, 1, …, K-1, loaded one after the other
    /// with one bounds check for the whole group, so the K loads are all in flight before the
    /// first is used.
    #[inline(always)]
    #[track_caller]
    pub fn load_strided<const K: usize>(&self, first: usize, stride: usize) -> [T; K] {
        let last = stride
            .checked_mul(K.saturating_sub(1))
            .and_then(|span| span.checked_add(first));
        ensure(last.is_some_and(|last| last < self.len), || {
            Fault::OutOfBounds {
                space: Space::Global,
                index: last.unwrap_or(usize::MAX),
                len: self.len,
            }
        });
        core::array::from_fn(|k| {
            // SAFETY: first + k·stride <= last < len (checked above, without overflow), and
            // `from_raw` makes the first `len` elements readable for the launch.
            let ptr = unsafe { self.ptr.add(first + k * stride) };
            backend::global_access(ptr as usize, size_of::<T>(), false);
            // SAFETY: as above.
            unsafe { ptr.read() }
        })
    }
}

impl<T: Element> GlobalSlice<T> {
    /// The slice as a scalar head up to the first 16-byte boundary, the whole 16-byte
    /// vectors after it, and a scalar tail: `(head_len, vectors, tail_start)`.
    #[inline(always)]
    pub fn split_vectors(&self) -> (usize, VectorSlice<T>, usize) {
        let lanes = <T::Vector16 as Vector16<T>>::LANES;
        let misalignment = (self.ptr as usize) % 16;
        // Elements are naturally aligned, so the distance is a whole number of elements.
        let head = if misalignment == 0 {
            0
        } else {
            ((16 - misalignment) / size_of::<T>()).min(self.len)
        };
        let count = (self.len - head) / lanes;
        // SAFETY: head <= len, so the pointer stays inside (or one past) the slice.
        let ptr = unsafe { self.ptr.add(head) }.cast::<T::Vector16>();
        (head, VectorSlice { ptr, count }, head + count * lanes)
    }
}

/// Whole, 16-byte-aligned vectors of a [`GlobalSlice`] (see [`GlobalSlice::split_vectors`]):
/// each load is one `ld.global.v4.b32` / `ld.global.v2.b64`.
#[derive(Clone, Copy)]
pub struct VectorSlice<T: Element> {
    /// 16-byte aligned (`split_vectors` starts it at the first 16-byte boundary).
    ptr: *const T::Vector16,
    count: usize,
}

impl<T: Element> VectorSlice<T> {
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.count
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Vectors `first + k·stride`, k = 0 … K-1, with one bounds check for the group.
    #[inline(always)]
    #[track_caller]
    pub fn load_strided<const K: usize>(&self, first: usize, stride: usize) -> [T::Vector16; K] {
        let last = stride
            .checked_mul(K.saturating_sub(1))
            .and_then(|span| span.checked_add(first));
        ensure(last.is_some_and(|last| last < self.count), || {
            Fault::OutOfBounds {
                space: Space::Global,
                index: last.unwrap_or(usize::MAX),
                len: self.count,
            }
        });
        core::array::from_fn(|k| {
            // SAFETY: first + k·stride <= last < count: inside the slice's whole vectors, which
            // `split_vectors` placed at a 16-byte boundary, as `Vector16`'s alignment requires.
            let ptr = unsafe { self.ptr.add(first + k * stride) };
            backend::global_access(ptr as usize, 16, false);
            // SAFETY: as above; readable and unchanging for the launch by
            // `GlobalSlice::from_raw`'s contract.
            unsafe { backend::load_vector16(ptr) }
        })
    }

    /// Vector `index`.
    #[inline(always)]
    #[track_caller]
    pub fn load(&self, index: usize) -> T::Vector16 {
        let [vector] = self.load_strided::<1>(index, 0);
        vector
    }
}

/// A writable view of `len` elements of global memory: the kernels' per-block partials.
#[derive(Clone, Copy)]
pub struct GlobalSliceMut<T> {
    ptr: *mut T,
    len: usize,
}

impl<T: Value> GlobalSliceMut<T> {
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` elements for the whole launch, and
    /// nothing outside the launch may access them during it.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        Self { ptr, len }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    #[track_caller]
    pub fn store(&self, index: usize, value: T) {
        ensure(index < self.len, || Fault::OutOfBounds {
            space: Space::Global,
            index,
            len: self.len,
        });
        // SAFETY: index < len; `from_raw` makes the slice writable for the launch.
        let ptr = unsafe { self.ptr.add(index) };
        backend::global_access(ptr as usize, size_of::<T>(), true);
        // SAFETY: as above.
        unsafe { ptr.write(value) }
    }

    #[inline(always)]
    #[track_caller]
    pub fn load(&self, index: usize) -> T {
        ensure(index < self.len, || Fault::OutOfBounds {
            space: Space::Global,
            index,
            len: self.len,
        });
        // SAFETY: index < len; `from_raw` makes the slice readable for the launch.
        let ptr = unsafe { self.ptr.add(index) };
        backend::global_access(ptr as usize, size_of::<T>(), false);
        // SAFETY: as above. Another block's write is made visible by the caller's ordering
        // (fence + counter); the simulator checks that such an ordering exists.
        unsafe { ptr.read_volatile() }
    }

    /// `K` elements `first + k·stride` with one bounds check, as volatile loads (they may
    /// have been written by other blocks of this launch; see [`Self::load`]), all issued
    /// before the first is used.
    #[inline(always)]
    #[track_caller]
    pub fn load_strided<const K: usize>(&self, first: usize, stride: usize) -> [T; K] {
        let last = stride
            .checked_mul(K.saturating_sub(1))
            .and_then(|span| span.checked_add(first));
        ensure(last.is_some_and(|last| last < self.len), || {
            Fault::OutOfBounds {
                space: Space::Global,
                index: last.unwrap_or(usize::MAX),
                len: self.len,
            }
        });
        core::array::from_fn(|k| {
            // SAFETY: first + k·stride <= last < len, checked above without overflow;
            // `from_raw` makes the slice readable for the launch.
            let ptr = unsafe { self.ptr.add(first + k * stride) };
            backend::global_access(ptr as usize, size_of::<T>(), false);
            // SAFETY: as above.
            unsafe { ptr.read_volatile() }
        })
    }
}

/// `len` `u32` counters in global memory, changed only by atomics: the tickets that tell a
/// block whether it finished last.
#[derive(Clone, Copy)]
pub struct GlobalCounters {
    ptr: *mut u32,
    len: usize,
}

impl GlobalCounters {
    /// # Safety
    /// `ptr` must point to `len` `u32`s in global memory that only atomics access during the
    /// launch.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut u32, len: usize) -> Self {
        Self { ptr, len }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Counter `index`; a fault if `index >= len`.
    #[inline(always)]
    #[track_caller]
    pub fn at(&self, index: usize) -> GlobalCounter {
        ensure(index < self.len, || Fault::OutOfBounds {
            space: Space::Global,
            index,
            len: self.len,
        });
        // SAFETY: index < len, inside the counters `from_raw` was given.
        GlobalCounter {
            ptr: unsafe { self.ptr.add(index) },
        }
    }
}

/// One `u32` counter in global memory, changed only by atomics (see [`GlobalCounters`]).
#[derive(Clone, Copy)]
pub struct GlobalCounter {
    ptr: *mut u32,
}

impl GlobalCounter {
    /// `atomicAdd`: adds `value` and returns the value before, at device scope.
    #[inline(always)]
    #[track_caller]
    pub fn fetch_add(&self, value: u32) -> u32 {
        backend::atomic_add_u32(self.ptr, value)
    }

    /// `atomicExch(counter, 0)`.
    #[inline(always)]
    #[track_caller]
    pub fn reset(&self) {
        backend::atomic_exchange_u32(self.ptr, 0);
    }
}

/// A view of the block's shared memory as an array of `len` elements. Never zero-initialised:
/// a word is garbage until a thread of this block writes it (the simulator poisons it and
/// reports reads of words nobody wrote).
///
/// Indices past the end: the simulator reports them (every version, size and block size runs
/// there in CI). On the GPU the index is clamped to the last element — one `min`, no branch,
/// so an access can never leave the array. A trap there would be a branch inside the tree's
/// `if tid < s { … }`, which stops ptxas from predicating it: v2 ran 17% slower than nvcc's.
pub struct SharedArray<T> {
    ptr: *mut T,
    /// Bytes from the start of the block's shared memory to element 0.
    offset: usize,
    len: usize,
    _not_send: PhantomData<*mut T>,
}

impl<T: Value> SharedArray<T> {
    /// `len` elements starting `offset` bytes into the block's dynamic shared memory, whose
    /// size the launch sets. Use through [`shared_array!`].
    ///
    /// # Safety
    /// `len ≥ 1` (indices are clamped to `len - 1`), and the launch gave the block at least
    /// `offset + len * size_of::<T>()` bytes (rounded up to `T`'s alignment). The simulator
    /// checks this and reports a fault; the GPU trusts the launch contract of the entry
    /// points (`entry.rs`), as it trusts their pointers and lengths: a check there costs a
    /// constant load, a 64-bit compare and a branch in every warp, 2–3% of v2–v5.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn dynamic(offset: usize, len: usize) -> Self {
        let (base, bytes) = backend::dynamic_shared_memory();
        let offset = offset.next_multiple_of(align_of::<T>());
        let wanted = len.saturating_mul(size_of::<T>()).saturating_add(offset);
        backend::check_launch(len > 0 && wanted <= bytes, || Fault::SharedTooSmall {
            wanted,
            available: bytes,
        });
        // SAFETY: offset <= wanted <= bytes (the caller's promise), inside this block's
        // shared memory.
        let ptr = unsafe { base.add(offset) }.cast();
        Self {
            ptr,
            offset,
            len,
            _not_send: PhantomData,
        }
    }

    /// Bytes from the start of shared memory to just past this array: where the next one may go.
    #[inline(always)]
    pub fn end_offset(&self) -> usize {
        self.offset + self.len * size_of::<T>()
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    #[track_caller]
    fn checked(&self, index: usize, write: bool) -> *mut T {
        let fault = || Fault::OutOfBounds {
            space: Space::Shared,
            index,
            len: self.len,
        };
        let index = backend::shared_index(index, self.len, fault);
        backend::shared_access(self.offset + index * size_of::<T>(), size_of::<T>(), write);
        // SAFETY: `shared_index` returns an index below len (≥ 1), and `dynamic`'s caller
        // promised that the array fits in this block's shared memory, which lives as long as
        // the block.
        unsafe { self.ptr.add(index) }
    }

    #[inline(always)]
    #[track_caller]
    pub fn load(&self, index: usize) -> T {
        // SAFETY: `checked` returns an in-bounds pointer into live shared memory.
        unsafe { self.checked(index, false).read() }
    }

    #[inline(always)]
    #[track_caller]
    pub fn store(&self, index: usize, value: T) {
        // SAFETY: as in `load`.
        unsafe { self.checked(index, true).write(value) }
    }

    /// A `volatile` load, as the tutorial's warp-synchronous code uses: never cached in a
    /// register, but still no ordering between lanes (that takes `sync_warp`).
    #[inline(always)]
    #[track_caller]
    pub fn load_volatile(&self, index: usize) -> T {
        // SAFETY: as in `load`.
        unsafe { self.checked(index, false).read_volatile() }
    }

    /// A `volatile` store; see [`Self::load_volatile`].
    #[inline(always)]
    #[track_caller]
    pub fn store_volatile(&self, index: usize, value: T) {
        // SAFETY: as in `load`.
        unsafe { self.checked(index, true).write_volatile(value) }
    }
}

/// `shared_array![T; len]`: the block's dynamic shared memory as `len` elements of `T`
/// (the host sizes it at launch from the same version table).
/// `shared_array![T; len; after other]` places the array just past `other`.
#[macro_export]
macro_rules! shared_array {
    ($t:ty; $len:expr) => {
        $crate::shared_array!(@at 0usize, $t, $len)
    };
    ($t:ty; $len:expr; after $other:expr) => {
        $crate::shared_array!(@at $other.end_offset(), $t, $len)
    };
    (@at $offset:expr, $t:ty, $len:expr) => {{
        let (offset, len): (usize, usize) = ($offset, $len);
        // SAFETY: kernel code runs only under the launch contract of `entry.rs`: the host
        // sizes the dynamic shared memory from the version table for every `shared_array!`
        // of the kernel. The simulator checks it (and `len ≥ 1`) at every launch in CI.
        unsafe { $crate::device::SharedArray::<$t>::dynamic(offset, len) }
    }};
}
pub use shared_array;
