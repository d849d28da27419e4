//! The two floats a state is kept in, [`BinnedFloat`] for `f32` and `f64`: their bins, bit
//! tricks and conversions, from one macro.

use super::convert::{convert_f32, convert_f64};
use super::{Binned, BinnedFloat, PARTS};

/// `f32`: bin width 13, so three folds span 2·13 + 24 bits; the value adds up in `f64`.
/// `f64`: bin width 40.
macro_rules! binned_float {
    (
        $t:ty, $bits:ty, mantissa: $mant:literal, exponent_mask: $emask:literal,
        width: $w:literal, max_index: $max_index:literal, endurance: $endurance:literal,
        index_base: $index_base:literal, dindex_base: $dindex_base:literal, max_exp: $max_exp:literal,
        subnormal_base: $subnormal_base:literal, bin0: $bin0:literal, top_exponent: $top:literal,
        compression: $compression:expr, half_expansion: $half:expr, nan: $nan:literal,
        convert: $convert:ident
    ) => {
        impl BinnedFloat for $t {
            type StateWords = [u32; PARTS * size_of::<$t>() / size_of::<u32>()];
            type Ulps = $bits;
            const ZERO: Self = 0.0;
            const NAN: Self = <$t>::from_bits($nan);
            const BIN_WIDTH: i32 = $w;
            const MAX_INDEX: i32 = $max_index;
            const ENDURANCE: u32 = $endurance;
            const COMPRESSION: Self = $compression;
            const HALF_EXPANSION: Self = $half;

            #[inline(always)]
            fn bin(index: i32) -> Self {
                if index <= 0 {
                    return <$t>::from_bits($bin0);
                }
                // Past `MAX_INDEX + 1` the exponent would leave the normal range: the bottom
                // bin (exponent 1) instead. The index is clamped first so that nothing overflows.
                let index = if index < $max_index + 2 {
                    index
                } else {
                    $max_index + 2
                };
                let exponent = $index_base - $w * index;
                let exponent = (if exponent > 1 { exponent } else { 1 }) as $bits;
                <$t>::from_bits((exponent << ($mant - 1)) | (1 << ($mant - 2)))
            }

            #[inline(always)]
            fn index_of_primary(primary: Self) -> i32 {
                let exponent = ((primary.to_bits() >> ($mant - 1)) & $emask) as i32;
                ($index_base - exponent) / $w
            }

            #[inline(always)]
            fn index_for(max_abs: Self) -> i32 {
                let bits = max_abs.to_bits() & (<$bits>::MAX >> 1);
                let exponent = (bits >> ($mant - 1)) as i32;
                if exponent != 0 {
                    // Infinities and NaN: (base - (mask)) / w rounds -1/w to 0.
                    let index = ($dindex_base - exponent) / $w;
                    return if index < $max_index {
                        index
                    } else {
                        $max_index
                    };
                }
                // Zero and subnormals: frexp's exponent is the mantissa's length minus the bias.
                let frexp_exponent =
                    (<$bits>::BITS - bits.leading_zeros()) as i32 - $subnormal_base;
                let index = ($max_exp - frexp_exponent) / $w;
                if index < $max_index {
                    index
                } else {
                    $max_index
                }
            }

            #[inline(always)]
            fn in_top_bin(primary: Self) -> bool {
                ((primary.to_bits() >> ($mant - 1)) & $emask) as i32 == $top
            }

            #[inline(always)]
            fn in_bottom_bin(primary: Self) -> bool {
                ((primary.to_bits() >> ($mant - 1)) & $emask) as i32
                    == $index_base - $w * $max_index
            }

            #[inline(always)]
            fn or_last_bit(self) -> Self {
                <$t>::from_bits(self.to_bits() | 1)
            }

            #[inline(always)]
            fn or_bit(self, bit: u32) -> Self {
                <$t>::from_bits(self.to_bits() | bit as $bits)
            }

            #[inline(always)]
            fn max_abs(self, x: Self) -> Self {
                self.max(<$t>::from_bits(x.to_bits() & (<$bits>::MAX >> 1)))
            }

            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }

            #[inline(always)]
            fn is_nan(self) -> bool {
                self != self
            }

            #[inline(always)]
            fn renorm_fold(primary: Self, carry: Self) -> (Self, Self) {
                let bits = primary.to_bits();
                // The two bits under the leading one: 01 → -1, 10 → 0, 11 → +1, 00 → -2 quarters.
                let quarters = ((bits >> ($mant - 3)) & 3) as i32 - 2;
                let bits = (bits & !(1 << ($mant - 3))) | (1 << ($mant - 2));
                (<$t>::from_bits(bits), carry + quarters as $t)
            }

            #[inline(always)]
            fn fold_ulps(primary: Self) -> $bits {
                // A renormalised primary is 1.5·2^E (its bin) plus its low p-3 mantissa bits.
                primary.to_bits() & ((1 << ($mant - 3)) - 1)
            }

            #[inline(always)]
            fn fold_of_ulps(bin: Self, carry: Self, ulps: $bits) -> (Self, Self) {
                let quarters = (ulps >> ($mant - 3)) as $t;
                (
                    <$t>::from_bits(bin.to_bits() | (ulps & ((1 << ($mant - 3)) - 1))),
                    carry + quarters,
                )
            }

            #[inline(always)]
            fn convert(state: &Binned<Self>) -> Self {
                $convert(state)
            }

            #[inline(always)]
            fn divide(self, count: usize) -> Self {
                self / count as $t
            }

            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

binned_float!(
    f32, u32, mantissa: 24, exponent_mask: 0xff, width: 13, max_index: 19, endurance: 512,
    index_base: 266, dindex_base: 254, max_exp: 128, subnormal_base: 149,
    bin0: 0x7f40_0000, top_exponent: 254,
    compression: 1.0 / 4096.0, half_expansion: 2048.0, nan: 0x7fc0_0000,
    convert: convert_f32
);
binned_float!(
    f64, u64, mantissa: 53, exponent_mask: 0x7ff, width: 40, max_index: 50, endurance: 2048,
    index_base: 2060, dindex_base: 2046, max_exp: 1024, subnormal_base: 1074,
    bin0: 0x7fe8_0000_0000_0000, top_exponent: 2046,
    compression: 1.0 / 16384.0, half_expansion: 8192.0, nan: 0x7ff8_0000_0000_0000,
    convert: convert_f64
);
