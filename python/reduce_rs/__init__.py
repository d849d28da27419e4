"""reduce_rs: fast GPU reductions of the arrays you already have.

Sum, mean, min, max, argmin and argmax of PyTorch tensors, CuPy arrays, JAX arrays (any array
with ``__cuda_array_interface__`` or DLPack) and NumPy arrays — of the whole array, of every
row (``dim=-1``), of every column (``dim=0``) or of segments given by CSR offsets — with
kernels written in Rust (the reduce-rs library, the same kernels its Rust API runs).

>>> import numpy as np, reduce_rs
>>> x = np.arange(12, dtype=np.float32).reshape(3, 4)
>>> float(reduce_rs.sum(x))
66.0
>>> reduce_rs.argmax(x, dim=-1).tolist()
[3, 3, 3]

The functions are named and behave as PyTorch's (``torch.sum``, ``torch.amax``,
``torch.argmax``, ``torch.max`` with ``dim`` returning ``(values, indices)``, …), with these
differences, each pinned by a test:

- **Where it runs.** A GPU array is reduced in place, on its device and on the stream its
  library is using (PyTorch's current stream, also inside ``with torch.cuda.stream(s)``;
  CuPy's current stream; the ``stream`` of ``__cuda_array_interface__``), without waiting for
  the GPU; the result is an array of the same library on the same device. A NumPy array is
  reduced on GPU 0 when there is one, on the CPU simulator otherwise (``backend()``), and
  the result is a NumPy array. A PyTorch tensor on the CPU is an error: use ``.numpy()``.
- **Types.** float32, float64, float16, bfloat16, int32, uint32, int64, uint64. Sums and means
  of float16 and bfloat16 are added up, and returned, in float32 (PyTorch also adds them up in
  float32, then rounds the result to the input's type). Integer sums keep the input's type
  and wrap around on overflow (PyTorch returns int64 sums of int32). Means of integers are
  float64 (PyTorch refuses them).
- **Order.** NaN propagates (min and max return NaN, argmin and argmax the index of the first
  NaN), ties go to the first index, as in PyTorch; but ``-0.0 < +0.0`` (PyTorch treats the two
  zeros as equal: ``argmax([-0.0, 0.0])`` is 1 here, 0 there).
- **Dims.** ``dim`` is one dim, or for ``sum``, ``mean``, ``amin`` and ``amax`` a tuple of
  them (``dim=(1, 2)``; ``()`` is every dim), as in PyTorch; the arg operations and ``min``,
  ``max`` with a ``dim`` take one.
- **Layout.** A non-contiguous array is copied to a contiguous one first; so is an array
  reduced over middle dims (neither the first nor the last non-trivial ones, or dims apart).
- **Arg results.** The indices of ``argmax``/``argmin`` (and the values of ``max``/``min`` with
  a ``dim``) are strided views of one buffer of (index, value) pairs, as the kernels write
  them: no copy, but not contiguous (``.contiguous()`` makes them so).
- **Empty inputs.** As PyTorch: a sum is 0, a mean NaN, and min, max, argmin, argmax of
  nothing raise ``ValueError``. Empty segments give 0 (sum), NaN (mean), the type's lowest
  value for max and highest for min (-inf/+inf for floats) and index -1.
- **Inside torch.compile** (PyTorch 2.4 and later): a call on a tensor is a custom operator
  in the graph (``torch.ops.reduce_rs.reduce``, ``torch.ops.reduce_rs.segments``: no graph
  break, CUDA graphs too); the segment functions' offsets are a tensor there.
- **Reproducible sums.** ``reproducible=True``: float sums and means whose bits do not depend
  on the GPU model or launch (binned summation), of whole arrays, of every slice along ``dim``
  and of every segment: each slice's or segment's result is the bits of that slice reduced
  alone, whatever else is in the batch.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple

from . import _native
from ._arrays import Allocator, Array, describe
from ._checks import (
    ARG,
    ValuesIndices,
    arg_results,
    check_cuda_tensor,
    check_nonempty,
    check_offsets,
    check_out_tensor,
    check_reproducible,
)
from ._codes import DTYPE_CODE, OP_CODE, SEGMENTS, result_dtype
from ._dims import Dim, dim_layout, tensor_layout
from ._torch_facts import dtype_facts, stream_getter

__all__ = [
    "sum",
    "mean",
    "amin",
    "amax",
    "argmin",
    "argmax",
    "min",
    "max",
    "segment_sum",
    "segment_mean",
    "segment_min",
    "segment_max",
    "segment_argmin",
    "segment_argmax",
    "backend",
    "ValuesIndices",
]

__version__ = "0.1.0"

# PyTorch tensors: the fast path -----------------------------------------------------------------
#
# A call on a small tensor costs what its host side costs: every attribute read and every
# PyTorch call counts. Tensors are read with the cheapest calls PyTorch has, the per-dtype
# facts are looked up once, and the native module takes numbers, not strings.

_torch = None
_Tensor: Any = ()  # torch.Tensor once torch is imported (an empty tuple matches no type)
_TORCH_DTYPES: dict = {}  # torch.dtype -> (name, code, {op: result torch.dtype})
_raw_stream: Any = None
_compiling: Any = None  # torch.compiler.is_compiling where reduce_rs has its custom operator
_reduce_traced: Any = None  # reduce_rs._compile.reduce_traced, the path Dynamo traces
_segments_traced: Any = None  # and reduce_rs._compile.segments_traced


def _torch_ready() -> bool:
    """Whether torch is imported (by the caller: reduce_rs never imports it first). The first
    time it is, registers the operator ``torch.compile`` traces (``reduce_rs._compile``)."""
    global _torch, _Tensor, _raw_stream, _compiling, _reduce_traced, _segments_traced
    if _torch is not None:
        return True
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return False
    _TORCH_DTYPES.update(dtype_facts(torch))
    _raw_stream = stream_getter(torch)
    try:
        from ._compile import reduce_traced, segments_traced
    except Exception:  # noqa: BLE001 -- PyTorch before 2.4 has no torch.library.register_fake; an
        # operator of that name already registered (another copy of the package) is refused:
        # either way eager calls go on, without the traced path.
        pass
    else:
        _reduce_traced, _segments_traced = reduce_traced, segments_traced
        _compiling = torch.compiler.is_compiling
    _Tensor = torch.Tensor
    _torch = torch
    return True


def _reduce_torch(op: str, x: Any, dim: Dim, keepdim: bool, out: Any, reproducible: bool, want_values: bool) -> Any:
    facts = _TORCH_DTYPES.get(x.dtype)
    if facts is None:
        from ._arrays import _unsupported

        raise _unsupported(x.dtype)
    if _compiling is not None and _compiling():
        # Dynamo is tracing: the same reduction as a custom operator it can put in its graph.
        return _reduce_traced(op, x, dim, keepdim, out, reproducible, want_values)
    check_cuda_tensor(x)
    name, code, results_of = facts
    x, layout, rows, cols, shape, results = tensor_layout(op, x, dim, keepdim, want_values)
    check_reproducible(op, reproducible)
    size = x.numel()
    check_nonempty(op, size, results, dim)
    torch = _torch
    device = x.get_device()
    if op in ARG:
        pairs = x.new_empty((results, 2), dtype=torch.int64)
        if results:
            _native.reduce_cuda(
                OP_CODE[op], code, layout, x.data_ptr(), size, pairs.data_ptr(), device,
                _raw_stream(device), rows, cols, 0, 0, False,
            )
        return arg_results(pairs, shape, x, want_values)
    dtype = results_of[op]
    if out is None:
        result = x.new_empty(shape, dtype=dtype)
    else:
        check_out_tensor(out, _Tensor, dtype, shape, x)
        result = out
    if size == 0 and op == "mean":
        return result.fill_(math.nan)
    if results:
        _native.reduce_cuda(
            OP_CODE[op], code, layout, x.data_ptr(), size, result.data_ptr(), device,
            _raw_stream(device), rows, cols, 0, 0, reproducible,
        )
    return result


# Every other array ------------------------------------------------------------------------------


def _move_last(array: Array, dims: Tuple[int, ...]) -> Array:
    x = array.obj
    last = tuple(range(-len(dims), 0))
    if array.kind == "torch":
        moved = x.movedim(dims, last).contiguous()
        ptr = moved.data_ptr()
    elif array.kind in ("cupy", "cuda"):
        import cupy

        moved = cupy.ascontiguousarray(cupy.moveaxis(cupy.asarray(x), dims, last))
        ptr = moved.data.ptr
        array = array._replace(kind="cupy")
    else:
        import numpy

        moved = numpy.ascontiguousarray(numpy.moveaxis(x, dims, last))
        ptr = moved.__array_interface__["data"][0]
    return array._replace(obj=moved, ptr=ptr, shape=tuple(moved.shape))


def _check_out(out: Any, allocator: Allocator, shape: Tuple[int, ...], dtype: str) -> None:
    result = describe(out, "out")
    if result.kind != allocator.array.kind or result.device != allocator.array.device:
        raise ValueError("out= must be an array of the input's library, on the input's device")
    if result.dtype != dtype or result.shape != tuple(shape):
        raise ValueError(
            f"out= must be a contiguous {dtype} array of shape {tuple(shape)}, "
            f"not {result.dtype} {result.shape}"
        )
    if result.obj is not out:
        raise ValueError("out= must be contiguous")


def _run_cuda(op: str, array: Array, layout: int, rows: int, cols: int, output: int,
              offsets: int = 0, segments: int = 0, reproducible: bool = False) -> None:
    _native.reduce_cuda(
        OP_CODE[op], DTYPE_CODE[array.dtype], layout, array.ptr, array.size, output,
        array.device, array.stream, rows, cols, offsets, segments, reproducible,
    )


def _empty_value(op: str, dtype: str) -> float:
    """What an empty segment holds: 0, NaN, or the identity of min/max."""
    if op == "sum":
        return 0
    if op == "mean":
        return math.nan
    import numpy

    floating = dtype in ("float32", "float64", "float16", "bfloat16")
    if op in ("max", "argmax"):
        return -math.inf if floating else numpy.iinfo(dtype).min
    return math.inf if floating else numpy.iinfo(dtype).max


def _reduce(op: str, x: Any, dim: Dim, keepdim: bool, out: Any = None,
            reproducible: bool = False, want_values: bool = False) -> Any:
    if type(x) is _Tensor or (_torch is None and _torch_ready() and type(x) is _Tensor):
        return _reduce_torch(op, x, dim, keepdim, out, reproducible, want_values)
    if _compiling is not None and isinstance(x, _Tensor) and _compiling():
        # A subclass of torch.Tensor (an nn.Parameter) while Dynamo traces: the traced path too.
        return _reduce_torch(op, x, dim, keepdim, out, reproducible, want_values)
    array = describe(x)
    layout, rows, cols, shape, results, move = dim_layout(op, array.shape, dim, keepdim, want_values)
    if move is not None:
        array = _move_last(array, move)
    check_reproducible(op, reproducible)
    check_nonempty(op, array.size, results, dim)
    dtype = result_dtype(op, array.dtype)
    arg = op in ARG
    if array.kind == "host":
        return _reduce_host(op, array, (layout, rows, cols, shape, results), dtype, arg,
                            want_values, out, reproducible)
    allocator = Allocator(array)
    if arg:
        pairs = allocator.pairs(results)
        if results:
            _run_cuda(op, array, layout, rows, cols, allocator.ptr(pairs))
        values, indices = allocator.arg_views(pairs, shape, array.dtype)
        if want_values:
            return ValuesIndices(allocator.wrap(values), allocator.wrap(indices))
        return allocator.wrap(indices)
    if out is not None:
        _check_out(out, allocator, shape, dtype)
        result = out
    else:
        result = allocator.empty(shape, dtype)
    if op == "mean" and array.size == 0:
        return allocator.wrap(allocator.fill(result, math.nan))
    if results:
        _run_cuda(op, array, layout, rows, cols, allocator.ptr(result), reproducible=reproducible)
    return allocator.wrap(result)


def _reduce_host(op: str, array: Array, plan: tuple, dtype: str, arg: bool, want_values: bool,
                 out: Any, reproducible: bool, offsets: int = 0, segments: int = 0) -> Any:
    import numpy

    layout, rows, cols, shape, results = plan
    value_type = array.dtype if arg else dtype
    if value_type == "bfloat16":
        raise TypeError("NumPy has no bfloat16: reduce bfloat16 arrays as PyTorch tensors")
    if out is not None and not arg:
        if not isinstance(out, numpy.ndarray) or out.dtype.name != dtype or out.shape != tuple(shape):
            raise ValueError(f"out= must be a NumPy {dtype} array of shape {tuple(shape)}")
        if not out.flags.c_contiguous:
            raise ValueError("out= must be contiguous")
        values = out
    else:
        values = numpy.empty(shape, dtype=value_type)
    values.fill(_empty_value(op, value_type))
    indices = numpy.full(shape, -1, dtype=numpy.int64) if arg else None
    if results:
        _native.reduce_host(
            OP_CODE[op], DTYPE_CODE[array.dtype], layout, array.ptr, array.size,
            values.__array_interface__["data"][0],
            indices.__array_interface__["data"][0] if arg else 0,
            rows, cols, offsets, segments, reproducible,
        )
    if tuple(shape) == () and out is None:
        # As NumPy's own reductions: a scalar, not a 0-d array.
        values, indices = values[()], indices[()] if arg else None
    if arg:
        return ValuesIndices(values, indices) if want_values else indices
    return values


# The reductions, named as PyTorch's -------------------------------------------------------------


def sum(x: Any, dim: Dim = None, keepdim: bool = False, *, reproducible: bool = False, out: Any = None) -> Any:  # noqa: A001
    """The sum of ``x`` (``dim=None``), or of every slice along ``dim``, as ``torch.sum``.

    Integer sums keep the input's type and wrap around; float16 and bfloat16 are summed, and
    returned, in float32. ``reproducible=True``: the same bits on every GPU and launch, and
    each slice's the bits of that slice alone (batch invariance).
    """
    return _reduce("sum", x, dim, keepdim, out, reproducible)


def mean(x: Any, dim: Dim = None, keepdim: bool = False, *, reproducible: bool = False, out: Any = None) -> Any:
    """The mean of ``x`` or of every slice along ``dim``, as ``torch.mean`` (float32 for
    float32, float16 and bfloat16 inputs; float64 for float64 and integers; NaN if empty)."""
    return _reduce("mean", x, dim, keepdim, out, reproducible)


def amax(x: Any, dim: Dim = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """The largest element of ``x`` or of every slice along ``dim``, as ``torch.amax``
    (NaN if any is NaN; ``-0.0 < +0.0``)."""
    return _reduce("max", x, dim, keepdim, out)


def amin(x: Any, dim: Dim = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """The smallest element of ``x`` or of every slice along ``dim``, as ``torch.amin``."""
    return _reduce("min", x, dim, keepdim, out)


def argmax(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Any:
    """The index of the first largest element (of the first NaN, if any), as
    ``torch.argmax``: int64, over the flattened array for ``dim=None``."""
    return _reduce("argmax", x, dim, keepdim)


def argmin(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Any:
    """The index of the first smallest element (of the first NaN, if any), as
    ``torch.argmin``."""
    return _reduce("argmin", x, dim, keepdim)


def max(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Any:  # noqa: A001
    """As ``torch.max``: the largest element for ``dim=None``; with ``dim``, the values and
    indices of the largest element of every slice (``ValuesIndices(values, indices)``)."""
    if dim is None:
        return _reduce("max", x, None, keepdim)
    return _reduce("argmax", x, dim, keepdim, want_values=True)


def min(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Any:  # noqa: A001
    """As ``torch.min``: the smallest element, or ``(values, indices)`` along ``dim``."""
    if dim is None:
        return _reduce("min", x, None, keepdim)
    return _reduce("argmin", x, dim, keepdim, want_values=True)


# Segments --------------------------------------------------------------------------------------


def _segments(op: str, values: Any, offsets: Any, validate: bool, want_values: bool = False,
              reproducible: bool = False) -> Any:
    tracing = (_torch is not None or _torch_ready()) and _compiling is not None
    if tracing and isinstance(values, _Tensor) and _compiling():
        # Dynamo is tracing: the same reduction as a custom operator it can put in its graph.
        return _segments_traced(op, values, offsets, validate, want_values, reproducible)
    array = describe(values, "values")
    if len(array.shape) != 1:
        raise ValueError(f"values must be one-dimensional, not of shape {array.shape}")
    host_offsets, device_offsets = _offsets(offsets, array, validate)
    count = device_offsets[1] if device_offsets is not None else len(host_offsets) - 1
    plan = (SEGMENTS, 0, 0, (count,), count)
    arg = op in ARG
    dtype = result_dtype(op, array.dtype)
    if array.kind == "host":
        import numpy

        keep = numpy.ascontiguousarray(host_offsets, dtype=numpy.int64)
        return _reduce_host(
            op, array, plan, dtype, arg, want_values, None, reproducible,
            offsets=keep.__array_interface__["data"][0], segments=count,
        )
    allocator = Allocator(array)
    offsets_ptr = device_offsets[0]
    if arg:
        pairs = allocator.pairs(count)
        if count:
            _run_cuda(op, array, SEGMENTS, 0, 0, allocator.ptr(pairs), offsets_ptr, count)
        vals, indices = allocator.arg_views(pairs, (count,), array.dtype)
        if want_values:
            return ValuesIndices(allocator.wrap(vals), allocator.wrap(indices))
        return allocator.wrap(indices)
    result = allocator.empty((count,), dtype)
    if count:
        _run_cuda(op, array, SEGMENTS, 0, 0, allocator.ptr(result), offsets_ptr, count,
                  reproducible=reproducible)
    return allocator.wrap(result)


def _offsets(offsets: Any, values: Array, validate: bool) -> Tuple[Any, Any]:
    """The offsets as the kernels read them: a host int64 array for host values; for GPU values,
    ``(address, segments)`` of int64 offsets on the values' device (copied there if given on
    the host). ``validate`` checks them (for offsets on the GPU this waits for it)."""
    import numpy

    on_gpu = values.kind != "host"
    module = type(offsets).__module__.split(".", 1)[0]
    device_array = None
    if module == "torch" and offsets.device.type == "cuda" or hasattr(offsets, "__cuda_array_interface__"):
        if not on_gpu:
            raise ValueError("offsets are on a GPU but the values are in host memory")
        device_array = describe(offsets, "offsets")
        if device_array.device != values.device:
            raise ValueError(
                f"offsets are on CUDA device {device_array.device}, values on {values.device}"
            )
        if device_array.dtype not in ("int64", "uint64"):
            raise TypeError(f"offsets must be int64, not {device_array.dtype}")
        host = _to_host(device_array) if validate else None
    else:
        if module == "torch":
            offsets = offsets.numpy()
        host = numpy.asarray(offsets)
        if host.size == 0:
            raise ValueError("offsets need at least one entry (n segments have n + 1 offsets)")
        if host.dtype.kind not in "iu":
            raise TypeError(f"offsets must be integers, not {host.dtype}")
        host = host.astype(numpy.int64)
    if host is not None:
        check_offsets(host, values.size)
    if not on_gpu:
        return host, None
    if device_array is None:
        device_array = _upload(host, values)
    if len(device_array.shape) != 1 or device_array.shape[0] < 1:
        raise ValueError("offsets need at least one entry (n segments have n + 1 offsets)")
    # The Array keeps the offsets alive until the kernel is enqueued; after that, the caching
    # allocators of PyTorch and CuPy reuse the memory only for work later on the same stream.
    return host, (device_array.ptr, device_array.shape[0] - 1, device_array)


def _to_host(array: Array) -> Any:
    if array.kind == "torch":
        return array.obj.cpu().numpy()
    import cupy

    return cupy.asnumpy(cupy.asarray(array.obj))


def _upload(host: Any, values: Array) -> Array:
    if values.kind == "torch":
        import torch

        return describe(torch.from_numpy(host).to(f"cuda:{values.device}", non_blocking=False), "offsets")
    import cupy

    with cupy.cuda.Device(values.device):
        return describe(cupy.asarray(host), "offsets")


def segment_sum(values: Any, offsets: Any, *, validate: bool = True, reproducible: bool = False) -> Any:
    """The sum of every segment ``values[offsets[i]:offsets[i+1]]`` (CSR offsets, ascending,
    segments may be empty: their sum is 0). Offsets on the GPU are checked by copying them to
    the host (a wait for the GPU); ``validate=False`` trusts them — offsets that decrease or
    run past the values then make the kernel fail and leave the CUDA context unusable.
    ``reproducible=True`` (float sums): each segment's sum the bits of ``sum(segment,
    reproducible=True)``, on every GPU and whatever the other segments."""
    return _segments("sum", values, offsets, validate, reproducible=reproducible)


def segment_mean(values: Any, offsets: Any, *, validate: bool = True, reproducible: bool = False) -> Any:
    """The mean of every segment (NaN for an empty one); see ``segment_sum``."""
    return _segments("mean", values, offsets, validate, reproducible=reproducible)


def segment_max(values: Any, offsets: Any, *, validate: bool = True) -> Any:
    """The largest element of every segment (the type's lowest value, -inf for floats, for an
    empty one); see ``segment_sum``."""
    return _segments("max", values, offsets, validate)


def segment_min(values: Any, offsets: Any, *, validate: bool = True) -> Any:
    """The smallest element of every segment (the type's highest value, +inf for floats, for
    an empty one); see ``segment_sum``."""
    return _segments("min", values, offsets, validate)


def segment_argmax(values: Any, offsets: Any, *, validate: bool = True) -> Any:
    """The index within its segment of every segment's first largest element (-1 for an empty
    one); see ``segment_sum``."""
    return _segments("argmax", values, offsets, validate)


def segment_argmin(values: Any, offsets: Any, *, validate: bool = True) -> Any:
    """The index within its segment of every segment's first smallest element (-1 for an
    empty one); see ``segment_sum``."""
    return _segments("argmin", values, offsets, validate)


def backend() -> str:
    """Where NumPy arrays are reduced: ``"GPU 0: <name>"``, or ``"simulator"`` without a GPU."""
    return _native.host_backend()
