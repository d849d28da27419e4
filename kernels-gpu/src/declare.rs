//! The macros every kernel family declares itself with: `declare_versions!` (the series, in
//! [`crate::versions`]), `declare_shapes!` (the row and column kernels, in [`crate::shapes`])
//! and the pieces they share, which generate from one declaration the PTX entry points
//! (`reduce_v5_f32_sum_b256`, on `nvptx64`), the same entry points as plain functions for the
//! simulator, and each family's `sim_entry` lookup. Adding a version is one kernel file and
//! one entry in `declare_versions!`.

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
/// for the simulator elsewhere); `lookup` is a statement of a family's `sim_entry` body.
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
            return Some(entries::$name as $crate::params::SimEntry);
        }
    };
}

/// How each kernel family's parameters come out of a [`crate::params::Launch`].
macro_rules! family_call {
    (reproducible $($rest:tt)*) => { reproducible_call!(reproducible $($rest)*) };
    (merge_states $($rest:tt)*) => { reproducible_call!(merge_states $($rest)*) };
    (reproducible_segments $($rest:tt)*) => { reproducible_call!(reproducible_segments $($rest)*) };
    (reproducible_columns $($rest:tt)*) => { reproducible_call!(reproducible_columns $($rest)*) };
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
    // The row and segment kernels: the rows as `Segments`, the launch's `split`.
    (reproducible_segments $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty) => {{
        type Fold = <$t as $crate::reproducible::Reproducible>::Fold;
        let input = $launch.input::<$t>();
        let segments = $launch.segments();
        let scratch = $launch.scratch::<$crate::reproducible::Binned<Fold>>();
        let output = $launch.output::<<$op as $crate::reproducible::Conclusion<Fold>>::Out>();
        let split = $launch.sizes.split as usize;
        $crate::$home::$kernel::<$t, $op>(input, segments, split, scratch, output)
    }};
    // The column kernel: `segments` counts the columns, `segment_len` the rows.
    (reproducible_columns $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty) => {{
        type Fold = <$t as $crate::reproducible::Reproducible>::Fold;
        let input = $launch.input::<$t>();
        let scratch = $launch.scratch::<$crate::reproducible::Binned<Fold>>();
        let output = $launch.output::<<$op as $crate::reproducible::Conclusion<Fold>>::Out>();
        let (cols, rows) = (
            $launch.sizes.segments as usize,
            $launch.sizes.segment_len as usize,
        );
        let split = $launch.sizes.split as usize;
        $crate::$home::$kernel::<$t, $op>(input, cols, rows, split, scratch, output)
    }};
    // The input is `len` states of fold type `$t`.
    (merge_states $launch:ident, $home:ident $kernel:ident, $t:ty, $op:ty) => {{
        let input = $launch.input::<$crate::reproducible::Binned<$t>>();
        let scratch = $launch.scratch::<$crate::reproducible::Binned<$t>>();
        let output = $launch.output::<<$op as $crate::reproducible::Conclusion<$t>>::Out>();
        $crate::$home::$kernel::<$t, $op>(input, scratch, output)
    }};
}

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
        pub const VERSIONS: &[$crate::policy::VersionInfo] = &[$(
            $crate::policy::VersionInfo {
                index: $index,
                name: stringify!($name),
                slug: $slug,
                technique: $technique,
                origin: $origin,
                grid: $grid,
                shared: $shared,
                block: $crate::policy::BlockParam::$block,
                tuned_block: $tuned,
                output: $output,
                ops: $crate::policy::OpSet::$ops,
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
        pub fn sim_entry(wanted: &str) -> Option<$crate::params::SimEntry> {
            $( pastey::paste! { for_op_set!($ops for_blocks ((lookup wanted) whole [<reduce_ $name>] versions $kernel, $block)); } )*
            None
        }
    };
}

/// Declares the library's shape kernels (see [`crate::shapes`]): each with the same policy
/// fields a version has (its block, its shared memory, how its grid is sized), and a variant of
/// [`ShapeKernel`](crate::shapes::ShapeKernel) that names it.
macro_rules! declare_shapes {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:ident : $module:ident :: $kernel:ident {
            family: $family:ident,
            block: Fixed($block:literal),
            shared: $shared:expr,
            grid: $grid:expr $(,)?
        }
    ),* $(,)?) => {
        $(
            pub mod $module;
            pub use $module::$kernel;
        )*

        /// The shape kernels, in the order of [`SHAPES`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ShapeKernel {
            $( $(#[$doc])* $variant, )*
        }

        /// Every shape kernel's declaration, in the order of [`ShapeKernel`]'s variants.
        pub const SHAPES: &[$crate::policy::ShapeInfo] = &[$(
            $crate::policy::ShapeInfo {
                name: stringify!($name),
                block: $block,
                shared: $shared,
                grid: $grid,
            },
        )*];

        impl ShapeKernel {
            /// Every shape kernel, in order.
            pub const ALL: &[ShapeKernel] = &[$(ShapeKernel::$variant),*];

            /// What the kernel declared: its name, block, shared memory and grid.
            pub const fn info(self) -> &'static $crate::policy::ShapeInfo {
                &SHAPES[self as usize]
            }
        }

        /// The entry points (`rows_warp_f32_sum`, …; every element type and operator).
        pub mod entries {
            #[allow(unused_imports)]
            use super::*;
            $( for_op_set!(Library for_blocks (define $family $name shapes $kernel, Fixed($block))); )*
        }

        /// The simulator's entry point called `wanted`, if it is a shape kernel.
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn sim_entry(wanted: &str) -> Option<$crate::params::SimEntry> {
            $( for_op_set!(Library for_blocks ((lookup wanted) $family $name shapes $kernel, Fixed($block))); )*
            None
        }
    };
}
