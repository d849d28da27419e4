//! The PyTorch peers, run by `python3`: `bench/torch/reduce_torch.py` (the `--shapes` cases)
//! and `bench/torch/allreduce_torch.py` (several GPUs, one process per GPU with NCCL). Both
//! write the peers' common CSV.

use super::{PeerCase, PeerRun};
use crate::element::{DType, OpKind};
use crate::timing::Timing;
use std::path::Path;
use std::process::Command;

/// PyTorch on shapes, in the peers' folder.
pub const REDUCE_TORCH: &str = "torch/reduce_torch.py";
/// PyTorch + NCCL over several GPUs, in the peers' folder.
pub const ALLREDUCE_TORCH: &str = "torch/allreduce_torch.py";

/// What `reduce_torch.py` times (its `CASE_OPS` and `DTYPES`; `kind` as [`PeerCase::kind`]):
/// sum, mean, max, argmax and argmin of whole arrays; sum, mean, max and argmax of rows and
/// columns; sum and max of segments (`torch.segment_reduce`, floats only); of `f32`, `f64`,
/// `f16`, `bf16`, `i64` and `u64`. The bench asks it for nothing else: the script refuses
/// the rest as a usage error, which would read as a PyTorch that cannot run at all. (An op
/// PyTorch lacks for a type it takes, such as the mean of integers, the script reports as
/// unsupported and carries on.)
///
/// ```
/// use host::bench::peers::torch::reduce_torch_has;
/// use host::element::{DType, OpKind};
/// assert!(reduce_torch_has("columns", OpKind::ArgMax, DType::Bf16));
/// assert!(!reduce_torch_has("columns", OpKind::ArgMin, DType::F32));
/// assert!(!reduce_torch_has("rows", OpKind::Sum, DType::I32));
/// assert!(!reduce_torch_has("segments", OpKind::Sum, DType::I64));
/// ```
pub fn reduce_torch_has(kind: &str, op: OpKind, dtype: DType) -> bool {
    use OpKind::*;
    let op_offered = match kind {
        "whole" => matches!(op, Sum | Mean | Max | ArgMax | ArgMin),
        "rows" | "columns" => matches!(op, Sum | Mean | Max | ArgMax),
        "segments" => matches!(op, Sum | Max),
        _ => false,
    };
    let dtype_offered = match kind {
        "segments" => dtype.is_float(),
        _ => super::peers_take(dtype),
    };
    op_offered && dtype_offered
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`reduce_torch_has`] says what the script's `CASE_OPS` and `DTYPES` say, for every
    /// kind, op and element type (segments: floats only, as the script's check says).
    #[test]
    fn the_bench_asks_pytorch_for_what_the_script_offers() {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../bench")
            .join(REDUCE_TORCH);
        let text = std::fs::read_to_string(&script).expect("reduce_torch.py");
        let table = text
            .split("CASE_OPS = {")
            .nth(1)
            .and_then(|rest| rest.split('}').next())
            .expect("CASE_OPS in reduce_torch.py");
        let dtypes = text
            .lines()
            .find(|l| l.starts_with("DTYPES = ["))
            .expect("DTYPES in reduce_torch.py");
        assert!(text.contains("segment_reduce takes float dtypes only"));
        for kind in ["whole", "rows", "columns", "segments"] {
            let line = table
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("\"{kind}\":")))
                .unwrap_or_else(|| panic!("{kind} in CASE_OPS"));
            for op in OpKind::ALL {
                for dtype in DType::ALL {
                    let offered = line.contains(&format!("\"{}\"", op.name()))
                        && dtypes.contains(&format!("\"{}\"", dtype.name()))
                        && (kind != "segments" || dtype.is_float());
                    assert_eq!(
                        reduce_torch_has(kind, op, dtype),
                        offered,
                        "{kind} {op:?} {dtype:?}: {line} / {dtypes}"
                    );
                }
            }
        }
    }
}
