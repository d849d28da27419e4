//! `reduce_rs._native`: the library's reductions for Python, over arrays the Python side has
//! already described (an address, a dtype, a shape) — the `reduce_rs` package
//! (`reduce_rs/__init__.py`) turns PyTorch, CuPy, JAX and NumPy arrays into these calls and
//! allocates the results with the caller's own library.
//!
//! Two paths:
//! - **device** ([`reduce_cuda`]): memory on a GPU, read in place and written in place on the
//!   caller's stream, by a [`Reducer`] kept for that (device, stream): nothing waits for the
//!   GPU, nothing is allocated once the reducer's scratch exists.
//! - **host** ([`reduce_host`]): memory on the host (NumPy), reduced on GPU 0 when there is
//!   one, else on the CPU simulator, the results written to the caller's host arrays.

use half::{bf16, f16};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use reduce_rs::cudarc::driver::{CudaContext, CudaStream, sys};
use reduce_rs::ops::{ArgMax, ArgMin, Max, Mean, Min, Sum};
use reduce_rs::{BackendInfo, Element, Error, ExternalBuffer, Operation, Reducer, Shape};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What is reduced: the whole array, every row or column of a row-major matrix, or segments.
#[derive(Clone, Copy, Debug)]
enum Layout {
    Whole,
    Rows { rows: usize, cols: usize },
    Columns { rows: usize, cols: usize },
    Segments { offsets: u64, count: usize },
}

impl Layout {
    /// The layout of code `kind` (`reduce_rs/_codes.py`: 0 whole, 1 rows, 2 columns, 3
    /// segments).
    fn parse(kind: u8, rows: usize, cols: usize, offsets: u64, count: usize) -> PyResult<Self> {
        Ok(match kind {
            0 => Layout::Whole,
            1 => Layout::Rows { rows, cols },
            2 => Layout::Columns { rows, cols },
            3 => Layout::Segments { offsets, count },
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown layout code {other}"
                )));
            }
        })
    }

    /// How many results the layout gives.
    fn results(self) -> usize {
        match self {
            Layout::Whole => 1,
            Layout::Rows { rows, .. } => rows,
            Layout::Columns { cols, .. } => cols,
            Layout::Segments { count, .. } => count,
        }
    }
}

/// The library's errors as Python's: bad shapes and arguments are `ValueError`, a type or
/// operation the kernels do not have is `TypeError`, the rest (no GPU, the driver) is
/// `RuntimeError`.
fn to_py(error: Error) -> PyErr {
    let text = error.to_string();
    match error {
        Error::Shape(_) | Error::OutputTooSmall { .. } | Error::Empty { .. } => {
            PyValueError::new_err(text)
        }
        Error::WrongDevice(_) => PyValueError::new_err(text),
        Error::Unsupported { .. } => PyTypeError::new_err(text),
        _ => PyRuntimeError::new_err(text),
    }
}

/// One reducer per (device, stream, reproducible): each keeps its scratch memory for its own
/// stream, and all of them on one device share the loaded kernels.
type Key = (usize, usize, bool);

fn reducers() -> &'static Mutex<HashMap<Key, Arc<Reducer>>> {
    static REDUCERS: OnceLock<Mutex<HashMap<Key, Arc<Reducer>>>> = OnceLock::new();
    REDUCERS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The primary context of every device used so far (PyTorch's and CuPy's context too).
fn context(device: usize) -> PyResult<Arc<CudaContext>> {
    static CONTEXTS: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    let mut contexts = CONTEXTS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(ctx) = contexts.get(&device) {
        return Ok(ctx.clone());
    }
    let count = reduce_rs::gpu_available()
        .map_err(|why| PyRuntimeError::new_err(format!("no GPU: {why}")))?;
    if device >= count {
        return Err(PyValueError::new_err(format!(
            "the array is on CUDA device {device}, but the driver has {count} device(s)"
        )));
    }
    let ctx = CudaContext::new(device)
        .map_err(|e| PyRuntimeError::new_err(format!("opening CUDA device {device}: {e}")))?;
    contexts.insert(device, ctx.clone());
    Ok(ctx)
}

/// The reducer for `stream` (a `CUstream` handle; 0 is the legacy default stream) of `device`.
fn reducer_for(device: usize, stream: usize, reproducible: bool) -> PyResult<Arc<Reducer>> {
    let key = (device, stream, reproducible);
    if let Some(reducer) = reducers()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
    {
        return Ok(reducer.clone());
    }
    let ctx = context(device)?;
    // SAFETY: the stream belongs to the caller's library (PyTorch, CuPy, …), which keeps it
    // alive while it hands it out as its current stream; work enqueued on it is ordered by it.
    let stream: Arc<CudaStream> = unsafe { ctx.wrap_borrowed_stream(stream as sys::CUstream) };
    let reducer = Arc::new(
        Reducer::on_stream(stream)
            .map_err(to_py)?
            .with_reproducible(reproducible),
    );
    let mut all = reducers().lock().unwrap_or_else(|p| p.into_inner());
    // Streams come and go (a program may create one per batch): keep a bounded number.
    if all.len() >= 64 {
        all.clear();
    }
    all.insert(key, reducer.clone());
    Ok(reducer)
}

/// Calls `$body` with `$t` the element type of code `$dtype`: its index in
/// `reduce_rs/_codes.py`'s `DTYPES` (numbers, not names: a call from Python converts no
/// string).
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            0 => {
                type $t = f32;
                $body
            }
            1 => {
                type $t = f64;
                $body
            }
            4 => {
                type $t = i32;
                $body
            }
            5 => {
                type $t = u32;
                $body
            }
            6 => {
                type $t = i64;
                $body
            }
            7 => {
                type $t = u64;
                $body
            }
            2 => {
                type $t = f16;
                $body
            }
            3 => {
                type $t = bf16;
                $body
            }
            other => Err(PyTypeError::new_err(format!("unknown dtype code {other}"))),
        }
    };
}

/// Calls `$body` with `$o` the operation of code `$op` (`reduce_rs/_codes.py`'s `OPS`).
macro_rules! with_operation {
    ($op:expr, $o:ident => $body:expr) => {
        match $op {
            0 => {
                type $o = Sum;
                $body
            }
            1 => {
                type $o = Mean;
                $body
            }
            2 => {
                type $o = Min;
                $body
            }
            3 => {
                type $o = Max;
                $body
            }
            4 => {
                type $o = ArgMin;
                $body
            }
            5 => {
                type $o = ArgMax;
                $body
            }
            other => Err(PyValueError::new_err(format!(
                "unknown operation `{other}`"
            ))),
        }
    };
}

/// Enqueues `O` over the `len` elements of `T` at device address `input`, laid out as
/// `layout`, writing the results (as the kernels write them: an argmin/argmax is a 16-byte
/// (index, value) pair) to `output`. Nothing waits.
fn enqueue<T: Element, O: Operation<T> + Default>(
    reducer: &Reducer,
    layout: Layout,
    (input, len): (u64, usize),
    output: u64,
) -> reduce_rs::Result<()> {
    let stream = reducer
        .stream()
        .expect("a reducer made on a stream is a GPU reducer");
    // SAFETY: the Python side passes the address and length of a live, contiguous array of
    // `T` on this device, and of an output array of `layout.results()` results, both kept
    // alive (referenced) until the call returns and, by the caller's library, until the
    // stream has run the work.
    let input = unsafe { ExternalBuffer::<T>::new(input, len, stream) };
    let mut output =
        unsafe { ExternalBuffer::<O::Device>::new(output, layout.results().max(1), stream) };
    match layout {
        Layout::Whole => reducer.reduce_into(O::default(), &input, &mut output),
        Layout::Rows { rows, cols } => {
            reducer.reduce_each_into(O::default(), &input, Shape::rows(rows, cols), &mut output)
        }
        Layout::Columns { rows, cols } => reducer.reduce_each_into(
            O::default(),
            &input,
            Shape::columns(rows, cols),
            &mut output,
        ),
        Layout::Segments { offsets, count } => {
            // SAFETY: as above, `count + 1` offsets (u64) at `offsets`; the Python side has
            // checked them (ascending, within the input) unless the caller said not to.
            let offsets = unsafe { ExternalBuffer::<u64>::new(offsets, count + 1, stream) };
            unsafe { reducer.reduce_segments_into(O::default(), &input, &offsets, &mut output) }
        }
    }
}

/// Reduces an array in GPU memory on `stream`, writing the results to GPU memory at `output`
/// (see the module docs). The arrays are the caller's: nothing is allocated, nothing waits.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn reduce_cuda(
    op: u8,
    dtype: u8,
    layout: u8,
    input: u64,
    length: usize,
    output: u64,
    device: usize,
    stream: usize,
    rows: usize,
    cols: usize,
    offsets: u64,
    segments: usize,
    reproducible: bool,
) -> PyResult<()> {
    let layout = Layout::parse(layout, rows, cols, offsets, segments)?;
    let reducer = reducer_for(device, stream, reproducible)?;
    with_element!(dtype, T => with_operation!(op, O => {
        enqueue::<T, O>(&reducer, layout, (input, length), output).map_err(to_py)
    }))
}

/// A host result written to the caller's arrays: its value at `values[i]` (in the result's
/// type) and, for argmin/argmax, its index at `indices[i]`. "No value" (an empty segment)
/// writes nothing: the Python side fills the arrays with what empty results hold first.
trait Store: Copy {
    /// # Safety
    /// `values` (and `indices`, for the arg operations) hold at least `i + 1` results.
    unsafe fn store(self, i: usize, values: *mut u8, indices: *mut i64);
}

macro_rules! store_plain {
    ($($t:ty),*) => {$(
        impl Store for $t {
            unsafe fn store(self, i: usize, values: *mut u8, _indices: *mut i64) {
                // SAFETY: the caller's promise: `values` holds `i + 1` values of this type.
                unsafe { values.cast::<$t>().add(i).write_unaligned(self) }
            }
        }
    )*};
}
store_plain!(f32, f64, i32, u32, i64, u64, f16, bf16);

impl<V: Store> Store for Option<V> {
    unsafe fn store(self, i: usize, values: *mut u8, indices: *mut i64) {
        if let Some(value) = self {
            // SAFETY: the caller's promise.
            unsafe { value.store(i, values, indices) }
        }
    }
}

impl<V: Store> Store for (usize, V) {
    unsafe fn store(self, i: usize, values: *mut u8, indices: *mut i64) {
        // SAFETY: the caller's promise: the arg operations pass both arrays.
        unsafe {
            indices.add(i).write_unaligned(self.0 as i64);
            self.1.store(i, values, indices);
        }
    }
}

/// Reduces `len` elements of `T` in host memory at `input`, laid out as `layout` (host
/// offsets at `offsets` as `i64`), and stores the results.
fn reduce_in_host<T, O>(
    reducer: &Reducer,
    layout: Layout,
    (input, len): (usize, usize),
    (values, indices): (usize, usize),
) -> PyResult<()>
where
    T: Element,
    O: Operation<T> + Default,
    O::Output: Store,
{
    // SAFETY: the Python side passes the address and length of a live, contiguous, aligned
    // NumPy array of `T`, referenced until the call returns.
    let data: &[T] = if len == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(input as *const T, len) }
    };
    let (values, indices) = (values as *mut u8, indices as *mut i64);
    let results: Vec<O::Output> = match layout {
        Layout::Whole => vec![reducer.reduce(O::default(), data).map_err(to_py)?],
        Layout::Rows { rows, cols } => reducer
            .reduce_each(O::default(), data, Shape::rows(rows, cols))
            .map_err(to_py)?,
        Layout::Columns { rows, cols } => reducer
            .reduce_each(O::default(), data, Shape::columns(rows, cols))
            .map_err(to_py)?,
        Layout::Segments { offsets, count } => {
            // SAFETY: as above, `count + 1` `i64` offsets at `offsets`.
            let raw = unsafe { std::slice::from_raw_parts(offsets as *const i64, count + 1) };
            let offsets = raw
                .iter()
                .map(|&o| usize::try_from(o))
                .collect::<Result<Vec<usize>, _>>()
                .map_err(|_| PyValueError::new_err("segment offsets must not be negative"))?;
            reducer
                .reduce_each(O::default(), data, Shape::segments(&offsets))
                .map_err(to_py)?
        }
    };
    for (i, result) in results.into_iter().enumerate() {
        // SAFETY: the Python side allocated `layout.results()` values (and indices).
        unsafe { result.store(i, values, indices) };
    }
    Ok(())
}

/// The reducer host arrays go through: GPU 0 if there is one, else the CPU simulator.
fn host_reducer(reproducible: bool) -> PyResult<Arc<Reducer>> {
    static HOST: OnceLock<Result<[Arc<Reducer>; 2], String>> = OnceLock::new();
    let pair = HOST
        .get_or_init(|| {
            let make = |reproducible| {
                Reducer::new()
                    .map(|r| Arc::new(r.with_reproducible(reproducible)))
                    .map_err(|e| e.to_string())
            };
            Ok([make(false)?, make(true)?])
        })
        .as_ref()
        .map_err(|why| PyRuntimeError::new_err(why.clone()))?;
    Ok(pair[usize::from(reproducible)].clone())
}

/// Reduces an array in host memory (NumPy) and writes the results to the host arrays at
/// `values` (and `indices` for argmin/argmax), on GPU 0 or the simulator.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn reduce_host(
    py: Python<'_>,
    op: u8,
    dtype: u8,
    layout: u8,
    input: usize,
    length: usize,
    values: usize,
    indices: usize,
    rows: usize,
    cols: usize,
    offsets: u64,
    segments: usize,
    reproducible: bool,
) -> PyResult<()> {
    let layout = Layout::parse(layout, rows, cols, offsets, segments)?;
    let reducer = host_reducer(reproducible)?;
    // The simulator can take a while: other Python threads run meanwhile.
    py.detach(move || {
        with_element!(dtype, T => with_operation!(op, O => {
            reduce_in_host::<T, O>(&reducer, layout, (input, length), (values, indices))
        }))
    })
}

/// Where host arrays are reduced: `"GPU 0: NVIDIA H100 80GB HBM3"` or `"simulator"`.
#[pyfunction]
fn host_backend() -> PyResult<String> {
    Ok(match host_reducer(false)?.backend() {
        BackendInfo::Gpu { name, ordinal, .. } => format!("GPU {ordinal}: {name}"),
        BackendInfo::Simulator { .. } => "simulator".to_string(),
    })
}

/// The CUDA ordinal of the device that holds the device address `ptr`.
#[pyfunction]
fn device_of_pointer(ptr: u64) -> PyResult<usize> {
    reduce_rs::gpu_available().map_err(|why| PyRuntimeError::new_err(format!("no GPU: {why}")))?;
    let mut ordinal: i32 = -1;
    // SAFETY: asks the driver about an address; writes one `int` to `ordinal`.
    let status = unsafe {
        sys::cuInit(0);
        sys::cuPointerGetAttribute(
            (&mut ordinal as *mut i32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            ptr,
        )
    };
    if status != sys::CUresult::CUDA_SUCCESS || ordinal < 0 {
        return Err(PyValueError::new_err(format!(
            "address {ptr:#x} is not CUDA device memory ({status:?})"
        )));
    }
    Ok(ordinal as usize)
}

/// How many CUDA devices the driver sees (0 without a driver).
#[pyfunction]
fn cuda_device_count() -> usize {
    reduce_rs::gpu_available().unwrap_or(0)
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(reduce_cuda, module)?)?;
    module.add_function(wrap_pyfunction!(reduce_host, module)?)?;
    module.add_function(wrap_pyfunction!(host_backend, module)?)?;
    module.add_function(wrap_pyfunction!(cuda_device_count, module)?)?;
    module.add_function(wrap_pyfunction!(device_of_pointer, module)?)?;
    Ok(())
}
