//! Where the library's results differ from PyTorch's, and where they agree on the rules people
//! trip over: one test per row of README's table "What the operations return", on the
//! simulator (the GPU runs the same kernels; its tests compare against the same reference).

use half::{bf16, f16};
use reduce_rs::ops::{ArgMax, Sum};
use reduce_rs::{Reducer, Shape};

fn plain() -> Reducer {
    Reducer::simulator()
}

fn reproducible() -> Reducer {
    Reducer::simulator().with_reproducible(true)
}

#[test]
fn integer_sums_wrap_in_their_own_type() {
    // PyTorch sums int32 into int64: 2147483648 here.
    assert_eq!(plain().sum(&[i32::MAX, 1]).unwrap(), i32::MIN);
    assert_eq!(plain().sum(&[u64::MAX, 2]).unwrap(), 1);
}

#[test]
fn integer_means_are_f64() {
    // PyTorch refuses the mean of an integer tensor.
    let mean: Option<f64> = plain().mean(&[1i64, 2, 4]).unwrap();
    assert_eq!(mean, Some(7.0 / 3.0));
}

#[test]
fn sums_and_means_of_16_bit_floats_are_f32() {
    // PyTorch returns float16 / bfloat16 (after adding up in float32).
    let halves = vec![f16::from_f32(0.1); 3000];
    let sum: f32 = plain().sum(&halves).unwrap();
    assert!((sum - 3000.0 * f16::from_f32(0.1).to_f32()).abs() < 1e-2);
    let mean: Option<f32> = plain()
        .mean(&[bf16::from_f32(1.0), bf16::from_f32(2.0)])
        .unwrap();
    assert_eq!(mean, Some(1.5));
}

#[test]
fn negative_zero_is_below_positive_zero() {
    // PyTorch treats the zeros as equal: its argmax([-0.0, 0.0]) is 0.
    let zeros = [-0.0f32, 0.0];
    assert_eq!(plain().argmax(&zeros).unwrap().map(|(i, _)| i), Some(1));
    assert!(plain().max(&zeros).unwrap().unwrap().is_sign_positive());
    assert!(plain().min(&zeros).unwrap().unwrap().is_sign_negative());
}

#[test]
fn a_sum_of_negative_zeros_is_negative_zero_in_plain_mode_and_positive_zero_reproducibly() {
    let zeros = [-0.0f32; 100];
    assert!(plain().sum(&zeros).unwrap().is_sign_negative());
    let repro = reproducible().sum(&zeros).unwrap();
    assert!(repro == 0.0 && repro.is_sign_positive());
}

#[test]
fn nan_propagates_and_the_first_nan_wins_as_in_pytorch() {
    let xs = [1.0f64, f64::NAN, 9.0, f64::NAN];
    assert!(plain().max(&xs).unwrap().unwrap().is_nan());
    assert!(plain().min(&xs).unwrap().unwrap().is_nan());
    assert_eq!(plain().argmax(&xs).unwrap().map(|(i, _)| i), Some(1));
    assert_eq!(plain().argmin(&xs).unwrap().map(|(i, _)| i), Some(1));
    assert!(plain().sum(&xs).unwrap().is_nan());
}

#[test]
fn ties_go_to_the_first_index_as_in_pytorch() {
    assert_eq!(plain().argmax(&[3u32, 9, 1, 9]).unwrap(), Some((1, 9)));
}

#[test]
fn empty_inputs_have_a_sum_and_no_other_value() {
    // PyTorch: 0 for the sum, NaN for the mean, an error for min, max, argmin, argmax.
    let empty: [f32; 0] = [];
    assert_eq!(plain().sum(&empty).unwrap(), 0.0);
    assert!(plain().sum(&empty).unwrap().is_sign_positive());
    assert_eq!(plain().mean(&empty).unwrap(), None);
    assert_eq!(plain().max(&empty).unwrap(), None);
    assert_eq!(plain().argmax(&empty).unwrap(), None);
}

#[test]
fn empty_rows_and_segments_give_the_empty_result() {
    let values = [1.0f32, 2.0, 3.0];
    let sums = plain()
        .reduce_each(Sum, &values, Shape::segments(&[0, 0, 3]))
        .unwrap();
    assert_eq!(sums, [0.0, 6.0]);
    let best = plain()
        .reduce_each(ArgMax, &values, Shape::segments(&[0, 2, 2, 3]))
        .unwrap();
    assert_eq!(best, [Some((1, 2.0)), None, Some((0, 3.0))]);
}
