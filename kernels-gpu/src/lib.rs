//! # The reduce series as Rust GPU kernels
//!
//! One file per version, each a small change to the one before it, read in order:
//!
//! | version | file | technique |
//! |---|---|---|
//! | v0 | [`reduce_v0_baseline`] | interleaved addressing, `tid % 2s` (divergent warps) |
//! | v1 | [`reduce_v1_no_divergence`] | strided index `2·s·tid` (no divergence, bank conflicts) |
//! | v2 | [`reduce_v2_no_bank_conflict`] | sequential addressing (no bank conflicts) |
//! | v3 | [`reduce_v3_add_during_load`] | two elements added while loading; half the blocks |
//! | v4 | [`reduce_v4_unroll_last_warp`] | last warp unrolled, `sync_warp` instead of barriers |
//! | v5 | [`reduce_v5_complete_unroll`] | block size a const generic; the whole tree unrolled |
//! | v6 | [`reduce_v6_multi_add`] | grid-stride loop, grid sized to the GPU |
//! | v7 | [`reduce_v7_warp_shuffle`] | register sums and warp shuffles |
//! | v8 | [`reduce_v8_single_pass`] | 16-byte loads, last block finishes: one launch |
//!
//! Every kernel has the same parameters — `(input, partials, retired)` — and is generic over
//! the element type and the operator ([`element`]). On `nvptx64` the [`entry`] module
//! monomorphizes them into `extern "gpu-kernel"` entry points named
//! `reduce_v{N}_{type}_{op}` (plus `_b{BLOCK}` for the versions with a compile-time block size);
//! elsewhere the host calls the generic functions under the CPU simulator.
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
#![feature(float_minimum_maximum)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

pub mod device;
pub mod element;
pub mod launch;

pub mod reduce_v0_baseline;
pub mod reduce_v1_no_divergence;
pub mod reduce_v2_no_bank_conflict;
pub mod reduce_v3_add_during_load;
pub mod reduce_v4_unroll_last_warp;
pub mod reduce_v5_complete_unroll;
pub mod reduce_v6_multi_add;
pub mod reduce_v7_warp_shuffle;
pub mod reduce_v8_single_pass;

pub mod read_probe;
#[cfg(target_arch = "nvptx64")]
pub mod spin;

#[cfg(target_arch = "nvptx64")]
pub mod entry;
#[cfg(not(target_arch = "nvptx64"))]
pub mod simulate;

pub use reduce_v0_baseline::reduce_v0;
pub use reduce_v1_no_divergence::reduce_v1;
pub use reduce_v2_no_bank_conflict::reduce_v2;
pub use reduce_v3_add_during_load::reduce_v3;
pub use reduce_v4_unroll_last_warp::reduce_v4;
pub use reduce_v5_complete_unroll::reduce_v5;
pub use reduce_v6_multi_add::reduce_v6;
pub use reduce_v7_warp_shuffle::reduce_v7;
pub use reduce_v8_single_pass::reduce_v8;
