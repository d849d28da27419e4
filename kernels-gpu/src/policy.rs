//! What a kernel declares about itself so that the host can launch and explain it: how many
//! blocks a pass launches ([`Grid`], [`ShapeGrid`]), what its shared memory holds ([`Shared`]),
//! how its block size reaches it ([`BlockParam`]), which element types and operators it is
//! built for ([`OpSet`]) — the fields of a version ([`VersionInfo`]) and of a shape kernel
//! ([`ShapeInfo`]).
//!
//! Plain data: the declarations themselves are in [`crate::versions`] and [`crate::shapes`]
//! (one entry per kernel, through the macros of `declare.rs`), and the host plans every launch
//! from them.

/// How many blocks a pass launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One block per `elements_per_thread * block` elements (the tutorial's shape).
    PerElements { elements_per_thread: u32 },
    /// As many blocks as the GPU keeps resident at once (SMs × the kernel's occupancy), fewer
    /// if the input is small: each thread loops over the input, handling at least
    /// `min_elements_per_thread` of it.
    FillDevice { min_elements_per_thread: u32 },
    /// As [`Grid::FillDevice`], but counted in 16-byte vectors: at least
    /// `min_vectors_per_thread` of them per thread; and one block alone while each of its
    /// threads has at most `single_block_vectors_per_thread` (a second block costs a hand-over
    /// that one block's few more loads do not).
    FillDeviceVectors {
        min_vectors_per_thread: u32,
        single_block_vectors_per_thread: u32,
    },
}

/// What the block's dynamic shared memory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// Nothing: the kernel's threads meet in warp shuffles only.
    Nothing,
    /// One element per thread (the shared-memory tree).
    PerThread,
    /// One accumulator per warp (the shuffle versions).
    PerWarp,
    /// One accumulator per warp and the `u32` ticket of the single-pass version.
    PerWarpAndTicket,
    /// One accumulator per column of the block's tile (the rows of a narrow matrix that one
    /// block walks at once meet there) and the `u32` ticket of the tile's last block.
    ColumnTileAndTicket,
    /// One accumulator per thread (the last block's threads of one column meet there) and the
    /// `u32` ticket of the last block.
    PerThreadAndTicket,
}

/// What a launch leaves in `output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// One value per block: the host runs the version again over them until one is left.
    PerBlock,
    /// The finished result in `output[0]`, in one launch.
    Final,
}

/// How the block size reaches the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockParam {
    /// Read at run time (`blockDim.x`): one entry point for every block size.
    Runtime,
    /// A const generic: one entry point per size in [`crate::launch::BLOCK_SIZES`]
    /// (`…_b256`).
    Const,
}

/// A version's block size when the user does not choose one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunedBlock {
    Fixed(u32),
    /// By input size: `(up_to, block)` pairs in ascending `up_to` — `block` threads for inputs
    /// of at most `up_to` elements — and `above` threads for larger ones.
    BySize {
        tiers: &'static [(usize, u32)],
        above: u32,
    },
}

impl TunedBlock {
    /// Threads per block for an input of `len` elements.
    pub const fn for_len(self, len: usize) -> u32 {
        match self {
            TunedBlock::Fixed(block) => block,
            TunedBlock::BySize { tiers, above } => {
                let mut k = 0;
                while k < tiers.len() {
                    if len <= tiers[k].0 {
                        return tiers[k].1;
                    }
                    k += 1;
                }
                above
            }
        }
    }
}

/// Which (element type, operator) pairs a kernel is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpSet {
    /// `f32 f64 i32 u32` × `sum min max`: the teaching versions, whose accumulator is the
    /// element.
    Teaching,
    /// Every element type × every operator: the library's kernels.
    Library,
}

/// Element types of [`OpSet::Teaching`] and of [`OpSet::Library`], as entry points name them.
pub const TEACHING_TYPES: [&str; 4] = ["f32", "f64", "i32", "u32"];
pub const LIBRARY_TYPES: [&str; 8] = ["f32", "f64", "i32", "u32", "i64", "u64", "f16", "bf16"];
/// Operators of [`OpSet::Teaching`] and of [`OpSet::Library`].
pub const TEACHING_OPS: [&str; 3] = ["sum", "min", "max"];
pub const LIBRARY_OPS: [&str; 6] = ["sum", "min", "max", "argmin", "argmax", "mean"];

#[cfg(not(target_arch = "nvptx64"))]
impl OpSet {
    /// The element types this set builds, by name.
    pub fn types(self) -> &'static [&'static str] {
        match self {
            OpSet::Teaching => &TEACHING_TYPES,
            OpSet::Library => &LIBRARY_TYPES,
        }
    }

    /// The operators this set builds, by name.
    pub fn ops(self) -> &'static [&'static str] {
        match self {
            OpSet::Teaching => &TEACHING_OPS,
            OpSet::Library => &LIBRARY_OPS,
        }
    }

    /// Whether `dtype` × `op` (names as in entry points) is built.
    pub fn supports(self, dtype: &str, op: &str) -> bool {
        self.types().contains(&dtype) && self.ops().contains(&op)
    }
}

/// Where a version comes from in the material this series follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The chapter of the tutorial series that numbers the versions from 0, by its code's name
    /// (`reduce_v3_add_during_load`).
    pub chapter: Option<&'static str>,
    /// The number the diagrams, the notebook and Mark Harris's slides give it (they count
    /// from 1: their "V4" is v3 here).
    pub one_based: Option<u8>,
    /// The kernel of Harris's *Optimizing Parallel Reduction in CUDA* (Kernel 1 … 7).
    pub harris_kernel: Option<u8>,
}

/// One version of the series.
#[derive(Debug)]
pub struct VersionInfo {
    /// 0–8: `v{index}`.
    pub index: u8,
    /// `v0` … `v8`.
    pub name: &'static str,
    /// Technique name, accepted wherever a version is (`unroll-last-warp`).
    pub slug: &'static str,
    pub technique: &'static str,
    pub origin: Origin,
    pub grid: Grid,
    pub shared: Shared,
    pub block: BlockParam,
    /// Threads per block when the user does not choose: measured best on the H100 (`bench`).
    pub tuned_block: TunedBlock,
    pub output: Output,
    pub ops: OpSet,
}

#[cfg(not(target_arch = "nvptx64"))]
impl VersionInfo {
    /// The entry point for `dtype`, `op` and `block` (names as in [`OpSet`]), whether or not
    /// it is built (see [`OpSet::supports`]).
    pub fn entry_point(&self, dtype: &str, op: &str, block: u32) -> EntryName {
        EntryName::new(
            self.name,
            dtype,
            op,
            (self.block == BlockParam::Const).then_some(block),
        )
    }
}

/// A kernel entry point's name, `reduce_v5_f32_sum_b256`, built without allocating.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryName {
    bytes: [u8; 48],
    len: usize,
}

#[cfg(not(target_arch = "nvptx64"))]
impl EntryName {
    /// `{family}_{dtype}_{op}` (plus `_b{block}`); `family` is `v5` for versions
    /// (`reduce_v5_…`) or a library kernel's name.
    pub fn new(family: &str, dtype: &str, op: &str, block: Option<u32>) -> Self {
        let mut name = EntryName {
            bytes: [0; 48],
            len: 0,
        };
        if family.starts_with('v') {
            name.push("reduce_");
        }
        for part in [family, "_", dtype, "_", op] {
            name.push(part);
        }
        if let Some(block) = block {
            name.push("_b");
            let mut digits = [0u8; 10];
            let mut count = 0;
            let mut rest = block;
            loop {
                digits[count] = b'0' + (rest % 10) as u8;
                count += 1;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            while count > 0 {
                count -= 1;
                let digit = [digits[count]];
                name.push(core::str::from_utf8(&digit).unwrap_or("?"));
            }
        }
        name
    }

    fn push(&mut self, part: &str) {
        let end = (self.len + part.len()).min(self.bytes.len());
        self.bytes[self.len..end].copy_from_slice(&part.as_bytes()[..end - self.len]);
        self.len = end;
    }

    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl core::fmt::Display for EntryName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many blocks a shape kernel launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeGrid {
    /// Groups of lanes per row (a power of two from 1 to 32, one or more groups of vector loads
    /// each, by operator), several rows per warp; at most a few waves of blocks, whose warps
    /// then take the next rows.
    LaneGroupsPerRow,
    /// One block per row (or segment).
    BlockPerRow,
    /// Rows × blocks per row: as many as fill the GPU in one wave, at least a vector per
    /// thread each, and long rows in tiles over several waves (the host's planner).
    BlocksPerRow,
    /// Tiles of columns × bands of whole runs of rows: a few runs per band, within one wave.
    ColumnTilesAndBands,
    /// The whole matrix read as v8 reads an array: at least four vectors a thread, at most one
    /// wave.
    FlatVectors,
}

/// One shape kernel of the library (`crate::shapes`): rows, columns or segments.
#[derive(Debug)]
pub struct ShapeInfo {
    /// The entry points' prefix (`rows_warp` → `rows_warp_f32_sum`).
    pub name: &'static str,
    /// Threads per block: the kernels are built for this size.
    pub block: u32,
    pub shared: Shared,
    pub grid: ShapeGrid,
}
