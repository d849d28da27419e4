//! The versions of the series, declared once: what each one is, where it comes from, how the
//! host launches it, and which element types and operators it is built for. Each version's
//! kernel is a file of this folder, read in order: each opens with what it changes against
//! the one before and why.
//!
//! From this declaration come the modules below, the table [`VERSIONS`], the PTX entry points
//! ([`entries`]) and the simulator's lookup ([`sim_entry`]); [`crate::policy`] says what each
//! field means.

use crate::launch::ADD_DURING_LOAD;
use crate::policy::{Grid, Origin, Output, Shared, TunedBlock};

declare_versions! {
    v0 = 0, reduce_v0_baseline::reduce_v0 {
        slug: "baseline",
        technique: "interleaved addressing, tid % 2s (divergent warps)",
        origin: Origin { chapter: Some("reduce_v0_baseline"), one_based: Some(1), harris_kernel: Some(1) },
        grid: Grid::PerElements { elements_per_thread: 1 },
        shared: Shared::PerThread,
        block: Runtime,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v1 = 1, reduce_v1_no_divergence::reduce_v1 {
        slug: "no-divergence",
        technique: "strided index 2·s·tid (no divergence, bank conflicts)",
        origin: Origin { chapter: Some("reduce_v1_no_divergence_branch"), one_based: Some(2), harris_kernel: Some(2) },
        grid: Grid::PerElements { elements_per_thread: 1 },
        shared: Shared::PerThread,
        block: Runtime,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v2 = 2, reduce_v2_no_bank_conflict::reduce_v2 {
        slug: "no-bank-conflict",
        technique: "sequential addressing, stride halves from blockDim/2",
        origin: Origin { chapter: Some("reduce_v2_no_bank_confict"), one_based: Some(3), harris_kernel: Some(3) },
        grid: Grid::PerElements { elements_per_thread: 1 },
        shared: Shared::PerThread,
        block: Runtime,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v3 = 3, reduce_v3_add_during_load::reduce_v3 {
        slug: "add-during-load",
        technique: "two elements added while loading; half the blocks",
        origin: Origin { chapter: Some("reduce_v3_add_during_load"), one_based: Some(4), harris_kernel: Some(4) },
        grid: Grid::PerElements { elements_per_thread: ADD_DURING_LOAD },
        shared: Shared::PerThread,
        block: Runtime,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v4 = 4, reduce_v4_unroll_last_warp::reduce_v4 {
        slug: "unroll-last-warp",
        technique: "v3 + last warp unrolled (sync_warp, no block barrier)",
        origin: Origin { chapter: Some("reduce_v4_unroll_last_warp"), one_based: Some(5), harris_kernel: Some(5) },
        grid: Grid::PerElements { elements_per_thread: ADD_DURING_LOAD },
        shared: Shared::PerThread,
        block: Runtime,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v5 = 5, reduce_v5_complete_unroll::reduce_v5 {
        slug: "complete-unroll",
        technique: "block size a const generic, every step unrolled",
        origin: Origin { chapter: Some("reduce_v5_completely_unroll"), one_based: Some(6), harris_kernel: Some(6) },
        grid: Grid::PerElements { elements_per_thread: ADD_DURING_LOAD },
        shared: Shared::PerThread,
        block: Const,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v6 = 6, reduce_v6_multi_add::reduce_v6 {
        slug: "multi-add",
        technique: "grid-stride loop, many adds per thread, grid sized to the GPU",
        origin: Origin { chapter: None, one_based: Some(7), harris_kernel: Some(7) },
        grid: Grid::FillDevice { min_elements_per_thread: ADD_DURING_LOAD },
        shared: Shared::PerThread,
        block: Const,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v7 = 7, reduce_v7_warp_shuffle::reduce_v7 {
        slug: "warp-shuffle",
        technique: "register sums, warp shuffles, per-warp partials in shared memory",
        origin: Origin { chapter: Some("reduce_v7_shuffle"), one_based: Some(8), harris_kernel: None },
        grid: Grid::FillDevice { min_elements_per_thread: 1 },
        shared: Shared::PerWarp,
        block: Const,
        tuned_block: TunedBlock::Fixed(256),
        output: Output::PerBlock,
        ops: Teaching,
    },
    v8 = 8, reduce_v8_single_pass::reduce_v8 {
        slug: "single-pass",
        technique: "16-byte loads, last block reduces the partials: one launch, every operator",
        origin: Origin { chapter: None, one_based: None, harris_kernel: None },
        grid: Grid::FillDeviceVectors { min_vectors_per_thread: 4, single_block_vectors_per_thread: 8 },
        shared: Shared::PerWarpAndTicket,
        block: Runtime,
        // The fastest launch of each size on the H100 (f32, `examples/tune.rs`): one block of
        // 256 threads up to 2^12, one of 1024 up to 2^15, then blocks of 256 (16 of them at
        // 2^16, 256 at 2^20), 512 up to 2^23, 1024 above.
        tuned_block: TunedBlock::BySize {
            tiers: &[(1 << 12, 256), (1 << 15, 1024), (1 << 21, 256), (1 << 23, 512)],
            above: 1024,
        },
        output: Output::Final,
        ops: Library,
    },
}
