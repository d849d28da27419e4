//! [`Sum`] and [`Mean`]: additions in the element's sum accumulator (`Element::SumAcc`) or mean
//! accumulator (`Element::MeanAcc`, divided by the count at the end); a thread's running value
//! may keep a compensation beside it ([`Accumulator::Running`]: the float sums do).

use super::reduction::Reduction;
use crate::element::{Accumulator, Element};

/// `a + b` (wrapping for integers; in `f32` for `f16`/`bf16`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;
/// `Σx / n`, added up in `f32` (`f32`, `f16`, `bf16`) or `f64` (`f64` and the integers).
#[derive(Clone, Copy, Debug, Default)]
pub struct Mean;

impl<T: Element> Reduction<T> for Sum {
    const NAME: &'static str = "sum";
    type Acc = T::SumAcc;
    type Out = T::SumAcc;
    const IDENTITY: T::SumAcc = <T::SumAcc as Accumulator>::ZERO;
    #[inline(always)]
    fn lift(x: T, _index: usize) -> T::SumAcc {
        x.to_sum()
    }
    #[inline(always)]
    fn combine(a: T::SumAcc, b: T::SumAcc) -> T::SumAcc {
        a.add(b)
    }
    #[inline(always)]
    fn finish(acc: T::SumAcc, _count: usize) -> T::SumAcc {
        acc
    }
    const EMPTY: T::SumAcc = <T::SumAcc as Accumulator>::EMPTY;
    type Running = <T::SumAcc as Accumulator>::Running;
    const START: Self::Running = <T::SumAcc as Accumulator>::START;
    #[inline(always)]
    fn accumulate(running: Self::Running, acc: T::SumAcc) -> Self::Running {
        <T::SumAcc as Accumulator>::accumulate(running, acc)
    }
    #[inline(always)]
    fn settle(running: Self::Running) -> T::SumAcc {
        <T::SumAcc as Accumulator>::settle(running)
    }
}

impl<T: Element> Reduction<T> for Mean {
    const NAME: &'static str = "mean";
    type Acc = T::MeanAcc;
    type Out = T::MeanAcc;
    const IDENTITY: T::MeanAcc = <T::MeanAcc as Accumulator>::ZERO;
    #[inline(always)]
    fn lift(x: T, _index: usize) -> T::MeanAcc {
        x.to_mean()
    }
    #[inline(always)]
    fn combine(a: T::MeanAcc, b: T::MeanAcc) -> T::MeanAcc {
        a.add(b)
    }
    #[inline(always)]
    fn finish(acc: T::MeanAcc, count: usize) -> T::MeanAcc {
        acc.divide(count)
    }
    const EMPTY: T::MeanAcc = <T::MeanAcc as Accumulator>::NAN_OR_ZERO;
    type Running = <T::MeanAcc as Accumulator>::Running;
    const START: Self::Running = <T::MeanAcc as Accumulator>::START;
    #[inline(always)]
    fn accumulate(running: Self::Running, acc: T::MeanAcc) -> Self::Running {
        <T::MeanAcc as Accumulator>::accumulate(running, acc)
    }
    #[inline(always)]
    fn settle(running: Self::Running) -> T::MeanAcc {
        <T::MeanAcc as Accumulator>::settle(running)
    }
}
