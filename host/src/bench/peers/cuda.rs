//! The CUDA C++ peers, built with `nvcc` for this GPU: `bench/cuda/reduce_ref.cu` (CUB's
//! `DeviceReduce::Sum` and the CUDA C++ originals of v0–v7, beside the versions' sweep; its CSV
//! becomes rows of the sweep's table) and `bench/cuda/reduce_shapes.cu` (CUB on rows, columns,
//! segments and whole arrays, beside `--shapes`; the peers' common CSV).

use super::locate::{PeerDirs, find_nvcc};
use super::records::column_of;
use super::{PeerCase, PeerRun};
use crate::bench::rows::{Check, Row, Subject};
use crate::element::{DType, OpKind};
use crate::timing::Timing;
use anyhow::{Context, Result, anyhow, bail};
use kernels_gpu::launch::DEFAULT_BLOCK_SIZE;
use reduce_rs::Version;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The CUDA C++ reference program, in the peers' folder.
pub const REDUCE_REF: &str = "cuda/reduce_ref.cu";
/// CUB on shapes, in the peers' folder.
pub const REDUCE_SHAPES: &str = "cuda/reduce_shapes.cu";
/// The versions reduce_ref has a CUDA C++ twin of.
const CUDA_TWINS: [&str; 8] = ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"];
/// CUB takes an `int` count, and reduce_ref refuses larger sizes.
const REDUCE_REF_MAX_N: usize = i32::MAX as usize;

/// The header's account of how CUB and the CUDA C++ versions were timed.
pub const CUB_TEXT: &str = "CUB (and the CUDA C++ versions, cuda-v*) timed by bench/cuda/reduce_ref.cu on its own input of \
     the same size and type (not the same bytes), by the same method: CUDA events behind the same pre-roll, median, its own rotation of inputs under 64 MiB";

/// Builds reduce_ref into `<out>/reduce_ref` for this GPU; the error says why CUB is not timed.
pub fn build_reduce_ref(
    dirs: &PeerDirs,
    out: &Path,
    compute_capability: (u32, u32),
) -> Result<PathBuf, String> {
    build_program(dirs, out, compute_capability, REDUCE_REF, "reduce_ref")
}

/// Builds reduce_shapes into `<out>/reduce_shapes` for this GPU; the error says why CUB is not
/// timed.
pub fn build_reduce_shapes(
    dirs: &PeerDirs,
    out: &Path,
    compute_capability: (u32, u32),
) -> Result<PathBuf, String> {
    build_program(
        dirs,
        out,
        compute_capability,
        REDUCE_SHAPES,
        "reduce_shapes",
    )
}

/// Builds the CUDA C++ program `source` (in the peers' folder: `cuda/…`, beside the harness
/// header it includes) into `<out>/<name>` for this GPU; the error says why it could not be
/// built.
fn build_program(
    dirs: &PeerDirs,
    out: &Path,
    compute_capability: (u32, u32),
    source: &str,
    name: &str,
) -> Result<PathBuf, String> {
    let source = dirs.find(source)?;
    let nvcc = find_nvcc()?;
    let exe = out.join(name);
    let arch = format!("-arch=sm_{}{}", compute_capability.0, compute_capability.1);
    eprintln!(
        "note: building {} with {} {arch} (the CUDA C++ peer)",
        source.display(),
        nvcc.display()
    );
    let output = Command::new(&nvcc)
        .args(["-O3", &arch, "-std=c++17", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .map_err(|e| format!("running {}: {e}", nvcc.display()))?;
    if !output.status.success() {
        return Err(format!(
            "nvcc failed ({}): {}",
            output.status,
            tail(&output.stderr, 20)
        ));
    }
    Ok(exe)
}

/// The last `lines` lines of a program's output, on one line.
fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// Times CUB, the CUDA C++ versions that match `versions` (v0–v7) and reduce_ref's read
/// kernel on `sizes` with `block` threads; returns their rows and notes. Its stdout is kept in
/// `<out>/reduce_ref_<dtype>.txt`, its CSV in `<out>/reduce_ref_<dtype>.csv`.
pub fn run_reduce_ref(
    exe: &Path,
    dtype: DType,
    sizes: &[usize],
    versions: &[Version],
    block: Option<u32>,
    timing: Timing,
    out: &Path,
) -> Result<(Vec<Row>, Vec<String>)> {
    let mut notes = Vec::new();
    let (sizes, too_large): (Vec<usize>, Vec<usize>) =
        sizes.iter().partition(|&&n| n <= REDUCE_REF_MAX_N);
    if !too_large.is_empty() {
        notes.push(format!(
            "sizes above 2^31-1 left out (CUB takes an int count): {too_large:?}"
        ));
    }
    if sizes.is_empty() {
        return Ok((Vec::new(), notes));
    }
    let mut names: Vec<String> = vec!["cub".into(), "read".into()];
    names.extend(
        versions
            .iter()
            .filter(|v| CUDA_TWINS.contains(&v.name()))
            .map(|v| v.name().to_string()),
    );
    let csv_path = out.join(format!("reduce_ref_{dtype}.csv"));
    let sizes_arg: Vec<String> = sizes.iter().map(usize::to_string).collect();
    let output = Command::new(exe)
        .args(["--dtype", dtype.name(), "--sizes", &sizes_arg.join(",")])
        .args([
            "--repeat",
            &timing.repeat.to_string(),
            "--warmup",
            &timing.warmup.to_string(),
        ])
        .args([
            "--block",
            &block.unwrap_or(DEFAULT_BLOCK_SIZE).to_string(),
            "--versions",
            &names.join(","),
        ])
        .arg("--csv")
        .arg(&csv_path)
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    let log_path = out.join(format!("reduce_ref_{dtype}.txt"));
    std::fs::write(&log_path, &output.stdout)
        .with_context(|| format!("writing {}", log_path.display()))?;
    // Exit status 2 means a check failed: the CSV is complete and says which.
    if !output.status.success() {
        notes.push(format!(
            "exited with {}: {}",
            output.status,
            tail(&output.stderr, 8)
        ));
    }
    let text = match std::fs::read_to_string(&csv_path) {
        Ok(text) => text,
        Err(e) if !output.status.success() => {
            bail!("{} (and no CSV: {e})", notes.pop().unwrap_or_default())
        }
        Err(e) => return Err(anyhow!(e).context(format!("reading {}", csv_path.display()))),
    };
    let rows = parse_reduce_ref_csv(&text, dtype)
        .with_context(|| format!("reading {}", csv_path.display()))?;
    Ok((rows, notes))
}

/// Rows from reduce_ref's CSV (`impl,version,dtype,n,block,grid,first_pass_ms,first_pass_gbps,
/// scalar_ms,check`): `cub` becomes the CUB row, `v5` the row `cuda-v5`, `read` `cuda-read`.
pub fn parse_reduce_ref_csv(text: &str, dtype: DType) -> Result<Vec<Row>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let column = |name: &str| column_of(&headers, name);
    let [version, n, first_ms, first_gbps, scalar_ms, verdict] = [
        "version",
        "n",
        "first_pass_ms",
        "first_pass_gbps",
        "scalar_ms",
        "check",
    ]
    .map(column);
    let (version, n, first_ms, first_gbps, scalar_ms, verdict) =
        (version?, n?, first_ms?, first_gbps?, scalar_ms?, verdict?);
    let (block, grid) = (column("block").ok(), column("grid").ok());
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record?;
        let field = |i: usize| record.get(i).unwrap_or("").trim();
        let number = |i: Option<usize>| {
            i.and_then(|i| field(i).parse::<f64>().ok())
                .filter(|x| x.is_finite())
        };
        let whole = |i: Option<usize>| {
            i.and_then(|i| field(i).parse::<u32>().ok())
                .filter(|&x| x > 0)
        };
        let count: usize = field(n)
            .parse()
            .map_err(|_| anyhow!("line {}: `{}` is not a size", line + 2, field(n)))?;
        let subject = match field(version) {
            "cub" => Subject::Cub,
            other => Subject::Cuda(other.to_string()),
        };
        let mut row = Row::new(dtype, count, subject);
        row.grid = whole(grid);
        row.block = whole(block);
        row.first_pass_ms = number(Some(first_ms));
        row.first_pass_gbps = number(Some(first_gbps));
        row.to_scalar_us = number(Some(scalar_ms)).map(|ms| ms * 1e3);
        row.check = match field(verdict) {
            "PASS" => Check::Pass,
            "FAIL" => Check::Fail,
            _ => Check::Unchecked,
        };
        rows.push(row);
    }
    Ok(rows)
}

/// What reduce_shapes times: sum/max/argmax/argmin of whole arrays, sum/max/argmax of rows and
/// segments, sums of columns (`kind` as [`PeerCase::kind`]), of `f32`, `f64`, `f16`, `bf16`,
/// `i64` and `u64` (it refuses the rest as a usage error, which would read as a CUB that
/// cannot run at all).
pub fn reduce_shapes_has(kind: &str, op: OpKind, dtype: DType) -> bool {
    let op_offered = match kind {
        "whole" => matches!(
            op,
            OpKind::Sum | OpKind::Max | OpKind::ArgMax | OpKind::ArgMin
        ),
        "rows" | "segments" => matches!(op, OpKind::Sum | OpKind::Max | OpKind::ArgMax),
        "columns" => op == OpKind::Sum,
        _ => false,
    };
    op_offered && super::peers_take(dtype)
}

/// Runs reduce_shapes (built by [`build_reduce_shapes`]) on `case`, appending its rows (not
/// its read kernel's) to `csv`.
pub fn run_reduce_shapes(exe: &Path, case: &PeerCase, timing: Timing, csv: &Path) -> PeerRun {
    let output = Command::new(exe)
        .arg("--no-read")
        .args(case.args(timing, csv))
        .output();
    PeerRun::of(&output, "reduce_shapes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::rows::Impl;

    #[test]
    fn reduce_shapes_times_what_cub_has() {
        assert!(reduce_shapes_has("whole", OpKind::ArgMin, DType::F32));
        assert!(reduce_shapes_has("rows", OpKind::ArgMax, DType::Bf16));
        assert!(!reduce_shapes_has("rows", OpKind::ArgMin, DType::F32));
        assert!(reduce_shapes_has("columns", OpKind::Sum, DType::U64));
        assert!(!reduce_shapes_has("columns", OpKind::Max, DType::F32));
        assert!(!reduce_shapes_has("segments", OpKind::Mean, DType::F32));
        assert!(!reduce_shapes_has("whole", OpKind::Sum, DType::I32));
        // The dtypes its usage line lists, and no others.
        let source = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/cuda/reduce_shapes.cu"),
        )
        .expect("reduce_shapes.cu");
        let listed = source
            .lines()
            .find(|l| l.contains("--dtype      comma list of"))
            .expect("the --dtype usage line");
        for dtype in DType::ALL {
            assert_eq!(
                reduce_shapes_has("whole", OpKind::Sum, dtype),
                listed.contains(&format!(" {},", dtype.name()))
                    || listed.contains(&format!(" {} ", dtype.name())),
                "{dtype:?}: {listed}"
            );
        }
    }

    #[test]
    fn reduce_ref_csv_becomes_cub_and_cuda_rows() {
        let rows = parse_reduce_ref_csv(
            "impl,version,dtype,n,block,grid,first_pass_ms,first_pass_gbps,scalar_ms,check\n\
             cuda,cub,f64,1024,0,0,0.004000,2.048,0.004000,PASS\n\
             cuda,v5,f64,1024,256,2,0.003000,2.730,0.006000,FAIL\n\
             cuda,read,f64,1024,256,1,0.002000,4.096,0.002000,n/a\n",
            DType::F64,
        )
        .unwrap();
        let labels: Vec<(String, Impl, Check)> = rows
            .iter()
            .map(|r| (r.subject.to_string(), r.implementation(), r.check))
            .collect();
        assert_eq!(
            labels,
            [
                ("cub".to_string(), Impl::Cub, Check::Pass),
                ("cuda-v5".to_string(), Impl::Cuda, Check::Fail),
                ("cuda-read".to_string(), Impl::Cuda, Check::Unchecked)
            ]
        );
        assert_eq!((rows[0].grid, rows[0].block), (None, None));
        assert_eq!((rows[1].grid, rows[1].block), (Some(2), Some(256)));
        assert_eq!(rows[1].to_scalar_us, Some(6.0));
        assert!(rows[1].is_failure() && !rows[0].is_failure());
        assert_eq!(rows[0].dtype, DType::F64);
        let error = parse_reduce_ref_csv("impl,version\ncuda,cub\n", DType::F32).unwrap_err();
        assert!(format!("{error:#}").contains("no `n` column"), "{error:#}");
        assert!(
            parse_reduce_ref_csv(
                "version,n,first_pass_ms,first_pass_gbps,scalar_ms,check\ncub,x,1,1,1,PASS\n",
                DType::F32
            )
            .is_err()
        );
    }
}
