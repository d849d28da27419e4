//! The host side of reduce-rs: the version table, inputs and CPU reference, and the two
//! backends that run the kernels — the GPU through `cudarc`, or the CPU simulator `simt`.

pub mod bench;
pub mod chart;
pub mod element;
pub mod gpu;
pub mod input;
pub mod reference;
pub mod report;
pub mod run;
pub mod sim;
pub mod size;
pub mod versions;
