//! What a reduction computes: the operators, each a [`Reduction`] over an
//! [`Element`](crate::element::Element) type.
//!
//! A reduction *lifts* every element into an accumulator (`Acc`), *combines* accumulators
//! pairwise in whatever order the kernel's threads, warps and blocks meet, and *finishes* the
//! last one into the result (`Out`). Every operator here is associative and commutative, so
//! the kernels may combine in any order; float addition is the one whose result depends on the
//! order, by rounding.
//!
//! | operator | `Acc` | `Out` | identity | empty input |
//! |---|---|---|---|---|
//! | [`Sum`] | `T`, but `f32` for `f16`/`bf16` | `Acc` | `0` (`-0.0` for floats) | `0` |
//! | [`Mean`] | `f32` for `f32`/`f16`/`bf16`, else `f64` | `Acc` | `0` | no value |
//! | [`Min`], [`Max`] | `T` | `T` | largest / smallest value | no value |
//! | [`ArgMin`], [`ArgMax`] | [`Arg<T>`] | [`Arg<T>`] | `(NO_INDEX, largest / smallest)` | no value |
//!
//! # NaN, signed zeros, ties
//! - A NaN is both the largest and the smallest value: `min`, `max` return NaN if any element
//!   is NaN, `argmin` and `argmax` the index of the first NaN (as PyTorch does).
//! - `-0.0 < +0.0` (IEEE 754-2019 `minimum`/`maximum`, and `totalOrder`): `max(-0.0, +0.0)` is
//!   `+0.0`, and `argmax([-0.0, +0.0])` is 1 (PyTorch treats the zeros as equal and says 0).
//! - Ties go to the first occurrence, the smallest index (as CUB and PyTorch do).
//! - Integer sums wrap (two's complement): the exact sum modulo 2^bits, in any order.
//! - Float sums are IEEE additions; `+inf + -inf` and a NaN anywhere give NaN.
//!
//! Every operator's combine is order-independent except float addition, so min, max, the arg
//! operators and integer sums give the same bits for any launch shape.

// One file for each family of operators — the additions (`Sum`, `Mean`), the extremes (`Min`,
// `Max`), the arg operators (`ArgMin`, `ArgMax`) — and one for the trait they implement and
// what they share.
mod arg;
mod extreme;
mod reduction;
mod sum;

pub use arg::{Arg, ArgMax, ArgMin, NO_INDEX};
pub use extreme::{Max, Min};
pub use reduction::{ReduceOp, Reduction, fold};
pub use sum::{Mean, Sum};

#[cfg(test)]
mod tests;
