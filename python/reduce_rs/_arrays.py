"""The arrays reduce_rs accepts, each described the same way: where its memory is, its dtype
and shape, the stream its producer orders it on, and how to make result arrays of its kind.

PyTorch tensors and CuPy arrays are read through their own attributes (fast); any other GPU
array through ``__cuda_array_interface__`` (v3) or DLPack; NumPy arrays (host memory) through
``__array_interface__``.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, NamedTuple, Optional, Sequence, Tuple

from . import _native
from ._codes import DTYPES
from ._codes import ITEMSIZE as _ITEMSIZE
from ._torch_facts import dtype_name, stream_getter

# __cuda_array_interface__ / __array_interface__ type strings.
_TYPESTR = {
    "<f4": "float32",
    "<f8": "float64",
    "<f2": "float16",
    "<i4": "int32",
    "<u4": "uint32",
    "<i8": "int64",
    "<u8": "uint64",
}


def _unsupported(dtype: Any) -> TypeError:
    return TypeError(
        f"reduce_rs has no kernels for dtype {dtype} "
        f"(supported: {', '.join(DTYPES)})"
    )


class Array(NamedTuple):
    """One array, described for the native module."""

    kind: str  # "torch", "cupy", "cuda" (another library's GPU array) or "host" (NumPy)
    obj: Any  # the (contiguous) array itself, kept alive while it is reduced
    ptr: int
    shape: Tuple[int, ...]
    dtype: str
    device: Optional[int]  # CUDA ordinal; None for host memory
    stream: int  # CUstream the reduction runs on (0: the legacy default stream)
    wrap: Optional[Callable[[Any], Any]]  # turns a result back into the input's kind

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def describe(x: Any, what: str = "the input") -> Array:
    """``x`` described; a non-contiguous array is first copied to a contiguous one."""
    module = type(x).__module__.split(".", 1)[0]
    if module == "torch":
        import torch

        if isinstance(x, torch.Tensor):
            return _describe_torch(torch, x, what)
    if module == "cupy":
        import cupy

        if isinstance(x, cupy.ndarray):
            return _describe_cupy(cupy, x)
    if module == "numpy":
        import numpy

        if isinstance(x, (numpy.ndarray, numpy.generic)):
            return _describe_host(numpy, numpy.asarray(x))
    interface = getattr(x, "__cuda_array_interface__", None)
    if interface is not None:
        return _describe_interface(x, interface, module)
    if hasattr(x, "__dlpack__"):
        return _describe_dlpack(x, module, what)
    if isinstance(x, (list, tuple, int, float)):
        import numpy

        return _describe_host(numpy, numpy.asarray(x))
    raise TypeError(
        f"{what} is a {type(x).__name__}: reduce_rs takes PyTorch tensors, CuPy arrays, "
        "NumPy arrays, and arrays with __cuda_array_interface__ or __dlpack__"
    )


def _describe_torch(torch: Any, x: Any, what: str) -> Array:
    if x.device.type != "cuda":
        raise ValueError(
            f"{what} is a PyTorch tensor on {x.device}: reduce_rs reduces CUDA tensors "
            "(move it with .cuda(), or pass a NumPy array with .numpy())"
        )
    dtype = dtype_name(x.dtype)
    if dtype not in _ITEMSIZE:
        raise _unsupported(x.dtype)
    if not x.is_contiguous():
        x = x.contiguous()
    index = x.device.index
    return Array(
        "torch", x, x.data_ptr(), tuple(x.shape), dtype, index, stream_getter(torch)(index), None
    )


def _describe_cupy(cupy: Any, x: Any) -> Array:
    dtype = x.dtype.name
    if dtype not in _ITEMSIZE:
        raise _unsupported(x.dtype)
    if not x.flags.c_contiguous:
        x = cupy.ascontiguousarray(x)
    return Array(
        "cupy",
        x,
        x.data.ptr,
        tuple(x.shape),
        dtype,
        x.device.id,
        cupy.cuda.get_current_stream().ptr,
        None,
    )


def _describe_host(numpy: Any, x: Any) -> Array:
    dtype = x.dtype.name
    if dtype not in _ITEMSIZE:
        raise _unsupported(x.dtype)
    if not (x.flags.c_contiguous and x.flags.aligned):
        x = numpy.ascontiguousarray(x)
    return Array(
        "host", x, x.__array_interface__["data"][0], tuple(x.shape), dtype, None, 0, None
    )


def _contiguous_strides(shape: Sequence[int], itemsize: int) -> Tuple[int, ...]:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _describe_interface(x: Any, interface: dict, module: str) -> Array:
    typestr = interface["typestr"]
    dtype = _TYPESTR.get(typestr)
    if dtype is None:
        raise _unsupported(typestr)
    shape = tuple(interface["shape"])
    strides = interface.get("strides")
    if strides is not None and math.prod(shape) > 1:
        expected = _contiguous_strides(shape, _ITEMSIZE[dtype])
        significant = [(s, e) for s, e, n in zip(strides, expected, shape) if n > 1]
        if any(s != e for s, e in significant):
            raise ValueError(
                "the array is not contiguous (strides "
                f"{tuple(strides)} for shape {shape}): make a contiguous copy first"
            )
    ptr = interface["data"][0]
    stream = interface.get("stream")
    device = _native.device_of_pointer(ptr) if ptr else 0
    return Array(
        "cuda",
        x,
        ptr,
        shape,
        dtype,
        device,
        0 if stream is None else int(stream),
        _wrapper_for(module),
    )


def _describe_dlpack(x: Any, module: str, what: str) -> Array:
    device_type, _ = x.__dlpack_device__()
    if device_type != 2:  # kDLCUDA
        raise ValueError(f"{what} (DLPack device type {device_type}) is not in CUDA memory")
    for library in ("torch", "cupy"):
        if library in sys.modules or _importable(library):
            imported = __import__(library)
            array = imported.from_dlpack(x)
            described = describe(array, what)
            return described._replace(wrap=_wrapper_for(module))
    raise TypeError(
        f"{what} is a DLPack array: reduce_rs reads DLPack arrays through PyTorch or CuPy; "
        "install one of them"
    )


def _importable(name: str) -> bool:
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _wrapper_for(module: str) -> Optional[Callable[[Any], Any]]:
    """How a result (a CuPy array or a PyTorch tensor) becomes an array of ``module``'s."""
    if module == "jax":
        import jax.numpy

        return lambda result: jax.numpy.from_dlpack(result)
    if module == "numba":
        from numba import cuda

        return lambda result: cuda.as_cuda_array(result)
    return None


# Results ---------------------------------------------------------------------------------------


class Allocator:
    """Makes result arrays on the input's device, with the input's library."""

    def __init__(self, array: Array):
        self.array = array
        kind = array.kind
        if kind == "cuda":
            kind = "cupy" if _importable("cupy") else "torch" if _importable("torch") else None
            if kind is None:
                raise TypeError(
                    "results of __cuda_array_interface__ arrays are made with CuPy or "
                    "PyTorch: install one of them"
                )
        self.kind = kind

    def empty(self, shape: Tuple[int, ...], dtype: str) -> Any:
        if self.kind == "torch":
            import torch

            return torch.empty(shape, dtype=getattr(torch, dtype), device=f"cuda:{self.array.device}")
        if self.kind == "cupy":
            import cupy

            if dtype == "bfloat16":
                raise _unsupported(dtype)
            with cupy.cuda.Device(self.array.device):
                return cupy.empty(shape, dtype=dtype)
        import numpy

        return numpy.empty(shape, dtype=dtype)

    def ptr(self, result: Any) -> int:
        if self.kind == "torch":
            return result.data_ptr()
        if self.kind == "cupy":
            return result.data.ptr
        return result.__array_interface__["data"][0]

    def fill(self, result: Any, value: float) -> Any:
        result.fill(value) if self.kind != "torch" else result.fill_(value)
        return result

    def arg_views(self, pairs: Any, shape: Tuple[int, ...], dtype: str) -> Tuple[Any, Any]:
        """The values and the indices of ``pairs``: (index, value) pairs of 16 bytes, as the
        kernels write them, seen as two strided arrays of ``shape`` (no copy)."""
        width = _ITEMSIZE[dtype]
        if self.kind == "torch":
            import torch

            indices = pairs[:, 0].reshape(shape)
            values = pairs.view(torch.uint8)[:, 8 : 8 + width].view(getattr(torch, dtype))
            return values[:, 0].reshape(shape), indices
        indices = pairs[:, 0].reshape(shape)
        values = pairs.view("uint8")[:, 8 : 8 + width].view(dtype)
        return values[:, 0].reshape(shape), indices

    def pairs(self, count: int) -> Any:
        """Room for ``count`` (index, value) pairs: ``count`` rows of two int64."""
        return self.empty((count, 2), "int64")

    def wrap(self, result: Any) -> Any:
        return self.array.wrap(result) if self.array.wrap is not None else result
