//! The several-GPU rows: one per implementation, operation, GPU count and size per GPU; their
//! table, their CSV and the exit-code rule over them.

use crate::bench::rows::{Check, Tally};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `reduce-rs` or a peer (`torch-nccl`).
    pub implementation: String,
    pub op: String,
    pub gpus: usize,
    pub per_gpu: usize,
    /// The bytes the GB/s column divides: one GPU's input for `kernel` (one GPU's bandwidth),
    /// every GPU's for the collectives, none for the all-reduce of one scalar.
    pub bytes: usize,
    /// The median over runs of the slowest GPU's time (µs); `None` where nothing was timed
    /// (simulated ranks).
    pub us: Option<f64>,
    /// The median over runs of the fastest GPU's time (µs), where measured.
    pub us_min: Option<f64>,
    /// Timed runs (every GPU's) whose enqueueing outlasted the GPU pre-roll, where counted.
    pub late: Option<usize>,
    pub check: Check,
}

impl Row {
    /// Every GPU's elements.
    pub fn n(&self) -> usize {
        self.per_gpu * self.gpus
    }

    fn gbps(&self) -> Option<f64> {
        self.us
            .filter(|us| *us > 0.0 && us.is_finite())
            .map(|us| self.bytes as f64 / (us * 1e3))
    }
}

/// `value` with `decimals`, or `-` where there is none.
fn cell(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.decimals$}"))
}

/// The table, by size per GPU, then GPU count, then implementation (the operations in the
/// order they ran).
pub fn table(rows: &[Row]) -> String {
    let mut text = format!(
        "{:<11} {:<17} {:>4} {:>11} {:>12} {:>10} {:>10} {:>9} {:>4} check\n",
        "impl", "op", "gpus", "per_gpu", "n", "µs", "µs_min", "GB/s", "late"
    );
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by(|a, b| {
        (a.per_gpu, a.gpus, &a.implementation).cmp(&(b.per_gpu, b.gpus, &b.implementation))
    });
    for r in sorted {
        let _ = writeln!(
            text,
            "{:<11} {:<17} {:>4} {:>11} {:>12} {:>10} {:>10} {:>9} {:>4} {}",
            r.implementation,
            r.op,
            r.gpus,
            r.per_gpu,
            r.n(),
            cell(r.us, 1),
            cell(r.us_min, 1),
            cell(r.gbps(), 1),
            r.late.map_or_else(|| "-".into(), |l| l.to_string()),
            r.check.word()
        );
    }
    text
}

/// The rows as CSV (`impl,op,gpus,per_gpu,n,us,us_min,late,check`; empty where not measured).
pub fn write_csv(rows: &[Row], path: &Path) -> Result<()> {
    let mut text = String::from("impl,op,gpus,per_gpu,n,us,us_min,late,check\n");
    let field = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.3}"));
    for r in rows {
        let _ = writeln!(
            text,
            "{},{},{},{},{},{},{},{},{}",
            r.implementation,
            r.op,
            r.gpus,
            r.per_gpu,
            r.n(),
            field(r.us),
            field(r.us_min),
            r.late.map_or_else(String::new, |l| l.to_string()),
            r.check.word()
        );
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// The exit-code rule over the rows (see [`Tally`]): ours and the peer's checks alike.
pub fn tally(rows: &[Row]) -> Tally {
    let mut tally = Tally::default();
    for row in rows {
        tally.add(row.check, row.implementation == OURS);
    }
    tally
}

/// The `impl` of the library's rows.
pub const OURS: &str = "reduce-rs";

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, per_gpu: usize, us: Option<f64>, check: Check) -> Row {
        Row {
            implementation: OURS.into(),
            op: op.into(),
            gpus: 2,
            per_gpu,
            bytes: per_gpu * 2 * 4,
            us,
            us_min: us.map(|us| us / 2.0),
            late: us.map(|_| 0),
            check,
        }
    }

    #[test]
    fn rows_sort_by_size_and_keep_their_order_within_one() {
        let rows = [
            row("sum+allreduce", 1 << 20, Some(100.0), Check::Pass),
            row("kernel", 1 << 10, None, Check::Pass),
            row("argmax+gather", 1 << 10, None, Check::Fail),
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("impl "), "{text}");
        assert!(
            lines[1].contains("kernel") && lines[1].ends_with(" -    - PASS"),
            "{text}"
        );
        assert!(
            lines[2].contains("argmax+gather") && lines[2].ends_with("FAIL"),
            "{text}"
        );
        // 2^20 × 2 GPUs × 4 bytes in 100 µs: 83.9 GB/s.
        assert!(
            lines[3].contains("100.0") && lines[3].contains("83.9"),
            "{text}"
        );
        let tally = tally(&rows);
        assert_eq!((tally.wrong, tally.passed()), (1, false));
    }
}
