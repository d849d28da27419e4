//! Every row, column and segment reduction — every element type and operation, every kernel
//! the shape chooses (a warp, a block or several blocks per row; columns in bands) — on the
//! simulator, each result against the CPU reference of its own row. The reproducible mode
//! (`repro::…`: float sums and every mean, on the reproducible twins of the kernels) too, each
//! result also against the reproducible whole-array sum of its row alone, bit for bit. Kernels
//! the planner does not choose on the simulator are forced (`bands::`: the band kernel over the
//! narrow matrices the planner reads flat; `flat_grid::`: the flat read on grids of some
//! hundred blocks).

use host::element::{DType, HostElement, OpKind};
use host::input::{Pattern, generate};
use host::reference::Checked;
use host::shapes::{ShapeSpec, check_each, elements_of, is_reproducible};
use host::with_dtype_and_op;
use libtest_mimic::{Arguments, Failed, Trial};
use reduce_rs::plan::shapes::{ShapeKernel, ShapePlan};
use reduce_rs::{Reducer, Schedule};

/// Shapes that reach every kernel on the simulated GPU (2 SMs: 8 blocks of 512 threads or 16
/// of 256 run at once; fewer than 4 rows of more than 64 KiB are split): empty ones, a warp or
/// a few lanes per row, a block per row, a row split over blocks, columns in one band and in
/// several (with vector loads where the rows start on 16-byte boundaries, scalar ones where
/// they do not), ragged segments of short and of long rows.
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
        // Rows of 20 KiB of f32 (10 KiB of 16-bit types): a block per row for every operator,
        // min, max and the arg operators too (`warp_per_row`).
        (
            "rows_9x5003",
            ShapeSpec::Rows {
                rows: 9,
                cols: 5003,
            },
        ),
        // Rows of just under 16 KiB of f32, as many as a quarter of the simulated GPU's warps: a
        // warp per row for argmin and argmax of 2- and 4-byte values (their rule's second
        // branch; a whole warp each, as few rows), a block for the others (and for the 8-byte
        // values' arg rows, 32 KiB).
        (
            "rows_64x4003",
            ShapeSpec::Rows {
                rows: 64,
                cols: 4003,
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
        // Short rows, several per warp, as many as keep a third of the simulated GPU's lanes
        // busy (`FEW_LANES_DIVISOR`): 1 lane per row (5 elements), 1 to 8 (37), 1 to 32 (130);
        // fewer such rows get more lanes each (8 for 300 rows, 32 for 100 and 50).
        (
            "rows_1400x5",
            ShapeSpec::Rows {
                rows: 1400,
                cols: 5,
            },
        ),
        (
            "rows_1400x37",
            ShapeSpec::Rows {
                rows: 1400,
                cols: 37,
            },
        ),
        (
            "rows_1400x130",
            ShapeSpec::Rows {
                rows: 1400,
                cols: 130,
            },
        ),
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
        // Wide tiles: 32 groups of columns (1024 f32), where every thread is a carrier and
        // the threads of row offset 0 add up their group's; in one band, and (700 rows: 8
        // tiles × 2 bands of whole runs, the last with 60 rows past them) in several: not
        // for the arg operators of 4- and 8-byte types, whose bands fill half a wave
        // (`reduce/tests/band_columns.rs` puts f32's in 3 bands).
        (
            "columns_40x1024",
            ShapeSpec::Columns {
                rows: 40,
                cols: 1024,
            },
        ),
        (
            "columns_700x1024",
            ShapeSpec::Columns {
                rows: 700,
                cols: 1024,
            },
        ),
        // Whole vectors per row for every type (64 columns), in 2 tiles; in several bands
        // for the 8-byte types.
        (
            "columns_700x64",
            ShapeSpec::Columns {
                rows: 700,
                cols: 64,
            },
        ),
        // Narrow matrices are read flat (`columns_narrow`: 2, 8, 3 and 6 columns here, and the
        // 24 below); the band kernel's narrowest tiles (1 and 2 groups of columns, a block 256
        // and 128 rows at a time) are reached forced (`bands::` below).
        ("columns_900x2", ShapeSpec::Columns { rows: 900, cols: 2 }),
        ("columns_900x8", ShapeSpec::Columns { rows: 900, cols: 8 }),
        ("columns_900x3", ShapeSpec::Columns { rows: 900, cols: 3 }),
        ("columns_900x6", ShapeSpec::Columns { rows: 900, cols: 6 }),
        // 24 columns: read flat where the partials stay within 8192 (30 blocks here); in bands
        // a block walks 64 rows at once, in 2 tiles of 4 groups.
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

/// A kernel the planner did not choose, and perhaps a split (`Reducer::plan_each_split`).
#[derive(Clone, Copy, Debug)]
struct Forced {
    kernel: ShapeKernel,
    split: Option<usize>,
}

/// The results of `input` laid out as `spec` by `forced`'s kernel (and split), planned as the
/// library would plan it if it chose that kernel (`Reducer::plan_each_with`, or
/// `Reducer::plan_each_split`), on the simulator under `schedule`.
fn forced_results<T: HostElement, O: Checked<T> + Default>(
    input: &[T],
    spec: &ShapeSpec,
    forced: Forced,
    schedule: Schedule,
) -> Result<(ShapePlan, String, Vec<O::Output>), Failed> {
    let shape = spec.shape();
    let reducer = Reducer::simulator_with(schedule);
    let (plan, name) = match forced.split {
        Some(split) => reducer.plan_each_split::<T, O>(&shape, forced.kernel, split),
        None => reducer.plan_each_with::<T, O>(&shape, forced.kernel),
    }
    .ok_or_else(|| {
        format!("{forced:?}: the kernel cannot reduce {spec:?}, or refuses the split")
    })?;
    let got = reducer
        .reduce_each_planned(O::default(), input, shape, plan)
        .map_err(|e| format!("{e:#}"))?;
    Ok((plan, name, got))
}

/// `spec` reduced as the library reduces it (or by `forced`, in the plain mode), each result
/// checked; in the reproducible mode also bit for bit against each row reduced alone.
fn run<T: HostElement, O: Checked<T> + Default>(
    spec: &ShapeSpec,
    schedule: Schedule,
    reproducible: bool,
    forced: Option<Forced>,
) -> Result<(), Failed> {
    // The reproducible mode's sums are of random values, where the order of the additions
    // would show in the bits.
    let pattern = if O::KIND == OpKind::Sum && !reproducible {
        Pattern::SmallIntegers
    } else {
        Pattern::Random
    };
    let input: Vec<T> = generate(pattern, spec.len(), spec.len() as u64 ^ 0x5a);
    let reducer = Reducer::simulator_with(schedule).with_reproducible(reproducible);
    let (plan, name, got) = match forced {
        Some(forced) => forced_results::<T, O>(&input, spec, forced, schedule)?,
        None => {
            let (plan, name) = reducer.plan_each::<T, O>(&spec.shape());
            let got = reducer
                .reduce_each(O::default(), &input[..], spec.shape())
                .map_err(|e| format!("{e:#}"))?;
            (plan, name, got)
        }
    };
    if reproducible != is_reproducible(&name) {
        return Err(format!("{name} ran in the mode {reproducible}").into());
    }
    if forced.is_some_and(|forced| forced.kernel != plan.kernel) {
        return Err(format!("{name} ran instead of {forced:?}").into());
    }
    let verdict = check_each::<T, O>(&input, spec, &plan, &name, &got);
    if !verdict.pass() {
        return Err(format!(
            "{name}: {} of {} results wrong; {}",
            verdict.failed,
            verdict.results,
            verdict.first_failure.unwrap_or_default()
        )
        .into());
    }
    if reproducible {
        // Batch invariance: a sample of the results (every one of up to 24, else 24 spread
        // out) against the whole-array kernel's result for that row alone.
        let count = got.len();
        let sample: Vec<usize> = if count <= 24 {
            (0..count).collect()
        } else {
            (0..24).map(|k| k * (count - 1) / 23).collect()
        };
        for i in sample {
            let alone = reducer
                .reduce(O::default(), &elements_of(&input, spec, i)[..])
                .map_err(|e| format!("{e:#}"))?;
            // `Debug` tells -0.0 from +0.0, and any two finite values apart.
            let (got, alone) = (format!("{:?}", got[i]), format!("{alone:?}"));
            if got != alone {
                return Err(format!("{name}: result {i} is {got}, but {alone} alone").into());
            }
        }
    }
    Ok(())
}

/// The shapes above reach every plain shape kernel of every element type and operation with
/// some thousands of elements (not only with a row or two of a few): the planner's choice for
/// each is collected, and each kernel must be among them.
fn every_kernel_is_reached() -> Result<(), Failed> {
    use reduce_rs::plan::shapes::Family;
    let reducer = Reducer::simulator();
    let mut chosen = std::collections::BTreeSet::new();
    for (_, spec) in shapes().into_iter().filter(|(_, spec)| spec.len() >= 4096) {
        for dtype in DType::ALL {
            for op in OpKind::ALL {
                chosen.insert(with_dtype_and_op!(
                    dtype,
                    op,
                    chosen_kernel(&reducer, &spec)
                ));
            }
        }
    }
    let missing: Vec<String> = DType::ALL
        .iter()
        .flat_map(|&dtype| OpKind::ALL.iter().map(move |&op| (dtype, op)))
        .flat_map(|(dtype, op)| {
            ShapeKernel::ALL
                .iter()
                .map(move |&kernel| Family::Plain.entry(kernel, dtype.name(), op.name()))
        })
        .filter(|name| !chosen.contains(name))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("no shape reaches {}", missing.join(", ")).into())
    }
}

/// Whether the planner reads `spec` flat (`ColumnsNarrow`) for `dtype` and `op`.
fn narrow_planned(spec: &ShapeSpec, dtype: DType, op: OpKind) -> bool {
    let reducer = Reducer::simulator();
    let name = with_dtype_and_op!(dtype, op, chosen_kernel(&reducer, spec));
    name.starts_with("columns_narrow_")
}

fn chosen_kernel<T: HostElement, O: Checked<T> + Default>(
    reducer: &Reducer,
    spec: &ShapeSpec,
) -> String {
    reducer.plan_each::<T, O>(&spec.shape()).1
}

/// The trial `name`: `run` over `spec` for `dtype` and `op`.
fn trial(
    name: String,
    (spec, dtype, op): (ShapeSpec, DType, OpKind),
    schedule: Schedule,
    reproducible: bool,
    forced: Option<Forced>,
) -> Trial {
    Trial::test(name, move || {
        with_dtype_and_op!(dtype, op, run(&spec, schedule, reproducible, forced))
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![Trial::test(
        "every_kernel_is_reached",
        every_kernel_is_reached,
    )];
    for (label, spec) in shapes() {
        for dtype in DType::ALL {
            for op in OpKind::ALL {
                // The reproducible mode where it covers the reduction.
                let covered = reduce_rs::plan::reproducible::kernel_for(dtype, op).is_some();
                let modes: &[bool] = if covered { &[false, true] } else { &[false] };
                // Short rows under both schedules; the big ones in order only.
                let schedules: &[Schedule] = if spec.len() > 100_000 {
                    &[Schedule::InOrder]
                } else {
                    &[Schedule::InOrder, Schedule::Shuffled { seed: 9 }]
                };
                for &reproducible in modes {
                    for &schedule in schedules {
                        let spec = spec.clone();
                        let prefix = match (reproducible, schedule == Schedule::InOrder) {
                            (false, true) => "",
                            (false, false) => "shuffled::",
                            (true, true) => "repro::",
                            (true, false) => "shuffled::repro::",
                        };
                        trials.push(trial(
                            format!("{prefix}{label}::{dtype}::{op}"),
                            (spec, dtype, op),
                            schedule,
                            reproducible,
                            None,
                        ));
                    }
                }
                // Where the planner reads a matrix flat, the band kernel over it too (its
                // narrowest tiles), under both schedules.
                if narrow_planned(&spec, dtype, op) {
                    for schedule in [Schedule::InOrder, Schedule::Shuffled { seed: 9 }] {
                        let spec = spec.clone();
                        let prefix = if schedule == Schedule::InOrder {
                            "bands::"
                        } else {
                            "shuffled::bands::"
                        };
                        let bands = Forced {
                            kernel: ShapeKernel::Columns,
                            split: None,
                        };
                        trials.push(trial(
                            format!("{prefix}{label}::{dtype}::{op}"),
                            (spec, dtype, op),
                            schedule,
                            false,
                            Some(bands),
                        ));
                    }
                }
            }
        }
    }
    // The flat read on grids the planner does not make on the simulator: a multiple of the
    // column count's odd part past `7 · ⌊256 / cols⌋` blocks, whose last block loads partials
    // eight at a time and whose threads past the last whole group of `cols` take none.
    for (label, rows, cols, split) in [
        ("flat_grid::columns_900x3", 900, 3, 999),
        ("flat_grid::columns_700x24", 700, 24, 999),
        ("flat_grid::columns_513x5", 513, 5, 1005),
        ("flat_grid::columns_301x32", 301, 32, 300),
    ] {
        let spec = ShapeSpec::Columns { rows, cols };
        for dtype in DType::ALL {
            if !kernels_gpu::shapes::columns_narrow::is_narrow(cols, dtype.size()) {
                continue;
            }
            // One operator of each kind of accumulator: a sum, a value, a value and an index.
            for op in [OpKind::Sum, OpKind::Max, OpKind::ArgMin] {
                let flat = Forced {
                    kernel: ShapeKernel::ColumnsNarrow,
                    split: Some(split),
                };
                trials.push(trial(
                    format!("{label}::{dtype}::{op}"),
                    (spec.clone(), dtype, op),
                    Schedule::InOrder,
                    false,
                    Some(flat),
                ));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
