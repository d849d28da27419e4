//! What the command line prints: one version in detail, or every version as a table whose rows
//! appear as the versions finish.

use crate::run::{InputSource, Measure, Outcome, RunCase};
use reduce_rs::Version;
use reduce_rs::plan::Pass;

pub fn verdict_word(outcome: &Outcome) -> &'static str {
    if outcome.verdict.pass { "PASS" } else { "FAIL" }
}

fn launches_text(passes: &[Pass]) -> String {
    let grid = |p: &Pass| format!("{} × {}", p.launch.grid, p.launch.block);
    let mut text = grid(&passes[0]);
    if passes.len() > 1 {
        let rest: Vec<String> = passes[1..].iter().map(grid).collect();
        text.push_str(&format!(", then {}", rest.join(", ")));
    }
    text
}

/// Where a version comes from, in the words of the material it follows.
pub fn origin_text(version: Version) -> String {
    let origin = version.info().origin;
    let mut parts = Vec::new();
    match (origin.chapter, origin.one_based) {
        (Some(chapter), Some(n)) => parts.push(format!(
            "tutorial chapter `{chapter}` (V{n} in the 1-based numbering)"
        )),
        (None, Some(n)) => parts.push(format!("V{n} in the tutorial's 1-based numbering")),
        _ => {}
    }
    if let Some(kernel) = origin.harris_kernel {
        parts.push(format!("Harris's Kernel {kernel}"));
    }
    if parts.is_empty() {
        "beyond the tutorial and Harris's slides".to_string()
    } else {
        parts.join(" · ")
    }
}

pub fn print_header(backend: &str, case: &RunCase) {
    println!("backend  {backend}");
    let source = match &case.source {
        InputSource::Generated { pattern, seed } => format!("{}, seed {seed}", pattern.name()),
        InputSource::File { path } => path.clone(),
    };
    println!(
        "input    {} × {} ({source}), op {}, block {}",
        case.len,
        case.dtype,
        case.op,
        case.block
            .map_or_else(|| "tuned per version".to_string(), |b| b.to_string())
    );
}

fn tolerance_text(outcome: &Outcome) -> String {
    if outcome.verdict.tolerance == 0.0 {
        "exact".to_string()
    } else {
        format!(
            "error bound {:.2e} (h = {} additions in a row)",
            outcome.verdict.tolerance, outcome.additions
        )
    }
}

/// One version in detail.
pub fn print_outcome(case: &RunCase, outcome: &Outcome) {
    let v = outcome.version;
    println!();
    println!("{} {} — {}", v.name(), v.slug(), v.technique());
    println!("  origin    {}", origin_text(v));
    println!(
        "  launch    {} ({} launch{}), {} B shared per block",
        launches_text(&outcome.passes),
        outcome.passes.len(),
        if outcome.passes.len() == 1 { "" } else { "es" },
        outcome.passes[0].launch.shared_bytes
    );
    match &outcome.measure {
        Measure::Gpu {
            first_pass_ms,
            to_result_ms,
            repeat,
            deterministic,
        } => {
            println!(
                "  gpu time  first pass {:.4} ms = {:.0} GB/s · to the result {:.4} ms (median of {repeat}, CUDA events behind a GPU pre-roll, after warm-up){}",
                first_pass_ms,
                outcome.first_pass_gbps(case).unwrap_or(f64::NAN),
                to_result_ms,
                if *repeat < 2 {
                    ""
                } else if *deterministic {
                    " · result bitwise identical in every run"
                } else {
                    " · NOT bitwise identical across runs"
                }
            );
        }
        Measure::Sim(report) => {
            let s = report.stats;
            println!(
                "  simulated {} blocks, {} threads, {} barriers, {} warp syncs, {} shuffles, {} shared / {} global accesses checked in {:.2} s (CPU time, not GPU time)",
                s.blocks,
                s.threads,
                s.barriers,
                s.warp_syncs,
                s.shuffles,
                s.shared_accesses,
                s.global_accesses,
                report.wall_time.as_secs_f64()
            );
        }
    }
    println!(
        "  result    got {} · CPU reference {} · rel. error {:.2e} · {} · {}",
        outcome.verdict.got,
        outcome.verdict.expected,
        outcome.verdict.rel_error,
        tolerance_text(outcome),
        verdict_word(outcome)
    );
}

/// The table's header (`all`); rows follow with [`print_row`].
pub fn print_table_header() {
    println!();
    println!(
        "{:<4} {:<18} {:<24} {:>11} {:>7} {:>11} {:>18} {:>9}  result",
        "ver",
        "technique",
        "launch (first pass)",
        "1st pass ms",
        "GB/s",
        "result ms",
        "value",
        "rel.err"
    );
}

/// One version's row (`all`), printed as soon as it finishes.
pub fn print_row(case: &RunCase, version: Version, result: &Result<Outcome, String>) {
    match result {
        Ok(outcome) => {
            let first = outcome.passes[0].launch;
            let launch = format!("{} × {}, {} B", first.grid, first.block, first.shared_bytes);
            let (first_ms, gbps, result_ms) = match &outcome.measure {
                Measure::Gpu {
                    first_pass_ms,
                    to_result_ms,
                    ..
                } => (
                    format!("{first_pass_ms:.4}"),
                    format!("{:.0}", outcome.first_pass_gbps(case).unwrap_or(f64::NAN)),
                    format!("{to_result_ms:.4}"),
                ),
                Measure::Sim(report) => (
                    "-".into(),
                    "-".into(),
                    format!("sim {:.2} s", report.wall_time.as_secs_f64()),
                ),
            };
            println!(
                "{:<4} {:<18} {:<24} {:>11} {:>7} {:>11} {:>18} {:>9.2e}  {}",
                version.name(),
                version.slug(),
                launch,
                first_ms,
                gbps,
                result_ms,
                outcome.verdict.got,
                outcome.verdict.rel_error,
                verdict_word(outcome)
            );
        }
        Err(error) => println!("{:<4} ERROR: {error}", version.name()),
    }
}

/// The width to wrap to: `COLUMNS` when set (as clap reads it for --help), else the terminal's,
/// else 100; never under 40.
/// An error and its causes on one line, `outer: inner: …`, leaving out a cause whose text the
/// line already ends with (errors that print their source in their own message).
pub fn error_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line.replace('\n', " ")
}

pub fn terminal_width() -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok());
    let from_terminal = || terminal_size::terminal_size().map(|(w, _)| usize::from(w.0));
    from_env.or_else(from_terminal).unwrap_or(100).max(40)
}

/// `text` wrapped at spaces to `width` columns, the first line after `first` and the others
/// after `rest` (both counted in the width). A word longer than a line gets a line of its own.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    wrap_words(text.split_whitespace(), width, first, rest)
}

/// [`wrap`] over words given one by one: a word may hold spaces that must not break.
pub fn wrap_words<'a>(
    words: impl IntoIterator<Item = &'a str>,
    width: usize,
    first: &str,
    rest: &str,
) -> String {
    let mut out = String::from(first);
    let mut column = first.chars().count();
    let mut line_empty = true;
    for word in words {
        let len = word.chars().count();
        if !line_empty && column + 1 + len > width {
            out.push('\n');
            out.push_str(rest);
            column = rest.chars().count();
            line_empty = true;
        }
        if !line_empty {
            out.push(' ');
            column += 1;
        }
        out.push_str(word);
        column += len;
        line_empty = false;
    }
    out
}

/// `list`: every version, its technique, tuned block size and origin, wrapped to `width`.
pub fn format_list(width: usize) -> String {
    let indent = "    ";
    let mut out = String::new();
    for v in Version::all() {
        let tuned = match v.info().tuned_block {
            kernels_gpu::policy::TunedBlock::Fixed(block) => block.to_string(),
            kernels_gpu::policy::TunedBlock::BySize { tiers, above } => {
                let tiers: Vec<String> = tiers
                    .iter()
                    .map(|(up_to, block)| format!("{block} up to 2^{}", up_to.ilog2()))
                    .collect();
                format!("{}, then {above}", tiers.join(", "))
            }
        };
        let first = format!("{:<4}{} — ", v.name(), v.slug());
        out += &wrap(v.technique(), width, &first, indent);
        out.push('\n');
        out += &wrap(&format!("tuned block: {tuned}"), width, indent, indent);
        out.push('\n');
        // "Harris's Kernel 6" and the like stay on one line.
        let origin = origin_text(v);
        let mut words: Vec<String> = Vec::new();
        for (i, part) in origin.split(" · ").enumerate() {
            let unit = if i == 0 {
                part.to_string()
            } else {
                format!("· {part}")
            };
            if unit.chars().count() <= 30 {
                words.push(unit);
            } else {
                words.extend(unit.split_whitespace().map(String::from));
            }
        }
        out += &wrap_words(
            words.iter().map(String::as_str),
            width,
            &format!("{indent}origin: "),
            &format!("{indent}        "),
        );
        out.push('\n');
    }
    out.push('\n');
    out += &wrap(
        "The tutorial series this project follows numbers its code chapters from 0 (v0…v7), as \
         this project does; its diagrams and notebook, and Mark Harris's slides, number them \
         from 1 (their V2 is v1 here, V4 is v3, V5 is v4).",
        width,
        "",
        "",
    );
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_one_line_without_repeated_causes() {
        #[derive(Debug)]
        struct Inner;
        impl std::fmt::Display for Inner {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("no CUDA driver")
            }
        }
        impl std::error::Error for Inner {}
        #[derive(Debug)]
        struct Outer(Inner);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "no GPU: {}", self.0)
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let error = anyhow::Error::new(Outer(Inner)).context("bench times the GPU");
        assert_eq!(
            error_line(&error),
            "bench times the GPU: no GPU: no CUDA driver"
        );
        assert_eq!(error_line(&anyhow::anyhow!("two\nlines")), "two lines");
    }

    #[test]
    fn wrap_breaks_at_spaces_within_the_width() {
        let text = "one two three four five six seven";
        assert_eq!(
            wrap(text, 14, "> ", "  "),
            "> one two\n  three four\n  five six\n  seven"
        );
        assert_eq!(wrap("unbreakable-word x", 5, "", ""), "unbreakable-word\nx");
        assert_eq!(wrap("", 10, "a ", " "), "a ");
        assert_eq!(wrap_words(["a b", "c d"], 4, "", ""), "a b\nc d");
    }

    #[test]
    fn list_fits_the_width_and_names_every_version() {
        for width in [60, 80, 100] {
            let list = format_list(width);
            for line in list.lines() {
                // Only a single word longer than the line may overflow it.
                assert!(
                    line.chars().count() <= width || !line.trim().contains(' '),
                    "{width}: `{line}`"
                );
            }
            for v in Version::all() {
                assert!(
                    list.contains(&format!("{:<4}{} — ", v.name(), v.slug())),
                    "{list}"
                );
            }
            assert!(list.contains("Harris's Kernel 7"));
        }
    }
}
