//! What every plan is made of: the grid of one launch, one pass, the sizes a launch depends on,
//! and what a block's shared memory and the device's resident blocks come to.

use kernels_gpu::launch::{RESIDENT_THREADS_PER_SM, WARP_SIZE, elements_per_vector};
use kernels_gpu::policy::Shared;

/// The grid of one launch: blocks, threads per block and shared memory per block (CUDA's
/// launch configuration; the input's rows, columns or segments are its [`Shape`]).
///
/// [`Shape`]: crate::Shape
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchGrid {
    /// Blocks (`gridDim.x`).
    pub grid: u32,
    /// Threads per block (`blockDim.x`).
    pub block: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: usize,
}

/// One launch of a reduction: how many elements it reads and its grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// The elements it reads.
    pub len: usize,
    /// Its launch grid.
    pub launch: LaunchGrid,
}

/// The largest `gridDim.x` CUDA accepts.
pub const MAX_GRID: u64 = (1 << 31) - 1;

/// The sizes a launch depends on: the element's and the accumulator's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Bytes per element.
    pub element: usize,
    /// Bytes per accumulator (the kernel's running value; an argmin's or argmax's carries the
    /// index with it).
    pub accumulator: usize,
}

impl Sizes {
    /// The sizes for operation `O` over element type `T`.
    pub fn of<T: crate::element::Element, O: crate::op::Operation<T>>() -> Sizes {
        Sizes {
            element: size_of::<T>(),
            accumulator: size_of::<<O as kernels_gpu::ops::Reduction<T::Kernel>>::Acc>(),
        }
    }
}

/// Dynamic shared memory one block of `block` threads needs for what a kernel declared it
/// holds (`tile_accumulators`: the columns of a column kernel's tile).
pub fn shared_bytes_of(
    shared: Shared,
    block: u32,
    sizes: Sizes,
    tile_accumulators: usize,
) -> usize {
    let with_ticket = |bytes: usize| bytes.next_multiple_of(align_of::<u32>()) + size_of::<u32>();
    match shared {
        Shared::Nothing => 0,
        Shared::PerThread => block as usize * sizes.element,
        Shared::PerWarp => (block / WARP_SIZE) as usize * sizes.accumulator,
        Shared::PerWarpAndTicket => with_ticket((block / WARP_SIZE) as usize * sizes.accumulator),
        Shared::ColumnTileAndTicket => with_ticket(tile_accumulators.max(1) * sizes.accumulator),
        Shared::PerThreadAndTicket => with_ticket(block as usize * sizes.accumulator),
    }
}

/// Blocks of `block` threads that read `len` elements of `element` bytes as 16-byte vectors,
/// at least `vectors_per_thread` each, and at most `resident` (one wave): v8's grid, and the
/// flat read of narrow columns.
///
/// ```
/// use reduce_rs::plan::vector_grid;
/// assert_eq!(vector_grid(1 << 20, 4, 4, 256, 528), 256); // 2^18 vectors, 4 a thread
/// assert_eq!(vector_grid(1 << 28, 4, 4, 256, 528), 528);
/// assert_eq!(vector_grid(0, 4, 4, 256, 528), 1);
/// ```
pub fn vector_grid(
    len: usize,
    element: usize,
    vectors_per_thread: u64,
    block: u32,
    resident: u64,
) -> u64 {
    let per_block = vectors_per_thread * elements_per_vector(element) as u64 * u64::from(block);
    (len as u64).div_ceil(per_block).clamp(1, resident.max(1))
}

/// Blocks of `block` threads a device of `multiprocessors` SMs runs at once when nothing but
/// threads limits it. The GPU backend asks the driver instead, which also counts registers and
/// shared memory; the simulator uses this.
pub fn resident_blocks(multiprocessors: u32, block: u32) -> u64 {
    u64::from(multiprocessors) * u64::from((RESIDENT_THREADS_PER_SM / block).max(1))
}

/// One wave of a kernel: the blocks of it the GPU runs at once, and the multiprocessors
/// (SMs) they are spread over. The planner sizes grids by the blocks, and by the
/// multiprocessors where a rule wants a block per SM whatever a kernel's registers allow (the
/// 16-bit floats' arg rows split over blocks, [`Family`](super::shapes::Family)'s
/// `blocks_per_row`).
///
/// ```
/// use reduce_rs::plan::Wave;
/// // An H100's 132 SMs, 4 blocks of 512 threads each.
/// let wave = Wave::new(132 * 4, 132);
/// assert_eq!((wave.blocks(), wave.multiprocessors()), (528, 132));
/// // A grid capped below the SMs (a test forcing paths) spreads over that many at most.
/// assert_eq!(Wave::new(3, 132).multiprocessors(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wave {
    blocks: u64,
    multiprocessors: u64,
}

impl Wave {
    /// `blocks` resident over `multiprocessors` SMs; each at least 1, and no more SMs than
    /// blocks (a capped grid reaches no more).
    pub fn new(blocks: u64, multiprocessors: u64) -> Wave {
        let blocks = blocks.max(1);
        Wave {
            blocks,
            multiprocessors: multiprocessors.clamp(1, blocks),
        }
    }

    /// Blocks of the kernel resident at once (at least 1).
    pub fn blocks(self) -> u64 {
        self.blocks
    }

    /// Multiprocessors that hold them (at least 1, at most [`blocks`](Wave::blocks)).
    pub fn multiprocessors(self) -> u64 {
        self.multiprocessors
    }
}
