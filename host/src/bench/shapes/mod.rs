//! `reduce-rs bench --shapes …`: reductions of a shape (every row, column or segment) and of
//! whole arrays with the library's operators, on the GPU, beside PyTorch and CUB timed in the
//! same run (`bench/torch/reduce_torch.py` where `python3` with torch is present,
//! `bench/cuda/reduce_shapes.cu` where `nvcc` is), and the read-only kernel over the same bytes.
//!
//! Two kinds of work:
//! - cases (`f32:sum:rows:8192x8192`, `bf16:argmax:rows:64x128256`, `f32:argmax:whole:2^28`,
//!   `f32:sum:segments:100000x300`): the library's choice of kernel, and every other kernel that
//!   could reduce the shape, each checked;
//! - the row sweep (`sweep`): f32 sums of 2^26 elements as rows of 32 … 2^24 elements, every
//!   row kernel and the peers: the chart of GB/s against row length.
//!
//! Every timing is the benchmark's: pre-roll, two CUDA events around the one launch, median,
//! input copies rotated so that L2 holds none of them.
//!
//! Its jobs: [`cases`] (what the command line asks for), [`measure`] (our kernels on the GPU),
//! [`table`] (the rows, the table, the files); this module runs them and the peers.

pub mod cases;
pub mod measure;
pub mod table;

use crate::bench::options::BenchOptions;
use crate::bench::peers::locate::PeerDirs;
use crate::bench::peers::{Notes, Peer, PeerCase, PeerRun, cuda, records, torch};
use crate::timing::Timing;
use crate::with_dtype_and_op;
use anyhow::{Context, Result};
use cases::{CaseShape, ShapeCase, ShapesArg};
use measure::run_case;
use reduce_rs::Reducer;
use std::path::Path;
use table::ShapeRow;

/// Runs the cases and the sweep; `Ok(false)` when a result was wrong or one of our cases could
/// not run (a peer that could not run is a note).
pub fn run(arg: &ShapesArg, options: &BenchOptions) -> Result<bool> {
    let mut reducer = Reducer::gpu(0).context("bench times the kernels on the GPU")?;
    if let Some(dir) = &options.ptx_dir {
        reducer = reducer.with_kernels_from(dir)?;
    }
    let out = &options.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let gpu = reducer.gpu_backend().context("a GPU")?;
    let device = gpu.info().name.clone();
    let compute_capability = gpu.info().compute_capability;
    let mut rows: Vec<ShapeRow> = Vec::new();
    let cases = arg.all_cases();
    for case in &cases {
        eprintln!("bench: {}", case.label());
        let measured = with_dtype_and_op!(
            case.dtype,
            case.op,
            run_case(&mut reducer, case, &options.splits, options.timing)
        );
        match measured {
            Ok(case_rows) => rows.extend(case_rows),
            Err(error) => {
                eprintln!("error: {}: {error:#}", case.label());
                rows.push(ShapeRow::not_run(case));
            }
        }
    }
    let dirs = PeerDirs::of_process(options.peers_dir.as_deref());
    rows.extend(run_peers(&cases, options, &dirs, compute_capability));
    print!("{}", table::format_table(&cases, &rows, &device));
    println!();
    for path in table::write_files(out, &rows, arg.sweep, &device)? {
        println!("wrote {}", path.display());
    }
    let tally = table::tally(&rows);
    if let Some(summary) = tally.summary() {
        eprintln!("error: {summary}");
    }
    Ok(tally.passed())
}

/// What the peers run for `case`.
fn peer_case(case: &ShapeCase) -> PeerCase {
    let shape_args = match &case.shape {
        CaseShape::Whole(n) => vec!["--n".into(), n.to_string()],
        CaseShape::Rows(r, c) | CaseShape::Columns(r, c) => {
            vec!["--shapes".into(), format!("{r}x{c}")]
        }
        CaseShape::Segments(s, m) => vec![
            "--segments".into(),
            s.to_string(),
            "--mean-len".into(),
            m.to_string(),
        ],
    };
    PeerCase {
        kind: case.shape.kind(),
        op: case.op.name(),
        dtype: case.dtype.name(),
        shape_args,
    }
}

/// The peers on the same cases: PyTorch (`python3` with torch) and CUB (`nvcc`), each
/// appending to one CSV. A peer that cannot run says why once and is not run again.
fn run_peers(
    cases: &[ShapeCase],
    options: &BenchOptions,
    dirs: &PeerDirs,
    compute_capability: (u32, u32),
) -> Vec<ShapeRow> {
    let (out, timing): (&Path, Timing) = (&options.out, options.timing);
    let csv = out.join("peers_shapes.csv");
    let _ = std::fs::remove_file(&csv);
    let mut notes = Notes::default();
    let script = match options.torch {
        true => dirs.find(torch::REDUCE_TORCH),
        false => Err(String::new()),
    };
    if let (Err(why), true) = (&script, options.torch) {
        notes.not_timed(Peer::Torch, why);
    }
    let cub = match options.cub {
        true => cuda::build_reduce_shapes(dirs, out, compute_capability),
        false => Err(String::new()),
    };
    if let (Err(why), true) = (&cub, options.cub) {
        notes.not_timed(Peer::Cub, why);
    }
    for case in cases {
        let peer = peer_case(case);
        if let Ok(script) = &script
            && !notes.gave_up(Peer::Torch)
            && torch::reduce_torch_has(peer.kind, case.op, case.dtype)
            && let PeerRun::CouldNotRun(why) = torch::run_case(script, &peer, timing, &csv)
        {
            notes.not_timed(Peer::Torch, &why);
        }
        if let Ok(exe) = &cub
            && !notes.gave_up(Peer::Cub)
            && cuda::reduce_shapes_has(peer.kind, case.op, case.dtype)
            && let PeerRun::CouldNotRun(why) = cuda::run_reduce_shapes(exe, &peer, timing, &csv)
        {
            notes.not_timed(Peer::Cub, &why);
        }
    }
    match records::read(&csv) {
        Ok(peer_rows) => peer_rows
            .into_iter()
            .filter(|r| !r.implementation.ends_with("read"))
            .map(ShapeRow::from_peer)
            .collect(),
        Err(error) => {
            eprintln!("note: the peers' rows are left out: {error:#}");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::{DType, OpKind};

    #[test]
    fn peers_get_the_case_in_their_own_words() {
        let case = |shape| ShapeCase {
            dtype: DType::Bf16,
            op: OpKind::ArgMax,
            shape,
        };
        let rows = peer_case(&case(CaseShape::Rows(64, 128256)));
        assert_eq!((rows.kind, rows.op, rows.dtype), ("rows", "argmax", "bf16"));
        assert_eq!(rows.shape_args, ["--shapes", "64x128256"]);
        let segments = peer_case(&case(CaseShape::Segments(100000, 300)));
        assert_eq!(
            segments.shape_args,
            ["--segments", "100000", "--mean-len", "300"]
        );
        assert_eq!(
            peer_case(&case(CaseShape::Whole(7))).shape_args,
            ["--n", "7"]
        );
    }
}
