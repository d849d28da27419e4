//! The PyTorch peers, run by `python3`: `bench/torch/reduce_torch.py` (the `--shapes` cases)
//! and `bench/torch/allreduce_torch.py` (several GPUs, one process per GPU with NCCL). Both
//! write the peers' common CSV.

use super::{PeerCase, PeerRun};
use crate::timing::Timing;
use std::path::Path;
use std::process::Command;

/// PyTorch on shapes, in the peers' folder.
pub const REDUCE_TORCH: &str = "torch/reduce_torch.py";
/// PyTorch + NCCL over several GPUs, in the peers' folder.
pub const ALLREDUCE_TORCH: &str = "torch/allreduce_torch.py";

/// Runs `reduce_torch.py` (`script`) on `case`, appending its rows to `csv`.
pub fn run_case(script: &Path, case: &PeerCase, timing: Timing, csv: &Path) -> PeerRun {
    let output = Command::new("python3")
        .arg(script)
        .args(case.args(timing, csv))
        .output();
    PeerRun::of(&output, "python3")
}

/// Runs `allreduce_torch.py` (`script`) over `world` GPUs with `per_gpu` elements each,
/// writing its rows to `csv` (NVLink multicast off, as in every multi-GPU run here).
pub fn run_allreduce(
    script: &Path,
    world: usize,
    per_gpu: &[usize],
    timing: Timing,
    csv: &Path,
) -> PeerRun {
    let per_gpu: Vec<String> = per_gpu.iter().map(usize::to_string).collect();
    let output = Command::new("python3")
        .arg(script)
        .args(["--per-gpu", &per_gpu.join(",")])
        .args(["--world", &world.to_string()])
        .args(["--repeat", &timing.repeat.to_string()])
        .args(["--warmup", &timing.warmup.to_string()])
        .args(["--preroll-us", &super::PEER_PREROLL_US.to_string()])
        .arg("--csv")
        .arg(csv)
        .env("NCCL_NVLS_ENABLE", "0")
        .output();
    PeerRun::of(&output, "python3")
}
