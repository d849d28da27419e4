//! What the command line prints: one version in detail, or every version as one table.

use crate::run::{Backend, Case, Measure, Outcome};
use crate::versions::{LaunchShape, VERSIONS};

pub fn verdict_word(outcome: &Outcome) -> &'static str {
    if outcome.verdict.pass { "PASS" } else { "FAIL" }
}

fn shape_text(passes: &[(usize, LaunchShape)]) -> String {
    let (_, first) = passes[0];
    let mut text = format!("{} × {}", first.grid, first.block);
    if passes.len() > 1 {
        let rest: Vec<String> = passes[1..]
            .iter()
            .map(|(_, s)| format!("{} × {}", s.grid, s.block))
            .collect();
        text.push_str(&format!(", then {}", rest.join(", ")));
    }
    text
}

pub fn print_header(backend: &Backend, case: &Case) {
    println!("backend  {}", backend.describe());
    println!(
        "input    {} × {} ({}, seed {}), op {}, block {}",
        case.len,
        case.dtype,
        case.pattern.name(),
        case.seed,
        case.op,
        case.block
            .map_or_else(|| "tuned per version".to_string(), |b| b.to_string())
    );
}

/// One version in detail.
pub fn print_outcome(case: &Case, outcome: &Outcome) {
    let v = outcome.version;
    let (_, first) = outcome.passes[0];
    println!();
    println!("{} {} — {}", v.name(), v.slug, v.technique);
    println!("  seeds     {}", v.seed_names());
    println!(
        "  launch    {} ({} launch{}), {} B shared per block",
        shape_text(&outcome.passes),
        outcome.passes.len(),
        if outcome.passes.len() == 1 { "" } else { "es" },
        first.shared_bytes
    );
    match &outcome.measure {
        Measure::Gpu {
            first_pass_ms,
            to_scalar_ms,
            repeat,
            deterministic,
        } => {
            println!(
                "  gpu time  first pass {:.4} ms = {:.0} GB/s · to the scalar {:.4} ms (median of {repeat}, CUDA events behind a GPU pre-roll, after warm-up){}",
                first_pass_ms,
                outcome.first_pass_gbps(case).unwrap_or(f64::NAN),
                to_scalar_ms,
                if *deterministic {
                    " · result bitwise identical in every run"
                } else {
                    " · NOT bitwise identical across runs"
                }
            );
        }
        Measure::Sim { wall_time, stats } => {
            println!(
                "  simulated {} blocks, {} threads, {} barriers, {} warp syncs, {} shuffles, {} shared / {} global accesses checked in {:.2} s (CPU time, not GPU time)",
                stats.blocks,
                stats.threads,
                stats.barriers,
                stats.warp_syncs,
                stats.shuffles,
                stats.shared_accesses,
                stats.global_accesses,
                wall_time.as_secs_f64()
            );
        }
    }
    let tolerance = if outcome.verdict.tolerance == 0.0 {
        "exact".to_string()
    } else {
        format!(
            "bound {:.2e} (h = {})",
            outcome.verdict.tolerance, outcome.additions
        )
    };
    println!(
        "  result    got {} · CPU reference {} · rel. error {:.2e} · {} · {}",
        outcome.got,
        outcome.expected,
        outcome.verdict.rel_error,
        tolerance,
        verdict_word(outcome)
    );
}

/// Every version as one table; failed runs get a line with their error.
pub fn print_table(case: &Case, results: &[(String, Result<Outcome, String>)]) {
    println!();
    println!(
        "{:<4} {:<18} {:<28} {:>11} {:>9} {:>11} {:>10}  result",
        "ver", "technique", "launch (first pass)", "1st pass ms", "GB/s", "scalar ms", "rel.err"
    );
    for (name, result) in results {
        match result {
            Ok(outcome) => {
                let (_, first) = outcome.passes[0];
                let launch = format!("{} × {}, {} B", first.grid, first.block, first.shared_bytes);
                let (first_ms, gbps, scalar_ms) = match outcome.measure {
                    Measure::Gpu {
                        first_pass_ms,
                        to_scalar_ms,
                        ..
                    } => (
                        format!("{first_pass_ms:.4}"),
                        format!("{:.0}", outcome.first_pass_gbps(case).unwrap_or(f64::NAN)),
                        format!("{to_scalar_ms:.4}"),
                    ),
                    Measure::Sim { wall_time, .. } => (
                        "-".into(),
                        "-".into(),
                        format!("sim {:.2} s", wall_time.as_secs_f64()),
                    ),
                };
                println!(
                    "{:<4} {:<18} {:<28} {:>11} {:>9} {:>11} {:>10.2e}  {}",
                    outcome.version.name(),
                    outcome.version.slug,
                    launch,
                    first_ms,
                    gbps,
                    scalar_ms,
                    outcome.verdict.rel_error,
                    verdict_word(outcome)
                );
            }
            Err(error) => println!("{name:<4} ERROR: {error}"),
        }
    }
}

/// `list`: every version, its technique, launch shape and both seed numberings.
pub fn print_list() {
    println!(
        "{:<4} {:<18} {:<64} {:<20} seeds",
        "ver", "technique", "what it does", "block (tuned)"
    );
    for v in &VERSIONS {
        println!(
            "{:<4} {:<18} {:<64} {:<20} {}",
            v.name(),
            v.slug,
            v.technique,
            v.tuned_block_text(),
            v.seed_names()
        );
    }
    println!();
    println!(
        "Seed 003 numbers the series from 0 (v0…v7), as this project does; seeds 000–002, the"
    );
    println!(
        "notebook 004 and Harris's slides number it from 1 (their V2 is v1 here, V4 is v3, V5 is v4)."
    );
}
