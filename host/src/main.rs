//! `cargo run -p host -- v5` · `… all` · `… list` · `… bench` · `… v8 --input data.npy`: runs
//! versions of the reduction series through the reduce-rs library on the GPU (or the CPU
//! simulator), checks them against a CPU reference and reports their speed.
//!
//! A thin layer: [`host::cli`] parses the command line into one command with its own options
//! (and refuses what does not go together), this file runs it.

use anyhow::{Context, Result, bail};
use clap::ArgMatches;
use clap::parser::ValueSource;
use host::bench::{self, BenchArgs, BenchOptions};
use host::cli::{self, Command, ParseError, RunArgs};
use host::file;
use host::report::{
    error_line, format_list, print_header, print_outcome, print_row, print_table_header,
    terminal_width,
};
use host::run::{
    BackendChoice, InputSource, RunCase, check_fits, describe, open_backend, run_versions,
};
use host::shapes::{self, ShapeSpec};
use host::sim_time::{self, NEEDS_YES, Progress, SAY_ESTIMATE};
use host::size::size_label;
use host::timing::Timing;
use host::values::ptx_dir;
use reduce_rs::{Schedule, Version};
use std::process::ExitCode;

/// The tutorial's problem size: 32M f32.
const GPU_DEFAULT_LEN: usize = 1 << 25;
/// Without `--n`, the simulator reduces 2^20 elements: about a second for the slowest version.
const SIM_DEFAULT_LEN: usize = 1 << 20;

/// Flags that mean nothing on the simulator (clap id, flag).
const GPU_ONLY: [(&str, &str); 3] = [
    ("repeat", "--repeat"),
    ("warmup", "--warmup"),
    ("ptx_dir", "--ptx-dir"),
];

fn main() -> ExitCode {
    // The matches tell flags given from defaults (the simulator names those it ignores).
    let (cli, matches) = match cli::parse(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(ParseError::Clap(error)) => error.exit(),
        Err(refused @ ParseError::Refused(_)) => {
            eprintln!("{refused}");
            return ExitCode::from(2);
        }
    };
    let result = match &cli.command {
        Command::Run(args) => match matches.subcommand_matches("run") {
            Some(matches) => run(args, matches),
            None => Err(anyhow::anyhow!("no matches for `run`")),
        },
        Command::List => {
            print!("{}", format_list(terminal_width()));
            Ok(true)
        }
        Command::Bench(args) => run_bench(args),
        Command::Help { command } => cli::help_text(command.as_deref())
            .map(|text| {
                print!("{text}");
                true
            })
            .map_err(anyhow::Error::msg),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("error: {}", error_line(&error));
            ExitCode::from(2)
        }
    }
}

/// `reduce-rs bench …`; `Ok(false)` when a result was wrong or part of the bench could not run.
fn run_bench(args: &BenchArgs) -> Result<bool> {
    let options = BenchOptions::new(args, ptx_dir(args.ptx_dir.as_ref()));
    bench::run(&options)
}

/// `"--a"`, `"--a and --b"`, `"--a, --b and --c"`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// `reduce-rs run <VERSION|all> …`; `Ok(false)` when a result failed its check.
fn run(cli: &RunArgs, matches: &ArgMatches) -> Result<bool> {
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    let timing = cli.timing.timing();
    let ptx_dir = ptx_dir(cli.ptx_dir.as_ref());
    let selected = cli.target.versions();
    let schedule = cli
        .schedule_seed
        .map_or(Schedule::InOrder, |seed| Schedule::Shuffled { seed });
    if let Some(count) = cli.devices {
        if selected != [Version::fastest()] {
            bail!(
                "--devices runs the library's group of devices, which reduces with v8: use `reduce-rs v8 --devices …`"
            );
        }
        let dtype = given("dtype").then_some(cli.dtype);
        return run_devices(cli, count, dtype, timing, schedule);
    }
    if cli.schedule_seed.is_some() && cli.backend == BackendChoice::Gpu {
        bail!(
            "--schedule-seed shuffles the simulator's threads; it has no meaning with --backend gpu"
        );
    }
    let (mut reducer, no_gpu) = open_backend(cli.backend, ptx_dir.as_deref(), schedule)?;
    reducer.set_reproducible(cli.reproducible);
    let on_gpu = reducer.gpu_backend().is_some();
    if on_gpu && cli.schedule_seed.is_some() {
        bail!(
            "--schedule-seed shuffles the simulator's threads, and this run is on the GPU (add --backend sim)"
        );
    }
    let ignored: Vec<&str> = if on_gpu {
        given("yes").then_some("--yes").into_iter().collect()
    } else {
        GPU_ONLY
            .iter()
            .filter(|(id, _)| given(id))
            .map(|(_, flag)| *flag)
            .collect()
    };
    if !ignored.is_empty() {
        let why = if on_gpu {
            "it confirms long simulator runs"
        } else {
            "the simulator neither times runs nor loads PTX"
        };
        let verb = if ignored.len() == 1 { "is" } else { "are" };
        eprintln!("note: {} {verb} ignored: {why}", and_list(&ignored));
    }

    let loaded = match &cli.input {
        Some(path) => {
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
    // On the simulator without --n: the smaller default, said in the same note as the reason
    // for the simulator, if there is one.
    let sim_default = loaded.is_none() && cli.n.is_none() && !on_gpu;
    let why_smaller =
        "which checks every access, so without --n it reduces 2^20 elements, not 2^25";
    match (&no_gpu, sim_default) {
        (Some(why), true) => eprintln!("note: {why}: running on the CPU simulator, {why_smaller}"),
        (Some(why), false) => eprintln!("note: {why}: running on the CPU simulator"),
        (None, true) => eprintln!("note: the simulator {}", &why_smaller["which ".len()..]),
        (None, false) => {}
    }
    let (dtype, len, source) = run_input(cli, loaded.as_ref(), on_gpu);
    let case = RunCase {
        dtype,
        op: cli.op,
        len,
        block: cli.block,
        max_blocks: None,
        offset: 0,
        source,
    };
    check_fits(&reducer, &case)?;

    if let Some(rows) = cli.rows {
        if selected != [Version::fastest()] {
            bail!(
                "--rows runs the library's row and column kernels, which build on v8: use `reduce-rs v8 --rows {rows} …`"
            );
        }
        let spec = ShapeSpec::matrix(case.len, rows, cli.columns)?;
        print_header(&describe(&reducer), &case);
        if cli.reproducible {
            println!("{}", reproducible_line(case.dtype, case.op));
        }
        return shapes::run_case(&reducer, &case, loaded.as_ref(), &spec, timing);
    }

    // Versions that do not support the type and operation fail at once; the rest are timed.
    let runnable: Vec<Version> = selected
        .iter()
        .copied()
        .filter(|v| v.supports(case.dtype, case.op))
        .collect();
    if !on_gpu {
        check_simulator_time(&runnable, &case, cli.yes, cli.input.is_some())?;
    }

    print_header(&describe(&reducer), &case);
    if cli.reproducible {
        println!("{}", reproducible_line(case.dtype, case.op));
    }
    let mut all_pass = true;
    let single = selected.len() == 1;
    if !single {
        print_table_header();
    }
    let progress = Progress::new(&runnable, case.len, !on_gpu);
    run_versions(
        &mut reducer,
        &selected,
        &case,
        loaded.as_ref(),
        timing,
        |step| progress.started(step),
        |version, result| {
            all_pass &= result.as_ref().is_ok_and(|o| o.verdict.pass);
            if single {
                progress.clear();
                match &result {
                    Ok(outcome) => print_outcome(&case, outcome),
                    Err(error) => eprintln!("error: {}: {error:#}", version.name()),
                }
            } else {
                let result = result.map_err(|e| format!("{e:#}"));
                progress.finished(|| print_row(&case, version, &result));
            }
        },
    )
    .context("running the versions")?;
    progress.clear();
    Ok(all_pass)
}

/// What `--reproducible` changes for this type and operation.
/// What `run` reduces: the file's elements, or `--n` generated ones (2^25 on a GPU, 2^20 on
/// the simulator by default): the element type, the length and where the values come from.
fn run_input(
    cli: &RunArgs,
    loaded: Option<&file::Loaded>,
    on_gpu: bool,
) -> (reduce_rs::DType, usize, InputSource) {
    match loaded {
        Some(loaded) => (
            loaded.dtype,
            loaded.len(),
            InputSource::File {
                path: cli
                    .input
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            },
        ),
        None => (
            cli.dtype,
            cli.n.unwrap_or(if on_gpu {
                GPU_DEFAULT_LEN
            } else {
                SIM_DEFAULT_LEN
            }),
            InputSource::Generated {
                pattern: cli.pattern,
                seed: cli.seed,
            },
        ),
    }
}

fn reproducible_line(dtype: reduce_rs::DType, op: reduce_rs::OpKind) -> String {
    match reduce_rs::plan::reproducible::kernel_for(dtype, op) {
        Some(kernel) => format!(
            "reproducible: {dtype} {op} runs {kernel} (reproducible_rows_…/columns_… for --rows) instead of the version's kernel: the same bits on any GPU, grid, block size and split of the input, and each row's the bits of that row alone"
        ),
        None => format!(
            "reproducible: {dtype} {op} is order-independent already: the version's kernel runs unchanged"
        ),
    }
}

/// Says how long a simulator run will take when that is over a minute, and refuses runs over
/// ten minutes without `--yes`: an unnoticed 2^31 would otherwise run for half an hour.
fn check_simulator_time(versions: &[Version], case: &RunCase, yes: bool, file: bool) -> Result<()> {
    let estimate = sim_time::estimate(versions, case.len);
    if estimate <= SAY_ESTIMATE {
        return Ok(());
    }
    let refuse = estimate > NEEDS_YES && !yes;
    // The first of the slowest versions, whose rate the message quotes.
    let slowest =
        versions
            .iter()
            .copied()
            .fold(None, |slowest: Option<Version>, v| match slowest {
                Some(s) if sim_time::estimate(&[s], 1) >= sim_time::estimate(&[v], 1) => Some(s),
                _ => Some(v),
            });
    let what = format!(
        "{} on {} elements {} the simulator about {}: it runs every GPU thread on the CPU{}",
        match versions {
            [one] => one.name().to_string(),
            _ => format!("{} versions", versions.len()),
        },
        size_label(case.len),
        if refuse { "would take" } else { "will take" },
        sim_time::human(estimate),
        slowest.map_or(String::new(), |v| format!(
            ", {} at about {}",
            v.name(),
            sim_time::rate_text(v)
        ))
    );
    if refuse {
        let smaller = match (file, sim_time::largest_under(versions, SAY_ESTIMATE)) {
            (false, Some(n)) => format!(
                ", or choose a smaller --n (2^{} takes about {})",
                n.ilog2(),
                sim_time::human(sim_time::estimate(versions, n))
            ),
            _ => String::new(),
        };
        bail!("{what}. Add --yes to run it anyway{smaller}");
    }
    eprintln!("note: {what}");
    Ok(())
}

/// `reduce-rs v8 --devices all|N`: the input split evenly over the devices, reduced by the
/// library's group, checked and (on GPUs) timed.
fn run_devices(
    cli: &RunArgs,
    count: host::devices::DeviceCount,
    file_dtype: Option<reduce_rs::DType>,
    timing: Timing,
    schedule: Schedule,
) -> Result<bool> {
    let (devices, no_gpu) = host::devices::open_devices(cli.backend, count, schedule)?;
    let devices = devices.with_reproducible(cli.reproducible);
    if let Some(why) = &no_gpu {
        eprintln!("note: {why}: running on simulated devices");
    }
    let on_gpu = !devices.is_simulated();
    let loaded = match &cli.input {
        Some(path) => Some(file::load(path, file_dtype, None)?),
        None => None,
    };
    let (dtype, len, source) = run_input(cli, loaded.as_ref(), on_gpu);
    let case = RunCase {
        dtype,
        op: cli.op,
        len,
        block: None,
        max_blocks: None,
        offset: 0,
        source,
    };
    let backend = if on_gpu {
        let reducer = devices.reducer(0);
        format!("{} × {}", devices.len(), describe(reducer))
    } else {
        format!(
            "{} simulated devices, each {}",
            devices.len(),
            describe(devices.reducer(0))
        )
    };
    print_header(&backend, &case);
    if cli.reproducible {
        println!("{}", reproducible_line(case.dtype, case.op));
    }
    println!("{}", host::devices::split_line(&devices, len));
    host::with_dtype_and_op!(
        case.dtype,
        case.op,
        devices_typed(&devices, &case, loaded.as_ref(), timing)
    )
}

fn devices_typed<T: host::element::HostElement, O: host::reference::Checked<T> + Default>(
    devices: &reduce_rs::devices::Devices,
    case: &RunCase,
    loaded: Option<&file::Loaded>,
    timing: Timing,
) -> Result<bool> {
    let input: Vec<T> = match (&case.source, loaded) {
        (InputSource::Generated { pattern, seed }, _) => {
            host::input::generate(*pattern, case.len, *seed)
        }
        (InputSource::File { .. }, Some(loaded)) => loaded.elements(),
        (InputSource::File { path }, None) => bail!("{path} was not loaded"),
    };
    let expected = O::reference(&input);
    let run = host::devices::reduce_split::<T, O>(devices, &input, &expected, timing)?;
    let verdict = &run.verdict;
    println!(
        "result   {} (expected {}): {}{}",
        verdict.got,
        verdict.expected,
        if verdict.pass { "PASS" } else { "FAIL" },
        if verdict.tolerance == 0.0 {
            " (exact)".to_string()
        } else {
            format!(
                " (|error| {:.3e} within {:.3e})",
                verdict.abs_error, verdict.tolerance
            )
        }
    );
    println!(
        "devices  {}",
        if run.same_everywhere {
            "the same bits on every device"
        } else {
            "NOT the same bits on every device"
        }
    );
    // The reproducible mode's promise: the bits of one device's sum of the whole input.
    let mut same_as_one = true;
    if devices.reducer(0).reproducible()
        && O::KIND == reduce_rs::OpKind::Sum
        && case.dtype.is_float()
    {
        let pieces = reduce_rs::devices::even_split(input.len(), devices.len());
        let shards: Vec<&[T]> = pieces.iter().map(|r| &input[r.clone()]).collect();
        let split = format!("{:?}", devices.reduce(O::default(), &shards)?);
        let one = format!("{:?}", devices.reducer(0).reduce(O::default(), &input)?);
        same_as_one = split == one;
        println!(
            "bits     {}",
            if same_as_one {
                format!(
                    "{split}: the same bits as one device's reproducible sum of the whole input"
                )
            } else {
                format!(
                    "{split} on {} devices, but {one} on one: NOT reproducible",
                    devices.len()
                )
            }
        );
    }
    if let Some((slowest, fastest)) = run.ms {
        println!(
            "gpu time {:.1} µs (slowest GPU; fastest {:.1} µs): median of {}, CUDA events on every GPU's stream behind a pre-roll, after {} warm-up runs",
            slowest * 1000.0,
            fastest * 1000.0,
            timing.repeat,
            timing.warmup
        );
    }
    Ok(verdict.pass && run.same_everywhere && same_as_one)
}
