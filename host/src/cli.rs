//! The command line of `reduce-rs`: its arguments and the parsers of their values, kept in the
//! library so that tests can parse command lines without running the program.
//!
//! One case rule holds for every word it reads (commands, versions, types, operations,
//! patterns, backends, size suffixes): any case. Numbers may not be negative, and say so:
//! without `allow_negative_numbers` clap would read `--n -1` as an unknown flag `-1` and
//! suggest `-- -1`.

use crate::bench::BenchArgs;
use crate::element::{DType, OpKind};
use crate::input::Pattern;
use crate::report::{terminal_width, wrap, wrap_words};
use crate::run::BackendChoice;
use crate::size::parse_len;
use clap::Parser;
use kernels_gpu::launch::BLOCK_SIZES;
use reduce_rs::Version;
use std::num::IntErrorKind;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "reduce-rs",
    version,
    about = "Runs the reduction series (v0–v8) on the GPU or the CPU simulator, checks and times it",
    arg_required_else_help = true,
    after_help = "Examples:\n  reduce-rs v5                    v5 on 2^25 f32 on the GPU (or 2^20 on the simulator)\n  reduce-rs all --n 2^20          every version as one table\n  reduce-rs unroll-last-warp --dtype i32 --op max\n  reduce-rs v8 --input data.npy --op argmax\n  reduce-rs v8 --devices all --n 2^30   split over every GPU, one NCCL collective\n  reduce-rs list                  versions, techniques, where each comes from\n  reduce-rs bench                 every version × 2^10..2^28 × every type on the GPU (needs a GPU)\n\nWhat the output says: docs/reading-the-output.md"
)]
pub struct Cli {
    /// `list`, `all`, `bench` (the sweep: see Bench options), `help`, or a version: v0…v8,
    /// 0…8, or its technique (e.g. unroll-last-warp)
    #[arg(value_parser = parse_what)]
    pub what: What,
    /// Elements to reduce [default: 2^25 on the GPU, 2^20 on the simulator]; e.g. 2^25, 32M,
    /// 1e6, 2^25+7
    #[arg(long, value_parser = parse_len, allow_negative_numbers = true)]
    pub n: Option<usize>,
    /// Reduce the elements of this file: a .npy (f2, f4, f8, i4, i8, u4, u8; any shape) or raw
    /// elements of --dtype
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Reduce each row of the input seen as this many rows of equal length (v8: the library's
    /// row kernels, chosen by the rows' shape)
    #[arg(long, value_parser = parse_len, allow_negative_numbers = true)]
    pub rows: Option<usize>,
    /// With --rows: reduce each column instead of each row
    #[arg(long, requires = "rows")]
    pub columns: bool,
    /// Threads per block [default: each version's tuned size; `list` shows them]
    #[arg(long, value_parser = parse_block, allow_negative_numbers = true)]
    pub block: Option<u32>,
    /// Element type: f32, f64, i32, u32, i64, u64, f16, bf16 (v0–v7: the first four)
    #[arg(long, value_parser = parse_dtype, default_value = "f32")]
    pub dtype: DType,
    /// Operation: sum, min, max, argmin, argmax, mean (v0–v7: the first three)
    #[arg(long, value_parser = parse_op, default_value = "sum")]
    pub op: OpKind,
    /// Input values (generated inputs)
    #[arg(long, value_enum, ignore_case = true, default_value_t = Pattern::Random)]
    pub pattern: Pattern,
    /// Seed of the input generator
    #[arg(long, default_value_t = 1, value_parser = parse_seed, allow_negative_numbers = true)]
    pub seed: u64,
    /// Where to run: the GPU if there is one (auto), the GPU, or the CPU simulator
    #[arg(long, value_enum, ignore_case = true, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// GPU: timed repetitions (the median is reported)
    #[arg(long, default_value_t = 20, value_parser = parse_repeat, allow_negative_numbers = true)]
    pub repeat: u32,
    /// GPU: untimed runs before timing
    #[arg(long, default_value_t = 3, value_parser = parse_warmup, allow_negative_numbers = true)]
    pub warmup: u32,
    /// Float sums and means with the reproducible kernels: the same bits on any GPU, grid, block
    /// size and split of the input, and with --rows each row's the bits of that row alone (the
    /// library's `with_reproducible(true)`)
    #[arg(long)]
    pub reproducible: bool,
    /// Simulator: shuffle the thread schedule from this seed (default: in order)
    #[arg(long, value_parser = parse_seed, allow_negative_numbers = true)]
    pub schedule_seed: Option<u64>,
    /// Simulator: run even when the run is estimated to take over 10 minutes
    #[arg(long)]
    pub yes: bool,
    /// GPU: load the kernels from this directory (written by `cargo xtask build-ptx`) instead of
    /// the PTX embedded in the library
    #[arg(long, env = "REDUCE_PTX_DIR")]
    pub ptx_dir: Option<PathBuf>,
    /// Split the input evenly over this many GPUs (`all`: every GPU; simulated devices on the
    /// simulator) and reduce it with the library's group: v8 on each shard, then one NCCL
    /// collective. With `bench`: the several-GPU sweep (--sizes per GPU)
    #[arg(long, value_parser = crate::devices::parse_devices)]
    pub devices: Option<crate::devices::DeviceCount>,
    #[command(flatten)]
    pub bench: BenchArgs,
}

/// What the first argument asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    List,
    All,
    Bench,
    Help,
    One(Version),
}

/// The commands, as `parse_what` reads them.
const COMMANDS: [(&str, What); 4] = [
    ("list", What::List),
    ("all", What::All),
    ("bench", What::Bench),
    ("help", What::Help),
];

/// A command or a version, in any case; the error lists both.
pub fn parse_what(text: &str) -> Result<What, String> {
    let word = text.trim().to_ascii_lowercase();
    if let Some((_, what)) = COMMANDS.iter().find(|(name, _)| *name == word) {
        return Ok(*what);
    }
    Version::find(&word).map(What::One).map_err(|_| {
        let commands: Vec<&str> = COMMANDS.iter().map(|(name, _)| *name).collect();
        let mut versions: Vec<String> = Version::all()
            .map(|v| format!("{} ({}),", v.name(), v.slug()))
            .collect();
        versions.push("or a version's number (0…8)".to_string());
        let width = terminal_width();
        let indent = " ".repeat(12);
        format!(
            "`{text}` is not a command or a version\n{}\n{}",
            wrap(&commands.join(", "), width, "  commands: ", &indent),
            wrap_words(
                versions.iter().map(String::as_str),
                width,
                "  versions: ",
                &indent
            )
        )
    })
}

pub fn parse_block(text: &str) -> Result<u32, String> {
    let valid = || format!("the block size must be one of {BLOCK_SIZES:?}");
    let block: i64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number; {}", valid()))?;
    match u32::try_from(block) {
        Ok(block) if BLOCK_SIZES.contains(&block) => Ok(block),
        _ => Err(format!("{block} is not supported; {}", valid())),
    }
}

pub fn parse_dtype(text: &str) -> Result<DType, String> {
    DType::parse(text).ok_or_else(|| {
        let valid: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        format!("`{text}` is not an element type ({})", valid.join(", "))
    })
}

pub fn parse_op(text: &str) -> Result<OpKind, String> {
    OpKind::parse(text).ok_or_else(|| {
        let valid: Vec<&str> = OpKind::ALL.iter().map(|o| o.name()).collect();
        format!("`{text}` is not an operation ({})", valid.join(", "))
    })
}

/// A whole number from `min` to `max`; `kind` names what it is in the errors ("count").
fn whole(text: &str, min: u64, max: u64, kind: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!("`{text}`: the value must be a non-negative {kind}"));
    }
    let value: u64 = trimmed
        .parse()
        .map_err(|e: std::num::ParseIntError| match e.kind() {
            IntErrorKind::PosOverflow => format!("`{text}` is too large (at most {max})"),
            _ => format!("`{text}` is not a {kind} (a whole number)"),
        })?;
    if value < min {
        Err(format!("the value must be at least {min}"))
    } else if value > max {
        Err(format!("`{text}` is too large (at most {max})"))
    } else {
        Ok(value)
    }
}

pub fn parse_repeat(text: &str) -> Result<u32, String> {
    whole(text, 1, u32::MAX.into(), "count").map(|n| n as u32)
}

pub fn parse_warmup(text: &str) -> Result<u32, String> {
    whole(text, 0, u32::MAX.into(), "count").map(|n| n as u32)
}

pub fn parse_seed(text: &str) -> Result<u64, String> {
    whole(text, 0, u64::MAX, "whole number")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use clap::error::ErrorKind;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("reduce-rs").chain(args.iter().copied()))
    }

    fn error(args: &[&str]) -> String {
        parse(args).unwrap_err().to_string()
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn version_and_help_are_answered() {
        assert_eq!(
            parse(&["--version"]).unwrap_err().kind(),
            ErrorKind::DisplayVersion
        );
        assert_eq!(
            parse(&["--help"]).unwrap_err().kind(),
            ErrorKind::DisplayHelp
        );
        assert_eq!(parse(&["help"]).unwrap().what, What::Help);
        assert_eq!(parse(&["HELP"]).unwrap().what, What::Help);
    }

    #[test]
    fn commands_and_versions_take_any_case() {
        for (word, what) in [
            ("LIST", What::List),
            ("All", What::All),
            ("Bench", What::Bench),
            ("V5", What::One(Version::find("v5").unwrap())),
            ("5", What::One(Version::find("v5").unwrap())),
            ("Unroll-Last-Warp", What::One(Version::find("v4").unwrap())),
        ] {
            assert_eq!(parse(&[word]).unwrap().what, what, "{word}");
        }
        let cli = parse(&[
            "v5",
            "--backend",
            "SIM",
            "--pattern",
            "Small-Integers",
            "--dtype",
            "F32",
            "--op",
            "MAX",
        ])
        .unwrap();
        assert_eq!(cli.backend, BackendChoice::Sim);
        assert_eq!(cli.pattern, Pattern::SmallIntegers);
        assert_eq!((cli.dtype, cli.op), (DType::F32, OpKind::Max));
        assert_eq!(parse(&["v5", "--n", "32m"]).unwrap().n, Some(1 << 25));
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
        assert_eq!(parse(&["v5", "--warmup", "0"]).unwrap().warmup, 0);
    }
}
