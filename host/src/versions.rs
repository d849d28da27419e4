//! The one table that describes every version: names, technique, where the seeds describe
//! it, and its launch shape. Both backends (GPU and simulator) launch from it.

use kernels_gpu::launch::{
    ADD_DURING_LOAD, BLOCK_SIZES, DEFAULT_BLOCK_SIZE, RESIDENT_THREADS_PER_SM, WARP_SIZE,
    elements_per_vector,
};

/// How many blocks a pass launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One block per `elements_per_thread * block` elements (the seeds' shape).
    PerElements { elements_per_thread: u32 },
    /// As many blocks as the GPU keeps resident at once (SMs × the kernel's occupancy, from the
    /// driver), fewer if the input is small; each thread loops over the input.
    FillDevice { min_elements_per_thread: u32 },
}

/// What the block's dynamic shared memory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// One element per thread (the shared-memory tree).
    PerThread,
    /// One element per warp (the shuffle versions).
    PerWarp,
    /// One element per warp and the `u32` ticket of the single-pass version.
    PerWarpAndTicket,
}

/// What the kernel leaves in `partials`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// One value per block: the host runs the version again over them until one is left.
    PerBlockPartials,
    /// The final value in `partials[0]`, in one launch.
    Final,
}

/// A version's default block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunedBlock {
    Fixed(u32),
    /// `small` threads per block up to `up_to` elements, `large` above.
    BySize {
        small: u32,
        large: u32,
        up_to: usize,
    },
}

#[derive(Debug)]
pub struct Version {
    /// 0–8: `v{index}`.
    pub index: u8,
    /// Technique name, accepted wherever a version is (`unroll-last-warp`).
    pub slug: &'static str,
    pub technique: &'static str,
    /// The name in seed `003` (0-based series), if the seeds have it.
    pub seed_003: Option<&'static str>,
    /// The 1-based name used by seeds `000`–`002`, the notebook `004` and Harris's slides.
    pub one_based: Option<&'static str>,
    pub grid: Grid,
    pub shared: Shared,
    /// The block size is a const generic: one entry point per size in `BLOCK_SIZES`.
    pub const_block: bool,
    /// Threads per block when the user does not choose: measured best on the H100 (`bench`).
    pub tuned_block: TunedBlock,
    pub output: Output,
}

pub const VERSIONS: [Version; 9] = [
    Version {
        index: 0,
        slug: "baseline",
        technique: "interleaved addressing, tid % 2s (divergent warps)",
        seed_003: Some("reduce_v0_baseline"),
        one_based: Some("V1"),
        grid: Grid::PerElements {
            elements_per_thread: 1,
        },
        shared: Shared::PerThread,
        const_block: false,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 1,
        slug: "no-divergence",
        technique: "strided index 2·s·tid (no divergence, bank conflicts)",
        seed_003: Some("reduce_v1_no_divergence_branch"),
        one_based: Some("V2"),
        grid: Grid::PerElements {
            elements_per_thread: 1,
        },
        shared: Shared::PerThread,
        const_block: false,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 2,
        slug: "no-bank-conflict",
        technique: "sequential addressing, stride halves from blockDim/2",
        seed_003: Some("reduce_v2_no_bank_confict"),
        one_based: Some("V3"),
        grid: Grid::PerElements {
            elements_per_thread: 1,
        },
        shared: Shared::PerThread,
        const_block: false,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 3,
        slug: "add-during-load",
        technique: "two elements added while loading; half the blocks",
        seed_003: Some("reduce_v3_add_during_load"),
        one_based: Some("V4"),
        grid: Grid::PerElements {
            elements_per_thread: ADD_DURING_LOAD,
        },
        shared: Shared::PerThread,
        const_block: false,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 4,
        slug: "unroll-last-warp",
        technique: "v3 + last warp unrolled (sync_warp, no block barrier)",
        seed_003: Some("reduce_v4_unroll_last_warp"),
        one_based: Some("V5"),
        grid: Grid::PerElements {
            elements_per_thread: ADD_DURING_LOAD,
        },
        shared: Shared::PerThread,
        const_block: false,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 5,
        slug: "complete-unroll",
        technique: "block size a const generic, every step unrolled",
        seed_003: Some("reduce_v5_completely_unroll"),
        one_based: Some("V6"),
        grid: Grid::PerElements {
            elements_per_thread: ADD_DURING_LOAD,
        },
        shared: Shared::PerThread,
        const_block: true,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 6,
        slug: "multi-add",
        technique: "grid-stride loop, many adds per thread, grid sized to the GPU",
        seed_003: None,
        one_based: Some("V7"),
        grid: Grid::FillDevice {
            min_elements_per_thread: ADD_DURING_LOAD,
        },
        shared: Shared::PerThread,
        const_block: true,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 7,
        slug: "warp-shuffle",
        technique: "register sums, warp shuffles, per-warp partials in shared memory",
        seed_003: Some("reduce_v7_shuffle"),
        one_based: Some("V8"),
        grid: Grid::FillDevice {
            min_elements_per_thread: 1,
        },
        shared: Shared::PerWarp,
        const_block: true,
        tuned_block: TunedBlock::Fixed(DEFAULT_BLOCK_SIZE),
        output: Output::PerBlockPartials,
    },
    Version {
        index: 8,
        slug: "single-pass",
        technique: "16-byte loads, last block reduces the partials: one launch",
        seed_003: None,
        one_based: None,
        grid: Grid::FillDevice {
            min_elements_per_thread: 4,
        },
        shared: Shared::PerWarpAndTicket,
        const_block: true,
        // bench on the H100 (f32): 512 threads win below ~2^23 elements, 1024 above.
        tuned_block: TunedBlock::BySize {
            small: 512,
            large: 1024,
            up_to: 1 << 23,
        },
        output: Output::Final,
    },
];

/// The shape of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: u32,
    pub block: u32,
    pub shared_bytes: usize,
}

/// The largest `gridDim.x` CUDA accepts.
pub const MAX_GRID: u64 = (1 << 31) - 1;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShapeError {
    #[error("block size {0} is not one of {BLOCK_SIZES:?} (powers of two from 64 to 1024)")]
    BlockSize(u32),
    #[error(
        "{len} elements need {grid} blocks of {block} threads; CUDA allows at most {MAX_GRID}: use a larger --block"
    )]
    GridTooLarge { len: usize, block: u32, grid: u64 },
}

impl Version {
    /// `chosen` if the user gave a block size, else this version's tuned one for `len` elements.
    pub fn block_for(&self, chosen: Option<u32>, len: usize) -> u32 {
        match (chosen, self.tuned_block) {
            (Some(block), _) => block,
            (None, TunedBlock::Fixed(block)) => block,
            (
                None,
                TunedBlock::BySize {
                    small,
                    large,
                    up_to,
                },
            ) => {
                if len <= up_to {
                    small
                } else {
                    large
                }
            }
        }
    }

    /// The tuned block size as `list` shows it.
    pub fn tuned_block_text(&self) -> String {
        match self.tuned_block {
            TunedBlock::Fixed(block) => block.to_string(),
            TunedBlock::BySize {
                small,
                large,
                up_to,
            } => {
                format!("{small} to 2^{}, then {large}", up_to.ilog2())
            }
        }
    }

    pub fn name(&self) -> String {
        format!("v{}", self.index)
    }

    /// The kernel's symbol in the PTX, as `kernels-gpu/src/entry.rs` generates it.
    pub fn entry_point(&self, dtype: &str, op: &str, block: u32) -> String {
        if self.const_block {
            format!("reduce_v{}_{dtype}_{op}_b{block}", self.index)
        } else {
            format!("reduce_v{}_{dtype}_{op}", self.index)
        }
    }

    /// Where the seeds describe this version, in both numberings.
    pub fn seed_names(&self) -> String {
        match (self.seed_003, self.one_based) {
            (Some(seed), Some(one)) => {
                format!("seed 003: {seed}; 1-based numbering (seeds 000–002, 004): {one}")
            }
            (None, Some(one)) => format!("not in seed 003; 1-based numbering: {one}"),
            _ => "beyond the seeds".to_string(),
        }
    }

    /// The launch of one pass over `len` elements of `element_size` bytes, on a device that
    /// keeps `resident_blocks` blocks of this kernel running at once (see [`resident_blocks`]).
    pub fn shape(
        &self,
        len: usize,
        block: u32,
        element_size: usize,
        resident_blocks: u64,
    ) -> Result<LaunchShape, ShapeError> {
        if !BLOCK_SIZES.contains(&block) {
            return Err(ShapeError::BlockSize(block));
        }
        let blocks_for = |per_thread: u32| {
            (len as u64)
                .div_ceil(u64::from(per_thread) * u64::from(block))
                .max(1)
        };
        let grid = match self.grid {
            Grid::PerElements {
                elements_per_thread,
            } => blocks_for(elements_per_thread),
            Grid::FillDevice {
                min_elements_per_thread,
            } => {
                let resident = resident_blocks.max(1);
                // v8 moves 16-byte vectors: size the grid by vectors, not elements.
                let per_thread = if self.shared == Shared::PerWarpAndTicket {
                    min_elements_per_thread * elements_per_vector(element_size) as u32
                } else {
                    min_elements_per_thread
                };
                blocks_for(per_thread).min(resident)
            }
        };
        if grid > MAX_GRID {
            return Err(ShapeError::GridTooLarge { len, block, grid });
        }
        let shared_bytes = match self.shared {
            Shared::PerThread => block as usize * element_size,
            Shared::PerWarp => (block / WARP_SIZE) as usize * element_size,
            Shared::PerWarpAndTicket => {
                (block / WARP_SIZE) as usize * element_size + size_of::<u32>()
            }
        };
        Ok(LaunchShape {
            grid: grid as u32,
            block,
            shared_bytes,
        })
    }

    /// Every launch needed to reduce `len` elements to one value: the first pass, then the same
    /// version over the partials until one is left (one launch for single-pass versions).
    pub fn passes(
        &self,
        len: usize,
        block: u32,
        element_size: usize,
        resident_blocks: u64,
    ) -> Result<Vec<(usize, LaunchShape)>, ShapeError> {
        let mut passes = Vec::new();
        let mut len = len;
        loop {
            let shape = self.shape(len, block, element_size, resident_blocks)?;
            passes.push((len, shape));
            if self.output == Output::Final || shape.grid == 1 {
                return Ok(passes);
            }
            len = shape.grid as usize;
        }
    }

    /// Upper bound on the number of additions any element goes through, for the float error
    /// bound: per pass, the elements a thread folds in a row, then the block's tree
    /// (log2(block) levels); for the single-pass version, the last block's fold of the
    /// partials and a second tree.
    pub fn additions_per_element(&self, passes: &[(usize, LaunchShape)]) -> u64 {
        passes
            .iter()
            .map(|&(len, shape)| {
                let threads = u64::from(shape.grid) * u64::from(shape.block);
                let in_a_row = (len as u64).div_ceil(threads) + 2; // +2: v8's head and tail
                let tree = u64::from(shape.block.ilog2());
                let last_block = match self.output {
                    Output::Final => u64::from(shape.grid).div_ceil(u64::from(shape.block)) + tree,
                    Output::PerBlockPartials => 0,
                };
                in_a_row + tree + last_block
            })
            .sum()
    }
}

/// Blocks of `block` threads a device of `multiprocessors` SMs runs at once when nothing but
/// threads limits it (`RESIDENT_THREADS_PER_SM`). The GPU backend asks the driver instead,
/// which also counts the kernel's registers and shared memory.
pub fn resident_blocks(multiprocessors: u32, block: u32) -> u64 {
    u64::from(multiprocessors) * u64::from((RESIDENT_THREADS_PER_SM / block).max(1))
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown version `{given}`; valid: {}", valid_names())]
pub struct UnknownVersion {
    pub given: String,
}

fn valid_names() -> String {
    VERSIONS
        .iter()
        .map(|v| format!("{} ({})", v.name(), v.slug))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A version by `v5`, `5`, `V6` (the 1-based name, with a capital V) or `complete-unroll`.
pub fn find(name: &str) -> Result<&'static Version, UnknownVersion> {
    let trimmed = name.trim();
    VERSIONS
        .iter()
        .find(|v| {
            trimmed.eq_ignore_ascii_case(&v.name())
                || trimmed == v.index.to_string()
                || trimmed.eq_ignore_ascii_case(v.slug)
                || trimmed.eq_ignore_ascii_case(&v.slug.replace('-', "_"))
        })
        .ok_or_else(|| UnknownVersion {
            given: name.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_versions_by_name_number_and_technique() {
        assert_eq!(find("v5").unwrap().index, 5);
        assert_eq!(find("5").unwrap().index, 5);
        assert_eq!(find("unroll-last-warp").unwrap().index, 4);
        assert_eq!(find("Unroll_Last_Warp").unwrap().index, 4);
        let err = find("v9").unwrap_err().to_string();
        assert!(
            err.contains("unknown version `v9`") && err.contains("v8 (single-pass)"),
            "{err}"
        );
    }

    #[test]
    fn versions_are_numbered_in_order_with_unique_slugs() {
        for (i, v) in VERSIONS.iter().enumerate() {
            assert_eq!(v.index as usize, i);
            assert_eq!(VERSIONS.iter().filter(|w| w.slug == v.slug).count(), 1);
        }
    }

    #[test]
    fn seed_shapes_match_the_seeds() {
        // Seeds: N = 32M, 256 threads: v0–v2 use N/256 blocks, v3–v5 N/512.
        let n = 1 << 25;
        assert_eq!(
            VERSIONS[0]
                .shape(n, 256, 4, resident_blocks(132, 256))
                .unwrap()
                .grid,
            131_072
        );
        assert_eq!(
            VERSIONS[3]
                .shape(n, 256, 4, resident_blocks(132, 256))
                .unwrap()
                .grid,
            65_536
        );
        assert_eq!(
            VERSIONS[5]
                .shape(n, 256, 4, resident_blocks(132, 256))
                .unwrap()
                .shared_bytes,
            1024
        );
        // Grid-filling versions: 132 SMs × 2048/256 = 1056 blocks on the H100.
        assert_eq!(
            VERSIONS[6]
                .shape(n, 256, 4, resident_blocks(132, 256))
                .unwrap()
                .grid,
            1056
        );
        assert_eq!(
            VERSIONS[7]
                .shape(n, 256, 4, resident_blocks(132, 256))
                .unwrap()
                .shared_bytes,
            32
        );
        assert_eq!(
            VERSIONS[8]
                .shape(n, 256, 4, resident_blocks(132, 256))
                .unwrap()
                .shared_bytes,
            36
        );
    }

    #[test]
    fn small_inputs_still_launch_one_block() {
        for v in &VERSIONS {
            assert_eq!(
                v.shape(0, 256, 4, resident_blocks(132, 256)).unwrap().grid,
                1,
                "{}",
                v.name()
            );
            assert_eq!(
                v.passes(1, 64, 8, resident_blocks(132, 64)).unwrap().len(),
                1
            );
        }
    }

    #[test]
    fn multi_pass_versions_repeat_until_one_block() {
        let passes = VERSIONS[0]
            .passes(1 << 25, 256, 4, resident_blocks(132, 256))
            .unwrap();
        let grids: Vec<u32> = passes.iter().map(|(_, s)| s.grid).collect();
        assert_eq!(grids, [131_072, 512, 2, 1]);
        assert_eq!(
            VERSIONS[8]
                .passes(1 << 25, 256, 4, resident_blocks(132, 256))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn rejects_bad_block_sizes_and_huge_grids() {
        assert_eq!(
            VERSIONS[0].shape(10, 100, 4, 1),
            Err(ShapeError::BlockSize(100))
        );
        assert!(VERSIONS[0].shape(1 << 40, 64, 4, 1).is_err());
    }

    #[test]
    fn entry_points_follow_the_kernel_crate_naming() {
        assert_eq!(
            VERSIONS[0].entry_point("f32", "sum", 256),
            "reduce_v0_f32_sum"
        );
        assert_eq!(
            VERSIONS[5].entry_point("i32", "max", 128),
            "reduce_v5_i32_max_b128"
        );
    }
}
