//! The versions' plans for a whole array: the passes of a version over `len` elements (each
//! over the values the pass before wrote, until one is left), their shared memory and grids.

use super::job::{Job, Work};
use super::launch::{LaunchGrid, MAX_GRID, Pass, Sizes, shared_bytes_of, vector_grid};
use crate::error::Error;
use crate::version::Version;
use kernels_gpu::launch::{BLOCK_SIZES, elements_per_vector};
use kernels_gpu::policy::{BlockParam, Grid, Output};

/// The entry point of `version` for `T`, `O` and `block` (`reduce_v8_f32_sum`).
pub fn entry_name<T: crate::element::Element, O: crate::op::Operation<T>>(
    version: Version,
    block: u32,
) -> String {
    version
        .info()
        .entry_point(T::DTYPE.name(), O::KIND.name(), block)
        .to_string()
}

/// The job of `version` reducing `len` elements (`len > 0`) of `T` with `O` in blocks of
/// `block` threads, on a device that runs `resident` blocks of its kernel at once (the
/// backend's `resident`): every pass, the last writing one result.
///
/// ```
/// use reduce_rs::{Version, ops::Sum, plan};
/// let job = plan::whole::<f32, Sum>(Version::find("v0")?, 1 << 20, 256, 1056)?;
/// assert_eq!(job.kernel, "reduce_v0_f32_sum");
/// let plan::Work::Passes { passes, .. } = &job.work else { unreachable!() };
/// assert_eq!(passes.len(), 3); // 4096 blocks, then 16, then 1
/// # Ok::<(), reduce_rs::Error>(())
/// ```
pub fn whole<T: crate::element::Element, O: crate::op::Operation<T>>(
    version: Version,
    len: usize,
    block: u32,
    resident: u64,
) -> Result<Job<'static>, Error> {
    let sizes = Sizes::of::<T, O>();
    Ok(Job {
        kernel: entry_name::<T, O>(version, block),
        len,
        result_bytes: size_of::<O::Device>(),
        work: Work::Passes {
            passes: passes(version, len, block, sizes, resident)?,
            sizes,
            results: 1,
        },
    })
}

/// Checks a block size for `version`: a supported size, and one the version is built for.
pub fn check_block(version: Version, block: u32) -> Result<(), Error> {
    if BLOCK_SIZES.contains(&block) {
        Ok(())
    } else {
        Err(Error::BlockSize {
            version: version.name(),
            block,
            valid: BLOCK_SIZES.to_vec(),
        })
    }
}

/// The block a version launches with when the user chose none: the largest of
/// [`BLOCK_SIZES`] up to `tuned` (the version's tuned block) that its kernel for that block
/// can run, asking `max_block_of(block)` for the most threads that kernel runs with on this
/// GPU (its registers per thread decide it: 65 or more registers leave fewer than 1024).
/// `tuned` itself where no size fits, so that its launch reports why
/// ([`Error::BlockTooLarge`]).
///
/// ```
/// use reduce_rs::plan::runnable_block;
/// // A kernel of 68 registers runs at most 896 threads a block: 512 is the largest size left.
/// assert_eq!(runnable_block(1024, |_| Ok(896))?, 512);
/// assert_eq!(runnable_block(256, |_| Ok(896))?, 256);
/// # Ok::<(), reduce_rs::Error>(())
/// ```
pub fn runnable_block(
    tuned: u32,
    mut max_block_of: impl FnMut(u32) -> Result<u32, Error>,
) -> Result<u32, Error> {
    for &block in BLOCK_SIZES.iter().rev().filter(|&&block| block <= tuned) {
        if block <= max_block_of(block)? {
            return Ok(block);
        }
    }
    Ok(tuned)
}

/// Dynamic shared memory one block of `block` threads of `version` needs.
pub fn shared_bytes(version: Version, block: u32, sizes: Sizes) -> usize {
    shared_bytes_of(version.info().shared, block, sizes, 0)
}

/// The launch of one pass over `len` elements, on a device that keeps `resident_blocks` blocks
/// of this kernel running at once (SMs × occupancy).
pub fn launch_grid(
    version: Version,
    len: usize,
    block: u32,
    sizes: Sizes,
    resident_blocks: u64,
) -> Result<LaunchGrid, Error> {
    check_block(version, block)?;
    let blocks_for = |per_thread: u64| (len as u64).div_ceil(per_thread * u64::from(block)).max(1);
    let grid = match version.info().grid {
        Grid::PerElements {
            elements_per_thread,
        } => blocks_for(u64::from(elements_per_thread)),
        Grid::FillDevice {
            min_elements_per_thread,
        } => blocks_for(u64::from(min_elements_per_thread)).min(resident_blocks.max(1)),
        Grid::FillDeviceVectors {
            min_vectors_per_thread,
            single_block_vectors_per_thread,
        } => {
            let per_vector = elements_per_vector(sizes.element) as u64;
            if blocks_for(u64::from(single_block_vectors_per_thread) * per_vector) == 1 {
                1
            } else {
                vector_grid(
                    len,
                    sizes.element,
                    u64::from(min_vectors_per_thread),
                    block,
                    resident_blocks,
                )
            }
        }
    };
    if grid > MAX_GRID {
        return Err(Error::GridTooLarge { len, block, grid });
    }
    Ok(LaunchGrid {
        grid: grid as u32,
        block,
        shared_bytes: shared_bytes(version, block, sizes),
    })
}

/// Every launch needed to reduce `len` elements to one value: the first pass, then the same
/// version over the partials until one is left (one launch for single-pass versions).
pub fn passes(
    version: Version,
    len: usize,
    block: u32,
    sizes: Sizes,
    resident_blocks: u64,
) -> Result<Vec<Pass>, Error> {
    let mut passes = Vec::new();
    let mut len = len;
    loop {
        let launch = launch_grid(version, len, block, sizes, resident_blocks)?;
        passes.push(Pass { len, launch });
        if version.info().output == Output::Final || launch.grid == 1 {
            return Ok(passes);
        }
        len = launch.grid as usize;
    }
}

/// The entry point's block-size suffix is part of its name for const-block versions.
pub fn block_in_name(version: Version) -> bool {
    version.info().block == BlockParam::Const
}

/// Upper bound on the number of additions any element goes through in these passes, for the
/// float error bound: per pass, the values a thread adds one after another, then the block's
/// tree (log2 of the block); for single-pass versions, the last block's fold of the partials
/// and a second tree. v8 adds each group of 16 bytes as a tree and the groups with
/// compensation, which this bound does not credit.
pub fn additions_per_element(version: Version, passes: &[Pass]) -> u64 {
    passes
        .iter()
        .map(|pass| {
            let launch = pass.launch;
            let threads = u64::from(launch.grid) * u64::from(launch.block);
            let in_a_row = (pass.len as u64).div_ceil(threads) + 2; // +2: v8's head and tail
            let tree = u64::from(launch.block.ilog2());
            let last_block = match version.info().output {
                Output::Final => u64::from(launch.grid).div_ceil(u64::from(launch.block)) + tree,
                Output::PerBlock => 0,
            };
            in_a_row + tree + last_block
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::super::launch::resident_blocks;
    use super::*;

    fn v(name: &str) -> Version {
        Version::find(name).unwrap()
    }
    const F32: Sizes = Sizes {
        element: 4,
        accumulator: 4,
    };

    #[test]
    fn the_tutorials_shapes() {
        // The tutorial: N = 32M, 256 threads: v0–v2 use N/256 blocks, v3–v5 N/512.
        let n = 1 << 25;
        let resident = resident_blocks(132, 256);
        assert_eq!(
            launch_grid(v("v0"), n, 256, F32, resident).unwrap().grid,
            131_072
        );
        assert_eq!(
            launch_grid(v("v3"), n, 256, F32, resident).unwrap().grid,
            65_536
        );
        assert_eq!(
            launch_grid(v("v5"), n, 256, F32, resident)
                .unwrap()
                .shared_bytes,
            1024
        );
        // Grid-filling versions: 132 SMs × 2048/256 = 1056 blocks on the H100.
        assert_eq!(
            launch_grid(v("v6"), n, 256, F32, resident).unwrap().grid,
            1056
        );
        assert_eq!(
            launch_grid(v("v7"), n, 256, F32, resident)
                .unwrap()
                .shared_bytes,
            32
        );
        assert_eq!(
            launch_grid(v("v8"), n, 256, F32, resident)
                .unwrap()
                .shared_bytes,
            36
        );
    }

    #[test]
    fn v8_runs_one_block_while_its_threads_have_at_most_eight_vectors() {
        let v8 = v("v8");
        let resident = resident_blocks(132, 256);
        let grid = |n: usize| {
            let block = v8.tuned_block(n);
            (
                block,
                launch_grid(v8, n, block, F32, resident).unwrap().grid,
            )
        };
        // f32: 4 elements a vector; 1024 threads × 8 vectors = 2^15 elements.
        assert_eq!(grid(1 << 12), (256, 1));
        assert_eq!(grid(1 << 15), (1024, 1));
        // Past that, blocks of 256 with at least 4 vectors a thread: 2^16 / (256 × 16) = 16.
        assert_eq!(grid(1 << 16), (256, 16));
        assert_eq!(grid((1 << 15) + 1), (256, 9));
        // f64 (2 elements a vector): 1024 threads × 8 vectors = 2^14 elements in one block.
        let f64s = Sizes {
            element: 8,
            accumulator: 8,
        };
        assert_eq!(
            launch_grid(v8, 1 << 14, 1024, f64s, resident).unwrap().grid,
            1
        );
        assert_eq!(
            launch_grid(v8, 1 << 15, 1024, f64s, resident).unwrap().grid,
            4
        );
    }

    #[test]
    fn a_block_the_kernel_cannot_run_falls_back_to_the_largest_that_it_can() {
        // One kernel for every block (registers alike): the largest built size within its limit.
        assert_eq!(runnable_block(1024, |_| Ok(1024)).unwrap(), 1024);
        assert_eq!(runnable_block(1024, |_| Ok(896)).unwrap(), 512);
        assert_eq!(runnable_block(1024, |_| Ok(511)).unwrap(), 256);
        // Never above the tuned block, whatever the kernel could run.
        assert_eq!(runnable_block(128, |_| Ok(1024)).unwrap(), 128);
        // A kernel per block (const-generic versions): each size asks its own kernel.
        let mut asked = Vec::new();
        let per_block = |block: u32| {
            asked.push(block);
            Ok(if block >= 512 { 384 } else { 1024 })
        };
        assert_eq!(runnable_block(1024, per_block).unwrap(), 256);
        assert_eq!(asked, [1024, 512, 256]);
        // No size fits: the tuned block, whose launch says why.
        assert_eq!(runnable_block(1024, |_| Ok(32)).unwrap(), 1024);
        // The driver's errors reach the caller.
        let failed = runnable_block(256, |_| Err(Error::Kernels("no such kernel".into())));
        assert!(matches!(failed, Err(Error::Kernels(why)) if why == "no such kernel"));
    }

    #[test]
    fn tuned_blocks_are_built_sizes_in_ascending_tiers() {
        for version in Version::all() {
            if let kernels_gpu::policy::TunedBlock::BySize { tiers, above } =
                version.info().tuned_block
            {
                assert!(tiers.windows(2).all(|w| w[0].0 < w[1].0), "{version}");
                for &(up_to, block) in tiers {
                    assert!(up_to.is_power_of_two(), "{version}: {up_to}");
                    assert!(check_block(version, block).is_ok(), "{version}: {block}");
                }
                assert!(check_block(version, above).is_ok(), "{version}: {above}");
            }
        }
    }

    #[test]
    fn small_inputs_still_launch_one_block() {
        for version in Version::all() {
            let resident = resident_blocks(132, 256);
            assert_eq!(
                launch_grid(version, 0, 256, F32, resident).unwrap().grid,
                1,
                "{version}"
            );
            assert_eq!(passes(version, 1, 64, F32, resident).unwrap().len(), 1);
        }
    }

    #[test]
    fn multi_pass_versions_repeat_until_one_block() {
        let grids: Vec<u32> = passes(v("v0"), 1 << 25, 256, F32, resident_blocks(132, 256))
            .unwrap()
            .iter()
            .map(|p| p.launch.grid)
            .collect();
        assert_eq!(grids, [131_072, 512, 2, 1]);
        assert_eq!(
            passes(v("v8"), 1 << 25, 256, F32, resident_blocks(132, 256))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn rejects_bad_block_sizes_and_huge_grids() {
        assert!(matches!(
            launch_grid(v("v0"), 10, 100, F32, 1),
            Err(Error::BlockSize { block: 100, .. })
        ));
        assert!(matches!(
            launch_grid(v("v0"), 1 << 40, 64, F32, 1),
            Err(Error::GridTooLarge { .. })
        ));
    }

    #[test]
    fn v8_shared_memory_holds_its_accumulators_and_the_ticket() {
        // Arg<f64> is 16 bytes: 8 warps of 256 threads need 128 bytes, then the ticket.
        let arg = Sizes {
            element: 8,
            accumulator: 16,
        };
        assert_eq!(shared_bytes(v("v8"), 256, arg), 132);
    }
}
