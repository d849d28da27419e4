//! What one device of a [`Devices`](crate::devices::Devices) group or a
//! [`Rank`](crate::devices::Rank) does with its shard, on either backend: the shard kernel
//! (v8's pass, accumulator unfinished, with the count), the sum of the shard, and the combine
//! kernel over the gathered partials. The group logic (`crate::devices`) calls these around
//! its collectives. A group's reducers are made by the group, with the library's kernel (v8),
//! whose single pass the shard kernel shares.

use super::{Backend, Reducer, check_context, target};
use crate::element::{Element, bytes_of};
use crate::error::{DriverContext, Error, Result};
use crate::gpu::Pointers;
use crate::input::{Input, Source};
use crate::op::{Operation, Sum};
use crate::plan::{LaunchShape, Pass, Sizes};
use crate::version::Version;
use cudarc::driver::result;
use kernels_gpu::ops::Reduction;
use kernels_gpu::params::Params;
use kernels_gpu::shards::{ShardPartial, ShardReduction};

/// The accumulator `O` hands between shards.
pub(crate) type Acc<T, O> = <O as Reduction<<T as Element>::Kernel>>::Acc;
/// What one shard hands to the others.
pub(crate) type Partial<T, O> = ShardPartial<Acc<T, O>>;

/// Bytes of `O`'s shard partial for `T` (16 or 24).
pub(crate) fn partial_bytes<T: Element, O: Operation<T>>() -> usize {
    size_of::<Partial<T, O>>()
}

/// The bytes of a value (a partial, a result) as a device buffer holds them.
pub(crate) fn value_bytes<V: Copy>(value: &V) -> Vec<u8> {
    // SAFETY: the values passed here are the kernels' plain `repr(C)` results and partials;
    // reading their bytes (padding included, as the GPU writes it) is what a copy does.
    unsafe { std::slice::from_raw_parts((value as *const V).cast::<u8>(), size_of::<V>()) }.to_vec()
}

/// The value of type `V` at the start of `bytes`.
pub(crate) fn read_value<V: Copy>(bytes: &[u8]) -> V {
    assert!(bytes.len() >= size_of::<V>(), "a whole value was read");
    // SAFETY: `bytes` holds a `V` the kernels (or `value_bytes`) wrote: plain data, any bits
    // of which are a valid `V` (integers, floats, and structs of them).
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) }
}

/// The entry point `{family}_{type}_{op}` of the shard kernels.
fn shard_entry<T: Element, O: Operation<T>>(family: &str) -> String {
    format!("{family}_{}_{}", T::DTYPE.name(), O::KIND.name())
}

/// The combine kernel's launch: one block of one warp (thread 0 folds the partials).
const COMBINE_SHAPE: LaunchShape = LaunchShape {
    grid: 1,
    block: 32,
    shared_bytes: 0,
};

impl Reducer {
    /// GPU: enqueues `input`'s shard partial for `O` into `out` (a device address holding one
    /// partial); an empty shard's partial is copied up. Nothing waits.
    pub(crate) fn enqueue_shard<T, O, I>(&self, input: &I, out: u64) -> Result<()>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let gpu = self.gpu_or_error("the shard kernel")?;
        if input.is_empty() {
            let empty = value_bytes(&<O as ShardReduction<T::Kernel>>::empty_partial());
            // SAFETY: `out` holds one partial on this stream; a copy from pageable memory has
            // read `empty` when the call returns.
            unsafe { result::memcpy_htod_async(out, &empty, gpu.stream().cu_stream()) }
                .doing(|| "writing an empty shard's partial".into())?;
            return Ok(());
        }
        let len = input.len();
        let version = Version::fastest();
        let block = self.block.unwrap_or_else(|| version.tuned_block(len));
        let name = shard_entry::<T, O>("shard");
        let sizes = Sizes::of::<T, O>();
        let (function, passes) = gpu.plan(version, &name, len, block, sizes, self.max_blocks)?;
        match input.source() {
            Source::Host(slice) => {
                let device = gpu.upload(bytes_of(slice))?;
                gpu.enqueue(
                    &name,
                    &function,
                    &passes,
                    sizes,
                    target(device, len, out, 1),
                )
            }
            Source::Device(device) => {
                check_context(gpu, device.stream(), "shard")?;
                let (ptr, _record_read) = device.device_ptr(gpu.stream());
                gpu.enqueue(&name, &function, &passes, sizes, target(ptr, len, out, 1))
            }
        }
    }

    /// GPU: enqueues `Σ input` (in `T::Sum`, as [`Reducer::sum`]) into `out`; `0` for an empty
    /// shard. Nothing waits.
    pub(crate) fn enqueue_shard_sum<T, I>(&self, input: &I, out: u64) -> Result<()>
    where
        T: Element,
        I: Input<T> + ?Sized,
    {
        let gpu = self.gpu_or_error("the shard sum")?;
        if input.is_empty() {
            let zero = value_bytes(&T::ZERO_SUM);
            // SAFETY: `out` holds one `T::Sum` on this stream; the copy has read `zero` when
            // the call returns.
            unsafe { result::memcpy_htod_async(out, &zero, gpu.stream().cu_stream()) }
                .doing(|| "writing an empty shard's sum".into())?;
            return Ok(());
        }
        self.gpu_enqueue::<T, Sum, I>(gpu, input, out, 1)
    }

    /// GPU: enqueues the combine kernel over the `ranks` partials at `gathered`, writing `O`'s
    /// finished result to `out`. Nothing waits.
    pub(crate) fn enqueue_combine<T, O>(&self, gathered: u64, ranks: usize, out: u64) -> Result<()>
    where
        T: Element,
        O: Operation<T>,
    {
        let gpu = self.gpu_or_error("the combine kernel")?;
        let name = shard_entry::<T, O>("combine");
        let (function, _) = gpu.kernel(&name, COMBINE_SHAPE.block, 0)?;
        let pointers = Pointers {
            input: gathered,
            output: out,
            ..Pointers::default()
        };
        let params = Params {
            len: ranks as u64,
            output_len: 1,
            ..Params::default()
        };
        gpu.launch(&name, &function, COMBINE_SHAPE, pointers, params)
    }

    /// Simulator: `input`'s shard partial for `O`, as bytes.
    pub(crate) fn simulate_shard<T, O, I>(&self, input: &I) -> Result<Vec<u8>>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let slice = self.sim_input(input)?;
        if slice.is_empty() {
            return Ok(value_bytes(
                &<O as ShardReduction<T::Kernel>>::empty_partial(),
            ));
        }
        let Backend::Sim(sim) = &self.backend else {
            unreachable!("sim_input checked the backend")
        };
        let version = Version::fastest();
        let len = slice.len();
        let block = self.block.unwrap_or_else(|| version.tuned_block(len));
        let sizes = Sizes::of::<T, O>();
        let passes = sim.plan(version, len, block, sizes, self.max_blocks)?;
        let name = shard_entry::<T, O>("shard");
        sim.run(
            &name,
            &passes,
            sizes,
            bytes_of(slice),
            len,
            1,
            partial_bytes::<T, O>(),
        )
    }

    /// Simulator: `Σ input` in `T::Sum`, as bytes (`0` for an empty shard).
    pub(crate) fn simulate_shard_sum<T, I>(&self, input: &I) -> Result<Vec<u8>>
    where
        T: Element,
        I: Input<T> + ?Sized,
    {
        let slice = self.sim_input(input)?;
        let sum = self.reduce(Sum, slice)?;
        Ok(value_bytes(&sum))
    }

    /// Simulator: the combine kernel over the `ranks` partials in `gathered`: `O`'s finished
    /// result, as bytes.
    pub(crate) fn simulate_combine<T, O>(&self, gathered: &[u8], ranks: usize) -> Result<Vec<u8>>
    where
        T: Element,
        O: Operation<T>,
    {
        let Backend::Sim(sim) = &self.backend else {
            return Err(Error::WrongDevice(
                "simulate_combine runs on the simulator".into(),
            ));
        };
        let name = shard_entry::<T, O>("combine");
        let pass = Pass {
            len: ranks,
            shape: COMBINE_SHAPE,
        };
        let sizes = Sizes {
            element: partial_bytes::<T, O>(),
            accumulator: partial_bytes::<T, O>(),
        };
        sim.run(
            &name,
            &[pass],
            sizes,
            gathered,
            ranks,
            1,
            size_of::<O::Device>(),
        )
    }

    fn gpu_or_error(&self, what: &str) -> Result<&crate::gpu::Gpu> {
        match &self.backend {
            Backend::Gpu(gpu) => Ok(gpu),
            Backend::Sim(_) => Err(Error::WrongDevice(format!(
                "{what} runs on a GPU; this Reducer is the simulator"
            ))),
        }
    }

    fn sim_input<'a, T: Element, I: Input<T> + ?Sized>(&self, input: &'a I) -> Result<&'a [T]> {
        match (&self.backend, input.source()) {
            (Backend::Sim(_), Source::Host(slice)) => Ok(slice),
            (Backend::Sim(_), Source::Device(_)) => Err(Error::WrongDevice(
                "a simulated device reads host memory: give it host shards".into(),
            )),
            (Backend::Gpu(_), _) => Err(Error::WrongDevice(
                "this Reducer is a GPU, not the simulator".into(),
            )),
        }
    }
}
