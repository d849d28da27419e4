//! Device memory the library owns: scratch that is reused from call to call.
//!
//! These are raw stream-ordered allocations, not cudarc `CudaSlice`s: a `CudaSlice` records
//! events each time a kernel uses it (when several streams exist), which is right for user
//! buffers and pure overhead for scratch that only this library's stream touches.

use crate::error::{DriverContext, Result};
use cudarc::driver::{CudaStream, result, sys};
use std::sync::Arc;

/// Makes `stream`'s context current on this thread. Every raw driver call that takes a stream
/// needs it first: a process that drives several GPUs from one thread has the context of the
/// GPU it used last current, and a copy on another GPU's stream then fails with
/// `CUDA_ERROR_INVALID_VALUE` (cudarc's own launches and copies bind for themselves).
pub fn make_current(stream: &CudaStream) -> Result<()> {
    stream
        .context()
        .bind_to_thread()
        .doing(|| "making the GPU's context current".into())
}

/// `bytes` bytes of device memory, allocated and freed in the order of `stream`.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    stream: Arc<CudaStream>,
}

// SAFETY: the buffer is an address and a size; every use goes through the stream, which is
// `Send + Sync`, and frees happen once, in `Drop`.
unsafe impl Send for DeviceBuffer {}
// SAFETY: as above; `&DeviceBuffer` only reads the address.
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    /// A buffer of `bytes` bytes (at least one), set to zero before anything later on the
    /// stream uses it.
    pub fn zeroed(stream: &Arc<CudaStream>, bytes: usize) -> Result<Self> {
        let bytes = bytes.max(1);
        make_current(stream)?;
        // SAFETY: the stream is alive (we hold an Arc); the memory is used only on this
        // stream, after the memset below.
        let ptr = unsafe { result::malloc_async(stream.cu_stream(), bytes) }
            .doing(|| format!("allocating {bytes} bytes of GPU memory"))?;
        let buffer = DeviceBuffer {
            ptr,
            bytes,
            stream: stream.clone(),
        };
        // SAFETY: `ptr` holds `bytes` bytes, allocated on this stream just before.
        unsafe { result::memset_d8_async(ptr, 0, bytes, stream.cu_stream()) }
            .doing(|| "clearing GPU scratch memory".into())?;
        Ok(buffer)
    }

    /// A copy of `data` (for inputs a benchmark rotates over).
    pub fn from_host(stream: &Arc<CudaStream>, data: &[u8]) -> Result<Self> {
        let buffer = DeviceBuffer::zeroed(stream, data.len())?;
        // SAFETY: `buffer` holds at least `data.len()` bytes, used only on this stream; a copy
        // from pageable memory has read `data` when the call returns.
        unsafe { result::memcpy_htod_async(buffer.ptr, data, stream.cu_stream()) }
            .doing(|| format!("copying {} MiB to the GPU", data.len() >> 20))?;
        Ok(buffer)
    }

    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_async` on this stream; freed once, after every use the
        // stream already has queued.
        let freed = self
            .stream
            .context()
            .bind_to_thread()
            .and_then(|()| unsafe { result::free_async(self.ptr, self.stream.cu_stream()) });
        self.stream.context().record_err(freed);
    }
}

/// A buffer that grows: `at_least` returns one of `bytes` bytes or more, reallocating (zeroed)
/// only when the current one is too small.
#[derive(Default)]
pub struct Growing(Option<DeviceBuffer>);

impl Growing {
    /// Bytes the current buffer holds (0 before the first call).
    pub fn capacity(&self) -> usize {
        self.0.as_ref().map_or(0, DeviceBuffer::bytes)
    }

    pub fn at_least(&mut self, stream: &Arc<CudaStream>, bytes: usize) -> Result<&DeviceBuffer> {
        if self.0.as_ref().is_none_or(|b| b.bytes() < bytes) {
            // Drop the old one first: its memory returns to the stream's pool for the new one.
            self.0 = None;
            self.0 = Some(DeviceBuffer::zeroed(stream, bytes)?);
        }
        Ok(self.0.as_ref().expect("allocated above"))
    }
}

/// Page-locked host memory the GPU copies results into: a copy to pageable memory would go
/// through a bounce buffer.
pub struct PinnedBuffer {
    ptr: *mut u8,
    bytes: usize,
    stream: Arc<CudaStream>,
}

// SAFETY: plain host memory, owned by this value; accesses go through `&mut self` or are reads
// after the stream that wrote it has synchronised.
unsafe impl Send for PinnedBuffer {}
// SAFETY: as above.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    pub fn new(stream: &Arc<CudaStream>, bytes: usize) -> Result<Self> {
        make_current(stream)?;
        // SAFETY: a plain page-locked allocation; freed in Drop.
        let ptr = unsafe { result::malloc_host(bytes, 0) }
            .doing(|| format!("allocating {bytes} bytes of page-locked host memory"))?;
        Ok(PinnedBuffer {
            ptr: ptr.cast(),
            bytes,
            stream: stream.clone(),
        })
    }

    /// Copies `bytes` bytes from `src` into this buffer, in the order of `stream`, and waits for
    /// the stream; returns the bytes.
    pub fn copy_from_device(&mut self, src: u64, bytes: usize) -> Result<&[u8]> {
        let stream = &self.stream;
        assert!(
            bytes <= self.bytes,
            "the pinned buffer is sized for every result"
        );
        // SAFETY: `self.ptr` holds `self.bytes >= bytes` bytes that only this call touches
        // (`&mut self`); `src` holds `bytes` bytes the stream wrote before this copy.
        let slice = unsafe { std::slice::from_raw_parts_mut(self.ptr, bytes) };
        make_current(stream)?;
        // SAFETY: as above; the copy is ordered after the kernels on `stream`.
        unsafe { result::memcpy_dtoh_async(slice, src, stream.cu_stream()) }
            .doing(|| "copying the result to the host".into())?;
        stream
            .synchronize()
            .doing(|| "waiting for the GPU".into())?;
        Ok(slice)
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_host` in this context, freed once.
        let freed = self
            .stream
            .context()
            .bind_to_thread()
            .and_then(|()| unsafe { result::free_host(self.ptr.cast()) });
        self.stream.context().record_err(freed);
    }
}
