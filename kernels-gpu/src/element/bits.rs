//! The [`Value`] impls of the element types: their bits as 32-bit words.

use super::half::{Bf16, F16};
use super::traits::Value;

macro_rules! value_32 {
    ($($t:ty),*) => {$(
        impl Value for $t {
            type Words = [u32; 1];
            #[inline(always)]
            fn to_words(self) -> [u32; 1] {
                [self.to_bits32()]
            }
            #[inline(always)]
            fn from_words(words: [u32; 1]) -> Self {
                Self::from_bits32(words[0])
            }
        }
    )*};
}
macro_rules! value_64 {
    ($($t:ty),*) => {$(
        impl Value for $t {
            type Words = [u32; 2];
            #[inline(always)]
            fn to_words(self) -> [u32; 2] {
                let bits = self.to_bits64();
                [bits as u32, (bits >> 32) as u32]
            }
            #[inline(always)]
            fn from_words(words: [u32; 2]) -> Self {
                Self::from_bits64(u64::from(words[0]) | (u64::from(words[1]) << 32))
            }
        }
    )*};
}

/// Bit casts the [`Value`] impls are written with.
trait Bits32 {
    fn to_bits32(self) -> u32;
    fn from_bits32(bits: u32) -> Self;
}
trait Bits64 {
    fn to_bits64(self) -> u64;
    fn from_bits64(bits: u64) -> Self;
}
impl Bits32 for f32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}
impl Bits32 for i32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        bits as i32
    }
}
impl Bits32 for u32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        bits
    }
}
impl Bits32 for F16 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        u32::from(self.0)
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        F16(bits as u16)
    }
}
impl Bits32 for Bf16 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        u32::from(self.0)
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        Bf16(bits as u16)
    }
}
impl Bits64 for f64 {
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits64(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}
impl Bits64 for i64 {
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_bits64(bits: u64) -> Self {
        bits as i64
    }
}
impl Bits64 for u64 {
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_bits64(bits: u64) -> Self {
        bits
    }
}
value_32!(f32, i32, u32, F16, Bf16);
value_64!(f64, i64, u64);
