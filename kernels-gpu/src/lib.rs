//! # The reduce series as Rust GPU kernels
//!
//! One file per version, each a small change to the one before it, read in order:
//!
//! | version | file | technique |
//! |---|---|---|
//! | v0 | [`reduce_v0_baseline`](versions::reduce_v0_baseline) | interleaved addressing, `tid % 2s` (divergent warps) |
//! | v1 | [`reduce_v1_no_divergence`](versions::reduce_v1_no_divergence) | strided index `2·s·tid` (no divergence, bank conflicts) |
//! | v2 | [`reduce_v2_no_bank_conflict`](versions::reduce_v2_no_bank_conflict) | sequential addressing (no bank conflicts) |
//! | v3 | [`reduce_v3_add_during_load`](versions::reduce_v3_add_during_load) | two elements added while loading; half the blocks |
//! | v4 | [`reduce_v4_unroll_last_warp`](versions::reduce_v4_unroll_last_warp) | last warp unrolled, `sync_warp` instead of barriers |
//! | v5 | [`reduce_v5_complete_unroll`](versions::reduce_v5_complete_unroll) | block size a const generic; the whole tree unrolled |
//! | v6 | [`reduce_v6_multi_add`](versions::reduce_v6_multi_add) | grid-stride loop, grid sized to the GPU |
//! | v7 | [`reduce_v7_warp_shuffle`](versions::reduce_v7_warp_shuffle) | register sums and warp shuffles |
//! | v8 | [`reduce_v8_single_pass`](versions::reduce_v8_single_pass) | 16-byte loads, last block finishes: one launch |
//!
//! Every kernel takes `(input, scratch, output)` and is generic over the element type
//! ([`element`]) and the operator ([`ops`]). [`versions`] declares each version once (its
//! fields are [`policy`]'s); from that declaration come the `extern "gpu-kernel"` entry points on `nvptx64`, named
//! `reduce_v{N}_{type}_{op}` (plus `_b{BLOCK}` for the versions with a compile-time block
//! size), and, on every other target, the same entry points as functions the CPU simulator
//! runs. Every entry point takes one [`params::Params`].
//!
//! Beside the series: the library's shape kernels ([`shapes`]: rows, columns, segments) and
//! the reproducible sum ([`reproducible`]: the same bits for any launch shape and any split).
//!
//! The kernels use only [`device`], whose names mirror Rust-CUDA's `cuda_std`.

#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_gpu_kernel,
        stdarch_nvptx,
        link_llvm_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        core_intrinsics,
        asm_experimental_arch
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

// The simulator's entry points need `std` (thread-locals of the simulator); the GPU build has
// no `std`.
#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

#[macro_use]
mod declare;
pub mod device;
pub mod element;
#[cfg(not(target_arch = "nvptx64"))]
pub mod entry_points;
pub mod launch;
pub mod ops;
pub mod params;
pub mod policy;
pub mod reproducible;
pub mod shapes;
pub mod shards;
pub mod versions;

pub mod read_probe;
#[cfg(target_arch = "nvptx64")]
pub mod spin;

pub use policy::VersionInfo;
pub use versions::VERSIONS;
