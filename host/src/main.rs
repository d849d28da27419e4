//! `cargo run -p host -- v5` · `… all` · `… list` · `… bench` · `… v8 --input data.npy`: runs
//! versions of the reduction series through the reduce-rs library on the GPU (or the CPU
//! simulator), checks them against a CPU reference and reports their speed.

use anyhow::{Context, Result, bail};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};
use host::bench::{self, BenchArgs, BenchOptions};
use host::element::{DType, OpKind};
use host::file;
use host::input::Pattern;
use host::report::{print_header, print_list, print_outcome, print_row, print_table_header};
use host::run::{BackendChoice, Case, Source, describe, open_backend, run_versions};
use host::size::parse_len;
use host::timing::Timing;
use kernels_gpu::launch::BLOCK_SIZES;
use reduce_rs::{Schedule, Version};
use std::path::PathBuf;
use std::process::ExitCode;

/// The tutorial's problem size: 32M f32.
const GPU_DEFAULT_LEN: usize = 1 << 25;
/// Without `--n`, the simulator reduces 2^20 elements: about a second for the slowest version.
const SIM_DEFAULT_LEN: usize = 1 << 20;

#[derive(Parser)]
#[command(
    name = "reduce-rs",
    version,
    about = "Runs the reduction series (v0–v8) on the GPU or the CPU simulator, checks and times it",
    after_help = "Examples:\n  reduce-rs v5                    v5 on 2^25 f32 on the GPU (or 2^20 on the simulator)\n  reduce-rs all --n 2^20          every version as one table\n  reduce-rs unroll-last-warp --dtype i32 --op max\n  reduce-rs v8 --input data.npy --op argmax\n  reduce-rs list                  versions, techniques, where each comes from\n  reduce-rs bench                 every version × 2^10..2^28 × every type on the GPU (needs a GPU)"
)]
struct Cli {
    /// `list`, `all`, `bench` (the sweep: see Bench options), or a version: v0…v8, 0…8, or its
    /// technique (e.g. unroll-last-warp)
    what: String,
    /// Elements to reduce [default: 2^25 on the GPU, 2^20 on the simulator]; e.g. 2^25, 32M, 1e6, 2^25+7
    #[arg(long, value_parser = parse_len)]
    n: Option<usize>,
    /// Reduce the elements of this file: a .npy (f2, f4, f8, i4, i8, u4, u8; any shape) or raw
    /// elements of --dtype
    #[arg(long)]
    input: Option<PathBuf>,
    /// Threads per block [default: each version's tuned size; `list` shows them]
    #[arg(long, value_parser = parse_block)]
    block: Option<u32>,
    /// Element type: f32, f64, i32, u32, i64, u64, f16, bf16 (v0–v7: the first four)
    #[arg(long, value_parser = parse_dtype, default_value = "f32")]
    dtype: DType,
    /// Operation: sum, min, max, argmin, argmax, mean (v0–v7: the first three)
    #[arg(long, value_parser = parse_op, default_value = "sum")]
    op: OpKind,
    /// Input values (generated inputs)
    #[arg(long, value_enum, default_value_t = Pattern::Random)]
    pattern: Pattern,
    /// Seed of the input generator
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to run: the GPU if there is one (auto), the GPU, or the CPU simulator
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Timed repetitions on the GPU (the median is reported)
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Untimed runs before timing
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Simulator: shuffle the thread schedule from this seed (default: in order)
    #[arg(long)]
    schedule_seed: Option<u64>,
    /// Load the kernels from this directory (written by `cargo xtask build-ptx`) instead of the
    /// PTX embedded in the library
    #[arg(long, env = "REDUCE_PTX_DIR")]
    ptx_dir: Option<PathBuf>,
    #[command(flatten)]
    bench: BenchArgs,
}

fn parse_block(text: &str) -> Result<u32, String> {
    let valid = || format!("block size must be one of {BLOCK_SIZES:?}");
    let block: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number; {}", valid()))?;
    if BLOCK_SIZES.contains(&block) {
        Ok(block)
    } else {
        Err(format!("{block} is not supported; {}", valid()))
    }
}

fn parse_dtype(text: &str) -> Result<DType, String> {
    DType::parse(text).ok_or_else(|| {
        let valid: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        format!("`{text}` is not an element type ({})", valid.join(", "))
    })
}

fn parse_op(text: &str) -> Result<OpKind, String> {
    OpKind::parse(text).ok_or_else(|| {
        let valid: Vec<&str> = OpKind::ALL.iter().map(|o| o.name()).collect();
        format!("`{text}` is not an operation ({})", valid.join(", "))
    })
}

fn main() -> ExitCode {
    // Parsed in two steps so that `run` can tell flags given from defaults (`bench` refuses
    // flags it would ignore).
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches)
        .map_err(|e| e.format(&mut Cli::command()))
        .unwrap_or_else(|e| e.exit());
    match run(&cli, &matches) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `Ok(false)` when a result failed its check.
fn run(cli: &Cli, matches: &ArgMatches) -> Result<bool> {
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    bench::check_flags(&cli.what, given, cli.op, cli.backend).map_err(anyhow::Error::msg)?;
    let timing = Timing {
        warmup: cli.warmup,
        repeat: cli.repeat,
    };
    let what = cli.what.trim().to_ascii_lowercase();
    let selected: Vec<Version> = match what.as_str() {
        "list" => {
            print_list();
            return Ok(true);
        }
        "bench" => {
            let dtype = given("dtype").then_some(cli.dtype);
            let options =
                BenchOptions::new(&cli.bench, dtype, cli.block, timing, cli.ptx_dir.clone());
            return bench::run(&options);
        }
        "all" => Version::all().collect(),
        name => vec![Version::find(name)?],
    };
    let schedule = cli
        .schedule_seed
        .map_or(Schedule::InOrder, |seed| Schedule::Shuffled { seed });
    if cli.schedule_seed.is_some() && cli.backend == BackendChoice::Gpu {
        bail!(
            "--schedule-seed shuffles the simulator's threads; it has no meaning with --backend gpu"
        );
    }
    let (mut reducer, note) = open_backend(cli.backend, cli.ptx_dir.as_deref(), schedule)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let on_gpu = reducer.gpu_backend().is_some();

    let loaded = match &cli.input {
        Some(path) => {
            if given("n") || given("pattern") || given("seed") {
                bail!(
                    "--input reads its elements from the file: leave out --n, --pattern and --seed"
                );
            }
            let limit = match reducer.gpu_backend() {
                Some(gpu) => Some((gpu.memory()?.0, "the GPU's free memory")),
                None => None,
            };
            let dtype = given("dtype").then_some(cli.dtype);
            let loaded = file::load(path, dtype, limit)?;
            if loaded.fortran_order {
                eprintln!(
                    "note: {} is in Fortran (column-major) order: indices count in that order",
                    path.display()
                );
            }
            Some(loaded)
        }
        None => None,
    };
    let (dtype, len, source) = match &loaded {
        Some(loaded) => (
            loaded.dtype,
            loaded.len(),
            Source::File {
                path: cli
                    .input
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            },
        ),
        None => {
            let len = match (cli.n, on_gpu) {
                (Some(n), _) => n,
                (None, true) => GPU_DEFAULT_LEN,
                (None, false) => {
                    eprintln!(
                        "note: the simulator checks every access, so without --n it reduces 2^20 elements, not 2^25"
                    );
                    SIM_DEFAULT_LEN
                }
            };
            (
                cli.dtype,
                len,
                Source::Generated {
                    pattern: cli.pattern,
                    seed: cli.seed,
                },
            )
        }
    };
    let case = Case {
        dtype,
        op: cli.op,
        len,
        block: cli.block,
        max_blocks: None,
        offset: 0,
        source,
    };

    print_header(&describe(&reducer), &case);
    let mut all_pass = true;
    let single = selected.len() == 1;
    if !single {
        print_table_header();
    }
    run_versions(
        &mut reducer,
        &selected,
        &case,
        loaded.as_ref(),
        timing,
        |version, result| {
            all_pass &= result.as_ref().is_ok_and(|o| o.verdict.pass);
            if single {
                match &result {
                    Ok(outcome) => print_outcome(&case, outcome),
                    Err(error) => eprintln!("error: {}: {error:#}", version.name()),
                }
            } else {
                print_row(&case, version, &result.map_err(|e| format!("{e:#}")));
            }
        },
    )
    .context("running the versions")?;
    Ok(all_pass)
}
