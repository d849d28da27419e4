//! `bench --shapes`' results: one [`ShapeRow`] per measurement (ours, the read-only kernel's,
//! a peer's), the printed table, the sweep's chart, and the files (`bench_shapes.csv`,
//! `bench_shapes.json`, `bench_rows.svg`).

use super::cases::{CaseShape, SWEEP_ELEMENTS, ShapeCase};
use crate::bench::chart::{Series, write_svg};
use crate::bench::output::write_csv;
use crate::bench::peers::records::PeerRow;
use crate::bench::rows::{Check, Tally};
use crate::shapes::is_reproducible;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One measured line (ours, the read-only kernel, or a peer's).
#[derive(Clone, Debug, Serialize)]
pub struct ShapeRow {
    /// `reduce-rs`, `read-only`, `torch`, `cub` or `cuda`.
    #[serde(rename = "impl")]
    pub implementation: String,
    /// Our kernel's entry point (`rows_block_f32_sum`), `chosen` marks the library's choice.
    pub kernel: String,
    pub chosen: bool,
    pub case: String,
    pub op: String,
    pub dtype: String,
    pub rows: usize,
    pub cols: usize,
    pub n: usize,
    pub us: f64,
    pub gbps: f64,
    pub check: String,
}

impl ShapeRow {
    /// A peer's row (`impl` is the peer's: `torch`, `cub`, `cuda`).
    pub fn from_peer(peer: PeerRow) -> ShapeRow {
        ShapeRow {
            kernel: peer.implementation.clone(),
            implementation: peer.implementation,
            chosen: false,
            case: peer.case,
            op: peer.op,
            dtype: peer.dtype,
            rows: peer.rows,
            cols: peer.cols,
            n: peer.n,
            us: peer.ms * 1e3,
            gbps: peer.gbps,
            check: peer.check,
        }
    }

    /// Our measurement of `case` that could not run: an `ERROR` row, so the table shows it.
    pub fn not_run(case: &ShapeCase) -> ShapeRow {
        let (rows, cols) = dimensions(&case.shape);
        ShapeRow {
            implementation: "reduce-rs".into(),
            kernel: "-".into(),
            chosen: false,
            case: case.shape.kind().into(),
            op: case.op.name().into(),
            dtype: case.dtype.name().into(),
            rows,
            cols,
            n: case.elements(),
            us: f64::NAN,
            gbps: f64::NAN,
            check: Check::Error.word().into(),
        }
    }

    /// Ours (the library's kernels and the read-only kernel), not a peer's.
    pub fn is_ours(&self) -> bool {
        matches!(self.implementation.as_str(), "reduce-rs" | "read-only")
    }
}

/// The CSV's `rows` and `cols` of a case: `whole` is 1 × n, `segments` S × 0.
pub fn dimensions(shape: &CaseShape) -> (usize, usize) {
    match *shape {
        CaseShape::Whole(n) => (1, n),
        CaseShape::Rows(r, c) | CaseShape::Columns(r, c) => (r, c),
        CaseShape::Segments(s, _) => (s, 0),
    }
}

/// The exit-code rule over the table's rows (see [`Tally`]).
pub fn tally(rows: &[ShapeRow]) -> Tally {
    let mut tally = Tally::default();
    for row in rows {
        tally.add(Check::from_word(&row.check), row.is_ours());
    }
    tally
}

/// Writes `bench_shapes.csv`, `bench_shapes.json` and, for the sweep, `bench_rows.svg` into
/// `out`; returns their paths.
pub fn write_files(
    out: &Path,
    rows: &[ShapeRow],
    sweep: bool,
    device: &str,
) -> Result<Vec<PathBuf>> {
    let csv_path = out.join("bench_shapes.csv");
    write_csv(&csv_path, rows)?;
    let json_path = out.join("bench_shapes.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(rows)? + "\n")
        .with_context(|| format!("writing {}", json_path.display()))?;
    let mut written = vec![csv_path, json_path];
    if sweep {
        let svg = out.join("bench_rows.svg");
        let title =
            format!("f32 sum of each row, 2^26 elements: GB/s against row length — {device}");
        write_svg(&svg, &title, &sweep_series(rows))?;
        written.push(svg);
    }
    Ok(written)
}

/// The printed table: per case, every implementation, with its share of the read-only
/// kernel's bandwidth and PyTorch's time over ours.
pub fn format_table(cases: &[ShapeCase], rows: &[ShapeRow], device: &str) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nbench shapes on {device}: median of the timed runs, CUDA events around one launch behind a pre-roll, inputs rotated out of L2"
    );
    let _ = writeln!(
        out,
        "{:<34} {:<9} {:<36} {:>10} {:>8} {:>7} {:>9} {:>8} {:>7}  check",
        "case", "impl", "kernel", "µs", "GB/s", "% read", "torch/us", "peer/us", "/plain"
    );
    for case in cases {
        let label = case.label();
        let same = |r: &&ShapeRow| {
            r.dtype == case.dtype.name()
                && r.op == case.op.name()
                && r.case == case.shape.kind()
                && {
                    match case.shape {
                        CaseShape::Whole(n) => r.n == n,
                        CaseShape::Rows(a, b) | CaseShape::Columns(a, b) => {
                            r.rows == a && r.cols == b
                        }
                        CaseShape::Segments(s, _) => r.rows == s,
                    }
                }
        };
        let group: Vec<&ShapeRow> = rows.iter().filter(same).collect();
        let read = group
            .iter()
            .find(|r| r.implementation == "read-only")
            .map(|r| r.gbps);
        let torch = group
            .iter()
            .find(|r| r.implementation == "torch")
            .map(|r| r.us);
        // The fastest peer (PyTorch, CUB, the CUDA twin) that got the right result: the one
        // to beat, marked in the table.
        let fastest_peer = group
            .iter()
            .filter(|r| !r.is_ours() && r.check == Check::Pass.word() && r.us.is_finite())
            .min_by(|a, b| a.us.total_cmp(&b.us))
            .map(|r| (r.implementation.as_str(), r.us));
        // The library's choice of plain kernel: what a reproducible kernel is compared with.
        let plain = group
            .iter()
            .find(|r| r.implementation == "reduce-rs" && r.chosen && !is_reproducible(&r.kernel))
            .map(|r| r.us);
        for r in &group {
            let pct = read.map_or("-".to_string(), |g| format!("{:.1}", 100.0 * r.gbps / g));
            let ratio = match (torch, r.implementation.as_str()) {
                (Some(t), "reduce-rs") => format!("{:.2}", t / r.us),
                _ => "-".into(),
            };
            let repro = match plain {
                Some(p) if is_reproducible(&r.kernel) => format!("{:.2}", r.us / p),
                _ => "-".into(),
            };
            let peer_ratio = match (fastest_peer, r.implementation.as_str()) {
                (Some((_, best)), "reduce-rs") => format!("{:.2}", best / r.us),
                _ => "-".into(),
            };
            let kernel = match fastest_peer {
                _ if r.chosen => format!("{} *", r.kernel),
                Some((name, _)) if name == r.implementation => {
                    format!("{} (fastest peer)", r.kernel)
                }
                _ => r.kernel.clone(),
            };
            let _ = writeln!(
                out,
                "{:<34} {:<9} {:<36} {:>10.2} {:>8.1} {:>7} {:>9} {:>8} {:>7}  {}",
                label,
                r.implementation,
                kernel,
                r.us,
                r.gbps,
                pct,
                ratio,
                peer_ratio,
                repro,
                r.check
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "* the kernel the library chooses for the shape (reproducible_…: in the reproducible mode, whose time /plain divides by the plain choice's); peer/us: the fastest peer's time over ours (below 1: the peer is faster)"
    );
    out
}

/// The sweep's chart: one line per row kernel, PyTorch, CUB, and the read-only ceiling.
pub fn sweep_series(rows: &[ShapeRow]) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.case == "rows" && r.dtype == "f32" && r.op == "sum" && r.n == SWEEP_ELEMENTS)
    {
        let name = match r.implementation.as_str() {
            "reduce-rs" => r.kernel.trim_end_matches("_f32_sum").to_string(),
            "read-only" => "read-only (ceiling)".to_string(),
            other => other.to_string(),
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((r.cols, r.gbps)),
            None => series.push(Series {
                ceiling: r.implementation == "read-only",
                name,
                points: vec![(r.cols, r.gbps)],
            }),
        }
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::{DType, OpKind};

    fn ours(kernel: &str, check: &str, us: f64) -> ShapeRow {
        ShapeRow {
            implementation: "reduce-rs".into(),
            kernel: kernel.into(),
            chosen: kernel == "rows_block_f32_sum",
            case: "rows".into(),
            op: "sum".into(),
            dtype: "f32".into(),
            rows: 8,
            cols: 16,
            n: 128,
            us,
            gbps: 512.0 / us / 1e3,
            check: check.into(),
        }
    }

    fn peer(implementation: &str, check: &str) -> ShapeRow {
        ShapeRow::from_peer(PeerRow {
            implementation: implementation.into(),
            case: "rows".into(),
            op: "sum".into(),
            dtype: "f32".into(),
            rows: 8,
            cols: 16,
            n: 128,
            ms: 0.004,
            gbps: 0.128,
            check: check.into(),
        })
    }

    #[test]
    fn the_exit_code_rule_counts_wrong_results_and_our_runs_that_did_not_run() {
        let case = ShapeCase {
            dtype: DType::F32,
            op: OpKind::Sum,
            shape: CaseShape::Rows(8, 16),
        };
        let mut read = ours("read_probe_f32_b256", "-", 1.0);
        read.implementation = "read-only".into();
        let all_pass = vec![
            read,
            ours("rows_block_f32_sum", "PASS", 2.0),
            peer("torch", "PASS"),
        ];
        assert!(tally(&all_pass).passed());
        // A peer's wrong result is a wrong result.
        let mut wrong_peer = all_pass.clone();
        wrong_peer.push(peer("cub", "FAIL"));
        assert_eq!(tally(&wrong_peer).wrong, 1);
        assert!(!tally(&wrong_peer).passed());
        // Our case that could not run: a row that says so, and a failure.
        let mut not_run = all_pass.clone();
        not_run.push(ShapeRow::not_run(&case));
        assert_eq!(
            (tally(&not_run).not_run, tally(&not_run).passed()),
            (1, false)
        );
        let text = format_table(&[case], &not_run, "Test GPU");
        assert!(text.contains("ERROR"), "{text}");
        // A peer row whose check is a word of its own counts as neither.
        assert!(tally(&[peer("torch", "nan-propagated")]).passed());
    }

    #[test]
    fn the_table_compares_with_the_read_only_kernel_and_torch() {
        let case = ShapeCase {
            dtype: DType::F32,
            op: OpKind::Sum,
            shape: CaseShape::Rows(8, 16),
        };
        let mut read = ours("read_probe_f32_b256", "-", 1.0);
        read.implementation = "read-only".into();
        let rows = vec![
            read,
            ours("rows_block_f32_sum", "PASS", 2.0),
            peer("torch", "PASS"),
        ];
        let text = format_table(&[case], &rows, "Test GPU");
        let line = text
            .lines()
            .find(|l| l.contains("rows_block_f32_sum *"))
            .unwrap();
        // 50% of the read-only GB/s; torch 4 µs over our 2 µs, and torch the fastest peer.
        assert!(
            line.contains("50.0") && line.contains("2.00     2.00"),
            "{line}"
        );
        assert!(text.contains("torch (fastest peer)"), "{text}");
        assert!(text.contains("Test GPU"));
    }
}
