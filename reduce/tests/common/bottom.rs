//! The bottom of the float range: subnormals and the smallest normals. Every f32 is a whole
//! number of 2^-149 and every f64 of 2^-1074 ("units"); the exact sum of such inputs is an
//! integer, and the reproducible sum of values this small is that integer rounded once.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// `x` in units of 2^-149, exactly (for |x| < 2^-29).
pub fn units_f32(x: f32) -> i128 {
    let scaled = f64::from(x) * 2f64.powi(149);
    assert!(scaled.abs() < 2f64.powi(120) && scaled.fract() == 0.0);
    scaled as i128
}

/// `x` in units of 2^-1074, exactly (for |x| < 2^-954).
pub fn units_f64(x: f64) -> i128 {
    let scaled = x * 2f64.powi(600) * 2f64.powi(474);
    assert!(scaled.abs() < 2f64.powi(120) && scaled.fract() == 0.0);
    scaled as i128
}

/// `n` units of 2^-149 rounded once to f32 (exact in f64 first: |n| < 2^53).
pub fn round_f32(n: i128) -> f32 {
    assert!(n.unsigned_abs() < 1 << 53);
    (n as f64 * 2f64.powi(-149)) as f32
}

/// `n` units of 2^-1074 rounded once to f64 (`as f64` rounds an i128 to nearest, then the
/// scaling is exact: a result below 2^-1022 has fewer than 53 bits and was not rounded).
pub fn round_f64(n: i128) -> f64 {
    n as f64 * 2f64.powi(-600) * 2f64.powi(-474)
}

/// Random mantissa and sign, magnitude `2^low ≤ |x| < 2^high`, or a subnormal (exponent
/// field 0) for exponents below the smallest normal's.
pub fn tiny_f32(rng: &mut ChaCha8Rng, low: i32, high: i32) -> f32 {
    let field = (rng.random_range(low..high) + 127).max(0) as u32;
    let sign = rng.random_range(0..2u32) << 31;
    f32::from_bits(sign | field << 23 | rng.random_range(0..1u32 << 23))
}

pub fn tiny_f64(rng: &mut ChaCha8Rng, low: i32, high: i32) -> f64 {
    let field = (rng.random_range(low..high) + 1023).max(0) as u64;
    let sign = rng.random_range(0..2u64) << 63;
    f64::from_bits(sign | field << 52 | rng.random_range(0..1u64 << 52))
}

/// Inputs at the bottom of the f32 range: (name, values). Every magnitude is below 2^-119,
/// where the reproducible sum is exact before its one rounding.
pub fn bottom_f32_inputs(rng: &mut ChaCha8Rng) -> Vec<(&'static str, Vec<f32>)> {
    let subnormals: Vec<f32> = (0..6_007).map(|_| tiny_f32(rng, -150, -126)).collect();
    let mixed: Vec<f32> = (0..9_001).map(|_| tiny_f32(rng, -150, -119)).collect();
    let straddling: Vec<f32> = (0..5_003u32)
        .map(|i| f32::from_bits(0x0080_0000 + i % 11 - 5) * if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    let mut cancelling: Vec<f32> = mixed[..3000].iter().flat_map(|&x| [x, -x]).collect();
    cancelling.extend([f32::from_bits(5), -f32::from_bits(2)]);
    shuffle(rng, &mut cancelling);
    vec![
        ("one smallest subnormal", vec![f32::from_bits(1)]),
        ("smallest subnormals", vec![f32::from_bits(1); 4_099]),
        ("subnormals", subnormals),
        ("subnormals and tiny normals", mixed),
        ("straddling 2^-126", straddling),
        ("cancelling to 3·2^-149", cancelling),
    ]
}

pub fn bottom_f64_inputs(rng: &mut ChaCha8Rng) -> Vec<(&'static str, Vec<f64>)> {
    let subnormals: Vec<f64> = (0..6_007).map(|_| tiny_f64(rng, -1075, -1022)).collect();
    let mixed: Vec<f64> = (0..9_001).map(|_| tiny_f64(rng, -1075, -976)).collect();
    let near: Vec<f64> = (0..5_003).map(|_| tiny_f64(rng, -1013, -996)).collect();
    let straddling: Vec<f64> = (0..5_003u64)
        .map(|i| f64::from_bits((1 << 52) + i % 11 - 5) * if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    let mut cancelling: Vec<f64> = mixed[..3000].iter().flat_map(|&x| [x, -x]).collect();
    cancelling.push(f64::from_bits(1));
    shuffle(rng, &mut cancelling);
    vec![
        ("one smallest subnormal", vec![f64::from_bits(1)]),
        ("smallest subnormals", vec![f64::from_bits(1); 4_099]),
        ("subnormals", subnormals),
        ("subnormals and tiny normals", mixed),
        ("around 1e-300 to 1e-305", near),
        ("straddling 2^-1022", straddling),
        ("cancelling to 2^-1074", cancelling),
    ]
}

pub fn shuffle<T>(rng: &mut ChaCha8Rng, xs: &mut [T]) {
    for i in (1..xs.len()).rev() {
        xs.swap(i, rng.random_range(0..=i));
    }
}

/// Launch grids for the bottom-of-the-range tests (fewer than [`super::launch_grids`]: many inputs).
pub fn some_launch_grids() -> [(u32, Option<u32>); 6] {
    [
        (64, Some(1)),
        (64, Some(3)),
        (128, Some(7)),
        (256, None),
        (512, Some(2)),
        (1024, None),
    ]
}
