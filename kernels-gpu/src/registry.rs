//! The one declaration of every kernel: the versions of the series (with what the host needs
//! to launch them and to explain them), and the library's row and column kernels.
//!
//! `declare_versions!` below is the only place a version is listed. From it come the kernel
//! modules, the table [`VERSIONS`](crate::VERSIONS) the host plans launches and prints from,
//! the PTX entry points (`reduce_v5_f32_sum_b256`, on `nvptx64`) and, on the host, the same
//! entry points as plain functions for the simulator ([`sim_entry`]). Adding a version is one
//! kernel file and one entry here.

/// How many blocks a pass launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One block per `elements_per_thread * block` elements (the tutorial's shape).
    PerElements { elements_per_thread: u32 },
    /// As many blocks as the GPU keeps resident at once (SMs × the kernel's occupancy), fewer
    /// if the input is small: each thread loops over the input, handling at least
    /// `min_elements_per_thread` of it.
    FillDevice { min_elements_per_thread: u32 },
    /// As [`Grid::FillDevice`], but counted in 16-byte vectors: at least
    /// `min_vectors_per_thread` of them per thread; and one block alone while each of its
    /// threads has at most `single_block_vectors_per_thread` (a second block costs a hand-over
    /// that one block's few more loads do not).
    FillDeviceVectors {
        min_vectors_per_thread: u32,
        single_block_vectors_per_thread: u32,
    },
}

/// What the block's dynamic shared memory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// One element per thread (the shared-memory tree).
    PerThread,
    /// One accumulator per warp (the shuffle versions).
    PerWarp,
    /// One accumulator per warp and the `u32` ticket of the single-pass version.
    PerWarpAndTicket,
}

/// What a launch leaves in `output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// One value per block: the host runs the version again over them until one is left.
    PerBlock,
    /// The finished result in `output[0]`, in one launch.
    Final,
}

/// How the block size reaches the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockParam {
    /// Read at run time (`blockDim.x`): one entry point for every block size.
    Runtime,
    /// A const generic: one entry point per size in [`crate::launch::BLOCK_SIZES`]
    /// (`…_b256`).
    Const,
}

/// A version's block size when the user does not choose one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunedBlock {
    Fixed(u32),
    /// By input size: `(up_to, block)` pairs in ascending `up_to` — `block` threads for inputs
    /// of at most `up_to` elements — and `above` threads for larger ones.
    BySize {
        tiers: &'static [(usize, u32)],
        above: u32,
    },
}

impl TunedBlock {
    /// Threads per block for an input of `len` elements.
    pub const fn for_len(self, len: usize) -> u32 {
        match self {
            TunedBlock::Fixed(block) => block,
            TunedBlock::BySize { tiers, above } => {
                let mut k = 0;
                while k < tiers.len() {
                    if len <= tiers[k].0 {
                        return tiers[k].1;
                    }
                    k += 1;
                }
                above
            }
        }
    }
}

/// Which (element type, operator) pairs a kernel is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpSet {
    /// `f32 f64 i32 u32` × `sum min max`: the teaching versions, whose accumulator is the
    /// element.
    Teaching,
    /// Every element type × every operator: the library's kernels.
    Library,
}

/// Element types of [`OpSet::Teaching`] and of [`OpSet::Library`], as entry points name them.
pub const TEACHING_TYPES: [&str; 4] = ["f32", "f64", "i32", "u32"];
pub const LIBRARY_TYPES: [&str; 8] = ["f32", "f64", "i32", "u32", "i64", "u64", "f16", "bf16"];
/// Operators of [`OpSet::Teaching`] and of [`OpSet::Library`].
pub const TEACHING_OPS: [&str; 3] = ["sum", "min", "max"];
pub const LIBRARY_OPS: [&str; 6] = ["sum", "min", "max", "argmin", "argmax", "mean"];

#[cfg(not(target_arch = "nvptx64"))]
impl OpSet {
    /// The element types this set builds, by name.
    pub fn types(self) -> &'static [&'static str] {
        match self {
            OpSet::Teaching => &TEACHING_TYPES,
            OpSet::Library => &LIBRARY_TYPES,
        }
    }

    /// The operators this set builds, by name.
    pub fn ops(self) -> &'static [&'static str] {
        match self {
            OpSet::Teaching => &TEACHING_OPS,
            OpSet::Library => &LIBRARY_OPS,
        }
    }

    /// Whether `dtype` × `op` (names as in entry points) is built.
    pub fn supports(self, dtype: &str, op: &str) -> bool {
        self.types().contains(&dtype) && self.ops().contains(&op)
    }
}

/// Where a version comes from in the material this series follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The chapter of the tutorial series that numbers the versions from 0, by its code's name
    /// (`reduce_v3_add_during_load`).
    pub chapter: Option<&'static str>,
    /// The number the diagrams, the notebook and Mark Harris's slides give it (they count
    /// from 1: their "V4" is v3 here).
    pub one_based: Option<u8>,
    /// The kernel of Harris's *Optimizing Parallel Reduction in CUDA* (Kernel 1 … 7).
    pub harris_kernel: Option<u8>,
}

/// One version of the series.
#[derive(Debug)]
pub struct VersionInfo {
    /// 0–8: `v{index}`.
    pub index: u8,
    /// `v0` … `v8`.
    pub name: &'static str,
    /// Technique name, accepted wherever a version is (`unroll-last-warp`).
    pub slug: &'static str,
    pub technique: &'static str,
    pub origin: Origin,
    pub grid: Grid,
    pub shared: Shared,
    pub block: BlockParam,
    /// Threads per block when the user does not choose: measured best on the H100 (`bench`).
    pub tuned_block: TunedBlock,
    pub output: Output,
    pub ops: OpSet,
}

#[cfg(not(target_arch = "nvptx64"))]
impl VersionInfo {
    /// The entry point for `dtype`, `op` and `block` (names as in [`OpSet`]), whether or not
    /// it is built (see [`OpSet::supports`]).
    pub fn entry_point(&self, dtype: &str, op: &str, block: u32) -> EntryName {
        EntryName::new(
            self.name,
            dtype,
            op,
            (self.block == BlockParam::Const).then_some(block),
        )
    }
}

/// A kernel entry point's name, `reduce_v5_f32_sum_b256`, built without allocating.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryName {
    bytes: [u8; 48],
    len: usize,
}

#[cfg(not(target_arch = "nvptx64"))]
impl EntryName {
    /// `{family}_{dtype}_{op}` (plus `_b{block}`); `family` is `v5` for versions
    /// (`reduce_v5_…`) or a library kernel's name.
    pub fn new(family: &str, dtype: &str, op: &str, block: Option<u32>) -> Self {
        let mut name = EntryName {
            bytes: [0; 48],
            len: 0,
        };
        if family.starts_with('v') {
            name.push("reduce_");
        }
        for part in [family, "_", dtype, "_", op] {
            name.push(part);
        }
        if let Some(block) = block {
            name.push("_b");
            let mut digits = [0u8; 10];
            let mut count = 0;
            let mut rest = block;
            loop {
                digits[count] = b'0' + (rest % 10) as u8;
                count += 1;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            while count > 0 {
                count -= 1;
                let digit = [digits[count]];
                name.push(core::str::from_utf8(&digit).unwrap_or("?"));
            }
        }
        name
    }

    fn push(&mut self, part: &str) {
        let end = (self.len + part.len()).min(self.bytes.len());
        self.bytes[self.len..end].copy_from_slice(&part.as_bytes()[..end - self.len]);
        self.len = end;
    }

    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl core::fmt::Display for EntryName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Calls `$cb!{$args $type_name $Type $op_name $Op}` for every pair of an [`OpSet`].
macro_rules! for_op_set {
    (Teaching $cb:ident $args:tt) => {
        for_op_set!(@ops3 $cb $args f32 f32);
        for_op_set!(@ops3 $cb $args f64 f64);
        for_op_set!(@ops3 $cb $args i32 i32);
        for_op_set!(@ops3 $cb $args u32 u32);
    };
    (Library $cb:ident $args:tt) => {
        for_op_set!(@ops6 $cb $args f32 f32);
        for_op_set!(@ops6 $cb $args f64 f64);
        for_op_set!(@ops6 $cb $args i32 i32);
        for_op_set!(@ops6 $cb $args u32 u32);
        for_op_set!(@ops6 $cb $args i64 i64);
        for_op_set!(@ops6 $cb $args u64 u64);
        for_op_set!(@ops6 $cb $args f16 $crate::element::F16);
        for_op_set!(@ops6 $cb $args bf16 $crate::element::Bf16);
    };
    (@ops3 $cb:ident $args:tt $tn:ident $t:ty) => {
        $cb!{$args $tn [$t] sum [$crate::ops::Sum]}
        $cb!{$args $tn [$t] min [$crate::ops::Min]}
        $cb!{$args $tn [$t] max [$crate::ops::Max]}
    };
    (@ops6 $cb:ident $args:tt $tn:ident $t:ty) => {
        for_op_set!(@ops3 $cb $args $tn $t);
        $cb!{$args $tn [$t] argmin [$crate::ops::ArgMin]}
        $cb!{$args $tn [$t] argmax [$crate::ops::ArgMax]}
        $cb!{$args $tn [$t] mean [$crate::ops::Mean]}
    };
}

/// For one (type, op): the entry point, or one per block size. `$args` is
/// `(mode family name kernel block_param)`.
macro_rules! for_blocks {
    (($mode:tt $family:ident $name:ident $home:ident $kernel:ident, Runtime) $tn:ident [$t:ty] $on:ident [$op:ty]) => {
        pastey::paste! {
            entry!($mode $family [<$name _ $tn _ $on>] $home $kernel, $t, $op);
        }
    };
    (($mode:tt $family:ident $name:ident $home:ident $kernel:ident, Const) $tn:ident [$t:ty] $on:ident [$op:ty]) => {
        pastey::paste! {
            entry!($mode $family [<$name _ $tn _ $on _b64>] $home $kernel, $t, $op, 64);
            entry!($mode $family [<$name _ $tn _ $on _b128>] $home $kernel, $t, $op, 128);
            entry!($mode $family [<$name _ $tn _ $on _b256>] $home $kernel, $t, $op, 256);
            entry!($mode $family [<$name _ $tn _ $on _b512>] $home $kernel, $t, $op, 512);
            entry!($mode $family [<$name _ $tn _ $on _b1024>] $home $kernel, $t, $op, 1024);
        }
    };
    (($mode:tt $family:ident $name:ident $home:ident $kernel:ident, Fixed($block:literal)) $tn:ident [$t:ty] $on:ident [$op:ty]) => {
        pastey::paste! {
            entry!($mode $family [<$name _ $tn _ $on>] $home $kernel, $t, $op, $block);
        }
    };
}

/// One entry point. `define` makes the function (a PTX kernel on `nvptx64`, a plain function
/// for the simulator elsewhere); `lookup` is a statement of [`sim_entry`]'s body.
macro_rules! entry {
    (define $family:ident $name:ident $home:ident $kernel:ident, $t:ty, $op:ty $(, $block:literal)?) => {
        /// # Safety
        /// The launch contract of [`crate::params::Params`].
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        // `Params` is `repr(C)` and passed by value: the PTX declares it
        // `.param .align 8 .b8 name[56]`, CUDA's convention for a struct argument.
        #[allow(improper_gpu_kernel_arg)]
        pub unsafe extern "gpu-kernel" fn $name(
            input: *const u8,
            partials: *mut u8,
            retired: *mut u32,
            output: *mut u8,
            offsets: *const u64,
            sizes: $crate::params::Params,
        ) {
            let launch = $crate::params::Launch { input, partials, retired, output, offsets, sizes };
            // SAFETY: the caller's launch contract is what the views require.
            unsafe { family_call!($family launch, $home $kernel, $t, $op $(, $block)?) }
        }
        /// # Safety
        /// The launch contract of [`crate::params::Launch`], with host addresses of buffers
        /// the simulator registered as global memory.
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name(launch: $crate::params::Launch) {
            // SAFETY: as above.
            unsafe { family_call!($family launch, $home $kernel, $t, $op $(, $block)?) }
        }
    };
    ((lookup $wanted:ident) $family:ident $name:ident $home:ident $kernel:ident, $t:ty, $op:ty $(, $block:literal)?) => {
        if $wanted == stringify!($name) {
            return Some(entries::$name as $crate::registry::SimEntry);
        }
    };
}

/// How each kernel family's parameters come out of a [`crate::params::Launch`].
macro_rules! family_call {
    (reproducible $($rest:tt)*) => { reproducible_call!(reproducible $($rest)*) };
    (merge_states $($rest:tt)*) => { reproducible_call!(merge_states $($rest)*) };
    (whole $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty $(, $block:literal)?) => {{
        let input = $launch.input::<$t>();
        let scratch = $launch.scratch::<<$op as $crate::ops::Reduction<$t>>::Acc>();
        let output = $launch.output::<<$op as $crate::ops::Reduction<$t>>::Out>();
        $crate::$home::$kernel::<$t, $op $(, $block)?>(input, scratch, output)
    }};
    (segments $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty $(, $block:literal)?) => {{
        let input = $launch.input::<$t>();
        let segments = $launch.segments();
        let scratch = $launch.scratch::<<$op as $crate::ops::Reduction<$t>>::Acc>();
        let output = $launch.output::<<$op as $crate::ops::Reduction<$t>>::Out>();
        let split = $launch.sizes.split as usize;
        $crate::$home::$kernel::<$t, $op $(, $block)?>(input, segments, split, scratch, output)
    }};
    // `segments` counts the columns, `segment_len` the rows.
    (columns $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty $(, $block:literal)?) => {{
        let input = $launch.input::<$t>();
        let scratch = $launch.scratch::<<$op as $crate::ops::Reduction<$t>>::Acc>();
        let output = $launch.output::<<$op as $crate::ops::Reduction<$t>>::Out>();
        let (cols, rows) = ($launch.sizes.segments as usize, $launch.sizes.segment_len as usize);
        let split = $launch.sizes.split as usize;
        $crate::$home::$kernel::<$t, $op $(, $block)?>(input, cols, rows, split, scratch, output)
    }};
}

/// The reproducible kernels' parameters: the input, states as partials, and the result or the
/// state (see [`crate::reproducible`]).
macro_rules! reproducible_call {
    (reproducible $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty) => {{
        type Fold = <$t as $crate::reproducible::Reproducible>::Fold;
        let input = $launch.input::<$t>();
        let scratch = $launch.scratch::<$crate::reproducible::Binned<Fold>>();
        let output = $launch.output::<<$op as $crate::reproducible::Conclusion<Fold>>::Out>();
        $crate::$home::$kernel::<$t, $op>(input, scratch, output)
    }};
    // The input is `len` states of fold type `$t`.
    (merge_states $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty) => {{
        let input = $launch.input::<$crate::reproducible::Binned<$t>>();
        let scratch = $launch.scratch::<$crate::reproducible::Binned<$t>>();
        let output = $launch.output::<<$op as $crate::reproducible::Conclusion<$t>>::Out>();
        $crate::$home::$kernel::<$t, $op>(input, scratch, output)
    }};
}

/// A simulator entry point: the same function the PTX entry point runs, called on the host.
#[cfg(not(target_arch = "nvptx64"))]
pub type SimEntry = unsafe fn(crate::params::Launch);

/// Declares the versions; see the module docs.
macro_rules! declare_versions {
    ($(
        $(#[$doc:meta])*
        $name:ident = $index:literal, $module:ident :: $kernel:ident {
            slug: $slug:literal,
            technique: $technique:literal,
            origin: $origin:expr,
            grid: $grid:expr,
            shared: $shared:expr,
            block: $block:ident,
            tuned_block: $tuned:expr,
            output: $output:expr,
            ops: $ops:ident $(,)?
        }
    ),* $(,)?) => {
        $(
            $(#[$doc])*
            pub mod $module;
            pub use $module::$kernel;
        )*

        /// Every version of the series, in order.
        pub const VERSIONS: &[VersionInfo] = &[$(
            VersionInfo {
                index: $index,
                name: stringify!($name),
                slug: $slug,
                technique: $technique,
                origin: $origin,
                grid: $grid,
                shared: $shared,
                block: BlockParam::$block,
                tuned_block: $tuned,
                output: $output,
                ops: OpSet::$ops,
            },
        )*];

        /// The entry points of every version (PTX kernels on `nvptx64`, simulator functions
        /// elsewhere).
        pub mod entries {
            #[allow(unused_imports)]
            use super::*;
            $( pastey::paste! { for_op_set!($ops for_blocks (define whole [<reduce_ $name>] versions $kernel, $block)); } )*
        }

        /// The simulator's entry point called `name`, if there is one.
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn sim_entry(wanted: &str) -> Option<SimEntry> {
            $( pastey::paste! { for_op_set!($ops for_blocks ((lookup wanted) whole [<reduce_ $name>] versions $kernel, $block)); } )*
            None
        }
    };
}

/// Declares the library's shape kernels (see [`crate::shapes`]).
macro_rules! declare_shapes {
    ($(
        $name:ident : $module:ident :: $kernel:ident { family: $family:ident, block: Fixed($block:literal) }
    ),* $(,)?) => {
        $(
            pub mod $module;
            pub use $module::$kernel;
        )*

        /// Every shape kernel's name and block size.
        pub const SHAPES: &[(&str, u32)] = &[$((stringify!($name), $block)),*];

        /// The entry points (`rows_warp_f32_sum`, …; every element type and operator).
        pub mod entries {
            #[allow(unused_imports)]
            use super::*;
            $( for_op_set!(Library for_blocks (define $family $name shapes $kernel, Fixed($block))); )*
        }

        /// The simulator's entry point called `wanted`, if it is a shape kernel.
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn sim_entry(wanted: &str) -> Option<$crate::registry::SimEntry> {
            $( for_op_set!(Library for_blocks ((lookup wanted) $family $name shapes $kernel, Fixed($block))); )*
            None
        }
    };
}

/// The simulator's entry point called `name`: a version's, a shape kernel's, a reproducible
/// kernel's or a shard kernel's.
#[cfg(not(target_arch = "nvptx64"))]
pub fn sim_entry(name: &str) -> Option<SimEntry> {
    crate::versions::sim_entry(name)
        .or_else(|| crate::shapes::sim_entry(name))
        .or_else(|| crate::reproducible::sim_entry(name))
        .or_else(|| crate::shards::sim_entry(name))
}
