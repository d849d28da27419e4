//! The 16-byte vector every kernel loads: [`Vector16`] and its lanes, written out one by one.

/// Sixteen bytes of elements, 16-byte aligned, so a load of it is one `ld.global.v4.b32` or
/// `ld.global.v2.b64`.
pub trait Vector16<T>: Copy {
    /// Elements in the vector.
    const LANES: usize;
    fn lanes(&self) -> &[T];
    /// The lanes lifted (lane `k` is element `first + k` of the input) and combined as a tree,
    /// `(l0⊕l1)⊕(l2⊕l3)`: written out for each width, so every value stays in a register.
    fn tree<A: Copy>(
        self,
        first: usize,
        lift: impl Fn(T, usize) -> A,
        combine: impl Fn(A, A) -> A,
    ) -> A;
    /// Calls `f(lane, element)` for every lane in order, written out one call per lane: every
    /// element stays in a register.
    fn each(self, f: impl FnMut(usize, T));
    /// The first lane whose `key` is the largest (`better(a, b)`: `a` beats `b`), and that key.
    fn best_lane<K: Copy>(self, key: impl Fn(T) -> K, better: impl Fn(K, K) -> bool) -> (usize, K);
    /// `f(k)` for every lane index `k`, in order, written out one call per lane: `k` is a
    /// constant in each call, so arrays indexed by it stay in registers and need no bounds
    /// check.
    fn for_lanes(f: impl FnMut(usize));
    /// The vector whose lane `k` is `f(k)`, written out one call per lane: how the column
    /// kernels put scalar loads of a thread's columns where a vector load would have put them.
    fn from_fn(f: impl FnMut(usize) -> T) -> Self;
}

/// The vector of `K` elements of `T` (`K * size_of::<T>() == 16`).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Lanes<T, const K: usize>(pub [T; K]);

macro_rules! lanes {
    ($k:literal, [$($lane:literal)*], |$x:ident, $l:ident, $c:ident| $tree:expr) => {
        impl<T: Copy> Vector16<T> for Lanes<T, $k> {
            const LANES: usize = {
                assert!($k * size_of::<T>() == 16, "a vector is 16 bytes");
                $k
            };
            #[inline(always)]
            fn lanes(&self) -> &[T] {
                &self.0
            }
            #[inline(always)]
            fn tree<A: Copy>(
                self,
                first: usize,
                lift: impl Fn(T, usize) -> A,
                $c: impl Fn(A, A) -> A,
            ) -> A {
                let $x = self.0;
                let $l = |k: usize| lift($x[k], first + k);
                $tree
            }
            #[inline(always)]
            fn each(self, mut f: impl FnMut(usize, T)) {
                // Written out, as `for_lanes`: a loop here is not always unrolled before
                // LLVM decides where the vector lives, and then it lives in local memory.
                $( f($lane, self.0[$lane]); )*
            }
            #[inline(always)]
            fn best_lane<K: Copy>(
                self,
                key: impl Fn(T) -> K,
                better: impl Fn(K, K) -> bool,
            ) -> (usize, K) {
                // Lane by lane, the strictly better one replacing: the first of equal keys stays.
                let mut best = (0, key(self.0[0]));
                let mut lane = 1;
                while lane < $k {
                    let candidate = key(self.0[lane]);
                    if better(candidate, best.1) {
                        best = (lane, candidate);
                    }
                    lane += 1;
                }
                best
            }
            #[inline(always)]
            fn for_lanes(mut f: impl FnMut(usize)) {
                $( f($lane); )*
            }
            #[inline(always)]
            fn from_fn(mut f: impl FnMut(usize) -> T) -> Self {
                Self([$( f($lane) ),*])
            }
        }
    };
}
lanes!(2, [0 1], |x, l, c| c(l(0), l(1)));
lanes!(4, [0 1 2 3], |x, l, c| c(c(l(0), l(1)), c(l(2), l(3))));
lanes!(8, [0 1 2 3 4 5 6 7], |x, l, c| c(
    c(c(l(0), l(1)), c(l(2), l(3))),
    c(c(l(4), l(5)), c(l(6), l(7)))
));
