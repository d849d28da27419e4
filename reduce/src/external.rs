//! Device memory that another library owns (a PyTorch or CuPy tensor, a JAX array, your own
//! allocator's block), seen by its address: an input to reduce in place, or an output to write.

use crate::element::Element;
use crate::input::{Input, Source};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop, sys};
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` values of `T` at a device address owned by someone else, used on `stream`.
///
/// The library reads it (as an [`Input`]) or writes it (as the output of
/// [`Reducer::reduce_into`](crate::Reducer::reduce_into) and the other `…_into` methods) on the
/// reducer's stream, in that stream's order, and never frees it. No event is recorded: ordering
/// it against the owner's other streams is the owner's business (PyTorch's current stream,
/// for example, already orders a tensor's producers before the reduction).
///
/// ```no_run
/// use reduce_rs::{ExternalBuffer, Reducer, ops::Sum};
/// use cudarc::driver::{CudaContext, DevicePtr};
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.default_stream();
/// // Memory allocated elsewhere; here by cudarc, but any device address will do.
/// let data = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;
/// let mut total = stream.alloc_zeros::<f32>(1)?;
/// let (data_ptr, _) = data.device_ptr(&stream);
/// let (total_ptr, _) = total.device_ptr(&stream);
/// let reducer = Reducer::on_stream(stream.clone())?;
/// // SAFETY: both addresses hold the values said, on this stream's GPU, for the whole call.
/// let input = unsafe { ExternalBuffer::<f32>::new(data_ptr, 3, &stream) };
/// let mut output = unsafe { ExternalBuffer::<f32>::new(total_ptr, 1, &stream) };
/// reducer.reduce_into(Sum, &input, &mut output)?;
/// assert_eq!(stream.clone_dtoh(&total)?, [6.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ExternalBuffer<'a, T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    stream: Arc<CudaStream>,
    owner: PhantomData<&'a mut [T]>,
}

impl<T> ExternalBuffer<'_, T> {
    /// The `len` values of `T` at `ptr` on the GPU of `stream`.
    ///
    /// # Safety
    /// `ptr` is a device address in `stream`'s context that holds `len` values of `T` (at `T`'s
    /// alignment), valid and not freed while the buffer and the work the library enqueues with
    /// it may use it; as an output, nothing else reads or writes it in that time.
    pub unsafe fn new(ptr: u64, len: usize, stream: &Arc<CudaStream>) -> Self {
        ExternalBuffer {
            ptr,
            len,
            stream: stream.clone(),
            owner: PhantomData,
        }
    }

    /// The device address.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
}

impl<T> DeviceSlice<T> for ExternalBuffer<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for ExternalBuffer<'_, T> {
    fn device_ptr<'b>(&'b self, _stream: &'b CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        (self.ptr, SyncOnDrop::Sync(None))
    }
}

impl<T> DevicePtrMut<T> for ExternalBuffer<'_, T> {
    fn device_ptr_mut<'b>(
        &'b mut self,
        _stream: &'b CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        (self.ptr, SyncOnDrop::Sync(None))
    }
}

impl<T: Element> Input<T> for ExternalBuffer<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn source(&self) -> Source<'_, T> {
        Source::Device(self)
    }
}
