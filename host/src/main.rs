//! `cargo run -p host -- v5` · `… all` · `… list` · `… bench`: runs reduce versions on the GPU (or
//! the CPU simulator), checks them against a CPU reference and reports their speed.

use anyhow::{Result, bail};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};
use host::bench::{self, BenchArgs, BenchOptions};
use host::element::{DType, OpKind};
use host::gpu::Timing;
use host::input::Pattern;
use host::report::{print_header, print_list, print_outcome, print_table};
use host::run::{Backend, BackendChoice, Case, check_fits, run_versions};
use host::sim::SIM_DEFAULT_LEN;
use host::size::parse_len;
use host::versions::{self, VERSIONS, Version};
use kernels_gpu::launch::BLOCK_SIZES;
use kernels_gpu::simulate::Schedule;
use std::path::PathBuf;
use std::process::ExitCode;

/// The seeds' problem size: 32M f32.
const GPU_DEFAULT_LEN: usize = 1 << 25;

#[derive(Parser)]
#[command(
    name = "host",
    about = "Runs the reduce series (v0–v8) on the GPU or the CPU simulator, checks and times it",
    after_help = "Examples:\n  host v5                     v5 on 2^25 f32 on the GPU (or the simulator)\n  host all --n 2^20           every version as one table\n  host unroll-last-warp --dtype i32 --op max\n  host list                   versions, techniques and the seeds' numbering
  host bench                  every version × 2^10..2^28 × every type on the GPU, with CUB where
                              nvcc is installed: table, and CSV/JSON/SVG in bench-out/"
)]
struct Cli {
    /// `list`, `all`, `bench` (the sweep: see Bench options), or a version: v0…v8, 0…8, or its
    /// technique (e.g. unroll-last-warp)
    what: String,
    /// Elements to reduce [default: 2^25 on the GPU, 2^20 on the simulator]; e.g. 2^25, 32M, 1e6, 2^25+7
    #[arg(long, value_parser = parse_len)]
    n: Option<usize>,
    /// Threads per block [default: each version's tuned size, 256 for most; `list` shows them]
    #[arg(long, value_parser = parse_block)]
    block: Option<u32>,
    #[arg(long, value_enum, default_value_t = DType::F32)]
    dtype: DType,
    #[arg(long, value_enum, default_value_t = OpKind::Sum)]
    op: OpKind,
    /// Input values
    #[arg(long, value_enum, default_value_t = Pattern::Random)]
    pattern: Pattern,
    /// Seed of the input generator
    #[arg(long, default_value_t = 1)]
    seed: u64,
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
    /// Directory with kernels_gpu.sm_XY.ptx [default: target/ptx]
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
    let selected: Vec<&'static Version> = match cli.what.as_str() {
        "list" => {
            print_list();
            return Ok(true);
        }
        "bench" => {
            let timing = Timing {
                warmup: cli.warmup,
                repeat: cli.repeat,
            };
            let dtype = given("dtype").then_some(cli.dtype);
            let options =
                BenchOptions::new(&cli.bench, dtype, cli.block, timing, cli.ptx_dir.clone());
            return bench::run(&options);
        }
        "all" => VERSIONS.iter().collect(),
        name => vec![versions::find(name)?],
    };
    let schedule = cli
        .schedule_seed
        .map_or(Schedule::InOrder, |seed| Schedule::Shuffled { seed });
    if cli.schedule_seed.is_some() && cli.backend == BackendChoice::Gpu {
        bail!(
            "--schedule-seed shuffles the simulator's threads; it has no meaning with --backend gpu"
        );
    }
    let (backend, note) = Backend::select(cli.backend, cli.ptx_dir.as_deref(), schedule)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let len = match (cli.n, backend.is_gpu()) {
        (Some(n), _) => n,
        (None, true) => GPU_DEFAULT_LEN,
        (None, false) => {
            eprintln!(
                "note: the simulator checks every access, so without --n it reduces 2^20 elements (about a second per version), not 2^25"
            );
            SIM_DEFAULT_LEN
        }
    };
    let case = Case {
        dtype: cli.dtype,
        op: cli.op,
        len,
        block: cli.block,
        pattern: cli.pattern,
        seed: cli.seed,
    };
    let timing = Timing {
        warmup: cli.warmup,
        repeat: cli.repeat,
    };

    check_fits(&backend, &case)?;
    print_header(&backend, &case);
    let results = run_versions(&backend, &selected, &case, timing)?;
    let mut all_pass = true;
    if selected.len() == 1 {
        let outcome = results
            .into_iter()
            .next()
            .expect("one version, one result")?;
        print_outcome(&case, &outcome);
        all_pass = outcome.verdict.pass;
    } else {
        let rows: Vec<(String, Result<_, String>)> = selected
            .iter()
            .zip(results)
            .map(|(v, r)| {
                all_pass &= r.as_ref().is_ok_and(|o| o.verdict.pass);
                (v.name(), r.map_err(|e| format!("{e:#}")))
            })
            .collect();
        print_table(&case, &rows);
    }
    Ok(all_pass)
}
