//! [`Binned<F>`]: a float sum whose bits do not depend on the order of the additions.
//!
//! Demmel and Nguyen's *binned* (pre-rounded) accumulator, as ReproBLAS and CUB's
//! `ReproducibleFloatingAccumulator` (the `gpu_to_gpu` determinism of `DeviceReduce`) build it,
//! with three folds, and with the fixes of CUB's bugs listed in the module docs of
//! [`crate::reproducible`].
//!
//! # The state
//! ```text
//! fold i:  primary[i] = bin(T+i) + (multiples of ulp(bin(T+i)))    carry[i]: whole quarters of 2^E
//!          └ one binade [1, 2)·2^E ┘
//! T = index of the top fold (0 = the largest bin, MAX_INDEX = the smallest a state takes)
//! special = sum of the non-finite inputs (0 when there were none)
//! ```
//! A bin is `1.5·2^E`, with `E` a multiple of [`BinnedFloat::BIN_WIDTH`] apart from fold to
//! fold. Adding `x` to a fold rounds `x` to a multiple of the fold's ulp, a function of `x` and
//! the bin alone (the last bit of `x` forced to 1 so that no rounding is ever a tie); the rest
//! goes on to the next fold. Every fold's content is therefore an integer number of its ulps,
//! and every later step (deposits, renormalisation, merges) is exact integer arithmetic on
//! those integers: it commutes and associates, so any order, any split and any tree give the
//! same state, and the same [`Binned::value`].
//!
//! Which bins the three folds use depends only on the largest magnitude seen (the top index
//! `T` is the smallest index any input needed), so that too is the same for any order.
//!
//! # The bottom of the range
//! The bins `BIN_WIDTH` apart end at bin `MAX_INDEX + 1` (ulp 2^-144 for f32, 2^-1055 for
//! f64); below it lies one more, the *bottom bin* `1.5·2^EMIN`, in the smallest normal binade,
//! whose ulp is the smallest subnormal (2^-149, 2^-1074). Every float is a whole number of
//! that ulp, so a fold there takes what reaches it exactly. The top index stops at
//! `MAX_INDEX` (19 for f32, 50 for f64: every magnitude below 2^-119 or 2^-976), whose folds
//! are `MAX_INDEX`, `MAX_INDEX + 1` and the bottom bin: the state of such values is their
//! exact sum, subnormals included. Its last fold adds without the forced last bit
//! ([`Binned::last_bit`]): there it would add one ulp more, and there is nothing to round.
//! (CUB and ReproBLAS repeat bin `MAX_INDEX + 1` past it instead, so the last folds of the
//! smallest states duplicate it, and everything below its ulp is rounded away.)
//!
//! # Rules that keep it exact
//! - [`Binned::update`] to an index at least as coarse as every value deposited next;
//! - at most [`BinnedFloat::ENDURANCE`] deposits between two [`Binned::renorm`]s (each
//!   deposit moves a primary by less than 2^(E-12) (f32), so a primary stays in its binade);
//! - [`Binned::merge`] only renormalised states (it renormalises its result).
//!
//! `Binned::add` follows all three for one value at a time; the kernel deposits batches.

use crate::element::{Value, Words};
use core::ops::{Add, Mul, Sub};

mod convert;
pub mod counts;
mod floats;

/// Folds (bins) a state keeps: three, as CUB and ReproBLAS's default. Each adds `BIN_WIDTH`
/// bits of range below the top fold; three keep about `2·W + p` bits of the sum.
pub const FOLDS: usize = 3;

/// Floats in a state: the primaries, the carries and the special sum.
pub const PARTS: usize = 2 * FOLDS + 1;

/// A float type a [`Binned`] state is kept in (`f32` and `f64`): its bins and bit tricks.
pub trait BinnedFloat:
    Value
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + core::fmt::Debug
{
    /// `[u32; PARTS · words of Self]`: a state's words.
    type StateWords: Words;
    /// The unsigned integer of the type's width: a fold's offset from its bin in ulps (below a
    /// quarter; in [`counts::Counts`], the sum of several).
    type Ulps: Value + Default + Add<Output = Self::Ulps> + core::fmt::Debug;
    const ZERO: Self;
    /// The NaN a result with a NaN is (one fixed bit pattern: the GPU's and the CPU's NaNs
    /// differ in their payloads).
    const NAN: Self;
    /// Bits of exponent between one fold's bin and the next: 13 (f32), 40 (f64).
    const BIN_WIDTH: i32;
    /// The largest index a state takes (values of magnitude below `2^-119` (f32) or `2^-976`
    /// (f64) all take it): 19 (f32), 50 (f64). Its folds are bins `MAX_INDEX`, `MAX_INDEX + 1`
    /// and the bottom bin `MAX_INDEX + 2`, whose ulp is the smallest subnormal: the state of
    /// values that small is their exact sum.
    const MAX_INDEX: i32;
    /// Deposits a fold takes between two renormalisations: 512 (f32), 2048 (f64).
    const ENDURANCE: u32;
    /// Bin 0 does not fit the type: values are scaled by this before they go into it (2^-12
    /// for f32, 2^-14 for f64), and what comes out is scaled back by twice `HALF_EXPANSION`.
    const COMPRESSION: Self;
    const HALF_EXPANSION: Self;
    /// Bin `index` (`1.5·2^E`; bin 0 compressed). Bins 1 to `MAX_INDEX + 1` are `BIN_WIDTH`
    /// bits apart; `MAX_INDEX + 2` and past is the bottom bin, `1.5·2^EMIN` (the smallest
    /// normal binade, closer than `BIN_WIDTH` to the one above: no float is finer than its ulp).
    fn bin(index: i32) -> Self;
    /// The index of the state whose top primary is `primary` (the top fold's bin).
    fn index_of_primary(primary: Self) -> i32;
    /// The largest (finest) index whose top fold can take every value of magnitude up to
    /// `|max_abs|`; 0 for infinities and NaN.
    fn index_for(max_abs: Self) -> i32;
    /// Whether `primary` lies in the binade of bin 0 (the compressed one).
    fn in_top_bin(primary: Self) -> bool;
    /// Whether `primary` lies in the binade of bin `MAX_INDEX` (a top fold whose last fold is
    /// the bottom bin).
    fn in_bottom_bin(primary: Self) -> bool;
    /// `x` with its last mantissa bit set: the value a fold rounds, never half-way.
    fn or_last_bit(self) -> Self;
    /// `x` with `bit` (0 or 1) or-ed into its last mantissa bit: `or_last_bit` for 1, `x`
    /// itself for 0.
    fn or_bit(self, bit: u32) -> Self;
    /// `max(self, |x|)`, for a batch's largest magnitude (a NaN `x` is passed over).
    fn max_abs(self, x: Self) -> Self;
    fn is_finite(self) -> bool;
    fn is_nan(self) -> bool;
    /// Renormalises one fold: the primary's top two mantissa bits go to the carry, and the
    /// primary is set back to `[1.5, 1.75)·2^E`.
    fn renorm_fold(primary: Self, carry: Self) -> (Self, Self);
    /// A renormalised primary's offset from its bin, in ulps (below a quarter of the binade).
    fn fold_ulps(primary: Self) -> Self::Ulps;
    /// The renormalised fold of bin `bin` holding `carry` quarters and `ulps` ulps (any number:
    /// the whole quarters among them go to the carry).
    fn fold_of_ulps(bin: Self, carry: Self, ulps: Self::Ulps) -> (Self, Self);
    /// The value of a non-empty, finite, renormalised state, rounded once.
    fn convert(state: &Binned<Self>) -> Self;
    /// `self / count` (a mean).
    fn divide(self, count: usize) -> Self;
    /// Exactly, in `f64` (what the value is added up in).
    fn to_f64(self) -> f64;
}

/// A reproducible float sum in progress: three folds, their carries, and the sum of the
/// non-finite values seen. [`STATE_BYTES_F32`](crate::reproducible::STATE_BYTES_F32) bytes for `f32`,
/// twice that for `f64`; `repr(C)`, so a device buffer of them is what the kernels write.
///
/// ```
/// use kernels_gpu::reproducible::Binned;
/// let xs = [1e8f32, 1.0, -1e8, 0.5];
/// let forwards = Binned::sum_of(xs);
/// let backwards = Binned::sum_of(xs.into_iter().rev());
/// assert_eq!(forwards.value(), 1.5); // plain f32 addition in this order gives 0.5
/// assert_eq!(forwards.to_words(), backwards.to_words()); // the same state, bit for bit
/// # use kernels_gpu::element::Value;
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Binned<F> {
    primary: [F; FOLDS],
    carry: [F; FOLDS],
    special: F,
}

impl<F: BinnedFloat> Default for Binned<F> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<F: BinnedFloat> Binned<F> {
    /// The sum of nothing (all bits 0, so a zeroed buffer holds empty states).
    pub const EMPTY: Self = Binned {
        primary: [F::ZERO; FOLDS],
        carry: [F::ZERO; FOLDS],
        special: F::ZERO,
    };

    /// The state of `values`, added one at a time.
    pub fn sum_of(values: impl IntoIterator<Item = F>) -> Self {
        let mut state = Self::EMPTY;
        for x in values {
            state.add(x);
        }
        state
    }

    /// No finite value was deposited (non-finite ones go to `special`).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.primary[0] == F::ZERO
    }

    /// The top fold's bin index (see the module docs); meaningless for an empty state.
    #[inline(always)]
    pub fn index(&self) -> i32 {
        F::index_of_primary(self.primary[0])
    }

    /// The primaries, carries and the sum of the non-finite values: for tests and the curious.
    pub fn parts(&self) -> ([F; FOLDS], [F; FOLDS], F) {
        (self.primary, self.carry, self.special)
    }

    /// Adds one value: [`Self::update`], [`Self::deposit`], [`Self::renorm`]; a NaN or an
    /// infinity goes to the special sum instead.
    pub fn add(&mut self, x: F) {
        if !x.is_finite() {
            self.add_special(x);
            return;
        }
        self.update(F::index_for(x));
        self.deposit_any(x);
        self.renorm();
    }

    /// Adds a NaN or an infinity to the sum of the non-finite values.
    #[inline(always)]
    pub fn add_special(&mut self, x: F) {
        self.special = self.special + x;
    }

    /// A NaN or an infinity was added (the value is then the sum of the non-finite values).
    #[inline(always)]
    pub fn has_special(&self) -> bool {
        self.special != F::ZERO
    }

    /// The top primary is finite: no NaN or infinity was deposited (the kernel checks this
    /// once per batch, instead of every value).
    #[inline(always)]
    pub fn top_is_finite(&self) -> bool {
        self.primary[0].is_finite()
    }

    /// An empty state that keeps this one's sum of non-finite values.
    #[inline(always)]
    pub fn only_special(&self) -> Self {
        Binned {
            special: self.special,
            ..Self::EMPTY
        }
    }

    /// Moves the folds to bins coarse enough for values of index `index` ([`BinnedFloat::index_for`]
    /// of their largest magnitude): folds slide down, new top folds start at their bins, and
    /// what slides past the last fold is dropped (it is below the precision the sum keeps).
    /// An empty state starts all three folds at `index` (CUB skips this and sums garbage).
    #[inline(always)]
    pub fn update(&mut self, index: i32) {
        if self.is_empty() {
            self.restart_at(index);
            return;
        }
        let shift = self.index() - index;
        if shift <= 0 {
            return;
        }
        if shift == 1 {
            self.primary[2] = self.primary[1];
            self.carry[2] = self.carry[1];
            self.primary[1] = self.primary[0];
            self.carry[1] = self.carry[0];
            self.start_fold(0, index);
        } else if shift == 2 {
            self.primary[2] = self.primary[0];
            self.carry[2] = self.carry[0];
            self.start_fold(1, index + 1);
            self.start_fold(0, index);
        } else {
            self.restart_at(index);
        }
    }

    #[inline(always)]
    fn restart_at(&mut self, index: i32) {
        self.start_fold(0, index);
        self.start_fold(1, index + 1);
        self.start_fold(2, index + 2);
    }

    #[inline(always)]
    fn start_fold(&mut self, fold: usize, index: i32) {
        self.primary[fold] = F::bin(index);
        self.carry[fold] = F::ZERO;
    }

    /// Every fold's primary in `[1.5, 1.75)·2^E`, as [`Self::renorm`] leaves it (an empty
    /// state too).
    pub(crate) fn is_renormalised(&self) -> bool {
        self.is_empty()
            || (0..FOLDS).all(|fold| {
                F::renorm_fold(self.primary[fold], self.carry[fold])
                    == (self.primary[fold], self.carry[fold])
            })
    }

    /// The top fold is bin 0, whose deposits are scaled ([`Self::deposit_top`]).
    #[inline(always)]
    pub fn in_top_bin(&self) -> bool {
        F::in_top_bin(self.primary[0])
    }

    /// What the last fold's deposits or into the value they add ([`Self::deposit_with`]): 1,
    /// so that the rounding to the fold's ulp is never half-way, except when the last fold is
    /// the bottom bin (the top fold at `MAX_INDEX`): its ulp is the smallest subnormal, every
    /// float is a whole number of it, and the deposit is exact as it is (a forced last bit
    /// would add one more ulp). Constant from one [`Self::update`] to the next.
    #[inline(always)]
    pub fn last_bit(&self) -> u32 {
        if F::in_bottom_bin(self.primary[0]) {
            0
        } else {
            1
        }
    }

    /// Adds a finite `x` whose index is at least the state's (after [`Self::update`]), when the
    /// top fold is not bin 0. No renormalisation: the caller does one at least every
    /// [`BinnedFloat::ENDURANCE`] deposits.
    #[inline(always)]
    pub fn deposit(&mut self, x: F) {
        self.deposit_with(x, self.last_bit());
    }

    /// [`Self::deposit`] with the state's [`Self::last_bit`] given (the kernel reads it once
    /// per batch, after the update).
    #[inline(always)]
    pub fn deposit_with(&mut self, x: F, last_bit: u32) {
        let x = self.deposit_fold(0, x);
        let x = self.deposit_fold(1, x);
        self.primary[2] = self.primary[2] + x.or_bit(last_bit);
    }

    /// [`Self::deposit`] when the top fold is bin 0: `x` goes in scaled by `COMPRESSION`, and
    /// what it leaves comes back scaled up, in two halves so that nothing overflows.
    #[inline(always)]
    pub fn deposit_top(&mut self, x: F) {
        let before = self.primary[0];
        let rounded = (x * F::COMPRESSION).or_last_bit() + before;
        self.primary[0] = rounded;
        let taken_half = (before - rounded) * F::HALF_EXPANSION;
        let x = x + taken_half + taken_half;
        let x = self.deposit_fold(1, x);
        self.primary[2] = self.primary[2] + x.or_last_bit();
    }

    /// [`Self::deposit_top`] or [`Self::deposit`], whichever the top fold needs.
    #[inline(always)]
    pub fn deposit_any(&mut self, x: F) {
        if self.in_top_bin() {
            self.deposit_top(x);
        } else {
            self.deposit(x);
        }
    }

    /// One fold takes `x` rounded to its ulp; returns what is left (exact).
    #[inline(always)]
    fn deposit_fold(&mut self, fold: usize, x: F) -> F {
        let before = self.primary[fold];
        let rounded = x.or_last_bit() + before;
        self.primary[fold] = rounded;
        x + (before - rounded)
    }

    /// Moves each primary's drift into its carry, setting the primary back to
    /// `[1.5, 1.75)·2^E`; exact. Nothing to do for an empty state.
    #[inline(always)]
    pub fn renorm(&mut self) {
        if self.is_empty() {
            return;
        }
        let mut fold = 0;
        while fold < FOLDS {
            (self.primary[fold], self.carry[fold]) =
                F::renorm_fold(self.primary[fold], self.carry[fold]);
            fold += 1;
        }
    }

    /// The sum, rounded once: the sum of the non-finite values if there were any (a NaN as
    /// [`BinnedFloat::NAN`]), `+0.0` for an empty state, else the folds and carries added up
    /// in a fixed order (in double-double `f64`, coarsest first) and rounded once to `F`. The
    /// state must be renormalised.
    #[inline(always)]
    pub fn value(&self) -> F {
        if self.has_special() {
            return if self.special.is_nan() {
                F::NAN
            } else {
                self.special
            };
        }
        if self.is_empty() {
            return F::ZERO;
        }
        F::convert(self)
    }

    /// What [`Self::value`] adds for fold `fold` (its offset from the bin and its carries),
    /// in `f64`: `(offset, carry · bin/6)`; both exact.
    #[inline(always)]
    fn fold_terms(&self, fold: usize) -> (f64, f64) {
        let index = self.index() + fold as i32;
        let bin = F::bin(index);
        let offset = (self.primary[fold] - bin).to_f64();
        let carry = self.carry[fold].to_f64() * (bin.to_f64() / 6.0);
        (offset, carry)
    }
}

/// Moves between lanes, shared and global memory as its words, part after part (a warp
/// shuffle of a state is one `shfl` per word).
impl<F: BinnedFloat> Value for Binned<F> {
    type Words = F::StateWords;
    #[inline(always)]
    fn to_words(self) -> F::StateWords {
        let mut words = <F::StateWords as Words>::ZERO;
        let per = size_of::<F>() / size_of::<u32>();
        let mut part = 0;
        while part < PARTS {
            let value = match part {
                0..FOLDS => self.primary[part],
                FOLDS..6 => self.carry[part - FOLDS],
                _ => self.special,
            };
            let value = value.to_words();
            let mut word = 0;
            while word < per {
                words.as_mut()[part * per + word] = value.as_ref()[word];
                word += 1;
            }
            part += 1;
        }
        words
    }
    #[inline(always)]
    fn from_words(words: F::StateWords) -> Self {
        let per = size_of::<F>() / size_of::<u32>();
        let part = |part: usize| {
            let mut value = <F::Words as Words>::ZERO;
            let mut word = 0;
            while word < per {
                value.as_mut()[word] = words.as_ref()[part * per + word];
                word += 1;
            }
            F::from_words(value)
        };
        Binned {
            primary: [part(0), part(1), part(2)],
            carry: [part(3), part(4), part(5)],
            special: part(6),
        }
    }
}
