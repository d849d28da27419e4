//! The `reduce-rs` command line and benchmark, on top of the `reduce-rs` library: inputs made or
//! read from files, the CPU reference and checks, GPU timing, reports.

pub mod bench;
pub mod cli;
pub mod devices;
pub mod element;
pub mod file;
pub mod input;
pub mod reference;
pub mod report;
pub mod run;
pub mod shapes;
pub mod sim_time;
pub mod size;
pub mod timing;
pub mod values;
