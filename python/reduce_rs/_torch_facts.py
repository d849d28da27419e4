"""What reduce_rs reads of PyTorch, in one place for every path that meets a tensor (the eager
fast path of ``__init__``, the operators ``torch.compile`` traces in ``_compile``, and
``_arrays.describe``): each dtype's name, code and result types, and the current CUDA stream.
Each function takes the ``torch`` module: reduce_rs never imports PyTorch itself first."""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

from ._codes import DTYPE_CODE, OPS, result_dtype

#: torch.dtype -> (reduce_rs's name of it, its code, {operation: the result's torch.dtype}).
DtypeFacts = Dict[Any, Tuple[str, int, Dict[str, Any]]]


def dtype_name(dtype: Any) -> str:
    """``torch.float32`` -> ``"float32"`` (also for the dtypes reduce_rs does not take)."""
    return str(dtype).rsplit(".", 1)[-1]


def dtype_facts(torch: Any) -> DtypeFacts:
    """The facts of every dtype reduce_rs takes that this PyTorch has, read once."""
    facts: DtypeFacts = {}
    for name, code in DTYPE_CODE.items():
        dtype = getattr(torch, name, None)
        if dtype is not None:
            results = {op: getattr(torch, result_dtype(op, name)) for op in OPS}
            facts[dtype] = (name, code, results)
    return facts


def stream_getter(torch: Any) -> Callable[[int], int]:
    """The cheapest call this PyTorch has for the current stream (a ``CUstream``) of a device."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw or (lambda index: torch.cuda.current_stream(index).cuda_stream)
