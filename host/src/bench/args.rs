//! `bench`'s command line: its own flags, the refusal of flags the sweep would ignore, the
//! list parsers (`--dtypes`, `--sizes`, `--versions`) and [`BenchOptions`], everything a sweep
//! needs with the defaults applied.

use crate::element::{DType, OpKind};
use crate::run::BackendChoice;
use crate::size::parse_len;
use crate::timing::Timing;
use reduce_rs::Version;
use std::path::PathBuf;

pub const SIZES_DEFAULT: &str = "2^10..2^28";
/// A range's exponent step when none is given: every power of 4.
pub const DEFAULT_EXPONENT_STEP: u32 = 2;
pub const OUT_DEFAULT: &str = "bench-out";

/// The options only `bench` reads; `check_flags` rejects them on other commands.
// The fields' doc comments are `--help`'s text, written for the terminal, not for rustdoc.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Bench options (reduce-rs bench)")]
pub struct BenchArgs {
    /// Element types: a comma list or `all` (= f32,f64,i32,u32) [default: all, or --dtype when given]
    #[arg(long, value_parser = parse_dtypes)]
    pub dtypes: Option<DTypeList>,
    /// Element counts: a comma list (2^20,1e6,32M) and/or ranges a..b[:s] of powers of two with
    /// exponent step s (default 2: 2^10..2^28 is every power of 4)
    #[arg(long, default_value = SIZES_DEFAULT, value_parser = parse_sizes, allow_negative_numbers = true)]
    pub sizes: SizeList,
    /// Versions in the order of the table (the speedup column compares each with the previous):
    /// a comma list (v0,v5,multi-add) or `all`
    #[arg(long, value_parser = parse_versions)]
    pub versions: Option<VersionList>,
    /// Directory for bench.csv, bench.json and bench_<dtype>.svg
    #[arg(long, default_value = OUT_DEFAULT)]
    pub out: PathBuf,
    /// Do not build and time CUB and the CUDA C++ versions (bench/cuda/reduce_ref.cu), even where nvcc is installed
    #[arg(long)]
    pub no_cub: bool,
    /// Instead of the versions: reductions of a shape and the library's operators, beside
    /// PyTorch and CUB: `table` (the cases of the issue), `sweep` (f32 row sums against row
    /// length, with a chart) and/or cases dtype:op:kind:size (f32:sum:rows:8192x8192,
    /// bf16:argmax:rows:64x128256, f32:argmax:whole:2^28, f32:sum:segments:100000x300)
    #[arg(long, value_parser = super::shapes::parse_shapes)]
    pub shapes: Option<super::shapes::ShapesArg>,
    /// Instead of the timings: the relative error of every version's f32 sum, and of the
    /// reproducible sum, against the exact sum of uniform [-1, 1) input at --accuracy-sizes
    #[arg(long)]
    pub accuracy: bool,
    /// The sizes --accuracy measures (2^32 f32 needs 16 GiB of GPU and host memory)
    #[arg(long, default_value = "2^24,2^28,2^32", value_parser = parse_sizes, allow_negative_numbers = true)]
    pub accuracy_sizes: SizeList,
}

/// clap ids of the flags only `bench` reads.
const BENCH_ONLY: [(&str, &str); 8] = [
    ("shapes", "--shapes"),
    ("accuracy", "--accuracy"),
    ("accuracy_sizes", "--accuracy-sizes"),
    ("dtypes", "--dtypes"),
    ("sizes", "--sizes"),
    ("versions", "--versions"),
    ("out", "--out"),
    ("no_cub", "--no-cub"),
];

/// clap ids of the single-run flags that mean nothing to `bench`, and why.
const NOT_FOR_BENCH: [(&str, &str, &str); 6] = [
    (
        "reproducible",
        "--reproducible",
        "bench times the reproducible sum beside v8 anyway (the `repro` rows)",
    ),
    ("n", "--n", "bench sweeps --sizes"),
    (
        "pattern",
        "--pattern",
        "bench reduces random input (seed 1)",
    ),
    ("seed", "--seed", "bench reduces random input (seed 1)"),
    (
        "schedule_seed",
        "--schedule-seed",
        "it shuffles the simulator, and bench runs on the GPU",
    ),
    (
        "yes",
        "--yes",
        "it confirms long simulator runs, and bench runs on the GPU",
    ),
];

/// Refuses flags that the command would silently ignore: bench's own flags on other commands,
/// and single-run flags on bench (`bench`: the command is `bench`). `given(id)` says whether
/// the flag with that clap id was on the command line.
pub fn check_flags(
    bench: bool,
    given: impl Fn(&str) -> bool,
    op: OpKind,
    backend: BackendChoice,
) -> Result<(), String> {
    if !bench {
        return match BENCH_ONLY.iter().find(|(id, _)| given(id)) {
            Some((_, flag)) => Err(format!(
                "{flag} is a `bench` option (reduce-rs bench {flag} …)"
            )),
            None => Ok(()),
        };
    }
    if let Some((_, flag, why)) = NOT_FOR_BENCH.iter().find(|(id, _, _)| given(id)) {
        return Err(format!("{flag} does not apply to `bench`: {why}"));
    }
    if op != OpKind::Sum && !given("shapes") {
        return Err(format!(
            "bench times the sum only (its comparison, CUB's DeviceReduce::Sum, is a sum), not {op}"
        ));
    }
    if backend == BackendChoice::Sim {
        return Err("bench times the GPU; the simulator has no timing (`reduce-rs all --backend sim` checks every version)".into());
    }
    if given("dtype") && given("dtypes") {
        return Err("give --dtype (one type) or --dtypes (a list), not both".into());
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DTypeList(pub Vec<DType>);

/// `all` or a comma list of f32, f64, i32, u32 (repeats dropped, order kept).
pub fn parse_dtypes(text: &str) -> Result<DTypeList, String> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(DTypeList(DType::ALL.to_vec()));
    }
    let mut dtypes = Vec::new();
    for item in text.split(',') {
        let dtype = DType::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(item.trim()))
            .ok_or_else(|| {
                format!(
                    "`{}` is not an element type (f32, f64, i32, u32, i64, u64, f16, bf16 or all)",
                    item.trim()
                )
            })?;
        if !dtypes.contains(&dtype) {
            dtypes.push(dtype);
        }
    }
    Ok(DTypeList(dtypes))
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<usize>);

/// A comma list of element counts (anything `parse_len` reads) and ranges `a..b[:s]`: the powers
/// of two from `a` to `b` (both powers of two), exponent step `s` (default 2). Sorted, repeats
/// dropped.
pub fn parse_sizes(text: &str) -> Result<SizeList, String> {
    let mut sizes = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!(
                "`{text}` has an empty entry (write e.g. 2^10..2^28 or 2^20,1e6)"
            ));
        }
        let Some((from, rest)) = item.split_once("..") else {
            let n = parse_len(item)?;
            if n == 0 {
                return Err("sizes must be at least 1".into());
            }
            sizes.push(n);
            continue;
        };
        let (to, step) = match rest.split_once(':') {
            Some((to, step)) => {
                let step: u32 = step
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&s| s >= 1)
                    .ok_or_else(|| {
                        format!("`{step}` in `{item}` is not an exponent step (a whole number ≥ 1)")
                    })?;
                (to, step)
            }
            None => (rest, DEFAULT_EXPONENT_STEP),
        };
        let exponent = |end: &str| -> Result<u32, String> {
            let n = parse_len(end)?;
            if n.is_power_of_two() {
                Ok(n.trailing_zeros())
            } else {
                Err(format!(
                    "`{end}` in `{item}`: a range runs over powers of two, so both ends must be powers of two (e.g. 2^10..2^28:2)"
                ))
            }
        };
        let (low, high) = (exponent(from)?, exponent(to)?);
        if low > high {
            return Err(format!("`{item}` is empty: its start is above its end"));
        }
        sizes.extend((low..=high).step_by(step as usize).map(|k| 1usize << k));
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(SizeList(sizes))
}

#[derive(Clone, Debug)]
pub struct VersionList(pub Vec<Version>);

/// `all` or a comma list of anything `Version::find` reads (repeats dropped, order kept).
pub fn parse_versions(text: &str) -> Result<VersionList, String> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(VersionList(Version::all().collect()));
    }
    let mut list: Vec<Version> = Vec::new();
    for item in text.split(',') {
        let version = Version::find(item).map_err(|e| e.to_string())?;
        if !list.contains(&version) {
            list.push(version);
        }
    }
    Ok(VersionList(list))
}

/// Everything a sweep needs, with the defaults applied.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub dtypes: Vec<DType>,
    pub sizes: Vec<usize>,
    pub versions: Vec<Version>,
    /// `None`: each version's tuned block size.
    pub block: Option<u32>,
    pub timing: Timing,
    pub out: PathBuf,
    pub cub: bool,
    pub ptx_dir: Option<PathBuf>,
    /// `--shapes`: the shape cases instead of the versions' sweep.
    pub shapes: Option<super::shapes::ShapesArg>,
    /// `--accuracy`: the errors at these sizes instead of the timings.
    pub accuracy: Option<Vec<usize>>,
    /// `--devices`: the several-GPU sweep (`--sizes` per GPU) instead of the versions' sweep.
    pub devices: Option<crate::devices::DeviceCount>,
}

impl BenchOptions {
    /// `dtype`: the common `--dtype`, when it was given on the command line.
    pub fn new(
        args: &BenchArgs,
        dtype: Option<DType>,
        block: Option<u32>,
        timing: Timing,
        ptx_dir: Option<PathBuf>,
    ) -> BenchOptions {
        let dtypes = match (&args.dtypes, dtype) {
            (Some(list), _) => list.0.clone(),
            (None, Some(one)) => vec![one],
            (None, None) => DType::ALL.to_vec(),
        };
        BenchOptions {
            dtypes,
            sizes: args.sizes.0.clone(),
            versions: args
                .versions
                .as_ref()
                .map_or_else(|| Version::all().collect(), |v| v.0.clone()),
            block,
            timing,
            out: args.out.clone(),
            cub: !args.no_cub,
            ptx_dir,
            shapes: args.shapes.clone(),
            accuracy: args.accuracy.then(|| args.accuracy_sizes.0.clone()),
            devices: None,
        }
    }

    /// Runs of one case: every version and the read probe, warm-up included.
    pub fn runs_per_case(&self) -> usize {
        (self.versions.len() + 1) * (self.timing.warmup + self.timing.repeat) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_are_every_power_of_four_from_2_10_to_2_28() {
        let sizes = parse_sizes(SIZES_DEFAULT).unwrap().0;
        assert_eq!(
            sizes,
            (10..=28)
                .step_by(2)
                .map(|k| 1usize << k)
                .collect::<Vec<_>>()
        );
        assert_eq!(sizes.len(), 10);
    }

    #[test]
    fn sizes_take_lists_ranges_and_steps() {
        assert_eq!(
            parse_sizes("2^20..2^23:1").unwrap().0,
            [1 << 20, 1 << 21, 1 << 22, 1 << 23]
        );
        assert_eq!(
            parse_sizes("1e6, 2^20,32M,2^20").unwrap().0,
            [1_000_000, 1 << 20, 1 << 25]
        );
        assert_eq!(
            parse_sizes("2^10..2^16:3,1000").unwrap().0,
            [1000, 1 << 10, 1 << 13, 1 << 16]
        );
        assert_eq!(parse_sizes("4Ki..4Ki").unwrap().0, [4096]);
        for (bad, says) in [
            ("", "empty entry"),
            ("2^10,,2^12", "empty entry"),
            ("1000..2^20", "powers of two"),
            ("2^20..2^10", "start is above its end"),
            ("2^10..2^20:0", "exponent step"),
            ("2^10..2^20:x", "exponent step"),
            ("0", "at least 1"),
            ("lots", "not an element count"),
        ] {
            let error = parse_sizes(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn dtypes_and_versions_parse_as_lists_or_all() {
        assert_eq!(parse_dtypes("all").unwrap().0, DType::ALL);
        assert_eq!(
            parse_dtypes("f64, I32,f64").unwrap().0,
            [DType::F64, DType::I32]
        );
        assert!(
            parse_dtypes("f8")
                .unwrap_err()
                .contains("f32, f64, i32, u32")
        );
        let names = |l: VersionList| l.0.iter().map(|v| v.name()).collect::<Vec<_>>();
        assert_eq!(
            names(parse_versions("all").unwrap()),
            ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"]
        );
        assert_eq!(
            names(parse_versions("v8,3,multi-add,v8").unwrap()),
            ["v8", "v3", "v6"]
        );
        assert!(
            parse_versions("v0,v9")
                .unwrap_err()
                .contains("unknown version `v9`")
        );
    }

    fn args() -> BenchArgs {
        BenchArgs {
            dtypes: None,
            sizes: parse_sizes(SIZES_DEFAULT).unwrap(),
            versions: None,
            out: OUT_DEFAULT.into(),
            no_cub: false,
            shapes: None,
            accuracy: false,
            accuracy_sizes: parse_sizes("2^24,2^28,2^32").unwrap(),
        }
    }

    #[test]
    fn options_default_to_every_type_and_version_and_honour_dtype() {
        let timing = Timing {
            warmup: 3,
            repeat: 20,
        };
        let all = BenchOptions::new(&args(), None, Some(256), timing, None);
        assert_eq!(all.dtypes, DType::ALL);
        assert_eq!(all.versions.len(), 9);
        assert!(all.cub);
        assert_eq!(all.runs_per_case(), 10 * 23);
        let one = BenchOptions::new(&args(), Some(DType::U32), Some(256), timing, None);
        assert_eq!(one.dtypes, [DType::U32]);
        let listed = BenchArgs {
            dtypes: Some(DTypeList(vec![DType::F64])),
            no_cub: true,
            ..args()
        };
        let listed = BenchOptions::new(&listed, None, Some(128), timing, None);
        assert_eq!(
            (listed.dtypes.as_slice(), listed.cub),
            ([DType::F64].as_slice(), false)
        );
    }

    #[test]
    fn flags_are_refused_where_they_would_be_ignored() {
        let only = |ids: &'static [&'static str]| move |id: &str| ids.contains(&id);
        let ok =
            |what, given| check_flags(what == "bench", given, OpKind::Sum, BackendChoice::Auto);
        assert!(ok("bench", only(&["sizes", "dtypes", "block", "repeat"])).is_ok());
        assert!(ok("bench", only(&["dtype", "op"])).is_ok());
        assert!(ok("v5", only(&["n", "dtype"])).is_ok());
        assert!(
            ok("v5", only(&["sizes"]))
                .unwrap_err()
                .contains("--sizes is a `bench` option")
        );
        assert!(
            ok("all", only(&["no_cub"]))
                .unwrap_err()
                .contains("--no-cub")
        );
        assert!(ok("bench", only(&["n"])).unwrap_err().contains("--sizes"));
        assert!(
            ok("bench", only(&["schedule_seed"]))
                .unwrap_err()
                .contains("--schedule-seed")
        );
        assert!(
            ok("bench", only(&["dtype", "dtypes"]))
                .unwrap_err()
                .contains("not both")
        );
        let max = check_flags(true, only(&["op"]), OpKind::Max, BackendChoice::Auto);
        assert!(max.unwrap_err().contains("sum only"));
        let sim = check_flags(true, only(&["backend"]), OpKind::Sum, BackendChoice::Sim);
        assert!(sim.unwrap_err().contains("simulator"));
    }
}
