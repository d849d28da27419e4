//! The command line of `reduce-rs`: its commands, each with its own options, and the parsers of
//! their values, kept in the library so that tests can parse command lines without running the
//! program.
//!
//! `run` (one version, or `all`), `bench` and `list` are clap subcommands: a flag of one is not
//! an option of another, and flags that cannot go together are declared as conflicts, so clap
//! refuses them before anything runs. A version (or `all`) as the first word is `run`:
//! `reduce-rs v5 --n 2^20` is `reduce-rs run v5 --n 2^20` ([`normalize`]). [`parse`] turns
//! clap's refusals of a flag given to the wrong command, or of two flags that do not go
//! together, into one line that says why.
//!
//! One case rule holds for every word it reads (commands, versions, types, operations,
//! patterns, backends, size suffixes): any case. Numbers may not be negative, and say so:
//! without `allow_negative_numbers` clap would read `--n -1` as an unknown flag `-1` and
//! suggest `-- -1`.

mod run;

use crate::bench::BenchArgs;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use run::COMMANDS;
use std::ffi::OsString;

pub use run::{RunArgs, Target, parse_target};

const USAGE: &str = "reduce-rs [run] <VERSION|all> [OPTIONS]
       reduce-rs bench [OPTIONS]
       reduce-rs list
       reduce-rs help [COMMAND]";

const EXAMPLES: &str = "Examples:
  reduce-rs v5                    v5 on 2^25 f32 on the GPU (or 2^20 on the simulator)
  reduce-rs all --n 2^20          every version as one table
  reduce-rs unroll-last-warp --dtype i32 --op max
  reduce-rs v8 --input data.npy --op argmax
  reduce-rs v8 --devices all --n 2^30   split over every GPU, one NCCL collective
  reduce-rs list                  versions, techniques, where each comes from
  reduce-rs bench                 every version × 2^10..2^28 × every type on the GPU (needs a GPU)
  reduce-rs help bench            the bench's options

What the output says: docs/reading-the-output.md";

#[derive(Parser, Debug)]
#[command(
    name = "reduce-rs",
    version,
    propagate_version = true,
    about = "Runs the reduction series (v0–v8) on the GPU or the CPU simulator, checks and times it",
    long_about = "Runs the reduction series (v0–v8) on the GPU or the CPU simulator, checks and times it.\n\nA version (or `all`) as the first word runs it: `reduce-rs v5 …` is `reduce-rs run v5 …`.",
    override_usage = USAGE,
    arg_required_else_help = true,
    disable_help_subcommand = true,
    subcommand_value_name = "COMMAND",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a version (v0…v8) or all of them, check the result against the CPU and time it
    /// (`reduce-rs v5 …` is `reduce-rs run v5 …`)
    #[command(
        display_name = "reduce-rs",
        after_help = "A version: v0…v8, 0…8, or its technique (e.g. unroll-last-warp); `all`: every version as one table."
    )]
    Run(RunArgs),
    /// The versions: technique, where each comes from, tuned block sizes
    #[command(display_name = "reduce-rs")]
    List,
    /// Time the versions on the GPU beside the read-only kernel, CUB and PyTorch (or --shapes,
    /// --accuracy, --devices)
    #[command(display_name = "reduce-rs")]
    Bench(BenchArgs),
    /// This help and every option of `run`, or the help of a command (`help bench`)
    #[command(display_name = "reduce-rs")]
    Help {
        /// run, bench, list (or a version: run's help)
        command: Option<String>,
    },
}

/// The command line with a version (or `all`) as the first word made `run`'s, and the first
/// word in lower case when it names a command: `reduce-rs V5 --n 1K` is
/// `reduce-rs run V5 --n 1K`, `reduce-rs LIST` is `reduce-rs list`. Flags first
/// (`--help`, `--version`) and no word at all are left to clap.
pub fn normalize(args: impl IntoIterator<Item = impl Into<OsString>>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let Some(first) = args.get(1).and_then(|a| a.to_str()).map(str::to_string) else {
        return args;
    };
    if first.starts_with('-') {
        return args;
    }
    let lower = first.trim().to_ascii_lowercase();
    if COMMANDS.contains(&lower.as_str()) {
        args[1] = lower.into();
    } else {
        args.insert(1, "run".into());
    }
    args
}

/// Why a command line was refused.
#[derive(Debug)]
pub enum ParseError {
    /// clap's own answer (also `--help` and `--version`): `exit()` prints it.
    Clap(clap::Error),
    /// A flag given to a command that has no such option, or two flags that do not go
    /// together: one line that says why.
    Refused(String),
}

impl ParseError {
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            ParseError::Clap(e) => Some(e.kind()),
            ParseError::Refused(_) => None,
        }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Clap(e) => write!(f, "{e}"),
            ParseError::Refused(line) => write!(f, "error: {line}"),
        }
    }
}

/// Parses a command line (program name first); the matches let callers tell flags given from
/// defaults.
pub fn parse(
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> Result<(Cli, ArgMatches), ParseError> {
    let args = normalize(args);
    let command = args
        .get(1)
        .and_then(|a| a.to_str())
        .unwrap_or("")
        .to_string();
    let matches = Cli::command().try_get_matches_from(&args).map_err(|e| {
        refusal(&command, &args, &e).map_or(ParseError::Clap(e), ParseError::Refused)
    })?;
    let cli = Cli::from_arg_matches(&matches)
        .map_err(|e| ParseError::Clap(e.format(&mut Cli::command())))?;
    Ok((cli, matches))
}

/// The flag of a clap context value: `--devices` from `--devices <DEVICES>`.
fn flags(value: Option<&ContextValue>) -> Vec<String> {
    let first_word = |s: &String| {
        s.split([' ', '='])
            .next()
            .unwrap_or_default()
            .trim_matches(['\'', '"'])
            .to_string()
    };
    match value {
        Some(ContextValue::String(s)) => vec![first_word(s)],
        Some(ContextValue::Strings(list)) => list.iter().map(first_word).collect(),
        _ => Vec::new(),
    }
}

/// One line for clap's refusals this program can explain better: a flag of another command,
/// two flags that do not go together. `None`: clap's own message stands.
fn refusal(command: &str, args: &[OsString], error: &clap::Error) -> Option<String> {
    match error.kind() {
        ErrorKind::MissingRequiredArgument => {
            let missing = flags(error.get(ContextKind::InvalidArg));
            REQUIRES
                .iter()
                .find(|(flag, needs)| {
                    missing.iter().any(|m| m == needs) && args.iter().any(|a| is_flag(a, flag))
                })
                .map(|(flag, needs)| {
                    format!("{flag} goes with {needs} (reduce-rs {command} {needs} {flag} …)")
                })
        }
        ErrorKind::UnknownArgument => {
            let flag = flags(error.get(ContextKind::InvalidArg)).pop()?;
            wrong_command(command, &flag)
        }
        ErrorKind::ArgumentConflict => {
            let flag = flags(error.get(ContextKind::InvalidArg)).pop()?;
            let prior = flags(error.get(ContextKind::PriorArg));
            let other = prior.first()?;
            Some(conflict_reason(command, &flag, other))
        }
        _ => None,
    }
}

/// Flags that only mean something beside another (declared with clap's `requires`).
const REQUIRES: [(&str, &str); 2] = [("--columns", "--rows"), ("--accuracy-sizes", "--accuracy")];

/// `arg` is `flag` or `flag=…`.
fn is_flag(arg: &OsString, flag: &str) -> bool {
    arg.to_str()
        .is_some_and(|a| a == flag || a.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
}

/// Single-run flags that mean nothing to `bench`, and why.
const NOT_FOR_BENCH: [(&str, &str); 11] = [
    (
        "--reproducible",
        "bench times the reproducible sum beside v8 anyway (the `repro` rows)",
    ),
    ("--n", "bench sweeps --sizes"),
    ("--pattern", "bench reduces random input (seed 1)"),
    ("--seed", "bench reduces random input (seed 1)"),
    (
        "--schedule-seed",
        "it shuffles the simulator, and bench runs on the GPU",
    ),
    (
        "--yes",
        "it confirms long simulator runs, and bench runs on the GPU",
    ),
    (
        "--op",
        "bench times the sum only (its comparison, CUB's DeviceReduce::Sum, is a sum); --shapes cases name their own operation (f32:max:rows:4096x4096)",
    ),
    (
        "--backend",
        "bench times the GPU; the simulator has no timing (`reduce-rs all --backend sim` checks every version)",
    ),
    ("--input", "bench generates its inputs"),
    (
        "--rows",
        "bench --shapes names the shapes it times (f32:sum:rows:8192x8192)",
    ),
    (
        "--columns",
        "bench --shapes names the shapes it times (f32:sum:columns:8192x8192)",
    ),
];

/// The long flags of a subcommand of the program.
fn long_flags(name: &str) -> Vec<String> {
    Cli::command()
        .find_subcommand(name)
        .map(|c| {
            c.get_arguments()
                .filter_map(|a| a.get_long())
                .map(|l| format!("--{l}"))
                .collect()
        })
        .unwrap_or_default()
}

/// Why `flag` is not an option of `command`, when another command has it.
fn wrong_command(command: &str, flag: &str) -> Option<String> {
    match command {
        "bench" => {
            let (_, why) = NOT_FOR_BENCH.iter().find(|(f, _)| *f == flag)?;
            Some(format!("{flag} does not apply to `bench`: {why}"))
        }
        "run" if long_flags("bench").iter().any(|f| f == flag) => Some(format!(
            "{flag} is a `bench` option (reduce-rs bench {flag} …)"
        )),
        "list" => Some(format!(
            "`list` takes no options ({flag}): it prints the versions"
        )),
        _ => None,
    }
}

/// Why two flags of `command` do not go together (`flag` came after `other`).
pub fn conflict_reason(command: &str, flag: &str, other: &str) -> String {
    if flag == other {
        return match flag {
            "--dtypes" => {
                "give --dtypes once (--dtype is another name for it): a comma list such as f32,f64"
                    .to_string()
            }
            _ => format!("give {flag} once"),
        };
    }
    let pair_with = |a: &str| {
        if flag == a {
            Some(other)
        } else if other == a {
            Some(flag)
        } else {
            None
        }
    };
    match command {
        "run" => {
            if pair_with("--input").is_some() {
                return "--input reads its elements from the file: leave out --n, --pattern and --seed".into();
            }
            if let Some(rest) = pair_with("--devices") {
                return format!(
                    "{rest} does not apply to --devices (each device runs v8 with its tuned block)"
                );
            }
        }
        "bench" => {
            if let Some(rest) = pair_with("--devices") {
                return format!(
                    "bench --devices times the f32 sum of the library over several GPUs: leave out {rest}"
                );
            }
            if let Some(rest) = pair_with("--accuracy") {
                return format!(
                    "bench --accuracy measures every version's f32 sum once per size of --accuracy-sizes: leave out {rest}"
                );
            }
            if let Some(rest) = pair_with("--shapes") {
                return format!(
                    "bench --shapes times the cases it names (type, operation, shape) with the library's kernels and their tuned blocks: leave out {rest}"
                );
            }
        }
        _ => {}
    }
    format!("{flag} and {other} do not go together")
}

/// `help [COMMAND]`: the overview and `run`'s options, or one command's help (a version or
/// `all` names `run`).
pub fn help_text(command: Option<&str>) -> Result<String, String> {
    let mut cli = Cli::command();
    cli.build();
    let render = |cli: &mut clap::Command, name: &str| -> String {
        cli.find_subcommand_mut(name)
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default()
    };
    let name = match command.map(|c| c.trim().to_ascii_lowercase()) {
        None => {
            let overview = cli.render_long_help().to_string();
            let run = render(&mut cli, "run");
            return Ok(format!(
                "{overview}\nThe options of a run (reduce-rs run … or reduce-rs <VERSION> …):\n\n{run}"
            ));
        }
        Some(name) if COMMANDS.contains(&name.as_str()) && name != "help" => name,
        Some(name) if parse_target(&name).is_ok() => "run".to_string(),
        Some(name) => {
            return Err(format!(
                "`{name}` is not a command (run, bench, list) or a version"
            ));
        }
    };
    Ok(render(&mut cli, &name))
}

#[cfg(test)]
mod tests;
