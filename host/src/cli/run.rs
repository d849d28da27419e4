//! `run`'s options ([`RunArgs`]) and its first word ([`parse_target`]): a version or `all`
//! ([`Target`]), told apart from the names of the other commands.

use crate::element::{DType, OpKind};
use crate::input::Pattern;
use crate::report::{terminal_width, wrap, wrap_words};
use crate::run::BackendChoice;
use crate::size::parse_len;
use crate::values::{TimingArgs, parse_block, parse_dtype, parse_op, parse_seed};
use reduce_rs::Version;
use std::path::PathBuf;

/// The commands as the first word names them (`all` and versions are `run`'s).
pub(super) const COMMANDS: [&str; 4] = ["run", "list", "bench", "help"];

/// What `run` runs: one version or every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    All,
    One(Version),
}

impl Target {
    pub fn versions(self) -> Vec<Version> {
        match self {
            Target::All => Version::all().collect(),
            Target::One(version) => vec![version],
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// v0…v8, 0…8, its technique (e.g. unroll-last-warp), or `all`
    #[arg(value_parser = parse_target, value_name = "VERSION|all")]
    pub target: Target,
    /// Elements to reduce [default: 2^25 on the GPU, 2^20 on the simulator]; e.g. 2^25, 32M,
    /// 1e6, 2^25+7
    #[arg(long, value_parser = parse_len, allow_negative_numbers = true)]
    pub n: Option<usize>,
    /// Reduce the elements of this file: a .npy (f2, f4, f8, i4, i8, u4, u8; any shape) or raw
    /// elements of --dtype
    #[arg(long, conflicts_with_all = ["n", "pattern", "seed"])]
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
    #[command(flatten)]
    pub timing: TimingArgs,
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
    /// the PTX embedded in the library [default: $REDUCE_PTX_DIR]
    #[arg(long)]
    pub ptx_dir: Option<PathBuf>,
    /// Split the input evenly over this many GPUs (`all`: every GPU; simulated devices on the
    /// simulator) and reduce it with the library's group: v8 on each shard, then one NCCL
    /// collective
    #[arg(long, value_parser = crate::devices::parse_devices, conflicts_with_all = ["rows", "block", "ptx_dir"])]
    pub devices: Option<crate::devices::DeviceCount>,
}

/// A version or `all`, in any case; the error lists the commands and the versions.
pub fn parse_target(text: &str) -> Result<Target, String> {
    let word = text.trim().to_ascii_lowercase();
    if word == "all" {
        return Ok(Target::All);
    }
    if COMMANDS.contains(&word.as_str()) {
        return Err(format!(
            "`{word}` is a command of its own: reduce-rs {word}"
        ));
    }
    Version::find(&word).map(Target::One).map_err(|_| {
        let mut commands: Vec<&str> = COMMANDS.to_vec();
        commands.insert(1, "all");
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
