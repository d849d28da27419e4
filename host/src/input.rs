//! Seeded inputs. Never all-zero or all-equal: a kernel that drops elements, reads the wrong
//! ones or returns a constant must get a wrong answer.

use crate::element::HostElement;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pattern {
    /// Uniform with mixed signs: floats in [-1, 1), integers over their whole range.
    Random,
    /// Small integers in [-8, 8] (unsigned: [0, 16]): float sums are exact while every
    /// partial sum stays below 2^24 (f32) / 2^53 (f64), whatever the order.
    SmallIntegers,
    /// `(i mod 1000) - 500` (unsigned: `i mod 1000`): no generator state, so any size can be
    /// filled quickly, and the sum has a closed form.
    Formula,
    /// Small integers in [-16, -1], all below zero (unsigned: [1, 16]): a maximum whose
    /// identity is 0 instead of the type's smallest value comes out 0.
    Negative,
    /// Small integers in [1, 16], all above zero: a minimum whose identity is 0 comes out 0.
    Positive,
    /// Floats at the bottom of the range of the type they are summed in, both signs,
    /// magnitudes log-uniform down to the smallest subnormal: below 2^-119 (`f32`, `bf16`),
    /// 2^-1000 (`f64`) or 2^-14 (`f16`, whose smallest are normal in `f32`). Integers: as
    /// `Random`.
    Tiny,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::SmallIntegers => "small-integers",
            Pattern::Formula => "formula",
            Pattern::Negative => "negative",
            Pattern::Positive => "positive",
            Pattern::Tiny => "tiny",
        }
    }
}

/// `len` elements of `pattern`, reproducible from `seed`.
pub fn generate<T: HostElement>(pattern: Pattern, len: usize, seed: u64) -> Vec<T> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let signed = T::from_small(-1).order(T::from_small(0)) == Ordering::Less;
    match pattern {
        Pattern::Random => (0..len).map(|_| T::random(&mut rng)).collect(),
        Pattern::Tiny => (0..len).map(|_| T::tiny(&mut rng)).collect(),
        Pattern::SmallIntegers => {
            let (low, high) = if signed { (-8, 8) } else { (0, 16) };
            (0..len)
                .map(|_| T::from_small(rng.random_range(low..=high)))
                .collect()
        }
        Pattern::Negative | Pattern::Positive => {
            let (low, high) = if pattern == Pattern::Negative && signed {
                (-16, -1)
            } else {
                (1, 16)
            };
            (0..len)
                .map(|_| T::from_small(rng.random_range(low..=high)))
                .collect()
        }
        Pattern::Formula => (0..len)
            .map(|i| T::from_small(formula_value(i, signed)))
            .collect(),
    }
}

/// Element `i` of [`Pattern::Formula`].
pub fn formula_value(i: usize, signed: bool) -> i32 {
    let value = (i % 1000) as i32;
    if signed { value - 500 } else { value }
}

/// The exact sum of the first `len` elements of [`Pattern::Formula`].
pub fn formula_sum(len: usize, signed: bool) -> i128 {
    let (cycles, rest) = ((len / 1000) as i128, (len % 1000) as i128);
    // One full cycle sums to 0..999 = 499_500; a partial one to 0..rest-1.
    let unsigned = cycles * 499_500 + rest * (rest - 1).max(0) / 2;
    if signed {
        unsigned - 500 * len as i128
    } else {
        unsigned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_reproducible_mixed_and_not_constant() {
        let a: Vec<f32> = generate(Pattern::Random, 1000, 7);
        assert_eq!(a, generate::<f32>(Pattern::Random, 1000, 7));
        assert!(a.iter().any(|&x| x < 0.0) && a.iter().any(|&x| x > 0.0));
        let small: Vec<i32> = generate(Pattern::SmallIntegers, 1000, 7);
        assert!(small.iter().all(|x| (-8..=8).contains(x)));
        assert!(small.iter().any(|&x| x != small[0]));
        let tiny: Vec<f32> = generate(Pattern::Tiny, 1000, 7);
        assert!(tiny.iter().all(|x| x.abs() < 2f32.powi(-119)));
        assert!(tiny.iter().any(|x| x.is_subnormal()) && tiny.iter().any(|x| x.is_normal()));
        assert!(tiny.iter().any(|&x| x < 0.0) && tiny.iter().any(|&x| x > 0.0));
        let tiny: Vec<f64> = generate(Pattern::Tiny, 1000, 7);
        assert!(tiny.iter().all(|x| x.abs() < 2f64.powi(-1000)));
        assert!(tiny.iter().any(|x| x.is_subnormal()) && tiny.iter().any(|x| x.is_normal()));
    }

    #[test]
    fn formula_sum_is_the_sum_of_the_formula() {
        for len in [0, 1, 2, 999, 1000, 1001, 123_457] {
            for signed in [false, true] {
                let direct: i128 = (0..len).map(|i| formula_value(i, signed) as i128).sum();
                assert_eq!(
                    formula_sum(len, signed),
                    direct,
                    "len {len} signed {signed}"
                );
            }
        }
    }
}
