//! The sweep's report as printed: what was measured and how, then one table per type whose
//! rows are the Rust versions, the read probe and CUB, with the CUDA C++ twins as a column.

use super::plan::Plan;
use super::rows::{Check, Header, Impl, Row, size_label};

/// The header and one table per type, as printed.
pub fn format_report(header: &Header, plan: &Plan, rows: &[Row]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "bench    gpu: {} ({} SMs, {}), kernels from {}",
        header.device, header.multiprocessors, header.compute_capability, header.kernels
    );
    let _ = writeln!(
        out,
        "input    sum of {}; block {}; {}",
        header.input,
        header.block,
        format_args!(
            "CUDA events behind a GPU pre-roll, median of {} runs after {} untimed",
            header.repeat, header.warmup
        )
    );
    let _ = writeln!(out, "rotation {}", header.rotation);
    let _ = writeln!(out, "cub      {}", header.cub);
    let _ = writeln!(
        out,
        "repro    reduce-rs reproducible (with_reproducible(true): the same bits on any GPU, grid and split); its × prev is its speed relative to v8"
    );
    let mut largest: Vec<String> = Vec::new();
    for dtype in &header.dtypes {
        if let Some(n) = plan
            .cases
            .iter()
            .filter(|c| c.dtype.name() == dtype)
            .map(|c| c.n)
            .max()
        {
            largest.push(format!("{dtype} {}", size_label(n)));
        }
    }
    let _ = writeln!(out, "largest  {}", largest.join(", "));
    for note in &header.skipped {
        let _ = writeln!(out, "skipped  {note}");
    }
    if plan.cases.iter().any(|c| !c.l2_cold) {
        let _ = writeln!(
            out,
            "note     sizes marked `~` had too little memory for the full rotation: L2 may hold part of their input"
        );
    }
    for dtype in &header.dtypes {
        let _ = writeln!(out);
        let _ = writeln!(out, "{dtype}");
        let _ = writeln!(
            out,
            "{:>8} {:<9} {:>14} {:>6} {:>11} {:>8} {:>7} {:>8} {:>11} {:>7} {:>7}  check",
            "n",
            "version",
            "grid × block",
            "copies",
            "1st-pass ms",
            "GB/s",
            "% read",
            "C++ GB/s",
            "scalar µs",
            "× v0",
            "× prev"
        );
        let mut last_n = None;
        for row in rows
            .iter()
            .filter(|r| r.dtype.name() == dtype && r.implementation() != Impl::Cuda)
        {
            if last_n.is_some_and(|n| n != row.n) {
                let _ = writeln!(out);
            }
            last_n = Some(row.n);
            let cpp = row.subject.twin().and_then(|twin| {
                rows.iter()
                    .find(|r| r.dtype == row.dtype && r.n == row.n && r.subject == twin)
                    .and_then(|r| r.first_pass_gbps)
            });
            let shape = match (row.grid, row.block) {
                (Some(g), Some(b)) => format!("{g} × {b}"),
                _ => "-".into(),
            };
            let copies = match (row.copies, row.l2_cold) {
                (Some(k), Some(false)) => format!("{k}~"),
                (Some(k), _) => k.to_string(),
                _ => "-".into(),
            };
            let num = |v: Option<f64>, digits: usize| {
                v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
            };
            let mut verdict = row.check.word().to_string();
            if row.deterministic == Some(false) {
                verdict.push_str(" (runs differ in bits)");
            }
            if let (Some(error), false) = (&row.error, row.check == Check::Fail) {
                verdict.push_str(&format!(": {error}"));
            }
            let _ = writeln!(
                out,
                "{:>8} {:<9} {:>14} {:>6} {:>11} {:>8} {:>7} {:>8} {:>11} {:>7} {:>7}  {}",
                size_label(row.n),
                row.subject.to_string(),
                shape,
                copies,
                num(row.first_pass_ms, 4),
                num(row.first_pass_gbps, 1),
                num(row.pct_of_read_only, 1),
                num(cpp, 1),
                num(row.to_scalar_us, 1),
                num(row.speedup_vs_v0, 2),
                num(row.speedup_vs_prev, 2),
                verdict
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::Planned;
    use crate::bench::rows::fixtures::{synthetic_header, synthetic_order, synthetic_rows};
    use crate::bench::rows::{fill_derived, sort_rows};
    use crate::element::DType;

    #[test]
    fn report_has_one_table_per_type_with_every_column() {
        let order = synthetic_order();
        let mut rows = synthetic_rows();
        fill_derived(&mut rows, &order);
        sort_rows(&mut rows, &[DType::F32], &order);
        let plan = Plan {
            cases: vec![Planned {
                dtype: DType::F32,
                n: 1 << 22,
                copies: 64,
                l2_cold: true,
            }],
            skipped: vec![],
        };
        let text = format_report(&synthetic_header(), &plan, &rows);
        for expected in [
            "Test GPU",
            "rotation inputs rotated over K copies (≥256 MiB",
            "on its own input of the same size and type",
            "largest  f32 2^22",
            "skipped  f64 2^30",
            "1st-pass ms",
            "% read",
            "C++ GB/s",
            "scalar µs",
            "× v0",
            "× prev",
        ] {
            assert!(text.contains(expected), "`{expected}` missing from\n{text}");
        }
        let v3 = text
            .lines()
            .find(|l| l.contains(" v3 ") && l.contains("2^20"))
            .unwrap();
        // grid × block, copies, ms, GB/s, % read, C++ GB/s, µs, × v0, × prev, check.
        for cell in [
            "1024 × 256",
            "64",
            "0.5000",
            "1500.0",
            "50.0",
            "1400.0",
            "200.0",
            "2.00",
            "PASS",
        ] {
            assert!(v3.contains(cell), "`{cell}` missing from `{v3}`");
        }
        assert!(
            text.contains("ERROR: kernel `reduce_v5_f32_sum_b256`"),
            "{text}"
        );
        // The CUDA C++ rows are a column, not lines of their own.
        assert!(!text.contains("cuda-v3"));
    }
}
