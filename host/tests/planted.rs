//! Planted bugs: proof that the checks catch realistic kernel bugs.
//!
//! Each test plants ONE bug: a copy of the real kernel (v8, `rows_split`, `columns`), written
//! with the kernels' device API in `planted/copies.rs`, with one change marked "the bug:". It
//! installs the copy in place of the registered kernel of the same name
//! (`Reducer::with_simulated_kernel`), runs it through the harness the test tables use
//! (`run_versions` and the CPU reference, through `common::run_outcome`, or
//! `host::shapes::run_and_check` for shapes), and asserts the failure that harness reports: its
//! kind, and its text. As a control, the real kernel and the copy without the bug pass the same
//! cases through the same harness.
//!
//! | planted bug | caught by |
//! |---|---|
//! | v8's last block never sets the ticket counter back to 0 | `Error::Contract` (the simulator backend keeps counters across launches and checks them after each) |
//! | `Max`'s identity is 0, not the type's smallest value | the independent reference, on an all-negative input |
//! | v8's last block reads `grid - 1` partials | the result check, on a 2-block grid (a 1-block grid passes) |
//! | v8's scalar tail starts one element early (that element counted twice) | the exact small-integer sum (min and max pass) |
//! | v8's head stops one element short | the result check at the misaligned starts of `common::boundaries()` |
//! | v8's grid-stride remainder loop runs once (`if` for `while`) | the result check at the sizes of `common::boundaries()` just past a grid stride |
//! | `rows_split`'s pieces drop the row's last `len % split` elements | `run_and_check`, on a row split over several blocks |
//! | `columns`' last band drops the rows past its last whole run | `run_and_check`, on columns in several bands |
//! | v8 without the fence before its ticket | the simulator: `GlobalRace` |
//! | v8 without the barrier before the ticket is read | the simulator: `UninitializedSharedRead` |
//!
//! `cargo test -p host --test planted -- --nocapture` prints the first line of every report.

mod common;
#[path = "planted/copies.rs"]
mod copies;

use common::{TestCase, judge, run_outcome};
use copies::{
    BANDS_DROP_REMAINDER, HEAD_STOPS_SHORT, NO_BARRIER, NO_BUG, NO_FENCE, NO_RESET,
    PIECES_DROP_REMAINDER, REMAINDER_ONCE, SKIPS_LAST_PARTIAL, TAIL_STARTS_EARLY, columns_entry,
    real_v8_entry, rows_split_entry, v8_entry,
};
use host::element::{DType, OpKind};
use host::input::{Pattern, generate};
use host::reference::Checked;
use host::run::{InputSource, Outcome, RunCase};
use host::shapes::{ShapeSpec, run_and_check};
use kernels_gpu::element::Element;
use kernels_gpu::ops::Reduction;
use kernels_gpu::params::SimEntry;
use kernels_gpu::params::{Launch, Params};
use reduce_rs::ops::{Max, Min, Sum};
use reduce_rs::plan::shapes::ShapeKernel;
use reduce_rs::plan::{self, Sizes};
use reduce_rs::{Error, Reducer, Schedule, Version};
use simt::{Access, ErrorKind, LaunchConfig, Region, SimError};

// ---------------------------------------------------------------------------------------------
// The harness around them.

const SCHEDULES: [Schedule; 2] = [Schedule::InOrder, Schedule::Shuffled { seed: 42 }];

/// A simulator that runs `entry` in place of the kernel `name`.
fn planted(schedule: Schedule, name: &str, entry: SimEntry) -> Reducer {
    Reducer::simulator_with(schedule).with_simulated_kernel(name, entry)
}

/// A v8 case as the tables build them (seed from the length), on blocks of 64 threads and at
/// most `grid` blocks.
fn v8_case(dtype: DType, op: OpKind, len: usize, pattern: Pattern, grid: u32) -> TestCase {
    TestCase {
        version: Version::fastest(),
        case: RunCase {
            dtype,
            op,
            len,
            block: Some(64),
            max_blocks: Some(grid),
            offset: 0,
            source: InputSource::Generated {
                pattern,
                seed: len as u64 ^ 0x5eed,
            },
        },
        reproducible: false,
    }
}

/// The table's report of a failure (what `cargo test` would print), and its first line.
fn report(outcome: &anyhow::Result<Outcome>) -> String {
    let failed = judge(outcome).expect_err("the harness reports a failure");
    let message = failed.message().unwrap_or("").to_string();
    message.lines().next().unwrap_or("").to_string()
}

/// The case passes through the harness (the control).
fn passes(reducer: &mut Reducer, test: &TestCase) {
    if let Err(failed) = judge(&run_outcome(reducer, test)) {
        panic!("{}: {:?}", test.name(), failed.message());
    }
}

/// The simulator's report in a harness error, if that is what it is.
fn sim_error(outcome: &anyhow::Result<Outcome>) -> Option<&SimError> {
    match outcome.as_ref().err()?.downcast_ref::<Error>()? {
        Error::Simulator(error) => Some(error),
        _ => None,
    }
}

/// Whether the case's result failed its check (a result came back, and it is wrong).
fn check_failed(outcome: &anyhow::Result<Outcome>) -> bool {
    matches!(outcome, Ok(outcome) if !outcome.verdict.pass)
}

// ---------------------------------------------------------------------------------------------
// 1. A counter that is never set back to 0.

/// Launches `entry` once, directly on the simulator, with `retired` as its counters (so that a
/// test chooses between a fresh counter per launch and one kept across launches), over `input`
/// on `grid` blocks of 64; returns the sum it wrote.
fn launch_f32_sum(
    entry: SimEntry,
    input: &[f32],
    grid: u32,
    retired: &mut [u32],
) -> Result<f32, SimError> {
    let mut partials = vec![f32::NAN; grid as usize];
    let mut output = [f32::NAN];
    let regions = [
        Region::of_slice("input", input, Access::ReadOnly),
        Region::of_slice("partials", &partials, Access::ReadWrite),
        Region::of_slice("retired", retired, Access::Atomic),
        Region::of_slice("output", &output, Access::ReadWrite),
    ];
    let launch = Launch {
        input: input.as_ptr().cast(),
        partials: partials.as_mut_ptr().cast(),
        retired: retired.as_mut_ptr(),
        output: output.as_mut_ptr().cast(),
        offsets: std::ptr::null(),
        sizes: Params {
            len: input.len() as u64,
            partials_len: u64::from(grid),
            retired_len: retired.len() as u64,
            output_len: 1,
            ..Params::default()
        },
    };
    let config = LaunchConfig {
        grid_dim: grid,
        block_dim: 64,
        shared_bytes: plan::shared_bytes(Version::fastest(), 64, Sizes::of::<f32, Sum>()),
        schedule: Schedule::InOrder,
    };
    // SAFETY: the buffers are borrowed for the whole launch and registered as its regions
    // (the simulator checks every access against them); `sizes` gives their lengths.
    simt::launch("planted", &config, &regions, &|| unsafe { entry(launch) })?;
    Ok(output[0])
}

#[test]
fn v8_that_never_resets_its_ticket_breaks_the_launch_contract() {
    let name = "reduce_v8_f32_sum";
    let test = v8_case(DType::F32, OpKind::Sum, 3_001, Pattern::SmallIntegers, 2);
    let broken = v8_entry::<f32, Sum, NO_RESET> as SimEntry;

    // Control: the real kernel and the copy without the bug, twice on the same reducer.
    for mut reducer in [
        Reducer::simulator(),
        planted(Schedule::InOrder, name, v8_entry::<f32, Sum, NO_BUG>),
    ] {
        passes(&mut reducer, &test);
        passes(&mut reducer, &test);
    }

    // For the record: a harness that gives every launch a fresh counter would not notice.
    let input: Vec<f32> = generate(Pattern::SmallIntegers, 3_001, 7);
    let exact = input.iter().map(|&x| f64::from(x)).sum::<f64>() as f32;
    let mut fresh = [0u32];
    assert_eq!(
        launch_f32_sum(broken, &input, 2, &mut fresh).unwrap(),
        exact
    );
    assert_eq!(fresh, [2], "the counter is left at the grid");
    // On the GPU the counter is reused: the next launch's tickets are 2 and 3, no block sees
    // 1 (= grid - 1), and nobody writes the result.
    let second = launch_f32_sum(broken, &input, 2, &mut fresh).unwrap();
    assert!(second.is_nan(), "the output is left as it was: {second}");

    // The library's simulator keeps the counters across launches and checks them after each:
    // both reductions on one reducer report the broken contract.
    let mut reducer = planted(Schedule::InOrder, name, broken);
    for call in ["first", "second"] {
        let outcome = run_outcome(&mut reducer, &test);
        match outcome
            .as_ref()
            .err()
            .and_then(|e| e.downcast_ref::<Error>())
        {
            Some(Error::Contract { kernel, what }) => {
                assert_eq!(kernel, name);
                assert!(what.contains("left a ticket counter at 2"), "{what}");
            }
            _ => panic!("{call} call: expected Error::Contract, got {outcome:?}"),
        }
        println!("no reset ({call} call): Contract: {}", report(&outcome));
    }
}

// ---------------------------------------------------------------------------------------------
// 2. A wrong identity.

/// [`Max`] over `i32` with one change.
#[derive(Clone, Copy, Debug, Default)]
struct MaxFromZero;

impl Reduction<i32> for MaxFromZero {
    const NAME: &'static str = "max";
    type Acc = i32;
    type Out = i32;
    // The bug: 0, not `i32::MIN`: a max over negative numbers only comes out 0.
    const IDENTITY: i32 = 0;
    fn lift(x: i32, index: usize) -> i32 {
        <Max as Reduction<i32>>::lift(x, index)
    }
    fn combine(a: i32, b: i32) -> i32 {
        <Max as Reduction<i32>>::combine(a, b)
    }
    fn vector(vector: <i32 as Element>::Vector16, first: usize) -> i32 {
        <Max as Reduction<i32>>::vector(vector, first)
    }
    fn finish(acc: i32, _count: usize) -> i32 {
        acc
    }
    const EMPTY: i32 = Self::IDENTITY;
    type Running = i32;
    const START: i32 = Self::IDENTITY;
    fn accumulate(running: i32, acc: i32) -> i32 {
        Self::combine(running, acc)
    }
    fn settle(running: i32) -> i32 {
        running
    }
}

#[test]
fn max_whose_identity_is_zero_fails_against_the_independent_reference() {
    let name = "reduce_v8_i32_max";
    let broken = real_v8_entry::<i32, MaxFromZero> as SimEntry;

    // An all-negative input: the library call, checked against the host's reference.
    let input: Vec<i32> = generate::<i32>(Pattern::SmallIntegers, 1_000, 3)
        .into_iter()
        .map(|x| -1 - x.abs())
        .collect();
    let expected = <Max as Checked<i32>>::reference(&input);
    for schedule in SCHEDULES {
        let good = Reducer::simulator_with(schedule).max(&input).unwrap();
        assert!(<Max as Checked<i32>>::check(good, &expected, 0).pass);
        let got = planted(schedule, name, broken).max(&input).unwrap();
        let verdict = <Max as Checked<i32>>::check(got, &expected, 0);
        assert!(!verdict.pass);
        assert_eq!((got, expected), (Some(0), Some(-1)));
        if schedule == Schedule::InOrder {
            println!(
                "identity 0 (all negative): check failed: got {}, expected {}",
                verdict.got, verdict.expected
            );
        }
    }

    // The table's own v8 i32 max cases: its random inputs (over the whole range) pass, its
    // all-negative inputs (`Pattern::Negative`) catch the bug at every size but 0.
    let cases: Vec<TestCase> = common::table(&common::SIM_SIZES)
        .into_iter()
        .filter(|t| {
            t.version == Version::fastest()
                && (t.case.dtype, t.case.op) == (DType::I32, OpKind::Max)
        })
        .collect();
    assert!(!cases.is_empty());
    let mut caught = Vec::new();
    for test in &cases {
        passes(&mut Reducer::simulator(), test);
        let outcome = run_outcome(&mut planted(Schedule::InOrder, name, broken), test);
        if check_failed(&outcome) {
            caught.push(format!("{}: {}", test.name(), report(&outcome)));
        }
    }
    let negative_cases = cases
        .iter()
        .filter(|t| {
            t.case.len > 0
                && matches!(
                    t.case.source,
                    InputSource::Generated {
                        pattern: Pattern::Negative,
                        ..
                    }
                )
        })
        .count();
    assert_eq!(caught.len(), negative_cases, "caught: {caught:?}");
    println!("identity 0 (table): check failed: {}", caught.join("; "));
}

// ---------------------------------------------------------------------------------------------
// 3. A bug on v8's multi-block path only.

#[test]
fn v8_last_block_that_skips_a_partial_fails_on_a_small_grid() {
    let name = "reduce_v8_f32_sum";
    let broken = v8_entry::<f32, Sum, SKIPS_LAST_PARTIAL> as SimEntry;
    for schedule in SCHEDULES {
        for grid in [1, 2] {
            let test = v8_case(DType::F32, OpKind::Sum, 3_001, Pattern::SmallIntegers, grid);
            passes(&mut Reducer::simulator_with(schedule), &test);
            passes(
                &mut planted(schedule, name, v8_entry::<f32, Sum, NO_BUG>),
                &test,
            );
            let mut reducer = planted(schedule, name, broken);
            let outcome = run_outcome(&mut reducer, &test);
            // The grid the case asked for is the grid that ran.
            let blocks = reducer.last_simulation().unwrap().stats.blocks;
            assert_eq!(blocks, u64::from(grid));
            if grid == 1 {
                // One block never reaches the partials: the bug cannot show.
                judge(&outcome).unwrap();
            } else {
                assert!(check_failed(&outcome), "{outcome:?}");
                if schedule == Schedule::InOrder {
                    println!("skips last partial: check failed: {}", report(&outcome));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Double counting: exact sums see it, min and max cannot.

#[test]
fn tail_that_counts_an_element_twice_fails_the_exact_sum_not_min_or_max() {
    let len = 1_003; // 250 vectors of i32 and a tail of 3
    for schedule in SCHEDULES {
        let sum = v8_case(DType::I32, OpKind::Sum, len, Pattern::SmallIntegers, 2);
        passes(&mut Reducer::simulator_with(schedule), &sum);
        let broken = v8_entry::<i32, Sum, TAIL_STARTS_EARLY>;
        let outcome = run_outcome(&mut planted(schedule, "reduce_v8_i32_sum", broken), &sum);
        assert!(check_failed(&outcome), "{outcome:?}");
        if schedule == Schedule::InOrder {
            println!("tail starts early: check failed: {}", report(&outcome));
        }

        // The same bug, the same input (same pattern and seed), min and max: an element seen
        // twice changes neither, so these pass — why every sum in the tables also runs on
        // small integers, where the sum is exact.
        let max = v8_case(DType::I32, OpKind::Max, len, Pattern::SmallIntegers, 2);
        let entry = v8_entry::<i32, Max, TAIL_STARTS_EARLY>;
        passes(&mut planted(schedule, "reduce_v8_i32_max", entry), &max);
        let min = v8_case(DType::I32, OpKind::Min, len, Pattern::SmallIntegers, 2);
        let entry = v8_entry::<i32, Min, TAIL_STARTS_EARLY>;
        passes(&mut planted(schedule, "reduce_v8_i32_min", entry), &min);
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Bugs at the boundaries of v8's loops: `common::boundaries()` finds them.

/// A boundary case that failed: the case, the grid it ran on, the report's first line.
type BoundaryFailure = (TestCase, u32, String);

/// Runs `entry` in place of v8's f32 sum on every f32 sum case of `common::boundaries()`
/// under both schedules (the real kernel passing each first); returns the failed ones.
fn boundary_failures(entry: SimEntry) -> Vec<BoundaryFailure> {
    let cases: Vec<TestCase> = common::boundaries()
        .into_iter()
        .filter(|t| (t.case.dtype, t.case.op) == (DType::F32, OpKind::Sum))
        .collect();
    assert!(!cases.is_empty());
    let mut failed = Vec::new();
    for schedule in SCHEDULES {
        for test in &cases {
            passes(&mut Reducer::simulator_with(schedule), test);
            let outcome = run_outcome(&mut planted(schedule, "reduce_v8_f32_sum", entry), test);
            if judge(&outcome).is_err() {
                assert!(check_failed(&outcome), "{}: {outcome:?}", test.name());
                let grid = outcome.as_ref().map_or(0, |o| o.passes[0].launch.grid);
                failed.push((test.clone(), grid, report(&outcome)));
            }
        }
    }
    failed
}

#[test]
fn head_that_stops_short_fails_at_the_misaligned_boundaries() {
    let failed = boundary_failures(v8_entry::<f32, Sum, HEAD_STOPS_SHORT>);
    assert!(!failed.is_empty(), "no boundary case caught it");
    // Only a misaligned start has a head: the cases that start on a 16-byte boundary (all of
    // the main table's) cannot see it.
    assert!(failed.iter().all(|(t, _, _)| t.case.offset > 0));
    let (test, _, message) = &failed[0];
    println!(
        "head stops short: check failed in {} boundary cases, first {}: {message}",
        failed.len(),
        test.name()
    );
}

#[test]
fn remainder_loop_that_runs_once_fails_past_a_grid_stride() {
    let failed = boundary_failures(v8_entry::<f32, Sum, REMAINDER_ONCE>);
    assert!(!failed.is_empty(), "no boundary case caught it");
    // A thread has a second vector left after its groups only when there are more vectors
    // than threads in the grid (of `grid` blocks, at most the case's limit): beyond one grid
    // stride of f32 vectors.
    for (test, grid, _) in &failed {
        let threads = 64 * *grid as usize;
        assert!(
            test.case.len > 4 * threads,
            "{} on {grid} blocks",
            test.name()
        );
    }
    let (test, grid, message) = &failed[0];
    println!(
        "remainder once: check failed in {} boundary cases, first {} ({grid} blocks): {message}",
        failed.len(),
        test.name()
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Shape kernels.

/// Runs a shape sum over `spec` on `reducer` (small integers, as the shapes table does for
/// sums) and returns the kernel, the failed results and the first failure.
fn shape_sum(reducer: &Reducer, spec: &ShapeSpec) -> (ShapeKernel, usize, usize, String) {
    let input: Vec<f32> = generate(Pattern::SmallIntegers, spec.len(), spec.len() as u64 ^ 0x5a);
    let (plan, _, verdict) = run_and_check::<f32, Sum>(reducer, &input, spec).unwrap();
    (
        plan.kernel,
        plan.split,
        verdict.failed,
        verdict.first_failure.unwrap_or_default(),
    )
}

#[test]
fn rows_split_whose_pieces_drop_elements_fails_run_and_check() {
    // A shape of the shapes table: 2 rows, each cut over 4 blocks on the simulated GPU.
    let spec = ShapeSpec::Rows {
        rows: 2,
        cols: 40_003,
    };
    let name = "rows_split_f32_sum";
    for reducer in [
        Reducer::simulator(),
        planted(
            Schedule::InOrder,
            name,
            rows_split_entry::<f32, Sum, NO_BUG>,
        ),
    ] {
        let (kernel, split, failed, _) = shape_sum(&reducer, &spec);
        assert_eq!((kernel, failed), (ShapeKernel::RowsSplit, 0));
        assert!(split > 1 && 40_003 % split != 0);
    }
    let broken = rows_split_entry::<f32, Sum, PIECES_DROP_REMAINDER>;
    let (_, _, failed, first) = shape_sum(&planted(Schedule::InOrder, name, broken), &spec);
    assert_eq!(failed, 2, "every row loses its last elements: {first}");
    println!("rows_split pieces: {failed} of 2 results failed: {first}");
}

#[test]
fn columns_whose_bands_drop_rows_fail_run_and_check() {
    // 70 columns of 1001 rows: 3 tiles × 2 bands on the simulated GPU, and the copy's runs of
    // 8 rows leave one row past the last of them.
    let spec = ShapeSpec::Columns {
        rows: 1001,
        cols: 70,
    };
    let name = "columns_f32_sum";
    for reducer in [
        Reducer::simulator(),
        planted(Schedule::InOrder, name, columns_entry::<f32, Sum, NO_BUG>),
    ] {
        let (kernel, split, failed, _) = shape_sum(&reducer, &spec);
        assert_eq!((kernel, failed), (ShapeKernel::Columns, 0));
        assert!(split > 1);
    }
    let broken = columns_entry::<f32, Sum, BANDS_DROP_REMAINDER>;
    let (_, _, failed, first) = shape_sum(&planted(Schedule::InOrder, name, broken), &spec);
    // Every column loses its last row, but a column whose last element is 0 still sums right.
    assert!(failed > 0, "no column caught it");
    println!("columns bands: {failed} of 70 results failed: {first}");
}

// ---------------------------------------------------------------------------------------------
// 7. What the simulator itself catches.

/// Runs `entry` in place of v8's f32 sum on a 2-block case under both schedules; returns the
/// simulator's report of each.
fn simulator_reports(entry: SimEntry) -> Vec<SimError> {
    let test = v8_case(DType::F32, OpKind::Sum, 3_001, Pattern::SmallIntegers, 2);
    SCHEDULES
        .iter()
        .map(|&schedule| {
            passes(&mut Reducer::simulator_with(schedule), &test);
            let outcome = run_outcome(&mut planted(schedule, "reduce_v8_f32_sum", entry), &test);
            match sim_error(&outcome) {
                Some(error) => error.clone(),
                None => panic!("expected a simulator report, got {outcome:?}"),
            }
        })
        .collect()
}

fn first_line(error: &SimError) -> &str {
    error.message.lines().next().unwrap_or("")
}

#[test]
fn v8_without_the_fence_before_its_ticket_is_a_global_race() {
    let reports = simulator_reports(v8_entry::<f32, Sum, NO_FENCE>);
    for error in &reports {
        assert_eq!(error.kind, ErrorKind::GlobalRace, "{}", error.message);
        assert!(error.message.contains("partials"), "{}", error.message);
    }
    println!("no fence: GlobalRace: {}", first_line(&reports[0]));
}

#[test]
fn v8_without_the_barrier_before_the_ticket_is_read_is_reported() {
    let reports = simulator_reports(v8_entry::<f32, Sum, NO_BARRIER>);
    for error in &reports {
        assert_eq!(
            error.kind,
            ErrorKind::UninitializedSharedRead,
            "{}",
            error.message
        );
    }
    println!(
        "no barrier: UninitializedSharedRead: {}",
        first_line(&reports[0])
    );
}
