//! The values of the command line's options, shared by its commands: the parsers (any case;
//! numbers that are negative or too large say so) and the option groups `run` and `bench` both
//! have (`--repeat`, `--warmup`; `--ptx-dir` and its environment variable).

use crate::element::{DType, OpKind};
use kernels_gpu::launch::BLOCK_SIZES;
use std::num::IntErrorKind;
use std::path::PathBuf;

/// `--repeat` and `--warmup`, shared by `run` and `bench`.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct TimingArgs {
    /// GPU: timed repetitions (the median is reported)
    #[arg(long, default_value_t = 20, value_parser = parse_repeat, allow_negative_numbers = true)]
    pub repeat: u32,
    /// GPU: untimed runs before timing
    #[arg(long, default_value_t = 3, value_parser = parse_warmup, allow_negative_numbers = true)]
    pub warmup: u32,
}

impl TimingArgs {
    pub fn timing(self) -> crate::timing::Timing {
        crate::timing::Timing {
            warmup: self.warmup,
            repeat: self.repeat,
        }
    }
}

/// The environment variable `--ptx-dir` defaults to.
pub const PTX_DIR_ENV: &str = "REDUCE_PTX_DIR";

/// `--ptx-dir`, else `$REDUCE_PTX_DIR` (read here rather than by clap, so that a variable set
/// for every run is not taken for a flag that conflicts with `--devices`).
pub fn ptx_dir(flag: Option<&PathBuf>) -> Option<PathBuf> {
    flag.cloned().or_else(|| {
        std::env::var_os(PTX_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
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
