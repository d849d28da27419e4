//! What one device of a group does with its shard, on either backend, around the group's
//! collectives (`group.rs`): step 1, the shard's partial — the shard kernel (v8's pass, its
//! accumulator left unfinished, with the count), the shard's sum, or its reproducible partial
//! sum; step 3, the combine kernel over the gathered partials, or the merge of the gathered
//! partial sums. A group's reducers are made by the group with the library's kernel (v8),
//! whose single pass the shard kernel shares.

use super::combine::{Strategy, partial_bytes};
use crate::backend::Feed;
use crate::bytes::value_bytes;
use crate::element::Element;
use crate::error::{DriverContext, Result};
use crate::input::Input;
use crate::op::{Operation, Sum};
use crate::plan::{self, Job, LaunchGrid, Pass, Sizes, Work};
use crate::reducer::Reducer;
use crate::version::Version;
use cudarc::driver::result;
use kernels_gpu::shards::ShardReduction;

/// Where a step leaves its result: at a device address (GPUs; nothing waits), or returned as
/// bytes (simulated devices).
#[derive(Clone, Copy)]
pub(crate) enum To {
    Device(u64),
    Host,
}

/// The entry point `{family}_{type}_{op}` of the shard kernels.
fn shard_entry<T: Element, O: Operation<T>>(family: &str) -> String {
    format!("{family}_{}_{}", T::DTYPE.name(), O::KIND.name())
}

/// The combine kernel's launch: one block of one warp (thread 0 folds the partials).
const COMBINE_LAUNCH: LaunchGrid = LaunchGrid {
    grid: 1,
    block: 32,
    shared_bytes: 0,
};

/// Runs `job` over `input` to the host, or enqueues it writing `to`.
fn finish(reducer: &Reducer, job: &Job<'_>, input: Feed<'_>, to: To) -> Result<Vec<u8>> {
    match to {
        To::Host => reducer.backend_ref().run(job, input),
        To::Device(output) => {
            reducer.backend_ref().enqueue(
                job,
                input,
                output,
                (&job.kernel, "a simulated device"),
            )?;
            Ok(Vec::new())
        }
    }
}

/// A value the step writes without a kernel (an empty shard's), to `to`.
fn constant<V: Copy>(reducer: &Reducer, value: &V, to: To) -> Result<Vec<u8>> {
    let bytes = value_bytes(value);
    match to {
        To::Host => Ok(bytes),
        To::Device(output) => {
            let gpu = reducer
                .backend_ref()
                .gpu("an empty shard's value", "a simulated device")?;
            crate::backend::gpu::make_current(gpu.stream())?;
            // SAFETY: `output` holds one value on this stream; a copy from pageable memory has
            // read `bytes` when the call returns.
            unsafe { result::memcpy_htod_async(output, &bytes, gpu.stream().cu_stream()) }
                .doing(|| "writing an empty shard's value".into())?;
            Ok(Vec::new())
        }
    }
}

/// Step 1: `shard`'s contribution under `strategy` (its partial, its sum or its partial sum).
pub(crate) fn step<T, O, S>(
    reducer: &Reducer,
    shard: &S,
    strategy: Strategy,
    to: To,
) -> Result<Vec<u8>>
where
    T: Element,
    O: Operation<T>,
    S: Input<T> + ?Sized,
{
    match strategy {
        Strategy::SumCollective { .. } => {
            if shard.is_empty() {
                return constant(reducer, &T::ZERO_SUM, to);
            }
            let job = reducer.whole_job::<T, Sum>(shard.len())?;
            let (feed, _record_read) = reducer.feed(shard)?;
            finish(reducer, &job, feed, to)
        }
        Strategy::Gather { .. } => {
            if shard.is_empty() {
                return constant(
                    reducer,
                    &<O as ShardReduction<T::Kernel>>::empty_partial(),
                    to,
                );
            }
            let version = Version::fastest();
            let len = shard.len();
            let kernel = shard_entry::<T, O>("shard");
            let block = match reducer.block_size() {
                Some(block) => block,
                None => plan::runnable_block(version.tuned_block(len), |_| {
                    reducer.backend_ref().max_block(&kernel)
                })?,
            };
            let job = reducer.passes_job(
                version,
                kernel,
                (len, block),
                Sizes::of::<T, O>(),
                partial_bytes::<T, O>(),
            )?;
            let (feed, _record_read) = reducer.feed(shard)?;
            finish(reducer, &job, feed, to)
        }
        Strategy::Binned { .. } => match to {
            To::Host => reducer.partial_sum_bytes::<T, S>(shard),
            To::Device(output) => {
                reducer.enqueue_partial_sum_at::<T, S>(shard, output)?;
                Ok(Vec::new())
            }
        },
    }
}

/// Step 3: `O`'s result from the `ranks` partials gathered in `gathered` (the combine kernel),
/// or from the `ranks` partial sums (the merge kernel) under [`Strategy::Binned`].
pub(crate) fn combine<T, O>(
    reducer: &Reducer,
    gathered: Feed<'_>,
    ranks: usize,
    binned: bool,
    to: To,
) -> Result<Vec<u8>>
where
    T: Element,
    O: Operation<T>,
{
    if binned {
        return match (to, gathered) {
            (To::Host, Feed::Host(states)) => reducer.merge_state_bytes::<T>(states, ranks),
            (To::Device(output), Feed::Device(states)) => {
                reducer.enqueue_merge_at::<T>(states, ranks, output)?;
                Ok(Vec::new())
            }
            _ => unreachable!("simulated devices gather on the host, GPUs on the device"),
        };
    }
    let bytes = partial_bytes::<T, O>();
    let job = Job {
        kernel: shard_entry::<T, O>("combine"),
        len: ranks,
        result_bytes: size_of::<O::Device>(),
        work: Work::Passes {
            passes: vec![Pass {
                len: ranks,
                launch: COMBINE_LAUNCH,
            }],
            sizes: Sizes {
                element: bytes,
                accumulator: bytes,
            },
            results: 1,
        },
    };
    finish(reducer, &job, gathered, to)
}
