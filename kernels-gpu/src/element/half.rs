//! The 16-bit floats, [`F16`] (IEEE binary16) and [`Bf16`] (bfloat16), kept as their bits:
//! sums and means add them up in `f32`; min, max and the arg operators return them unchanged.

use super::traits::{Element, sealed::Sealed};
use super::vector::Lanes;

/// IEEE 754 binary16, as its bits. Sums and means add it up in `f32`; min, max and the arg
/// operators return it unchanged.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct F16(pub u16);

/// bfloat16 (the top half of an `f32`), as its bits. Sums and means add it up in `f32`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bf16(pub u16);

impl Sealed for F16 {}
impl Sealed for Bf16 {}

impl F16 {
    /// The exact `f32` of this binary16 (every binary16 is an `f32`).
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        f16_to_f32(self.0)
    }
}

impl Bf16 {
    /// The exact `f32` of this bfloat16: its bits are the top half of the `f32`'s.
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

/// `f16 → f32` in software, exactly (subnormals, infinities and NaN payloads included): what
/// the simulator runs, and the GPU's `cvt.f32.f16` computes in one instruction.
pub fn f16_bits_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits & 0x8000) << 16;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let magnitude = match (exponent, mantissa) {
        (0, 0) => 0,
        // Subnormal: mantissa · 2^-24; normalise it into an f32 (which has room for it).
        (0, m) => {
            let shift = m.leading_zeros() - 21; // brings bit 10 to the top of the mantissa
            let m = (m << shift) & 0x3ff;
            ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1f, m) => 0x7f80_0000 | (m << 13),
        (e, m) => ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

/// `cvt.f32.f16`: exact.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn f16_to_f32(bits: u16) -> f32 {
    let value: f32;
    // SAFETY: a register conversion; touches no memory.
    unsafe {
        core::arch::asm!("cvt.f32.f16 {0}, {1};", out(reg32) value, in(reg16) bits, options(pure, nomem, nostack))
    };
    value
}

/// In software: the simulator checks the algorithm, the conversion is exact either way.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn f16_to_f32(bits: u16) -> f32 {
    f16_bits_to_f32(bits)
}

/// Two lanes' order keys at a time: `float_key!` on both halves of a 32-bit word (a negative
/// number's bits flipped, a positive number's sign bit set), in five integer instructions.
#[inline(always)]
fn packed_keys(word: u32) -> u32 {
    let signs = word & 0x8000_8000;
    // 0x7fff in each half whose sign is set (no borrow crosses the halves), then the sign bits.
    word ^ ((signs - (signs >> 15)) | 0x8000_8000)
}

/// What, added to a word's two magnitudes (`word & 0x7fff_7fff`), carries into the top bit of
/// each half whose magnitude lies beyond `infinity`'s: a NaN's.
#[inline(always)]
const fn carry_past_infinity(infinity: u16) -> u32 {
    (0x7fff - infinity as u32) * 0x0001_0001
}

/// The extreme keys of every lane of `vectors`, two lanes per word: the largest and the
/// smallest (`float_key!`, so `-0.0 < +0.0`), and whether any lane is a NaN (whose magnitude
/// lies beyond `infinity`'s). Integer instructions only, so every GPU the PTX targets runs
/// them (the packed float `max.NaN.bf16x2` needs sm_80), and the simulator runs the same code.
#[inline(always)]
fn packed_key_extremes<V, const K: usize>(
    vectors: &[V; K],
    words: impl Fn(&V) -> [u32; 4],
    infinity: u16,
) -> (u32, u32, bool) {
    let carry_past_infinity = carry_past_infinity(infinity);
    // The top halves are ordered by the whole words; the bottom halves on their own.
    let (mut top_max, mut top_min, mut bottom_max, mut bottom_min) = (0, u32::MAX, 0, 0xffff);
    let mut beyond = 0;
    // Word by word across the vectors (the last vector first), not vector by vector: every
    // vector is needed from the first steps, so ptxas issues the group's loads together. Vector
    // by vector, it issued the last load after work on the others in some kernels (to save
    // registers), which then waited for two round trips a group: `rows_warp_bf16_argmax` took
    // 42% longer over 64 × 128256 (H100, `docs/runs/2026-11-27-g/`).
    let mut pair = 0;
    while pair < 4 {
        let mut k = K;
        while k > 0 {
            k -= 1;
            let word = words(&vectors[k])[pair];
            let keys = packed_keys(word);
            top_max = top_max.max(keys);
            top_min = top_min.min(keys);
            bottom_max = bottom_max.max(keys & 0xffff);
            bottom_min = bottom_min.min(keys & 0xffff);
            beyond |= (word & 0x7fff_7fff) + carry_past_infinity;
        }
        pair += 1;
    }
    let largest = (top_max >> 16).max(bottom_max);
    let smallest = (top_min >> 16).min(bottom_min);
    (largest, smallest, beyond & 0x8000_8000 != 0)
}

/// The first lane of `vectors` that holds `bits` (any NaN, if `bits` is one), as
/// `k · 8 + lane`, two lanes a word and no branch (three integer instructions a word flag the
/// lanes, a few more gather the flags); `8 · K` if no lane does. Each word becomes
/// `x = (word ^ pattern) & magnitudes`, and a lane matches where `(x + offset) & !x` sets its
/// half's top bit:
/// - for a number, `x = word ^ bits` has a zero half where a lane holds `bits`, and
///   `offset = -0x0001_0001` borrows into the top bit of exactly those (a zero bottom half
///   borrows from the top one, which may then be flagged too, but the bottom lane comes
///   first, so the first flag is exact);
/// - for a NaN, `x` is each lane's magnitude, and `offset` carries into the top bit of a half
///   whose magnitude lies beyond `infinity`'s ([`carry_past_infinity`]; `!x` keeps it).
#[inline(always)]
fn first_lane_holding<V, const K: usize>(
    vectors: &[V; K],
    words: impl Fn(&V) -> [u32; 4],
    bits: u16,
    infinity: u16,
) -> usize {
    let (pattern, magnitudes, offset) = if bits & 0x7fff > infinity {
        (0, 0x7fff_7fff, carry_past_infinity(infinity))
    } else {
        (
            u32::from(bits) * 0x0001_0001,
            u32::MAX,
            0x0001_0001u32.wrapping_neg(),
        )
    };
    const {
        assert!(
            K <= 8,
            "8 lanes a vector, K vectors: at most 64 flags in the mask"
        )
    };
    // Two bits a word, gathered into one mask from the last word to the first; the first
    // lane is its lowest set bit.
    let mut mask: u64 = 0;
    let mut k = K;
    while k > 0 {
        k -= 1;
        let words = words(&vectors[k]);
        let mut pair = 4;
        while pair > 0 {
            pair -= 1;
            let x = (words[pair] ^ pattern) & magnitudes;
            let flags = x.wrapping_add(offset) & !x & 0x8000_8000;
            mask = (mask << 2) | u64::from(((flags >> 15) & 1) | ((flags >> 30) & 2));
        }
    }
    (mask.trailing_zeros() as usize).min(8 * K)
}

macro_rules! half_element {
    ($t:ident, $name:literal, $lowest:literal, $highest:literal, $exponent_mask:literal) => {
        impl Element for $t {
            type Vector16 = Lanes<$t, 8>;
            type SumAcc = f32;
            type MeanAcc = f32;
            const NAME: &'static str = $name;
            const LOWEST: Self = $t($lowest);
            const HIGHEST: Self = $t($highest);
            #[inline(always)]
            fn to_sum(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn to_mean(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.0 & 0x7fff > $exponent_mask
            }
            // 16-bit keys in a `u32`: registers are 32 bits wide anyway.
            type Key = u32;
            #[inline(always)]
            fn key_nan_high(self) -> u32 {
                if self.is_nan() {
                    u32::MAX
                } else {
                    u32::from(float_key!(self.0, u16, i16))
                }
            }
            #[inline(always)]
            fn key_nan_low(self) -> u32 {
                if self.is_nan() {
                    0
                } else {
                    u32::from(float_key!(self.0, u16, i16))
                }
            }
            #[inline(always)]
            fn from_key(key: u32) -> Self {
                // The NaN keys (0 and u32::MAX) map to the NaNs 0xffff and 0x7fff.
                $t(float_from_key!(key as u16, u16))
            }
            const ARG_SKIPS_GROUPS: bool = true;
            /// The largest key of the lanes, from their packed keys; a NaN's is `u32::MAX`.
            #[inline(always)]
            fn largest_key<const K: usize>(vectors: &[Lanes<$t, 8>; K]) -> Option<u32> {
                let (largest, _, nan) = packed_key_extremes(vectors, Self::words, $exponent_mask);
                Some(if nan { u32::MAX } else { largest })
            }
            /// Two lanes a word (this module's `first_lane_holding`).
            #[inline(always)]
            fn first_lane_holding<const K: usize>(
                vectors: &[Lanes<$t, 8>; K],
                value: Self,
            ) -> usize {
                first_lane_holding(vectors, Self::words, value.0, $exponent_mask)
            }
            /// The smallest key of the lanes; a NaN's is `0`.
            #[inline(always)]
            fn smallest_key<const K: usize>(vectors: &[Lanes<$t, 8>; K]) -> Option<u32> {
                let (_, smallest, nan) = packed_key_extremes(vectors, Self::words, $exponent_mask);
                Some(if nan { 0 } else { smallest })
            }
        }

        impl $t {
            /// A vector's lanes as four words of two lanes each, the first in the low half (as
            /// in memory): the registers the vector was loaded into.
            #[inline(always)]
            fn words(vector: &Lanes<$t, 8>) -> [u32; 4] {
                // SAFETY: `Lanes<$t, 8>` is sixteen bytes of plain bits (eight `u16`s in
                // `repr(C)`), and any sixteen bytes are four `u32`s.
                unsafe { core::mem::transmute::<Lanes<$t, 8>, [u32; 4]>(*vector) }
            }
        }
    };
}
half_element!(F16, "f16", 0xfc00, 0x7c00, 0x7c00);
half_element!(Bf16, "bf16", 0xff80, 0x7f80, 0x7f80);
