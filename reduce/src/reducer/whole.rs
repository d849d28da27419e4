//! Reductions of a whole input to one value: the shortcuts (`sum`, `min`, …), `reduce` (the
//! result on the host), `reduce_into` and `reduce_to_device` (the result left on the GPU), and
//! their plan.

use super::{Reducer, write_one};
use crate::element::Element;
use crate::error::{DriverContext, Error, Result};
use crate::input::Input;
use crate::op::{ArgMax, ArgMin, Max, Mean, Min, Operation, Sum, device_value};
use crate::plan::{self, Job, Sizes, Work};
use crate::version::Version;
use cudarc::driver::{CudaSlice, DevicePtrMut};

impl Reducer {
    /// `Σx` (wrapping for integers; in `f32` for `f16`/`bf16`); `0` for an empty input.
    ///
    /// ```
    /// use half::bf16;
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.sum(&[bf16::from_f32(1.5), bf16::from_f32(2.0)])?, 3.5f32);
    /// assert_eq!(reducer.sum(&[i32::MAX, 1])?, i32::MIN);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn sum<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<T::Sum> {
        self.reduce(Sum, input)
    }

    /// The smallest element (NaN if any is NaN; `-0.0 < +0.0`), `None` for an empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.min(&[3i64, -7, 5])?, Some(-7));
    /// assert!(reducer.min(&[1.0f32, f32::NAN])?.unwrap().is_nan());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn min<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<Option<T>> {
        self.reduce(Min, input)
    }

    /// The largest element (NaN if any is NaN; `-0.0 < +0.0`), `None` for an empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.max(&[3u64, 7, 5])?, Some(7));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn max<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<Option<T>> {
        self.reduce(Max, input)
    }

    /// Index and value of the first smallest element (of the first NaN, if any); `None` for an
    /// empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.argmin(&[4.0f64, 1.0, 1.0])?, Some((1, 1.0)));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn argmin<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
    ) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMin, input)
    }

    /// Index and value of the first largest element (of the first NaN, if any); `None` for an
    /// empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.argmax(&[4.0f32, 9.0, f32::NAN, 9.0])?.map(|(i, _)| i), Some(2));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn argmax<T: Element, I: Input<T> + ?Sized>(
        &self,
        input: &I,
    ) -> Result<Option<(usize, T)>> {
        self.reduce(ArgMax, input)
    }

    /// `Σx / n`, added up in `f32` (for `f32`, `f16`, `bf16`) or `f64` (for `f64` and the
    /// integers); `None` for an empty input.
    ///
    /// ```
    /// let reducer = reduce_rs::Reducer::simulator();
    /// assert_eq!(reducer.mean(&[1u32, 2, 4])?, Some(7.0 / 3.0));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn mean<T: Element, I: Input<T> + ?Sized>(&self, input: &I) -> Result<Option<T::Mean>> {
        self.reduce(Mean, input)
    }

    /// Reduces `input` with `op`, returning the result to the host. A host input is copied to
    /// the GPU; a device input is read where it is, after the work already queued on the
    /// reducer's stream, which this call then waits for.
    ///
    /// ```
    /// use reduce_rs::{Reducer, ops::Max};
    /// assert_eq!(Reducer::simulator().reduce(Max, &[2u32, 8, 5])?, Some(8));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn reduce<T, O, I>(&self, op: O, input: &I) -> Result<O::Output>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let _ = op;
        if self.reproducible_kernel::<T, O>().is_none() {
            self.check_supported::<T, O>()?;
        }
        if input.is_empty() {
            return Ok(O::empty());
        }
        let job = self.whole_job::<T, O>(input.len())?;
        let (feed, _record_read) = self.feed(input)?;
        let bytes = self.backend.run(&job, feed)?;
        Ok(O::output(device_value::<T, O>(&bytes)))
    }

    /// Reduces `input` with `op` and writes the result to `output[0]`, on the GPU, without
    /// waiting for it: the result is there for the caller's next kernel on the reducer's
    /// stream. An empty input writes `0` for a sum and is an error for the other operations
    /// (they have no value). GPU only.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// use reduce_rs::{Reducer, ops::Sum};
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let data = stream.clone_htod(&vec![0.5f32; 1 << 20])?;
    /// let mut total = stream.alloc_zeros::<f32>(1)?;
    /// let reducer = Reducer::on_stream(stream.clone())?;
    /// reducer.reduce_into(Sum, &data, &mut total)?;
    /// assert_eq!(stream.clone_dtoh(&total)?, [524288.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_into<T, O, I, D>(&self, op: O, input: &I, output: &mut D) -> Result<()>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
        D: DevicePtrMut<O::Device>,
    {
        let _ = op;
        if self.reproducible_kernel::<T, O>().is_none() {
            self.check_supported::<T, O>()?;
        }
        let (gpu, out_ptr, _record_write) =
            self.device_output(output, 1, ("reduce_into", "reduce"))?;
        if input.is_empty() {
            let value = O::empty_device().ok_or(Error::Empty { op: O::KIND })?;
            return write_one(gpu, out_ptr, &value);
        }
        let job = self.whole_job::<T, O>(input.len())?;
        let (feed, _record_read) = self.feed(input)?;
        self.backend
            .enqueue(&job, feed, out_ptr, ("reduce_into", "reduce"))
    }

    /// Reduces `input` with `op` into a new one-element buffer on the reducer's stream, without
    /// waiting for it (see [`Reducer::reduce_into`]). GPU only.
    ///
    /// ```no_run
    /// use reduce_rs::{Reducer, ops::ArgMax};
    /// let reducer = Reducer::gpu(0)?;
    /// let stream = reducer.stream().unwrap().clone();
    /// let logits = stream.clone_htod(&[0.1f32, 2.5, 0.3])?;
    /// let best = reducer.reduce_to_device(ArgMax, &logits)?;
    /// assert_eq!(stream.clone_dtoh(&best)?[0].index, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_to_device<T, O, I>(&self, op: O, input: &I) -> Result<CudaSlice<O::Device>>
    where
        T: Element,
        O: Operation<T>,
        I: Input<T> + ?Sized,
    {
        let gpu = self.backend.gpu("reduce_to_device", "reduce")?;
        let mut output = gpu
            .stream()
            .alloc_zeros::<O::Device>(1)
            .doing(|| "allocating the result buffer".into())?;
        self.reduce_into(op, input, &mut output)?;
        Ok(output)
    }

    fn check_supported<T: Element, O: Operation<T>>(&self) -> Result<()> {
        if self.version.supports(T::DTYPE, O::KIND) {
            Ok(())
        } else {
            Err(Error::Unsupported {
                version: self.version.name(),
                dtype: T::DTYPE,
                op: O::KIND,
            })
        }
    }

    /// The block size a reduction of `len` elements of `T` with `O` uses: the one chosen with
    /// [`Reducer::with_block_size`], else the version's tuned block for `len`, or on a GPU that
    /// cannot run that many threads of its kernel (the kernel's registers), the largest size
    /// it can ([`plan::runnable_block`]). A chosen block that is too large is reported as
    /// [`Error::BlockTooLarge`] when the reduction runs. A version not built for `T` and `O` is
    /// [`Error::Unsupported`].
    ///
    /// ```
    /// use half::bf16;
    /// use reduce_rs::{Error, Reducer, Version, ops::Sum};
    /// let reducer = Reducer::simulator();
    /// assert_eq!(reducer.block_for::<f32, Sum>(1 << 15)?, 1024);
    /// let v3 = reducer.with_version(Version::find("v3")?);
    /// assert!(matches!(v3.block_for::<bf16, Sum>(1 << 15), Err(Error::Unsupported { .. })));
    /// assert_eq!(v3.with_block_size(128)?.block_for::<f32, Sum>(1 << 15)?, 128);
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn block_for<T: Element, O: Operation<T>>(&self, len: usize) -> Result<u32> {
        self.check_supported::<T, O>()?;
        match self.block {
            Some(block) => Ok(block),
            None => self.backend.tuned_block::<T, O>(self.version, len),
        }
    }

    /// The plan of a whole-array reduction of `len` elements (`len > 0`): the reproducible
    /// kernel where the mode covers it, else the version's passes.
    pub(crate) fn whole_job<T: Element, O: Operation<T>>(
        &self,
        len: usize,
    ) -> Result<Job<'static>> {
        if let Some(kernel) = self.reproducible_kernel::<T, O>() {
            return self.reproducible_job::<T>(kernel, len, size_of::<O::Device>());
        }
        let block = self.block_for::<T, O>(len)?;
        let kernel = plan::entry_name::<T, O>(self.version, block);
        let sizes = Sizes::of::<T, O>();
        self.passes_job(
            self.version,
            kernel,
            (len, block),
            sizes,
            size_of::<O::Device>(),
        )
    }

    /// The passes of `version`, as `kernel` (the version's entry point, or the shard kernel
    /// that shares v8's pass), over `len` items of `sizes` with blocks of `block` threads,
    /// writing one result of `result_bytes`.
    pub(crate) fn passes_job(
        &self,
        version: Version,
        kernel: String,
        (len, block): (usize, u32),
        sizes: Sizes,
        result_bytes: usize,
    ) -> Result<Job<'static>> {
        let shared = plan::shared_bytes(version, block, sizes);
        let resident = self
            .backend
            .resident(&kernel, block, shared, self.max_blocks)?;
        let passes = plan::passes(version, len, block, sizes, resident)?;
        Ok(Job {
            kernel,
            len,
            result_bytes,
            work: Work::Passes {
                passes,
                sizes,
                results: 1,
            },
        })
    }
}
