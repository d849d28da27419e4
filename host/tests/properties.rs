//! Property tests of the library's public API on the simulator, against the independent CPU
//! reference (`host::reference`): random element types, operations and shapes (whole arrays,
//! rows, columns, segments with empty ones), lengths around the warp, block and grid
//! boundaries, random block sizes and grid caps, and values drawn from special classes (NaN,
//! ±inf, ±0, subnormals, the largest finite values, integer extremes, long runs of ties).
//!
//! A failing case shrinks to a small input; proptest records its seed in
//! `properties.proptest-regressions` beside this file, and every later run replays it first.
//! `PROPTEST_CASES=1000 cargo test --release -p host --test properties` searches longer.

use host::element::{DType, HostElement, OpKind};
use host::reference::Checked;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use reduce_rs::{Reducer, Schedule, Shape};

/// What a value is drawn from.
#[derive(Clone, Copy, Debug)]
enum Class {
    /// An ordinary value: small integers (exact sums, many ties) or any finite value.
    Small(i32),
    Any(f64),
    Nan,
    PosInf,
    NegInf,
    PosZero,
    NegZero,
    /// The smallest subnormal of the type, times a small factor.
    Subnormal(u8),
    /// The largest finite value (or the integer maximum), positive or negative.
    Largest(bool),
    /// The integer minimum (the float minimum is `Largest(false)`).
    Lowest,
}

fn class() -> impl Strategy<Value = Class> {
    prop_oneof![
        6 => (-3i32..4).prop_map(Class::Small),
        4 => (-1e6f64..1e6).prop_map(Class::Any),
        1 => Just(Class::Nan),
        1 => Just(Class::PosInf),
        1 => Just(Class::NegInf),
        1 => Just(Class::PosZero),
        1 => Just(Class::NegZero),
        1 => (1u8..8).prop_map(Class::Subnormal),
        1 => any::<bool>().prop_map(Class::Largest),
        1 => Just(Class::Lowest),
    ]
}

/// An element built from a [`Class`].
trait Drawn: HostElement {
    fn drawn(class: Class) -> Self;
}

macro_rules! drawn_float {
    ($t:ty, $from:expr, $max:expr, $tiny:expr) => {
        impl Drawn for $t {
            fn drawn(class: Class) -> Self {
                let from = $from;
                match class {
                    Class::Small(v) => from(f64::from(v)),
                    Class::Any(v) => from(v),
                    Class::Nan => from(f64::NAN),
                    Class::PosInf => from(f64::INFINITY),
                    Class::NegInf => from(f64::NEG_INFINITY),
                    Class::PosZero => from(0.0),
                    Class::NegZero => from(-0.0),
                    Class::Subnormal(k) => from($tiny * f64::from(k)),
                    Class::Largest(true) | Class::Lowest => from($max),
                    Class::Largest(false) => from(-$max),
                }
            }
        }
    };
}
drawn_float!(
    f32,
    |v: f64| v as f32,
    f32::MAX as f64,
    1.401298464324817e-45f64
);
drawn_float!(f64, |v: f64| v, f64::MAX, f64::from_bits(1));
drawn_float!(
    half::f16,
    half::f16::from_f64,
    half::f16::MAX.to_f64(),
    half::f16::from_bits(1).to_f64()
);
drawn_float!(
    half::bf16,
    half::bf16::from_f64,
    half::bf16::MAX.to_f64(),
    half::bf16::from_bits(1).to_f64()
);

macro_rules! drawn_int {
    ($t:ty) => {
        impl Drawn for $t {
            fn drawn(class: Class) -> Self {
                match class {
                    Class::Small(v) => v as $t,
                    Class::Any(v) => v as i64 as $t,
                    Class::Largest(true) | Class::PosInf => <$t>::MAX,
                    Class::Lowest | Class::Largest(false) | Class::NegInf => <$t>::MIN,
                    Class::Subnormal(k) => k as $t,
                    Class::Nan | Class::PosZero | Class::NegZero => 0,
                }
            }
        }
    };
}
drawn_int!(i32);
drawn_int!(u32);
drawn_int!(i64);
drawn_int!(u64);

/// Lengths around the simulated GPU's boundaries: a warp (32), blocks of 64…1024 threads,
/// 16-byte vectors, and grids of a few blocks.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..70,
        2 => prop::sample::select(vec![
            31usize, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024,
            1025, 2047, 2048, 2049, 4095, 4096, 4097,
        ]),
        1 => 70usize..5000,
    ]
}

/// How the input is drawn: per-element classes, or one class repeated (long runs of ties).
fn values(len: usize) -> impl Strategy<Value = Vec<Class>> {
    prop_oneof![
        3 => prop::collection::vec(class(), len),
        1 => class().prop_map(move |c| vec![c; len]),
    ]
}

/// A reducer on the simulator: a block size, a grid cap, a thread order and the reproducible
/// mode of the case's.
#[derive(Clone, Copy, Debug)]
struct Launch {
    block: Option<u32>,
    max_blocks: Option<u32>,
    shuffle: Option<u64>,
    reproducible: bool,
}

fn launch() -> impl Strategy<Value = Launch> {
    (
        prop::option::of(prop::sample::select(vec![64u32, 128, 256, 512, 1024])),
        prop::option::of(1u32..9),
        prop::option::weighted(0.2, any::<u64>()),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(block, max_blocks, shuffle, reproducible)| Launch {
            block,
            max_blocks,
            shuffle,
            reproducible,
        })
}

impl Launch {
    fn reducer(self) -> Reducer {
        let mut reducer = match self.shuffle {
            Some(seed) => Reducer::simulator_with(Schedule::Shuffled { seed }),
            None => Reducer::simulator(),
        };
        reducer
            .set_block_size(self.block)
            .expect("the block sizes are the kernels'");
        reducer.set_max_blocks(self.max_blocks);
        reducer.set_reproducible(self.reproducible);
        reducer
    }
}

/// What is reduced each of.
#[derive(Clone, Debug)]
enum Layout {
    Whole,
    Rows { rows: usize, cols: usize },
    Columns { rows: usize, cols: usize },
    Segments(Vec<usize>),
}

fn layout(len: usize) -> impl Strategy<Value = Layout> {
    let divisors: Vec<usize> = (1..=len.max(1))
        .filter(|d| len.is_multiple_of(*d))
        .collect();
    let segments = prop::collection::vec(0..=len, 0..12).prop_map(move |mut cuts| {
        cuts.push(0);
        cuts.push(len);
        cuts.sort_unstable();
        // Empty segments kept: repeated cuts.
        cuts
    });
    prop_oneof![
        2 => Just(Layout::Whole),
        2 => prop::sample::select(divisors.clone()).prop_map(move |rows| Layout::Rows { rows, cols: len / rows.max(1) }),
        1 => prop::sample::select(divisors).prop_map(move |rows| Layout::Columns { rows, cols: len / rows.max(1) }),
        2 => segments.prop_map(Layout::Segments),
    ]
}

/// The number of additions any element goes through in any order (the float bound's `h`).
fn any_order(len: usize) -> u64 {
    len as u64 + 64
}

fn check<T: Drawn, O: Checked<T> + Default>(
    classes: &[Class],
    layout: &Layout,
    launch: Launch,
) -> Result<(), TestCaseError> {
    let data: Vec<T> = classes.iter().map(|&c| T::drawn(c)).collect();
    let reducer = launch.reducer();
    // The reproducible mode's one documented difference: a float sum that is zero is +0.0,
    // where IEEE addition keeps -0.0 for a sum of -0.0s only. Its reference sees +0.0s.
    let zero_is_positive =
        launch.reproducible && matches!(O::KIND, reduce_rs::OpKind::Sum | reduce_rs::OpKind::Mean);
    let verify = |got: O::Output, part: &[T], what: &str| -> Result<(), TestCaseError> {
        let negative_zero = T::drawn(Class::NegZero);
        let part: Vec<T> = part
            .iter()
            .map(|&x| {
                if zero_is_positive && x.same_bits(negative_zero) {
                    T::drawn(Class::PosZero)
                } else {
                    x
                }
            })
            .collect();
        let part = &part[..];
        let verdict = O::check(got, &O::reference(part), any_order(part.len()));
        prop_assert!(
            verdict.pass,
            "{what}: got {} expected {} (tolerance {:e}) on {launch:?}",
            verdict.got,
            verdict.expected,
            verdict.tolerance
        );
        Ok(())
    };
    match layout {
        Layout::Whole => {
            let got = reducer
                .reduce(O::default(), &data)
                .map_err(|e| TestCaseError::fail(format!("{e}")))?;
            verify(got, &data, "whole")?;
        }
        Layout::Rows { rows, cols } => {
            let got = reducer
                .reduce_each(O::default(), &data, Shape::rows(*rows, *cols))
                .map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert_eq!(got.len(), *rows);
            for (r, result) in got.into_iter().enumerate() {
                verify(result, &data[r * cols..(r + 1) * cols], &format!("row {r}"))?;
            }
        }
        Layout::Columns { rows, cols } => {
            let got = reducer
                .reduce_each(O::default(), &data, Shape::columns(*rows, *cols))
                .map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert_eq!(got.len(), *cols);
            for (c, result) in got.into_iter().enumerate() {
                let column: Vec<T> = (0..*rows).map(|r| data[r * cols + c]).collect();
                verify(result, &column, &format!("column {c}"))?;
            }
        }
        Layout::Segments(offsets) => {
            let got = reducer
                .reduce_each(O::default(), &data, Shape::segments(offsets))
                .map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert_eq!(got.len(), offsets.len() - 1);
            for (s, result) in got.into_iter().enumerate() {
                let part = &data[offsets[s]..offsets[s + 1]];
                verify(result, part, &format!("segment {s}"))?;
            }
        }
    }
    Ok(())
}

fn case() -> impl Strategy<Value = (DType, OpKind, Vec<Class>, Layout, Launch)> {
    (
        prop::sample::select(DType::ALL.to_vec()),
        prop::sample::select(OpKind::ALL.to_vec()),
        length(),
        launch(),
    )
        .prop_flat_map(|(dtype, op, len, launch)| {
            (
                Just(dtype),
                Just(op),
                values(len),
                layout(len),
                Just(launch),
            )
        })
}

proptest! {
    #![proptest_config(Config {
        cases: 192,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    })]

    /// Every reduction the public API offers, on every element type and layout, agrees with
    /// the reference.
    #[test]
    fn every_reduction_agrees_with_the_reference((dtype, op, classes, layout, launch) in case()) {
        host::with_dtype_and_op!(dtype, op, check_dispatch(&classes, &layout, launch))?;
    }
}

fn check_dispatch<T: Drawn, O: Checked<T> + Default>(
    classes: &[Class],
    layout: &Layout,
    launch: Launch,
) -> Result<(), TestCaseError> {
    check::<T, O>(classes, layout, launch)
}
