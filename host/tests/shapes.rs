//! Every row, column and segment reduction — every element type and operation, every kernel
//! the shape chooses (a warp, a block or several blocks per row; columns in bands) — on the
//! simulator, each result against the CPU reference of its own row.

use host::element::{DType, HostElement, OpKind};
use host::input::{Pattern, generate};
use host::reference::Checked;
use host::shapes::{ShapeSpec, run_and_check};
use host::with_dtype_and_op;
use libtest_mimic::{Arguments, Failed, Trial};
use reduce_rs::{Reducer, Schedule};

/// Shapes that reach every kernel on the simulated GPU (2 SMs: 8 blocks of 512 threads run
/// at once): empty ones, a warp or a few lanes per row, a block per row, a row split over
/// blocks, columns in one band and in several (with vector loads where the rows start on
/// 16-byte boundaries, scalar ones where they do not), ragged segments of short and of long
/// rows.
fn shapes() -> Vec<(&'static str, ShapeSpec)> {
    vec![
        ("rows_0x0", ShapeSpec::Rows { rows: 0, cols: 0 }),
        ("rows_3x0", ShapeSpec::Rows { rows: 3, cols: 0 }),
        ("rows_1x1", ShapeSpec::Rows { rows: 1, cols: 1 }),
        ("rows_7x31", ShapeSpec::Rows { rows: 7, cols: 31 }),
        (
            "rows_40x257",
            ShapeSpec::Rows {
                rows: 40,
                cols: 257,
            },
        ),
        (
            "rows_9x2003",
            ShapeSpec::Rows {
                rows: 9,
                cols: 2003,
            },
        ),
        (
            "rows_2x40003",
            ShapeSpec::Rows {
                rows: 2,
                cols: 40_003,
            },
        ),
        (
            "rows_1x1048579",
            ShapeSpec::Rows {
                rows: 1,
                cols: (1 << 20) + 3,
            },
        ),
        // Short rows, several per warp: 1 lane per row (5 elements), 4 (37 f32), 16 (130 f32).
        ("rows_300x5", ShapeSpec::Rows { rows: 300, cols: 5 }),
        (
            "rows_100x37",
            ShapeSpec::Rows {
                rows: 100,
                cols: 37,
            },
        ),
        (
            "rows_50x130",
            ShapeSpec::Rows {
                rows: 50,
                cols: 130,
            },
        ),
        ("columns_0x5", ShapeSpec::Columns { rows: 0, cols: 5 }),
        // Whole vectors per row for every type (64 columns), in several bands.
        (
            "columns_700x64",
            ShapeSpec::Columns {
                rows: 700,
                cols: 64,
            },
        ),
        // Narrow: a block walks many rows at once (32 for 24 f32), in several bands.
        (
            "columns_5000x24",
            ShapeSpec::Columns {
                rows: 5000,
                cols: 24,
            },
        ),
        (
            "columns_3x1000",
            ShapeSpec::Columns {
                rows: 3,
                cols: 1000,
            },
        ),
        (
            "columns_301x70",
            ShapeSpec::Columns {
                rows: 301,
                cols: 70,
            },
        ),
        ("segments_200_short", ShapeSpec::ragged(200, 40, 1)),
        ("segments_12_long", ShapeSpec::ragged(12, 3000, 2)),
    ]
}

fn run<T: HostElement, O: Checked<T> + Default>(
    spec: &ShapeSpec,
    schedule: Schedule,
) -> Result<(), Failed> {
    let pattern = if O::KIND == OpKind::Sum {
        Pattern::SmallIntegers
    } else {
        Pattern::Random
    };
    let input: Vec<T> = generate(pattern, spec.len(), spec.len() as u64 ^ 0x5a);
    let reducer = Reducer::simulator_with(schedule);
    let (_, name, verdict) =
        run_and_check::<T, O>(&reducer, &input, spec).map_err(|e| format!("{e:#}"))?;
    if verdict.pass() {
        Ok(())
    } else {
        Err(format!(
            "{name}: {} of {} results wrong; {}",
            verdict.failed,
            verdict.results,
            verdict.first_failure.unwrap_or_default()
        )
        .into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for (label, spec) in shapes() {
        for dtype in DType::ALL {
            for op in OpKind::ALL {
                // Short rows under both schedules; the big ones in order only.
                let schedules: &[Schedule] = if spec.len() > 100_000 {
                    &[Schedule::InOrder]
                } else {
                    &[Schedule::InOrder, Schedule::Shuffled { seed: 9 }]
                };
                for &schedule in schedules {
                    let spec = spec.clone();
                    let prefix = if schedule == Schedule::InOrder {
                        ""
                    } else {
                        "shuffled::"
                    };
                    trials.push(Trial::test(
                        format!("{prefix}{label}::{dtype}::{op}"),
                        move || with_dtype_and_op!(dtype, op, run(&spec, schedule)),
                    ));
                }
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
