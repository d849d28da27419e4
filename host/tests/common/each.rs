//! The reproducible mode over rows, columns and segments, on either backend: for every type and
//! operation the mode covers, every shape of a table reduced with several block sizes and
//! grids must give the same bits each time, and each result the bits of the reproducible
//! whole-array reduction of its row alone (batch invariance), within the binned sum's error
//! bound of the reference. On a GPU the device-output calls (`reduce_each_into`,
//! `reduce_segments_into`) must write the same bits.

use super::Runner;
use host::element::{DType, HostElement, OpKind};
use host::input::{Pattern, generate};
use host::reference::Checked;
use host::shapes::{ShapeSpec, check_each, elements_of, is_reproducible};
use host::with_dtype_and_op;
use libtest_mimic::{Failed, Trial};
use reduce_rs::{Operation, Reducer};

/// One shape of the table.
#[derive(Clone, Debug)]
pub struct EachCase {
    pub label: String,
    pub spec: ShapeSpec,
}

fn rows(rows: usize, cols: usize) -> EachCase {
    EachCase {
        label: format!("rows_{rows}x{cols}"),
        spec: ShapeSpec::Rows { rows, cols },
    }
}

fn columns(rows: usize, cols: usize) -> EachCase {
    EachCase {
        label: format!("columns_{rows}x{cols}"),
        spec: ShapeSpec::Columns { rows, cols },
    }
}

fn segments(count: usize, mean: usize) -> EachCase {
    EachCase {
        label: format!("segments_{count}x{mean}"),
        spec: ShapeSpec::ragged(count, mean, 3),
    }
}

/// The shapes: batches of 1 to 4096 rows (several blocks per row, a block per row, a warp or a
/// few lanes per row), columns of wide and narrow matrices, ragged segments with empty ones.
/// The GPU's are larger: the bench's row shapes among them.
pub fn cases(gpu: bool) -> Vec<EachCase> {
    if gpu {
        vec![
            rows(1, (1 << 22) + 3),
            rows(16, 1 << 22),
            rows(7, 100_003),
            rows(64, 128_256),
            rows(1000, 20_000),
            rows(4096, 512),
            rows(8192, 8192),
            rows(32768, 4096),
            rows(65536, 512),
            columns(100_003, 7),
            columns(8192, 1024),
            columns(300, 8192),
            segments(10_000, 300),
            segments(50, 100_000),
        ]
    } else {
        vec![
            rows(1, 5003),
            rows(3, 20_003),
            rows(7, 1000),
            rows(64, 130),
            rows(4096, 5),
            columns(1000, 7),
            columns(130, 64),
            columns(5, 4096),
            segments(60, 40),
            segments(9, 3000),
        ]
    }
}

/// Block sizes (`None`: the mode's default) and grid limits every shape is reduced with.
fn settings(gpu: bool) -> Vec<(Option<u32>, Option<u32>)> {
    if gpu {
        vec![
            (None, None),
            (Some(64), Some(7)),
            (Some(1024), None),
            (Some(128), Some(1)),
        ]
    } else {
        vec![(None, None), (Some(64), Some(1)), (Some(1024), Some(3))]
    }
}

/// Trials `repro::each::{shape}::{dtype}::{op}` for every type and operation the mode covers.
pub fn trials(cases: Vec<EachCase>, prefix: &str, runner: Runner, gpu: bool) -> Vec<Trial> {
    let mut trials = Vec::new();
    for case in cases {
        for dtype in DType::ALL {
            for op in OpKind::ALL {
                if reduce_rs::plan::reproducible::kernel_for(dtype, op).is_none() {
                    continue;
                }
                let (case, runner) = (case.clone(), runner.clone());
                let name = format!("{prefix}repro::each::{}::{dtype}::{op}", case.label);
                trials.push(Trial::test(name, move || {
                    let run = |reducer: &mut Reducer| {
                        with_dtype_and_op!(dtype, op, run(reducer, &case.spec, gpu))
                    };
                    match runner {
                        Runner::Simulator(schedule) => run(&mut Reducer::simulator_with(schedule)),
                        Runner::Shared(reducer) => {
                            let mut reducer = reducer.lock().map_err(
                                |_| "a previous test panicked while holding the reducer",
                            )?;
                            let result = run(&mut reducer);
                            reducer.set_reproducible(false);
                            reducer.set_max_blocks(None);
                            result
                        }
                    }
                }));
            }
        }
    }
    trials
}

/// `Debug` tells `-0.0` from `+0.0` and any two finite values apart: results compared as text
/// are compared bit for bit (but for NaN's payload, which the kernels fix to one).
fn text(value: impl std::fmt::Debug) -> String {
    format!("{value:?}")
}

fn run<T: HostElement, O: Checked<T> + Default>(
    reducer: &mut Reducer,
    spec: &ShapeSpec,
    gpu: bool,
) -> Result<(), Failed> {
    let input: Vec<T> = generate(Pattern::Random, spec.len(), spec.len() as u64 ^ 0xeac);
    reducer.set_reproducible(true);
    let mut first: Option<Vec<String>> = None;
    for (block, grid) in settings(gpu) {
        reducer.set_block_size(block).map_err(|e| e.to_string())?;
        reducer.set_max_blocks(grid);
        let (plan, name) = reducer.plan_each::<T, O>(&spec.shape());
        if !is_reproducible(&name) {
            return Err(format!("{name} is not a reproducible kernel").into());
        }
        let got = reducer
            .reduce_each(O::default(), &input[..], spec.shape())
            .map_err(|e| format!("{name}: {e:#}"))?;
        let got_text: Vec<String> = got.iter().map(text).collect();
        match &first {
            None => {
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
                first = Some(got_text.clone());
            }
            Some(first) => {
                if let Some(i) = (0..got.len()).find(|&i| first[i] != got_text[i]) {
                    return Err(format!(
                        "{name} (block {block:?}, grid {grid:?}): result {i} is {}, but {} with the mode's default launch",
                        got_text[i], first[i]
                    )
                    .into());
                }
            }
        }
        if reducer.gpu_backend().is_some() {
            device_outputs::<T, O>(reducer, &input, spec, &got_text)
                .map_err(|e| format!("{name} (block {block:?}, grid {grid:?}): {e}"))?;
        }
    }
    reducer.set_block_size(None).map_err(|e| e.to_string())?;
    reducer.set_max_blocks(None);
    // Batch invariance: every result (up to 32 of them, spread out) against the whole-array
    // kernel's for its row alone.
    let first = first.unwrap_or_default();
    let count = first.len();
    let sample: Vec<usize> = if count <= 32 {
        (0..count).collect()
    } else {
        (0..32).map(|k| k * (count - 1) / 31).collect()
    };
    for i in sample {
        let alone = reducer
            .reduce(O::default(), &elements_of(&input, spec, i)[..])
            .map_err(|e| format!("{e:#}"))?;
        if first[i] != text(alone) {
            return Err(format!("result {i} is {}, but {:?} alone", first[i], alone).into());
        }
    }
    Ok(())
}

/// `reduce_each_into` (and for segments `reduce_segments_into`, offsets on the device) write
/// the bits `reduce_each` returned (`expected`, as text); empty rows `0` for a sum, NaN for a
/// mean.
fn device_outputs<T: HostElement, O: Checked<T> + Default>(
    reducer: &Reducer,
    input: &[T],
    spec: &ShapeSpec,
    expected: &[String],
) -> Result<(), String> {
    let stream = reducer.stream().ok_or("no stream")?.clone();
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    let device_input = stream.clone_htod(input).map_err(|e| fail(&e))?;
    let results = expected.len();
    let shape = spec.shape();
    let compare = |written: Vec<O::Device>, call: &str| -> Result<(), String> {
        for (i, value) in written.into_iter().enumerate() {
            let got = match shape.len_of(i) {
                Some(0) => match <O as Operation<T>>::empty_device() {
                    Some(empty) if text(value) == text(empty) => continue,
                    None if text(value) == "NaN" => continue,
                    _ => text(value),
                },
                _ => text(O::output(value)),
            };
            if got != expected[i] {
                return Err(format!(
                    "{call}: result {i} is {got}, reduce_each gave {}",
                    expected[i]
                ));
            }
        }
        Ok(())
    };
    let mut output = stream
        .alloc_zeros::<O::Device>(results)
        .map_err(|e| fail(&e))?;
    reducer
        .reduce_each_into(O::default(), &device_input, shape, &mut output)
        .map_err(|e| fail(&e))?;
    compare(
        stream.clone_dtoh(&output).map_err(|e| fail(&e))?,
        "reduce_each_into",
    )?;
    if let ShapeSpec::Segments { offsets } = spec {
        let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
        let device_offsets = stream.clone_htod(&wide).map_err(|e| fail(&e))?;
        let mut output = stream
            .alloc_zeros::<O::Device>(results)
            .map_err(|e| fail(&e))?;
        // SAFETY: the offsets ascend from 0 to the input's length (`ShapeSpec::ragged`).
        unsafe {
            reducer.reduce_segments_into(O::default(), &device_input, &device_offsets, &mut output)
        }
        .map_err(|e| fail(&e))?;
        compare(
            stream.clone_dtoh(&output).map_err(|e| fail(&e))?,
            "reduce_segments_into",
        )?;
    }
    Ok(())
}
