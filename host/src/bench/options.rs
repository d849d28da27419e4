//! `bench`'s command line: its own flags (the options its modes ignore are declared as
//! conflicts), the list parsers (`--dtypes`, `--sizes`, `--versions`) and [`BenchOptions`],
//! everything a bench needs with the defaults applied.

use super::shapes::cases::{ShapesArg, parse_shapes};
use crate::element::DType;
use crate::size::{SizeList, parse_sizes};
use crate::timing::Timing;
use crate::values::{TimingArgs, parse_block};
use reduce_rs::Version;
use std::path::PathBuf;

pub const SIZES_DEFAULT: &str = "2^10..2^28";
pub const OUT_DEFAULT: &str = "bench-out";
/// `--devices`' and `--ranks`' sizes per GPU when `--sizes` is not given: a launch-bound, a
/// bandwidth-bound and a large input (README's several-GPU table).
pub const DEVICES_SIZES_DEFAULT: [usize; 3] = [1 << 24, 1 << 28, 1 << 30];
/// `--ranks --simulate`'s sizes per rank when `--sizes` is not given: the simulator runs every
/// thread of every block, so sizes the GPU reads in microseconds take it seconds.
pub const SIMULATED_SIZES_DEFAULT: [usize; 2] = [1 << 10, (1 << 14) + 3];
/// The most ranks `--simulate` starts (one thread each).
pub const MAX_SIMULATED_RANKS: usize = 64;

/// `--simulate`: a count of ranks, 1 to [`MAX_SIMULATED_RANKS`].
pub fn parse_simulated(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n @ 1..=MAX_SIMULATED_RANKS) => Ok(n),
        _ => Err(format!(
            "`{text}` is not a count of simulated ranks (1 to {MAX_SIMULATED_RANKS})"
        )),
    }
}

/// `bench`'s options. Its modes (the versions' sweep, `--shapes`, `--accuracy`, `--devices`)
/// declare the options they ignore as conflicts, so clap refuses them.
// The fields' doc comments are `--help`'s text, written for the terminal, not for rustdoc.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(clap::Args, Clone, Debug)]
pub struct BenchArgs {
    /// Element types: a comma list or `all` (= f32,f64,i32,u32) [default: all]
    #[arg(long, visible_alias = "dtype", value_parser = parse_dtypes)]
    pub dtypes: Option<DTypeList>,
    /// Element counts: a comma list (2^20,1e6,32M) and/or ranges a..b[:s] of powers of two with
    /// exponent step s (default 2: 2^10..2^28 is every power of 4) [default: 2^10..2^28; with
    /// --devices or --ranks 2^24,2^28,2^30 per GPU; with --simulate 2^10,2^14+3]
    #[arg(long, value_parser = parse_sizes, allow_negative_numbers = true)]
    pub sizes: Option<SizeList>,
    /// Versions in the order of the table (the speedup column compares each with the previous):
    /// a comma list (v0,v5,multi-add) or `all`
    #[arg(long, value_parser = parse_versions)]
    pub versions: Option<VersionList>,
    /// Threads per block [default: each version's tuned size; `reduce-rs list` shows them]
    #[arg(long, value_parser = parse_block, allow_negative_numbers = true)]
    pub block: Option<u32>,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Directory for bench.csv, bench.json and bench_<dtype>.svg
    #[arg(long, default_value = OUT_DEFAULT)]
    pub out: PathBuf,
    /// Do not build and time CUB and the CUDA C++ versions (bench/cuda), even where nvcc is
    /// installed
    #[arg(long)]
    pub no_cub: bool,
    /// Do not time PyTorch (bench/torch: --shapes and --devices), even where python3 has torch
    #[arg(long)]
    pub no_torch: bool,
    /// The folder of the peers' sources (the repository's bench/: cuda/*.cu, torch/*.py)
    /// [default: $REDUCE_BENCH_DIR, else bench/ beside the program, in the current directory,
    /// or where the program was built]
    #[arg(long, value_name = "DIR")]
    pub peers_dir: Option<PathBuf>,
    /// Load the kernels from this directory (written by `cargo xtask build-ptx`) instead of the
    /// PTX embedded in the library [default: $REDUCE_PTX_DIR]
    #[arg(long)]
    pub ptx_dir: Option<PathBuf>,
    /// Instead of the versions: reductions of a shape and the library's operators, beside
    /// PyTorch and CUB: `table` (one case per class of shape: rows, columns, vocabulary
    /// argmax, whole arrays, segments), `others` (their neighbours: columns 2 to 16384 wide,
    /// few rows, short segments, a bf16 argmax), `sweep` (f32 row sums against row length, with a
    /// chart) and/or cases dtype:op:kind:size (f32:sum:rows:8192x8192,
    /// bf16:argmax:rows:64x128256, f32:argmax:whole:2^28, f32:sum:segments:100000x300)
    #[arg(long, value_parser = parse_shapes, conflicts_with_all = ["versions", "dtypes", "sizes", "block"])]
    pub shapes: Option<ShapesArg>,
    /// With --shapes: also time the chosen kernel (and the reproducible mode's) with each of
    /// these splits — bands of rows for columns, blocks for narrow columns read flat, blocks
    /// per row for split rows, lanes per row (a power of two up to 32, on the planner's grid
    /// for them) for a warp per row, at most this many blocks for whole arrays
    /// (v8 and the reproducible sum); a block per row has no free split — to measure which the
    /// shape wants (the planner's rules in `reduce/src/plan/`), e.g. 16,32,64,128
    #[arg(long, value_parser = parse_splits, requires = "shapes")]
    pub splits: Option<SplitList>,
    /// Instead of the timings: the relative error of every version's f32 sum, and of the
    /// reproducible sum, against the exact sum of uniform [-1, 1) input at --accuracy-sizes
    #[arg(long, conflicts_with_all = ["dtypes", "sizes", "shapes", "repeat", "warmup", "no_cub", "no_torch", "peers_dir"])]
    pub accuracy: bool,
    /// With --accuracy: the sizes it measures (2^32 f32 needs 16 GiB of GPU and host memory)
    #[arg(long, default_value = "2^24,2^28,2^32", value_parser = parse_sizes, allow_negative_numbers = true, requires = "accuracy")]
    pub accuracy_sizes: SizeList,
    /// Instead of the versions: the f32 sum of --sizes elements per GPU over this many GPUs
    /// (`all`: every GPU), one process driving them, beside PyTorch + NCCL
    #[arg(long, value_parser = crate::devices::parse_devices, conflicts_with_all = ["shapes", "versions", "dtypes", "block", "ptx_dir", "no_cub", "accuracy"])]
    pub devices: Option<crate::devices::DeviceCount>,
    /// Instead of the versions: this process is one rank of a world of processes, one per GPU,
    /// started as torchrun starts them (RANK, WORLD_SIZE, LOCAL_RANK and REDUCE_NCCL_ID_FILE):
    /// the f32 sum and argmax of --sizes elements per GPU; rank 0 prints the table and writes
    /// ranks.csv
    #[arg(long, conflicts_with_all = ["shapes", "versions", "dtypes", "block", "ptx_dir", "no_cub", "no_torch", "peers_dir", "accuracy", "devices"])]
    pub ranks: bool,
    /// With --ranks: N simulated ranks, threads of this process, instead of the processes (no
    /// GPU needed): every call run once and checked, nothing timed
    #[arg(long, value_name = "N", value_parser = parse_simulated, requires = "ranks", conflicts_with_all = ["repeat", "warmup"])]
    pub simulate: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DTypeList(pub Vec<DType>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitList(pub Vec<usize>);

/// A comma list of splits, each from 1 to 65536 (sorted, repeats dropped).
pub fn parse_splits(text: &str) -> Result<SplitList, String> {
    let mut splits = text
        .split(',')
        .map(|item| match item.trim().parse::<usize>() {
            Ok(split @ 1..=65536) => Ok(split),
            _ => Err(format!(
                "`{}` is not a split (bands, blocks per row, lanes per row or blocks of a grid: 1 to 65536)",
                item.trim()
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    splits.sort_unstable();
    splits.dedup();
    Ok(SplitList(splits))
}

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

/// What a `bench` measures.
#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    /// The versions × sizes × types sweep.
    Sweep,
    /// `--shapes`: the shape cases.
    Shapes(ShapesArg),
    /// `--accuracy`: the errors at these sizes.
    Accuracy(Vec<usize>),
    /// `--devices`: the several-GPU sweep (`sizes` per GPU), one process.
    Devices(crate::devices::DeviceCount),
    /// `--ranks`: the several-GPU sweep, this process one rank of a world (`simulate`: that
    /// many simulated ranks in threads, untimed).
    Ranks { simulate: Option<usize> },
}

/// Everything a bench needs, with the defaults applied.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub mode: Mode,
    pub dtypes: Vec<DType>,
    pub sizes: Vec<usize>,
    pub versions: Vec<Version>,
    /// `None`: each version's tuned block size.
    pub block: Option<u32>,
    pub timing: Timing,
    pub out: PathBuf,
    /// Time CUB and the CUDA C++ versions (`--no-cub`: not).
    pub cub: bool,
    /// Time PyTorch (`--no-torch`: not).
    pub torch: bool,
    pub ptx_dir: Option<PathBuf>,
    /// `--peers-dir` (the environment and the defaults are `peers::locate`'s).
    pub peers_dir: Option<PathBuf>,
    /// `--splits` (with `--shapes`): the chosen kernel also timed with each of these splits.
    pub splits: Vec<usize>,
}

impl BenchOptions {
    /// The options of `args`; `ptx_dir` is `--ptx-dir` or its environment variable.
    pub fn new(args: &BenchArgs, ptx_dir: Option<PathBuf>) -> BenchOptions {
        let mode = match (&args.shapes, args.accuracy, args.devices) {
            (Some(shapes), _, _) => Mode::Shapes(shapes.clone()),
            (None, true, _) => Mode::Accuracy(args.accuracy_sizes.0.clone()),
            (None, false, Some(count)) => Mode::Devices(count),
            (None, false, None) if args.ranks => Mode::Ranks {
                simulate: args.simulate,
            },
            (None, false, None) => Mode::Sweep,
        };
        let sizes = match (&args.sizes, &mode) {
            (Some(list), _) => list.0.clone(),
            (None, Mode::Ranks { simulate: Some(_) }) => SIMULATED_SIZES_DEFAULT.to_vec(),
            (None, Mode::Devices(_) | Mode::Ranks { .. }) => DEVICES_SIZES_DEFAULT.to_vec(),
            (None, _) => parse_sizes(SIZES_DEFAULT).map(|l| l.0).unwrap_or_default(),
        };
        BenchOptions {
            mode,
            dtypes: args
                .dtypes
                .as_ref()
                .map_or_else(|| DType::ALL.to_vec(), |l| l.0.clone()),
            sizes,
            versions: args
                .versions
                .as_ref()
                .map_or_else(|| Version::all().collect(), |v| v.0.clone()),
            block: args.block,
            timing: args.timing.timing(),
            out: args.out.clone(),
            cub: !args.no_cub,
            torch: !args.no_torch,
            ptx_dir,
            peers_dir: args.peers_dir.clone(),
            splits: args.splits.as_ref().map_or_else(Vec::new, |s| s.0.clone()),
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

    fn args(line: &[&str]) -> BenchArgs {
        let (cli, _) =
            crate::cli::parse(["reduce-rs", "bench"].iter().chain(line)).expect("a bench line");
        match cli.command {
            crate::cli::Command::Bench(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_default_to_every_type_and_version_and_honour_dtype() {
        let all = BenchOptions::new(&args(&[]), None);
        assert_eq!(all.mode, Mode::Sweep);
        assert_eq!(all.dtypes, DType::ALL);
        assert_eq!(all.versions.len(), 9);
        assert_eq!(all.sizes, parse_sizes(SIZES_DEFAULT).unwrap().0);
        assert!(all.cub);
        assert_eq!(all.runs_per_case(), 10 * 23);
        let one = BenchOptions::new(&args(&["--dtype", "u32"]), None);
        assert_eq!(one.dtypes, [DType::U32]);
        let listed = BenchOptions::new(
            &args(&["--dtypes", "f64", "--no-cub", "--block", "128"]),
            None,
        );
        assert_eq!(
            (listed.dtypes.as_slice(), listed.cub, listed.block),
            ([DType::F64].as_slice(), false, Some(128))
        );
    }

    #[test]
    fn each_mode_takes_its_own_defaults() {
        let devices = BenchOptions::new(&args(&["--devices", "2"]), None);
        assert_eq!(
            devices.mode,
            Mode::Devices(crate::devices::DeviceCount::Count(2))
        );
        assert_eq!(devices.sizes, DEVICES_SIZES_DEFAULT);
        let sized = BenchOptions::new(&args(&["--devices", "all", "--sizes", "2^20"]), None);
        assert_eq!(sized.sizes, [1 << 20]);
        let ranks = BenchOptions::new(&args(&["--ranks", "--repeat", "5"]), None);
        assert_eq!(ranks.mode, Mode::Ranks { simulate: None });
        assert_eq!(ranks.sizes, DEVICES_SIZES_DEFAULT);
        assert_eq!(ranks.timing.repeat, 5);
        let simulated = BenchOptions::new(&args(&["--ranks", "--simulate", "3"]), None);
        assert_eq!(simulated.mode, Mode::Ranks { simulate: Some(3) });
        assert_eq!(simulated.sizes, SIMULATED_SIZES_DEFAULT);
        assert!(parse_simulated("0").is_err() && parse_simulated("65").is_err());
        let accuracy = BenchOptions::new(&args(&["--accuracy"]), None);
        assert_eq!(
            accuracy.mode,
            Mode::Accuracy(vec![1 << 24, 1 << 28, 1 << 32])
        );
        let shapes = BenchOptions::new(&args(&["--shapes", "sweep"]), None);
        assert!(matches!(shapes.mode, Mode::Shapes(ref s) if s.sweep));
    }
}
