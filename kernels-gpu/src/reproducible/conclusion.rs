//! What the reproducible kernels add up and what they write: [`Reproducible`] (an element type
//! and the float its state is binned in) and [`Conclusion`] (the sum, the mean, or the
//! unfinished state).

use super::binned::{Binned, BinnedFloat};
use crate::element::{Bf16, Element, F16};
use crate::ops::{Mean, Sum};

/// An element type the reproducible kernel adds up, and the float its state is binned in.
pub trait Reproducible: Element {
    /// `f32` for `f32`, `f16`, `bf16` (each exact in it); `f64` for `f64` and the integers.
    type Fold: BinnedFloat;
    fn to_fold(self) -> Self::Fold;
}

macro_rules! reproducible {
    ($($t:ty => $fold:ty, |$x:ident| $convert:expr;)*) => {$(
        impl Reproducible for $t {
            type Fold = $fold;
            #[inline(always)]
            fn to_fold(self) -> $fold {
                let $x = self;
                $convert
            }
        }
    )*};
}
reproducible! {
    f32 => f32, |x| x;
    f64 => f64, |x| x;
    F16 => f32, |x| x.to_f32();
    Bf16 => f32, |x| x.to_f32();
    i32 => f64, |x| x as f64;
    u32 => f64, |x| x as f64;
    i64 => f64, |x| x as f64;
    u64 => f64, |x| x as f64;
}

/// What a reproducible launch writes from the final state of `count` elements.
pub trait Conclusion<F: BinnedFloat>: Copy + Send + Sync + 'static {
    type Out: crate::element::Value;
    fn conclude(state: Binned<F>, count: usize) -> Self::Out;
}

impl<F: BinnedFloat> Conclusion<F> for Sum {
    type Out = F;
    #[inline(always)]
    fn conclude(state: Binned<F>, _count: usize) -> F {
        state.value()
    }
}

impl<F: BinnedFloat> Conclusion<F> for Mean {
    type Out = F;
    /// The sum divided by the count; NaN (the one [`BinnedFloat::NAN`]) for a sum that is NaN
    /// (a GPU's division would give its own NaN, the CPU's another) and for the mean of nothing
    /// (an empty row or segment, as the other row kernels write it).
    #[inline(always)]
    fn conclude(state: Binned<F>, count: usize) -> F {
        let sum = state.value();
        if count == 0 || sum.is_nan() {
            F::NAN
        } else {
            sum.divide(count)
        }
    }
}

/// The unfinished state itself: a shard's part of a sum, merged later.
#[derive(Clone, Copy, Debug, Default)]
pub struct State;

impl<F: BinnedFloat> Conclusion<F> for State {
    type Out = Binned<F>;
    #[inline(always)]
    fn conclude(state: Binned<F>, _count: usize) -> Binned<F> {
        state
    }
}
