//! What the test kernels are written with: views of shared and global memory that announce
//! every access to the simulator before making it, launch shorthands, and report assertions.

use simt::{Access, ErrorKind, FaultKind, LaunchConfig, LaunchStats, Region, Schedule, SimError};

pub use simt::{
    block_dim_x, block_idx_x, grid_dim_x, lane_id, sync_threads, sync_warp, thread_idx_x,
};

pub const FULL_MASK: u32 = u32::MAX;

/// `len` elements of `T` starting `offset` elements into the block's dynamic shared memory.
pub struct Shared<T> {
    base: *mut T,
    offset: usize,
    len: usize,
}

impl<T: Copy> Shared<T> {
    pub fn new(offset: usize, len: usize) -> Self {
        let (memory, bytes) = simt::dynamic_shared_memory();
        assert!(
            (offset + len) * size_of::<T>() <= bytes,
            "the launch gave too little shared memory"
        );
        Self {
            base: memory.cast(),
            offset,
            len,
        }
    }

    #[track_caller]
    fn element(&self, index: usize, write: bool) -> *mut T {
        assert!(
            index < self.len,
            "shared index {index} out of bounds ({} elements)",
            self.len
        );
        let index = self.offset + index;
        simt::shared_access(index * size_of::<T>(), size_of::<T>(), write);
        // SAFETY: checked above against `len`, and `new` checked the memory holds the view.
        unsafe { self.base.add(index) }
    }

    #[track_caller]
    pub fn load(&self, index: usize) -> T {
        // SAFETY: `element` gives an in-bounds pointer into live shared memory.
        unsafe { self.element(index, false).read_volatile() }
    }

    #[track_caller]
    pub fn store(&self, index: usize, value: T) {
        // SAFETY: as in `load`.
        unsafe { self.element(index, true).write_volatile(value) }
    }
}

/// A host buffer seen as global memory.
#[derive(Clone, Copy)]
pub struct Global<T> {
    base: *mut T,
    pub len: usize,
}

impl<T: Copy> Global<T> {
    /// The view keeps a raw pointer: the test must not touch `buffer` during the launch.
    pub fn new(buffer: &mut [T]) -> Self {
        Self {
            base: buffer.as_mut_ptr(),
            len: buffer.len(),
        }
    }

    pub fn region(&self, name: &'static str, access: Access) -> Region {
        Region {
            name,
            addr: self.base as usize,
            bytes: self.len * size_of::<T>(),
            access,
        }
    }

    pub fn as_ptr(&self) -> *mut T {
        self.base
    }

    /// The pointer to element `index` after the same bounds check as kernels-gpu's wrappers.
    #[track_caller]
    fn element(&self, index: usize, write: bool) -> *mut T {
        if index >= self.len {
            simt::fault(
                FaultKind::OutOfBounds,
                format_args!(
                    "out-of-bounds global memory access: index {index} of an array of {} elements",
                    self.len
                ),
            );
        }
        self.unchecked(index, write)
    }

    /// The pointer to element `index` with only the simulator's region check: a wrapper bug.
    #[track_caller]
    fn unchecked(&self, index: usize, write: bool) -> *mut T {
        let element = self.base.wrapping_add(index);
        simt::global_access(element as usize, size_of::<T>(), write);
        element
    }

    #[track_caller]
    pub fn load(&self, index: usize) -> T {
        // SAFETY: `element` checked the index against the buffer.
        unsafe { self.element(index, false).read_volatile() }
    }

    #[track_caller]
    pub fn store(&self, index: usize, value: T) {
        // SAFETY: as in `load`.
        unsafe { self.element(index, true).write_volatile(value) }
    }

    #[track_caller]
    pub fn load_unchecked(&self, index: usize) -> T {
        // SAFETY: the simulator stops the thread inside `global_access` unless the address is
        // inside a registered region, which the test keeps alive.
        unsafe { self.unchecked(index, false).read_volatile() }
    }

    #[track_caller]
    pub fn store_unchecked(&self, index: usize, value: T) {
        // SAFETY: as in `load_unchecked`.
        unsafe { self.unchecked(index, true).write_volatile(value) }
    }
}

pub fn config(grid_dim: u32, block_dim: u32, shared_bytes: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim,
        block_dim,
        shared_bytes,
        schedule: Schedule::InOrder,
    }
}

pub fn shuffled(config: LaunchConfig, seed: u64) -> LaunchConfig {
    LaunchConfig {
        schedule: Schedule::Shuffled { seed },
        ..config
    }
}

/// The schedules every correct kernel must pass under: in order and a few shuffles.
pub fn schedules(config: LaunchConfig) -> impl Iterator<Item = LaunchConfig> {
    [None, Some(1), Some(2), Some(0xDEAD_BEEF)]
        .into_iter()
        .map(move |seed| match seed {
            None => config,
            Some(seed) => shuffled(config, seed),
        })
}

/// Launches and expects success.
#[track_caller]
pub fn run(
    name: &str,
    config: &LaunchConfig,
    regions: &[Region],
    kernel: &dyn Fn(),
) -> LaunchStats {
    simt::launch(name, config, regions, kernel)
        .unwrap_or_else(|error| panic!("{:?}: {error}", error.kind))
}

/// Launches and expects an error of `kind` whose report contains every one of `parts`.
#[track_caller]
pub fn fails(
    kind: ErrorKind,
    parts: &[&str],
    name: &str,
    config: &LaunchConfig,
    regions: &[Region],
    kernel: &dyn Fn(),
) -> SimError {
    let error = match simt::launch(name, config, regions, kernel) {
        Ok(_) => panic!("kernel `{name}` passed, but a {kind:?} was expected"),
        Err(error) => error,
    };
    assert_eq!(error.kind, kind, "{error}");
    for part in parts {
        assert!(
            error.message.contains(part),
            "the report lacks {part:?}:\n{error}"
        );
    }
    error
}
