//! The read-only kernel: a kernel that only reads the input, launched with v8's grid, timed
//! as the versions are. Its bandwidth is the ceiling every measurement is compared with.

use crate::element::HostElement;
use crate::timing::{Timer, Timing};
use anyhow::Result;
use reduce_rs::Version;
use reduce_rs::ops::Sum;
use reduce_rs::plan::{self as launch_plan, LaunchGrid, Sizes};

/// Median time (ms) of the read-only kernel over `inputs` (rotated as the versions are), with
/// v8's grid: the bandwidth ceiling every version is compared with.
pub fn read_probe<T: HostElement>(
    timer: &Timer,
    inputs: &[u64],
    len: usize,
    timing: Timing,
) -> Result<f64> {
    let gpu = timer.gpu();
    let block = 256;
    let name = format!("read_probe_{}_b{block}", T::DTYPE);
    let (function, resident) = gpu.kernel(&name, block, 0)?;
    let sizes = Sizes::of::<T, Sum>();
    let launch = LaunchGrid {
        shared_bytes: 0,
        ..launch_plan::launch_grid(Version::fastest(), len, block, sizes, resident)?
    };
    let sink = gpu.copy_to_device(&[0u64; 2])?;
    timer.time(timing, |run| {
        let pointers = reduce_rs::backend::gpu::Pointers {
            input: inputs[run % inputs.len()],
            output: sink.ptr(),
            ..Default::default()
        };
        let sizes = kernels_gpu::params::Params {
            len: len as u64,
            output_len: 1,
            ..Default::default()
        };
        Ok(gpu.launch(&name, &function, launch, pointers, sizes)?)
    })
}
