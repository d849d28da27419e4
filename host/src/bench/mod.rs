//! `reduce-rs bench`: timings on the GPU beside the read-only kernel and the peers (CUB, the
//! CUDA C++ versions, PyTorch), in four modes: the versions' sweep ([`sweep`]), reductions of a
//! shape ([`shapes`], `--shapes`), the error of the sums ([`accuracy`], `--accuracy`) and
//! several GPUs ([`devices`]: `--devices`, one process; `--ranks`, one process per GPU).
//!
//! Its layers, each importing only those below it:
//! - [`options`]: the command line and [`BenchOptions`], the defaults applied;
//! - the modes: [`sweep`], [`shapes`], [`accuracy`], [`devices`];
//! - [`peers`]: finding, building and running CUB/CUDA C++ and PyTorch, reading their CSV;
//! - [`plan`] (what fits, how many copies), [`probe`] (the read-only kernel), [`report`] (the
//!   sweep's tables), [`output`] and [`chart`] (CSV, JSON, SVG), [`rows`] (the typed rows and
//!   the exit-code rule, `rows::Tally`).
//!
//! The exit status of every mode: 0 when every result passed its check; 1 when a result was
//! wrong (ours or a peer's) or one of our measurements could not run; 2 when the bench could
//! not run at all (no GPU). A peer that cannot run is one `note:` line (why, how to enable it).

pub mod accuracy;
pub mod chart;
pub mod devices;
pub mod options;
pub mod output;
pub mod peers;
pub mod plan;
pub mod probe;
pub mod report;
pub mod rows;
pub mod shapes;
pub mod sweep;

pub use options::{BenchArgs, BenchOptions, Mode};

use anyhow::Result;

/// Runs the bench `options` ask for; `Ok(false)` when a result was wrong or one of our runs
/// could not run.
pub fn run(options: &BenchOptions) -> Result<bool> {
    match &options.mode {
        Mode::Sweep => sweep::run(options),
        Mode::Shapes(arg) => shapes::run(arg, options),
        Mode::Accuracy(sizes) => accuracy::run(sizes, options),
        Mode::Devices(count) => devices::run(*count, options),
        Mode::Ranks { simulate } => devices::run_ranks(*simulate, options),
    }
}
