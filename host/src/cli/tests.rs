//! Command lines parsed without running the program: what is accepted, and the one line that
//! says why the rest is refused.

use super::*;
use crate::element::{DType, OpKind};
use crate::input::Pattern;
use crate::run::BackendChoice;
use reduce_rs::Version;

fn parse_cli(args: &[&str]) -> Result<Cli, ParseError> {
    parse(std::iter::once("reduce-rs").chain(args.iter().copied())).map(|(cli, _)| cli)
}

fn error(args: &[&str]) -> String {
    parse_cli(args).unwrap_err().to_string()
}

fn run_args(args: &[&str]) -> RunArgs {
    match parse_cli(args).unwrap().command {
        Command::Run(run) => run,
        other => panic!("{args:?}: {other:?}"),
    }
}

#[test]
fn the_command_line_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn version_and_help_are_answered() {
    assert_eq!(
        parse_cli(&["--version"]).unwrap_err().kind(),
        Some(ErrorKind::DisplayVersion)
    );
    assert_eq!(
        parse_cli(&["--help"]).unwrap_err().kind(),
        Some(ErrorKind::DisplayHelp)
    );
    for word in ["help", "HELP"] {
        assert!(matches!(
            parse_cli(&[word]).unwrap().command,
            Command::Help { command: None }
        ));
    }
    // A version's help is run's; `help bench` is the bench's.
    assert_eq!(
        parse_cli(&["v5", "--help"]).unwrap_err().kind(),
        Some(ErrorKind::DisplayHelp)
    );
    assert!(help_text(Some("bench")).unwrap().contains("--sizes"));
    assert!(help_text(Some("v5")).unwrap().contains("--schedule-seed"));
    assert!(help_text(None).unwrap().contains("--schedule-seed"));
    assert!(help_text(Some("nine")).is_err());
}

#[test]
fn commands_and_versions_take_any_case() {
    assert!(matches!(
        parse_cli(&["LIST"]).unwrap().command,
        Command::List
    ));
    assert!(matches!(
        parse_cli(&["Bench"]).unwrap().command,
        Command::Bench(_)
    ));
    for (word, target) in [
        ("All", Target::All),
        ("V5", Target::One(Version::find("v5").unwrap())),
        ("5", Target::One(Version::find("v5").unwrap())),
        (
            "Unroll-Last-Warp",
            Target::One(Version::find("v4").unwrap()),
        ),
    ] {
        assert_eq!(run_args(&[word]).target, target, "{word}");
        assert_eq!(run_args(&["run", word]).target, target, "run {word}");
    }
    let cli = run_args(&[
        "v5",
        "--backend",
        "SIM",
        "--pattern",
        "Small-Integers",
        "--dtype",
        "F32",
        "--op",
        "MAX",
    ]);
    assert_eq!(cli.backend, BackendChoice::Sim);
    assert_eq!(cli.pattern, Pattern::SmallIntegers);
    assert_eq!((cli.dtype, cli.op), (DType::F32, OpKind::Max));
    assert_eq!(run_args(&["v5", "--n", "32m"]).n, Some(1 << 25));
}

#[test]
fn an_unknown_word_lists_commands_and_versions() {
    let text = error(&["v9"]);
    for word in [
        "list",
        "all",
        "bench",
        "help",
        "v0 (baseline)",
        "v8 (single-pass)",
    ] {
        assert!(text.contains(word), "{word} missing from {text}");
    }
    assert!(error(&["run", "list"]).contains("a command of its own: reduce-rs list"));
}

#[test]
fn negative_numbers_are_refused_as_negative() {
    for (flag, value) in [
        ("--n", "-1"),
        ("--repeat", "-3"),
        ("--warmup", "-1"),
        ("--seed", "-1"),
        ("--schedule-seed", "-2"),
    ] {
        let text = error(&["v5", flag, value]);
        assert!(
            text.contains("must be a non-negative"),
            "{flag} {value}: {text}"
        );
        assert!(!text.contains("-- -"), "{flag} {value}: {text}");
    }
    assert!(error(&["v5", "--block", "-256"]).contains("must be one of"));
    assert!(error(&["bench", "--sizes", "-1"]).contains("must be a non-negative count"));
    assert!(error(&["v5", "--repeat", "0"]).contains("at least 1"));
    assert!(error(&["v5", "--n", "2^64"]).contains("too large"));
    assert_eq!(run_args(&["v5", "--warmup", "0"]).timing.warmup, 0);
}

/// The refusal as printed: one line.
fn refused(args: &[&str]) -> String {
    match parse_cli(args) {
        Err(ParseError::Refused(line)) => {
            assert!(!line.contains('\n'), "{args:?}: {line}");
            line
        }
        Err(other) => panic!("{args:?}: clap's own error: {other}"),
        Ok(cli) => panic!("{args:?}: accepted: {cli:?}"),
    }
}

#[test]
fn flags_of_another_command_are_refused_with_the_reason() {
    assert!(refused(&["v5", "--sizes", "2^20"]).contains("--sizes is a `bench` option"));
    assert!(refused(&["all", "--no-cub"]).contains("--no-cub is a `bench` option"));
    assert!(refused(&["bench", "--n", "1000"]).contains("--sizes"));
    assert!(refused(&["bench", "--schedule-seed", "1"]).contains("--schedule-seed"));
    assert!(refused(&["bench", "--op", "max"]).contains("sum only"));
    assert!(refused(&["bench", "--backend", "sim"]).contains("simulator"));
    assert!(refused(&["list", "--n", "5"]).contains("takes no options"));
    // What bench does accept.
    for args in [
        &[
            "bench", "--sizes", "2^20", "--dtypes", "f32", "--block", "256", "--repeat", "5",
        ][..],
        &["bench", "--dtype", "f64"],
        &["bench", "--shapes", "table", "--out", "x"],
        &["bench", "--devices", "2", "--sizes", "2^24"],
        &["bench", "--ranks", "--sizes", "2^24", "--repeat", "5"],
        &["bench", "--ranks", "--simulate", "2", "--out", "x"],
        &["bench", "--accuracy", "--versions", "v8"],
    ] {
        assert!(parse_cli(args).is_ok(), "{args:?}: {}", error(args));
    }
    let Command::Bench(bench) = parse_cli(&["bench", "--dtype", "f64"]).unwrap().command else {
        panic!("not bench");
    };
    assert_eq!(bench.dtypes.unwrap().0, [DType::F64]);
}

#[test]
fn flags_that_do_not_go_together_are_refused_with_the_reason() {
    for (args, says) in [
        (
            &["v5", "--input", "x.npy", "--n", "5"][..],
            "--input reads its elements",
        ),
        (
            &["v8", "--seed", "2", "--input", "x.npy"],
            "--input reads its elements",
        ),
        (
            &["v8", "--devices", "2", "--rows", "4"],
            "--rows does not apply to --devices",
        ),
        (
            &["v8", "--devices", "2", "--ptx-dir", "p"],
            "--ptx-dir does not apply",
        ),
        (
            &["bench", "--devices", "2", "--shapes", "table"],
            "leave out --shapes",
        ),
        (
            &["bench", "--dtype", "f32", "--devices", "2"],
            "leave out --dtypes",
        ),
        (
            &["bench", "--accuracy", "--sizes", "2^20"],
            "leave out --sizes",
        ),
        (
            &["bench", "--shapes", "table", "--versions", "v8"],
            "leave out --versions",
        ),
        (
            &["bench", "--dtype", "f32", "--dtypes", "f64"],
            "give --dtypes once",
        ),
        (
            &["bench", "--ranks", "--shapes", "table"],
            "bench --ranks times",
        ),
        (
            &["bench", "--ranks", "--simulate", "2", "--warmup", "1"],
            "times nothing: leave out --warmup",
        ),
        (
            &["bench", "--simulate", "2"],
            "--simulate goes with --ranks",
        ),
        (&["bench", "--splits", "4"], "--splits goes with --shapes"),
    ] {
        let text = refused(args);
        assert!(text.contains(says), "{args:?}: {text}");
    }
}

#[test]
fn every_declared_conflict_has_a_reason() {
    let cli = Cli::command();
    for name in ["run", "bench"] {
        let command = cli.find_subcommand(name).unwrap();
        for arg in command.get_arguments() {
            for other in command.get_arg_conflicts_with(arg) {
                let (a, b) = (arg.get_long().unwrap(), other.get_long().unwrap());
                let why = conflict_reason(name, &format!("--{a}"), &format!("--{b}"));
                assert!(
                    !why.contains("do not go together"),
                    "{name} --{a} --{b}: {why}"
                );
            }
        }
    }
}

#[test]
fn a_version_first_is_run() {
    let normal = |args: &[&str]| -> Vec<String> {
        normalize(std::iter::once("reduce-rs").chain(args.iter().copied()))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        normal(&["v5", "--n", "1"]),
        ["reduce-rs", "run", "v5", "--n", "1"]
    );
    assert_eq!(normal(&["All"]), ["reduce-rs", "run", "All"]);
    assert_eq!(normal(&["BENCH"]), ["reduce-rs", "bench"]);
    assert_eq!(normal(&["run", "v5"]), ["reduce-rs", "run", "v5"]);
    assert_eq!(normal(&["--version"]), ["reduce-rs", "--version"]);
    assert_eq!(normal(&[]), ["reduce-rs"]);
    // A version's --version is the program's.
    let version = parse_cli(&["v5", "--version"]).unwrap_err();
    assert_eq!(version.kind(), Some(ErrorKind::DisplayVersion));
    let ParseError::Clap(version) = version else {
        panic!("not clap's")
    };
    assert_eq!(
        version.to_string().trim(),
        format!("reduce-rs {}", env!("CARGO_PKG_VERSION"))
    );
}
