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
//!
//! Its parts: this file is the program's command line (the commands, `help`, [`parse`]);
//! `run.rs` is `run`'s options and its first word; `refusal.rs` turns clap's refusals into
//! reasons. `bench`'s options are [`BenchArgs`] (`bench/options.rs`).

mod refusal;
mod run;

use crate::bench::BenchArgs;
use clap::error::ErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use refusal::refusal;
use run::COMMANDS;
use std::ffi::OsString;

pub use refusal::conflict_reason;
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
        refusal(&Cli::command(), &command, &args, &e)
            .map_or(ParseError::Clap(e), ParseError::Refused)
    })?;
    let cli = Cli::from_arg_matches(&matches)
        .map_err(|e| ParseError::Clap(e.format(&mut Cli::command())))?;
    Ok((cli, matches))
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
