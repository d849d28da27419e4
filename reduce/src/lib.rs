//! # reduce-rs: GPU reductions written in Rust
//!
//! Sum, min, max, argmin, argmax and mean of your own data — a `Vec`, a slice, or a cudarc
//! `CudaSlice` filled by your own kernels — on an NVIDIA GPU, with kernels written in Rust and
//! compiled to PTX by rustc; or, on a machine without a GPU, on a CPU simulator that runs the
//! same kernels and checks every memory access.
//!
//! ```
//! use reduce_rs::Reducer;
//! let reducer = Reducer::new()?; // the GPU if there is one, else the simulator
//! let data: Vec<f32> = (0..10_000).map(|i| (i % 7) as f32).collect();
//! assert_eq!(reducer.sum(&data)?, 29_994.0);
//! assert_eq!(reducer.argmax(&data)?, Some((6, 6.0)));
//! # Ok::<(), reduce_rs::Error>(())
//! ```
//!
//! - [`Reducer`] is the handle: create it once (on GPU 0, on your own `CudaStream`, or on the
//!   simulator) and call it many times; it keeps the kernels and scratch memory.
//! - Inputs: anything [`Input`] — host slices are copied up, GPU buffers are read in place, on
//!   the reducer's stream, after your own work there.
//! - Results come back to the host ([`Reducer::reduce`] and the shortcuts [`Reducer::sum`],
//!   [`Reducer::min`], …), or stay on the GPU for your next kernel, without a synchronisation
//!   ([`Reducer::reduce_into`], [`Reducer::reduce_to_device`]).
//! - Element types: `f32`, `f64`, `i32`, `u32`, `i64`, `u64`, [`half::f16`], [`half::bf16`]
//!   ([`Element`]). Semantics (NaN, signed zeros, ties, empty inputs): [`op`].
//! - Float sums that are the same bits on every GPU, grid and split of the input:
//!   [`Reducer::with_reproducible`] ([`reproducible`]), and partial sums to merge across GPUs
//!   ([`Reducer::partial_sum`]).
//! - Several GPUs, in one process or one process per GPU: [`devices`] (NCCL between them, or
//!   simulated devices without a GPU).
//! - The kernel is the fastest of the series this project teaches (v8); any other version is
//!   one call away ([`Reducer::with_version`], [`Version`]).
//!
//! The kernels ship as PTX inside the library (the driver compiles each one for your GPU the
//! first time it is used), so a crate that depends on this one builds with stable Rust and
//! needs no CUDA toolkit: the driver is loaded at run time.

pub mod backend;
mod bytes;
pub mod devices;
mod element;
mod error;
mod external;
mod input;
pub mod op;
pub mod plan;
mod reducer;
pub mod reproducible;
pub mod shape;
mod version;

pub use backend::gpu::DeviceInfo;
pub use backend::sim::{SIM_MULTIPROCESSORS, SimReport};
pub use element::{DType, Element};
pub use error::{Error, GpuUnavailable, Result};
pub use external::ExternalBuffer;
pub use input::{Input, Source};
pub use op::{Arg, OpKind, Operation};
pub use reducer::{BackendInfo, Reducer, gpu_available};
pub use shape::Shape;
pub use simt::{LaunchStats, Schedule, SimError};
pub use version::Version;

/// The operations, by name: `reduce_rs::ops::Sum` and the others.
pub mod ops {
    pub use crate::op::{ArgMax, ArgMin, Max, Mean, Min, Sum};
}

/// Re-exported so that users name the same types the library accepts.
pub use cudarc;
pub use half;
