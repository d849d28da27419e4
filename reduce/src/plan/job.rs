//! [`Job`]: one reduction, planned — every launch a backend makes for it, what each reads and
//! writes, and the scratch memory they need. The GPU enqueues a job on its stream; the
//! simulator runs it on the CPU; both from the same plan.

use super::launch::{LaunchGrid, Pass, Sizes};
use super::shapes::ShapePlan;

/// Where a segment kernel finds its offsets.
#[derive(Clone, Copy, Debug)]
pub enum SegmentOffsets<'a> {
    /// Rows of equal length: no offsets.
    None,
    /// On the host: copied to the device (as `u64`) before the launch.
    Host(&'a [usize]),
    /// Already on the device (GPU only): `segments + 1` ascending `u64` offsets at this address.
    Device(u64),
}

/// What a job's launches are.
#[derive(Clone, Debug)]
pub enum Work<'a> {
    /// The passes of a version: the first reads the input, each later one the values the pass
    /// before wrote, and the last writes `results` results.
    Passes {
        passes: Vec<Pass>,
        sizes: Sizes,
        results: usize,
    },
    /// One launch of a row, column or segment kernel writing one result per row, column or
    /// segment; `(segments, segment_len)` are the kernel's `Params` fields of those names.
    Shape {
        plan: ShapePlan,
        sizes: Sizes,
        offsets: SegmentOffsets<'a>,
        segments: usize,
        segment_len: usize,
        results: usize,
    },
    /// One launch of a single-pass kernel with `partials_bytes` of scratch and one ticket
    /// counter, writing one result (the reproducible kernels).
    Single {
        launch: LaunchGrid,
        partials_bytes: usize,
    },
}

/// One reduction, planned: the entry point every launch runs, the length of its input and its
/// launches.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    /// The kernel's entry point (`reduce_v8_f32_sum`, `rows_warp_bf16_argmax`, …).
    pub kernel: String,
    /// Items the first launch reads: elements, or partials and states for the merging kernels.
    pub len: usize,
    /// Bytes of one result.
    pub result_bytes: usize,
    pub work: Work<'a>,
}

impl Job<'_> {
    /// How many results the job writes.
    pub fn results(&self) -> usize {
        match &self.work {
            Work::Passes { results, .. } | Work::Shape { results, .. } => *results,
            Work::Single { .. } => 1,
        }
    }

    /// Bytes of all its results.
    pub fn output_bytes(&self) -> usize {
        self.results() * self.result_bytes
    }

    /// The first launch's shape (the kernel is looked up with its block and shared memory).
    pub fn first_launch(&self) -> LaunchGrid {
        match &self.work {
            Work::Passes { passes, .. } => passes[0].launch,
            Work::Shape { plan, .. } => plan.launch,
            Work::Single { launch, .. } => *launch,
        }
    }
}
