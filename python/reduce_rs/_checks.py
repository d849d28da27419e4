"""What every path of a reduction refuses, with PyTorch's errors where PyTorch has one, and
the result types they share: one place for the eager calls (``__init__``) and for the calls
``torch.compile`` traces (``_compile``), so that both refuse the same inputs alike."""

from __future__ import annotations

import collections
from typing import Any, Tuple

from ._dims import PUBLIC_NAMES, Dim

#: ``(values, indices)`` of ``max``/``min`` with a ``dim``, as PyTorch's ``torch.return_types``.
ValuesIndices = collections.namedtuple("ValuesIndices", ["values", "indices"], module="reduce_rs")

#: The operations whose result is an index (the kernels write (index, value) pairs).
ARG = frozenset(("argmin", "argmax"))


def empty_reduction(op: str, what: str) -> ValueError:
    return ValueError(
        f"{PUBLIC_NAMES.get(op, op)}(): {what} has no elements to reduce (as in PyTorch: a sum of "
        "nothing is 0 and a mean NaN, but there is no minimum, maximum or index of nothing)"
    )


def check_nonempty(op: str, size: int, results: int, dim: Dim) -> None:
    """As PyTorch: min, max and the arg operations of nothing are errors (unless there is no
    result to compute at all)."""
    if results and (size == 0 or size // results == 0) and op not in ("sum", "mean"):
        raise empty_reduction(op, "the input" if dim is None else "the reduced dimension")


def check_reproducible(op: str, reproducible: bool) -> None:
    if reproducible and op not in ("sum", "mean"):
        raise NotImplementedError(
            "reproducible=True covers sums and means (the others are order-independent already)"
        )


def check_cuda_tensor(x: Any) -> None:
    """A PyTorch tensor on the CPU is refused: reduce_rs reduces CUDA tensors."""
    if not x.is_cuda:
        raise ValueError(
            f"the input is a PyTorch tensor on {x.device}: reduce_rs reduces CUDA tensors "
            "(move it with .cuda(), or pass a NumPy array with .numpy())"
        )


def check_out_tensor(out: Any, tensor_type: type, dtype: Any, shape: Tuple[int, ...], x: Any) -> None:
    """``out=`` of a PyTorch call: a contiguous tensor of the result's type, shape and device."""
    if (
        type(out) is not tensor_type
        or out.dtype != dtype
        or tuple(out.shape) != tuple(shape)
        or out.device != x.device
        or not out.is_contiguous()
    ):
        raise ValueError(
            f"out= must be a contiguous {dtype} tensor of shape {tuple(shape)} on {x.device}"
        )


def check_offsets(offsets: Any, length: int) -> None:
    """CSR offsets (a host int64 array) of segments of an array of ``length`` elements: at
    least one, none negative, none decreasing, the last within the array."""
    import numpy

    if offsets.ndim != 1 or len(offsets) < 1:
        raise ValueError("offsets need at least one entry (n segments have n + 1 offsets)")
    if offsets[0] < 0:
        raise ValueError(f"offsets must not be negative: offsets[0] = {offsets[0]}")
    decreasing = numpy.flatnonzero(offsets[1:] < offsets[:-1])
    if len(decreasing):
        at = int(decreasing[0])
        raise ValueError(
            f"offsets must not decrease: offsets[{at}] = {offsets[at]} > "
            f"offsets[{at + 1}] = {offsets[at + 1]}"
        )
    if offsets[-1] > length:
        raise ValueError(
            f"the last segment ends at {offsets[-1]}, past the values' {length} elements"
        )


def pair_strides(shape: Tuple[int, ...], per_pair: int) -> Tuple[int, ...]:
    """Strides, in elements, of ``shape`` laid over consecutive 16-byte (index, value) pairs
    of ``per_pair`` elements each."""
    strides, step = [], per_pair
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def arg_results(pairs: Any, shape: Tuple[int, ...], x: Any, want_values: bool) -> Any:
    """The (index, value) pairs an arg kernel wrote for the PyTorch tensor ``x`` (an int64
    tensor of ``(results, 2)``), seen as the result's ``shape``: the indices, or with
    ``want_values`` ``ValuesIndices`` (one ``as_strided`` each: PyTorch's slicing and view
    calls cost microseconds each)."""
    indices = pairs.as_strided(shape, pair_strides(shape, 2))
    if not want_values:
        return indices
    size = x.element_size()
    values = pairs.view(x.dtype).as_strided(shape, pair_strides(shape, 16 // size), 8 // size)
    return ValuesIndices(values, indices)
