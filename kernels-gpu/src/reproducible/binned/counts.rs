//! [`Counts`]: a renormalised state with each fold's offset from its bin as an integer, which a
//! tree of merges adds without renormalising at every level.
//!
//! Every fold of a state holds an integer number of its ulps: the primary's offset from its
//! bin, plus the carry's quarters of the binade (`2^(p-3)` ulps each, `p` the mantissa's bits).
//! Merging two states is aligning the finer one's folds under the coarser one's (dropping what
//! slides past the third, as [`Binned::merge`] does) and adding carries to carries and offsets
//! to offsets. Kept as integers, the offsets add with integer instructions, and their whole
//! quarters go to the carries once, at the root of the tree:
//!
//! ```text
//! Binned (per lane) ──of──▶ Counts ──plus, plus, …──▶ Counts ──to_state──▶ Binned
//!   primary = bin + r·ulp        index, carries c, ulps r         primary = bin + (r mod q)·ulp
//!   carry   = c quarters         (r ≥ q allowed in between)       carry   = c + ⌊r / q⌋
//! ```
//!
//! The old way, a merge at every level, subtracted both bins, added, and renormalised every
//! fold; adding two `Counts` is two alignments (selects), three float and three integer
//! additions, and the special sum's. The state at the root
//! is the same bit for bit: the folds hold the same integers, and their renormalised form is
//! unique.
//!
//! A tree adds at most [`Counts::MAX_LEAVES`] states: each offset is below a quarter (`2^21`
//! ulps for `f32`, `2^50` for `f64`), so `u32` and `u64` hold that many of them.

use super::{Binned, BinnedFloat, FOLDS};

/// The index of a state with no finite value: coarser than none, so it never wins the top.
const EMPTY_INDEX: i32 = i32::MAX;

/// A renormalised [`Binned`] state with integer offsets (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Counts<F: BinnedFloat> {
    /// The top fold's index, or `i32::MAX` for a state with no finite value.
    pub index: i32,
    /// Fold `j`'s carry (bin `index + j`): whole quarters of its binade.
    pub carries: [F; FOLDS],
    /// Fold `j`'s primary's offset from its bin, in ulps; the sum of several.
    pub ulps: [F::Ulps; FOLDS],
    /// The sum of the non-finite values.
    pub special: F,
}

impl<F: BinnedFloat> Counts<F> {
    /// States one tree may add: `2^11` offsets below `2^21` ulps fit `u32` (`f64`'s, below
    /// `2^50`, fit `u64` more often).
    pub const MAX_LEAVES: usize = 1 << 11;

    /// A renormalised `state` as counts (of any other, the offsets would lose their top bits).
    #[inline(always)]
    pub fn of(state: &Binned<F>) -> Self {
        debug_assert!(
            state.is_renormalised(),
            "Counts::of takes renormalised states"
        );
        if state.is_empty() {
            return Counts {
                index: EMPTY_INDEX,
                carries: [F::ZERO; FOLDS],
                ulps: [F::Ulps::default(); FOLDS],
                special: state.special,
            };
        }
        Counts {
            index: state.index(),
            carries: state.carry,
            ulps: [
                F::fold_ulps(state.primary[0]),
                F::fold_ulps(state.primary[1]),
                F::fold_ulps(state.primary[2]),
            ],
            special: state.special,
        }
    }

    /// `self + other`: the coarser index wins; the finer state's folds slide under it.
    #[inline(always)]
    pub fn plus(&self, other: &Self) -> Self {
        let index = if self.index < other.index {
            self.index
        } else {
            other.index
        };
        let (my_carries, my_ulps) = self.aligned(index);
        let (their_carries, their_ulps) = other.aligned(index);
        Counts {
            index,
            carries: [
                my_carries[0] + their_carries[0],
                my_carries[1] + their_carries[1],
                my_carries[2] + their_carries[2],
            ],
            ulps: [
                my_ulps[0] + their_ulps[0],
                my_ulps[1] + their_ulps[1],
                my_ulps[2] + their_ulps[2],
            ],
            special: self.special + other.special,
        }
    }

    /// The folds as seen from the top index `index` (at most this state's).
    #[inline(always)]
    fn aligned(&self, index: i32) -> ([F; FOLDS], [F::Ulps; FOLDS]) {
        // `index` is at least 0 (or both are empty, and the shift is 0): no overflow, even from
        // `EMPTY_INDEX`.
        let shift = self.index - index;
        let ([c0, c1, c2], [u0, u1, u2]) = (self.carries, self.ulps);
        let (zero, none) = (F::ZERO, F::Ulps::default());
        // Written out case by case: no array indexed at run time (it would live in local
        // memory on the GPU).
        if shift == 0 {
            ([c0, c1, c2], [u0, u1, u2])
        } else if shift == 1 {
            ([zero, c0, c1], [none, u0, u1])
        } else if shift == 2 {
            ([zero, zero, c0], [none, none, u0])
        } else {
            ([zero; FOLDS], [none; FOLDS])
        }
    }

    /// The renormalised state these counts are: [`Binned::EMPTY`] (with the special sum) if no
    /// finite value was counted.
    #[inline(always)]
    pub fn to_state(&self) -> Binned<F> {
        if self.index == EMPTY_INDEX {
            return Binned {
                special: self.special,
                ..Binned::EMPTY
            };
        }
        let fold = |j: usize| {
            F::fold_of_ulps(F::bin(self.index + j as i32), self.carries[j], self.ulps[j])
        };
        let ((p0, c0), (p1, c1), (p2, c2)) = (fold(0), fold(1), fold(2));
        Binned {
            primary: [p0, p1, p2],
            carry: [c0, c1, c2],
            special: self.special,
        }
    }
}

/// Merging, beside the counts it is computed with.
impl<F: BinnedFloat> Binned<F> {
    /// `self += other`, exactly, for renormalised states; the result is renormalised. The
    /// coarser state's bins win; the finer one's folds past the third are dropped (they are
    /// below the precision kept, and the same ones are dropped in every order). The arithmetic
    /// is [`Counts::plus`]; a tree of merges can stay in [`Counts`] from leaves to root.
    #[inline(always)]
    pub fn merge(&mut self, other: &Self) {
        if other.is_empty() {
            self.special = self.special + other.special;
            return;
        }
        if self.is_empty() {
            let special = self.special + other.special;
            *self = *other;
            self.special = special;
            return;
        }
        *self = Counts::of(self).plus(&Counts::of(other)).to_state();
    }
}
