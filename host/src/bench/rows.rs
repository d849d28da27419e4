//! The sweep's measurements as typed rows: what produced each ([`Subject`], [`Impl`]), its
//! verdict ([`Check`]), the columns derived from the other rows of the same type and size, and
//! the order the table lists them in. The CSV and JSON columns are the serialised rows; their
//! names and strings are the files' format, so the types serialise to the words they replaced.

use crate::element::DType;
pub use crate::size::size_label;
use reduce_rs::Version;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use std::fmt;

/// What produced a row: the `impl` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Impl {
    /// A Rust kernel from kernels-gpu.
    #[serde(rename = "rust")]
    Rust,
    /// The Rust read-only probe: the bandwidth ceiling.
    #[serde(rename = "read-only")]
    ReadOnly,
    /// CUB's DeviceReduce::Sum, timed by reduce_ref.
    #[serde(rename = "cub")]
    Cub,
    /// A CUDA C++ version (or reduce_ref's own read kernel), timed by reduce_ref.
    #[serde(rename = "cuda")]
    Cuda,
}

/// What a row measured: the `version` column (`v5`, `read-only`, `cub`, `cuda-v5`,
/// `cuda-read`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A Rust version.
    Version(Version),
    /// The Rust read-only probe.
    ReadOnly,
    /// The library's reproducible sum (`with_reproducible(true)`), timed beside v8.
    Reproducible,
    /// CUB's DeviceReduce::Sum.
    Cub,
    /// A kernel of reduce_ref under its own name there (`v5`, `read`, `v4-sync`): kept as text,
    /// since reduce_ref has kernels the Rust side has no version for.
    Cuda(String),
}

impl Subject {
    pub fn implementation(&self) -> Impl {
        match self {
            Subject::Version(_) | Subject::Reproducible => Impl::Rust,
            Subject::ReadOnly => Impl::ReadOnly,
            Subject::Cub => Impl::Cub,
            Subject::Cuda(_) => Impl::Cuda,
        }
    }

    /// reduce_ref's CUDA C++ twin of a Rust version or of the read probe.
    pub fn twin(&self) -> Option<Subject> {
        match self {
            Subject::Version(v) => Some(Subject::Cuda(v.name().to_string())),
            Subject::ReadOnly => Some(Subject::Cuda("read".to_string())),
            Subject::Reproducible | Subject::Cub | Subject::Cuda(_) => None,
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Version(v) => f.write_str(v.name()),
            Subject::ReadOnly => f.write_str("read-only"),
            Subject::Reproducible => f.write_str("repro"),
            Subject::Cub => f.write_str("cub"),
            Subject::Cuda(name) => write!(f, "cuda-{name}"),
        }
    }
}

impl Serialize for Subject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A row's verdict: the `check` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Check {
    #[serde(rename = "PASS")]
    Pass,
    /// The result was outside the error bound.
    #[serde(rename = "FAIL")]
    Fail,
    /// The run did not finish; the row's `error` says why.
    #[serde(rename = "ERROR")]
    Error,
    /// Nothing to check (the read probes).
    #[serde(rename = "-")]
    Unchecked,
}

impl Check {
    pub fn of(pass: bool) -> Check {
        if pass { Check::Pass } else { Check::Fail }
    }

    /// The check of a peer's CSV row: its words for pass and fail, anything else (`-`, a
    /// NaN-policy label) neither.
    pub fn from_word(word: &str) -> Check {
        match word.trim() {
            "PASS" => Check::Pass,
            "FAIL" => Check::Fail,
            "ERROR" => Check::Error,
            _ => Check::Unchecked,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Check::Pass => "PASS",
            Check::Fail => "FAIL",
            Check::Error => "ERROR",
            Check::Unchecked => "-",
        }
    }
}

/// One line of the table, the CSV and the JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub dtype: DType,
    pub n: usize,
    pub subject: Subject,
    /// First pass.
    pub grid: Option<u32>,
    pub block: Option<u32>,
    pub passes: Option<usize>,
    /// Input copies rotated over (Rust rows).
    pub copies: Option<usize>,
    pub l2_cold: Option<bool>,
    pub first_pass_ms: Option<f64>,
    /// n · element size / first-pass time, in 10⁹ bytes per second.
    pub first_pass_gbps: Option<f64>,
    /// Of the read-only probe's GB/s at the same type and size.
    pub pct_of_read_only: Option<f64>,
    pub to_scalar_us: Option<f64>,
    /// v0's time to the scalar over this row's.
    pub speedup_vs_v0: Option<f64>,
    /// The previous version's (in --versions order; for cub, the last one) over this row's.
    pub speedup_vs_prev: Option<f64>,
    pub check: Check,
    /// Every run gave the same bits (Rust rows).
    pub deterministic: Option<bool>,
    pub error: Option<String>,
}

/// The CSV's and JSON's columns, in this order: `impl` is derived from the subject, so a row
/// cannot contradict itself.
impl Serialize for Row {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_struct("Row", 18)?;
        row.serialize_field("dtype", self.dtype.name())?;
        row.serialize_field("n", &self.n)?;
        row.serialize_field("version", &self.subject)?;
        row.serialize_field("impl", &self.subject.implementation())?;
        row.serialize_field("grid", &self.grid)?;
        row.serialize_field("block", &self.block)?;
        row.serialize_field("passes", &self.passes)?;
        row.serialize_field("copies", &self.copies)?;
        row.serialize_field("l2_cold", &self.l2_cold)?;
        row.serialize_field("first_pass_ms", &self.first_pass_ms)?;
        row.serialize_field("first_pass_gbps", &self.first_pass_gbps)?;
        row.serialize_field("pct_of_read_only", &self.pct_of_read_only)?;
        row.serialize_field("to_scalar_us", &self.to_scalar_us)?;
        row.serialize_field("speedup_vs_v0", &self.speedup_vs_v0)?;
        row.serialize_field("speedup_vs_prev", &self.speedup_vs_prev)?;
        row.serialize_field("check", &self.check)?;
        row.serialize_field("deterministic", &self.deterministic)?;
        row.serialize_field("error", &self.error)?;
        row.end()
    }
}

impl Row {
    pub fn new(dtype: DType, n: usize, subject: Subject) -> Row {
        Row {
            dtype,
            n,
            subject,
            grid: None,
            block: None,
            passes: None,
            copies: None,
            l2_cold: None,
            first_pass_ms: None,
            first_pass_gbps: None,
            pct_of_read_only: None,
            to_scalar_us: None,
            speedup_vs_v0: None,
            speedup_vs_prev: None,
            check: Check::Unchecked,
            deterministic: None,
            error: None,
        }
    }

    pub fn implementation(&self) -> Impl {
        self.subject.implementation()
    }

    pub fn failed(mut self, error: String) -> Row {
        self.check = Check::Error;
        self.error = Some(error);
        self
    }

    /// Counts against the bench (see [`Tally`]): a wrong result, or a run of ours that did
    /// not finish (reduce_ref's own errors are its business: they are reported, not counted).
    pub fn is_failure(&self) -> bool {
        Tally::counts(
            self.check,
            matches!(self.implementation(), Impl::Rust | Impl::ReadOnly),
        )
    }
}

/// The exit-code rule of every bench (the versions' sweep, `--shapes`, `--devices`): it fails
/// (exit status 1) when a result is wrong, whoever computed it (ours, CUB's, PyTorch's), or when
/// one of our measurements could not run; a peer that could not run is a note, and a bench that
/// could not run at all (no GPU) is an error (exit status 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Results outside their check.
    pub wrong: usize,
    /// Our measurements that did not finish.
    pub not_run: usize,
}

impl Tally {
    /// Whether a row with `check` counts against the bench; `ours`: the row is one of our
    /// measurements, not a peer's.
    pub fn counts(check: Check, ours: bool) -> bool {
        check == Check::Fail || (check == Check::Error && ours)
    }

    pub fn add(&mut self, check: Check, ours: bool) {
        match check {
            Check::Fail => self.wrong += 1,
            Check::Error if ours => self.not_run += 1,
            _ => {}
        }
    }

    pub fn passed(&self) -> bool {
        self.wrong == 0 && self.not_run == 0
    }

    /// The error line of a bench that did not pass (`None` when it did).
    pub fn summary(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.wrong > 0 {
            parts.push(format!("{} result(s) wrong", self.wrong));
        }
        if self.not_run > 0 {
            parts.push(format!("{} of our run(s) did not run", self.not_run));
        }
        (!parts.is_empty()).then(|| format!("{} (see the check column)", parts.join(" and ")))
    }
}

pub fn gbps(bytes: usize, ms: f64) -> Option<f64> {
    (ms > 0.0 && ms.is_finite()).then(|| bytes as f64 / (ms * 1e-3) / 1e9)
}

/// The header of `bench.json`: what was measured, where and how.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    pub device: String,
    pub multiprocessors: u32,
    pub compute_capability: String,
    pub total_memory_bytes: usize,
    pub free_memory_bytes: usize,
    /// The cubin or PTX the kernels were loaded from.
    pub kernels: String,
    pub kernels_cubin: bool,
    pub date_unix_seconds: u64,
    pub op: String,
    pub input: String,
    pub block: String,
    pub repeat: u32,
    pub warmup: u32,
    pub timing: String,
    pub rotation: String,
    pub cub: String,
    pub dtypes: Vec<String>,
    pub sizes: Vec<usize>,
    pub versions: Vec<String>,
    pub skipped: Vec<String>,
}

/// Fills the columns that compare rows of one (type, size): % of the read-only GB/s and the
/// speedups of the time to the scalar.
pub fn fill_derived(rows: &mut [Row], order: &[Version]) {
    let keys: Vec<(DType, usize)> = rows.iter().map(|r| (r.dtype, r.n)).collect();
    let v0 = Version::find("v0").ok().map(Subject::Version);
    for (dtype, n) in keys {
        let group: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].dtype == dtype && rows[i].n == n)
            .collect();
        let find = |subject: &Subject| {
            group
                .iter()
                .map(|&i| &rows[i])
                .find(|r| &r.subject == subject && r.check != Check::Error)
        };
        let read = find(&Subject::ReadOnly).and_then(|r| r.first_pass_gbps);
        let v0_us = v0.as_ref().and_then(find).and_then(|r| r.to_scalar_us);
        let v8_us = find(&Subject::Version(Version::fastest())).and_then(|r| r.to_scalar_us);
        let rust_us: Vec<Option<f64>> = order
            .iter()
            .map(|&v| find(&Subject::Version(v)).and_then(|r| r.to_scalar_us))
            .collect();
        for &i in &group {
            let row = &mut rows[i];
            row.pct_of_read_only = match (row.first_pass_gbps, read) {
                (Some(g), Some(r)) if r > 0.0 => Some(100.0 * g / r),
                _ => None,
            };
            let ratio = |base: Option<f64>, us: Option<f64>| match (base, us) {
                (Some(b), Some(t)) if t > 0.0 => Some(b / t),
                _ => None,
            };
            let prev = match &row.subject {
                Subject::Version(version) => order
                    .iter()
                    .position(|v| v == version)
                    .and_then(|p| p.checked_sub(1))
                    .and_then(|p| rust_us[p]),
                Subject::Cub => rust_us.last().copied().flatten(),
                // Against v8 (the library's default kernel): the mode's cost as a speed ratio.
                Subject::Reproducible => v8_us,
                Subject::ReadOnly | Subject::Cuda(_) => None,
            };
            if row.subject != Subject::ReadOnly {
                row.speedup_vs_v0 = ratio(v0_us, row.to_scalar_us);
            }
            row.speedup_vs_prev = ratio(prev, row.to_scalar_us);
        }
    }
}

/// Type (in --dtypes order), size, then the versions in --versions order, read-only, cub, and
/// the CUDA C++ rows.
pub fn sort_rows(rows: &mut [Row], dtypes: &[DType], order: &[Version]) {
    let rank = |r: &Row| {
        let dtype = dtypes
            .iter()
            .position(|&d| d == r.dtype)
            .unwrap_or(usize::MAX);
        let within = match &r.subject {
            Subject::Version(version) => order.iter().position(|v| v == version).unwrap_or(99),
            Subject::Reproducible => 99,
            Subject::ReadOnly => 100,
            Subject::Cub => 101,
            Subject::Cuda(_) => 200,
        };
        (dtype, r.n, within, r.subject.to_string())
    };
    rows.sort_by_key(rank);
}

/// Rows and a header for the tests of this module and its neighbours.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// Rows for the tests of this module and its neighbours: two sizes of f32 with the read probe,
    /// v0, v3 and v8, a v5 that did not run, and reduce_ref's rows for the first size.
    pub fn synthetic_rows() -> Vec<Row> {
        let version = |name: &str| Subject::Version(Version::find(name).unwrap());
        let mut rows = Vec::new();
        for n in [1usize << 20, 1 << 22] {
            let mut read = Row::new(DType::F32, n, Subject::ReadOnly);
            read.first_pass_gbps = Some(3000.0);
            read.first_pass_ms = Some(1.0);
            rows.push(read);
            for (name, us, gbps) in [
                ("v0", 400.0, 600.0),
                ("v3", 200.0, 1500.0),
                ("v8", 100.0, 2700.0),
            ] {
                let mut row = Row::new(DType::F32, n, version(name));
                row.to_scalar_us = Some(us);
                row.first_pass_gbps = Some(gbps);
                row.first_pass_ms = Some(0.5);
                row.grid = Some(1024);
                row.block = Some(256);
                row.copies = Some(64);
                row.l2_cold = Some(true);
                row.check = Check::Pass;
                row.deterministic = Some(true);
                rows.push(row);
            }
        }
        rows.push(
            Row::new(DType::F32, 1 << 22, version("v5"))
                .failed("kernel `reduce_v5_f32_sum_b256` is not in x.ptx".into()),
        );
        let csv = "impl,version,dtype,n,block,grid,first_pass_ms,first_pass_gbps,scalar_ms,check\n\
                   cuda,cub,f32,1048576,0,0,0.002000,2100.000,0.002500,PASS\n\
                   cuda,v3,f32,1048576,256,2048,0.003000,1400.000,0.004000,PASS\n\
                   cuda,read,f32,1048576,256,1056,0.001500,2900.000,0.001500,n/a\n";
        rows.extend(crate::bench::peers::cuda::parse_reduce_ref_csv(csv, DType::F32).unwrap());
        rows
    }

    /// The versions `synthetic_rows` is ordered by.
    pub fn synthetic_order() -> Vec<Version> {
        ["v0", "v3", "v5", "v8"]
            .map(|v| Version::find(v).unwrap())
            .to_vec()
    }

    /// The header for the tests: an H100-like GPU, f32 at two sizes.
    pub fn synthetic_header() -> Header {
        Header {
            device: "Test GPU".into(),
            multiprocessors: 132,
            compute_capability: "sm_90".into(),
            total_memory_bytes: 80 << 30,
            free_memory_bytes: 79 << 30,
            kernels: "target/ptx/kernels_gpu.sm_90.cubin".into(),
            kernels_cubin: true,
            date_unix_seconds: 1_700_000_000,
            op: "sum".into(),
            input: "random (seed 1)".into(),
            block: "256".into(),
            repeat: 20,
            warmup: 3,
            timing: "CUDA events".into(),
            rotation: crate::bench::plan::rotation_text(),
            cub: crate::bench::peers::cuda::CUB_TEXT.into(),
            dtypes: vec!["f32".into()],
            sizes: vec![1 << 20, 1 << 22],
            versions: vec!["v0".into(), "v3".into(), "v5".into(), "v8".into()],
            skipped: vec!["f64 2^30: needs 9000 MiB".into()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{synthetic_order, synthetic_rows};
    use super::*;

    #[test]
    fn derived_columns_compare_with_read_only_v0_and_the_previous_version() {
        let order = synthetic_order();
        let mut rows = synthetic_rows();
        fill_derived(&mut rows, &order);
        sort_rows(&mut rows, &[DType::F32], &order);
        let get = |n: usize, label: &str| {
            rows.iter()
                .find(|r| r.n == n && r.subject.to_string() == label)
                .unwrap()
        };
        let v3 = get(1 << 20, "v3");
        assert_eq!(v3.pct_of_read_only, Some(50.0));
        assert_eq!(v3.speedup_vs_v0, Some(2.0));
        assert_eq!(v3.speedup_vs_prev, Some(2.0));
        assert_eq!(get(1 << 20, "v0").speedup_vs_v0, Some(1.0));
        assert_eq!(get(1 << 20, "v0").speedup_vs_prev, None);
        // v5 is missing at 2^20 and failed at 2^22: v8 has no previous time there.
        assert_eq!(get(1 << 22, "v8").speedup_vs_prev, None);
        assert_eq!(get(1 << 22, "v8").speedup_vs_v0, Some(4.0));
        // CUB against v0 and against the last version listed (v8); read-only has no speedups.
        let cub = get(1 << 20, "cub");
        assert_eq!(cub.pct_of_read_only, Some(70.0));
        assert_eq!(cub.speedup_vs_v0, Some(160.0));
        assert_eq!(cub.speedup_vs_prev, Some(40.0));
        assert_eq!(get(1 << 20, "read-only").speedup_vs_v0, None);
        assert_eq!(get(1 << 20, "read-only").pct_of_read_only, Some(100.0));
        assert_eq!(get(1 << 20, "cuda-v3").speedup_vs_prev, None);
        // Order: size, versions in --versions order, read-only, cub, the CUDA C++ rows.
        let first: Vec<String> = rows
            .iter()
            .filter(|r| r.n == 1 << 20)
            .map(|r| r.subject.to_string())
            .collect();
        assert_eq!(
            first,
            ["v0", "v3", "v8", "read-only", "cub", "cuda-read", "cuda-v3"]
        );
    }

    #[test]
    fn rows_serialise_to_the_words_of_the_file_format() {
        let mut row = Row::new(
            DType::Bf16,
            1 << 10,
            Subject::Version(Version::find("v5").unwrap()),
        );
        row.check = Check::Fail;
        let json = serde_json::to_value(&row).unwrap();
        assert_eq!(json["dtype"], "bf16");
        assert_eq!(json["version"], "v5");
        assert_eq!(json["impl"], "rust");
        assert_eq!(json["check"], "FAIL");
        let read = serde_json::to_value(Row::new(DType::F32, 1, Subject::Cuda("read".into())));
        let read = read.unwrap();
        assert_eq!(
            (&read["version"], &read["impl"]),
            (&"cuda-read".into(), &"cuda".into())
        );
        assert_eq!(read["check"], "-");
        let words: Vec<&str> = [Check::Pass, Check::Fail, Check::Error, Check::Unchecked]
            .map(|c| c.word())
            .to_vec();
        for (check, word) in [Check::Pass, Check::Fail, Check::Error, Check::Unchecked]
            .iter()
            .zip(&words)
        {
            assert_eq!(serde_json::to_value(check).unwrap(), **word);
        }
        assert_eq!(Subject::ReadOnly.twin(), Some(Subject::Cuda("read".into())));
        assert_eq!(Subject::Cub.twin(), None);
    }

    #[test]
    fn the_exit_code_rule_counts_wrong_results_and_our_runs_that_did_not_run() {
        let mut tally = Tally::default();
        tally.add(Check::Pass, true);
        tally.add(Check::Unchecked, true);
        tally.add(Check::Error, false); // a peer that could not run: a note
        assert!(tally.passed() && tally.summary().is_none());
        tally.add(Check::Fail, false); // a peer's wrong result
        assert_eq!((tally.wrong, tally.passed()), (1, false));
        tally.add(Check::Error, true); // ours, not run
        assert_eq!(tally.not_run, 1);
        let summary = tally.summary().unwrap();
        assert!(
            summary.contains("1 result(s) wrong and 1 of our run(s) did not run"),
            "{summary}"
        );
        assert_eq!(Check::from_word("PASS"), Check::Pass);
        assert_eq!(Check::from_word("nan-propagated"), Check::Unchecked);
        // The sweep's rows follow the same rule.
        let rows = synthetic_rows();
        let failures: Vec<String> = rows
            .iter()
            .filter(|r| r.is_failure())
            .map(|r| format!("{} {}", r.n, r.subject))
            .collect();
        assert_eq!(failures, ["4194304 v5"]);
    }

    #[test]
    fn gbps_and_labels() {
        assert_eq!(gbps(4_000_000, 1.0), Some(4.0));
        assert_eq!(gbps(4, 0.0), None);
        assert_eq!(size_label(1 << 20), "2^20");
        assert_eq!(size_label(1000), "1000");
    }
}
