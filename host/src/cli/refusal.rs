//! Refusals clap words as an unknown argument or a conflict, said as the reason: a flag of
//! another command ([`NOT_FOR_BENCH`] says why each single-run flag means nothing to `bench`),
//! a flag without the one it goes with, two flags that do not go together
//! ([`conflict_reason`]).

use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::ffi::OsString;

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
/// two flags that do not go together. `None`: clap's own message stands. `program`: the
/// program's command line (`Cli::command()`), whose subcommands say which flags are whose.
pub(super) fn refusal(
    program: &clap::Command,
    command: &str,
    args: &[OsString],
    error: &clap::Error,
) -> Option<String> {
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
            wrong_command(program, command, &flag)
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
const REQUIRES: [(&str, &str); 4] = [
    ("--columns", "--rows"),
    ("--accuracy-sizes", "--accuracy"),
    ("--simulate", "--ranks"),
    ("--splits", "--shapes"),
];

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
        "bench times the GPU; the simulator has no timing (`reduce-rs all --backend sim` checks every version, `bench --ranks --simulate N` the several-GPU calls)",
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
fn long_flags(program: &clap::Command, name: &str) -> Vec<String> {
    program
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
fn wrong_command(program: &clap::Command, command: &str, flag: &str) -> Option<String> {
    match command {
        "bench" => {
            let (_, why) = NOT_FOR_BENCH.iter().find(|(f, _)| *f == flag)?;
            Some(format!("{flag} does not apply to `bench`: {why}"))
        }
        "run" if long_flags(program, "bench").iter().any(|f| f == flag) => Some(format!(
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
            if let Some(rest) = pair_with("--simulate") {
                return format!(
                    "bench --ranks --simulate checks simulated ranks once per call and times nothing: leave out {rest}"
                );
            }
            if let Some(rest) = pair_with("--ranks") {
                return format!(
                    "bench --ranks times the f32 sum and argmax of the library in this process, one rank of a world: leave out {rest}"
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
