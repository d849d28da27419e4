"""reduce_rs inside ``torch.compile``: the reductions as PyTorch custom operators.

Dynamo cannot trace a call into the native module (it reads ``data_ptr()``, which a traced
tensor has not got), so without this a compiled function would break its graph at every
reduce_rs call, and ``fullgraph=True`` would refuse it. While Dynamo traces, the PyTorch path
of ``_reduce_torch`` comes here instead: the same checks and the same layouts, decided from
the shapes at trace time, then ``torch.ops.reduce_rs.reduce`` — an operator that Inductor
keeps as one call of its own (a "fallback kernel") and that CUDA graphs capture (it launches
on the current stream and never waits) — and the result's shape and the arg operators'
(index, value) views laid over its output by ordinary tensor calls, which the graph holds.
The segment reductions are ``torch.ops.reduce_rs.segments``, their offsets a tensor, checked
(``validate=True``) when the graph runs.

Each operator's fake implementation says what it writes (a flat result, or the int64 pairs
of the arg operators) without running anything, which is all a trace needs. Registered once,
when reduce_rs first meets PyTorch (``_torch_ready``), and only where PyTorch has
``torch.library.register_fake`` (2.4 and later).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from . import _native
from ._arrays import _unsupported
from ._checks import (
    ARG,
    arg_results,
    check_cuda_tensor,
    check_nonempty,
    check_offsets,
    check_out_tensor,
    check_reproducible,
)
from ._codes import OP_CODE, SEGMENTS
from ._dims import Dim, tensor_layout
from ._torch_facts import dtype_facts, dtype_name, stream_getter

_DTYPES = dtype_facts(torch)
_raw_stream = stream_getter(torch)

#: The operators: ``torch.ops.reduce_rs.reduce`` and ``torch.ops.reduce_rs.segments``.
OPERATOR = "reduce_rs::reduce"
SEGMENTS_OPERATOR = "reduce_rs::segments"


def reduce(
    x: torch.Tensor,
    op: str,
    layout: int,
    rows: int,
    cols: int,
    results: int,
    dtype: torch.dtype,
    reproducible: bool,
) -> torch.Tensor:
    """``results`` results of ``op`` over the contiguous CUDA tensor ``x`` laid out as
    ``layout`` (rows × cols where it has them): a flat tensor of ``dtype``, or for the arg
    operators ``(results, 2)`` int64 pairs of (index, value bits)."""
    x = x.contiguous()  # the traced path made it so; a layout Inductor chose otherwise is copied
    out = _written(x, op, results, dtype)
    if results:
        device = x.get_device()
        _native.reduce_cuda(
            OP_CODE[op], _facts(x)[1], layout, x.data_ptr(), x.numel(),
            out.data_ptr(), device, _raw_stream(device), rows, cols, 0, 0, reproducible,
        )
    return out


def _reduce_fake(x, op, layout, rows, cols, results, dtype, reproducible):
    return _written(x, op, results, dtype)


def segments(
    values: torch.Tensor,
    offsets: torch.Tensor,
    op: str,
    dtype: torch.dtype,
    reproducible: bool,
    validate: bool,
) -> torch.Tensor:
    """``op`` of every segment of the contiguous CUDA tensor ``values`` between consecutive
    ``offsets`` (int64, on its device): as ``reduce``'s output, one result per segment.
    ``validate``: the offsets are checked first, on the host (a wait for the GPU, which a CUDA
    graph being captured does not allow)."""
    values, offsets = values.contiguous(), offsets.contiguous()
    count = offsets.numel() - 1
    if validate:
        check_offsets(offsets.cpu().numpy(), values.numel())
    out = _written(values, op, count, dtype)
    if count:
        device = values.get_device()
        _native.reduce_cuda(
            OP_CODE[op], _facts(values)[1], SEGMENTS, values.data_ptr(),
            values.numel(), out.data_ptr(), device, _raw_stream(device), 0, 0,
            offsets.data_ptr(), count, reproducible,
        )
    return out


def _segments_fake(values, offsets, op, dtype, reproducible, validate):
    return _written(values, op, offsets.numel() - 1, dtype)


def _register() -> Any:
    """Defines the operators: with ``torch.library.Library``, not ``torch.library.custom_op``,
    whose checks and autograd wrapper cost a graph more than the dispatch itself on every run
    (the operator compiled alone on the H100: 67.7 µs a call against 146.3 as a ``custom_op``;
    ``python/bench/overhead.py --compiled``). The sizes are ``SymInt``s, so that a graph
    traced with dynamic shapes keeps them symbolic (``int`` would fix them); the operators are
    tagged PT2-compliant, as ``custom_op`` tags its own. Nothing differentiates through a
    reduction: the Autograd key falls through, so a result has no ``grad_fn``, as in the eager
    call (without it PyTorch's fallback would give it one that drops the gradient, warning).

    The namespace is registered whole or not at all: a failure part way (a PyTorch without
    ``register_fake``) takes back what it registered, which nothing else would (the kernels
    hold this module, which holds the library), and ``_torch_ready`` leaves eager calls working
    without this module. ``importlib.reload`` of the module replaces the previous library; a
    second copy of the package is refused (the namespace is taken)."""
    previous = globals().get("_LIBRARY")
    if previous is not None:
        previous._destroy()
    library = torch.library.Library("reduce_rs", "DEF")
    try:
        tags = (torch.Tag.pt2_compliant_tag,)
        library.define(
            "reduce(Tensor x, str op, int layout, SymInt rows, SymInt cols, SymInt results, "
            "ScalarType dtype, bool reproducible) -> Tensor",
            tags=tags,
        )
        library.define(
            "segments(Tensor values, Tensor offsets, str op, ScalarType dtype, "
            "bool reproducible, bool validate) -> Tensor",
            tags=tags,
        )
        kernels = (("reduce", reduce, _reduce_fake), ("segments", segments, _segments_fake))
        for name, kernel, fake in kernels:
            library.impl(name, kernel, "CUDA")
            library.impl(name, torch.library.fallthrough_kernel, "Autograd")
            torch.library.register_fake(f"reduce_rs::{name}", fake, lib=library)
    except BaseException:
        library._destroy()
        raise
    return library


_LIBRARY = _register()


def _facts(x: torch.Tensor) -> tuple:
    """``x``'s dtype facts (``_torch_facts.dtype_facts``); a dtype without kernels is the eager
    call's TypeError (the operators can also be called directly)."""
    facts = _DTYPES.get(x.dtype)
    if facts is None:
        raise _unsupported(x.dtype)
    return facts


def _written(x: torch.Tensor, op: str, results: int, dtype: torch.dtype) -> torch.Tensor:
    """What the kernels write: the pairs of an arg operator, else one value per result."""
    if op in ARG:
        return x.new_empty((results, 2), dtype=torch.int64)
    return x.new_empty((results,), dtype=dtype)


def reduce_traced(
    op: str,
    x: torch.Tensor,
    dim: Dim,
    keepdim: bool,
    out: Any,
    reproducible: bool,
    want_values: bool,
) -> Any:
    """``_reduce_torch`` as Dynamo traces it: the same checks, layouts and results, with the kernels' launch in
    ``torch.ops.reduce_rs.reduce``. ``out=`` is written by a copy, which the graph holds."""
    check_cuda_tensor(x)
    # As the eager call: no gradient flows through a reduction (the operator has no autograd
    # formula, and a traced graph would refuse to differentiate through it).
    x, layout, rows, cols, shape, results = tensor_layout(op, x.detach(), dim, keepdim, want_values)
    check_reproducible(op, reproducible)
    check_nonempty(op, x.numel(), results, dim)
    if op in ARG:
        pairs = torch.ops.reduce_rs.reduce(x, op, layout, rows, cols, results, torch.int64, False)
        return arg_results(pairs, shape, x, want_values)
    dtype = _facts(x)[2][op]
    if x.numel() == 0 and op == "mean":
        result = torch.full(shape, math.nan, dtype=dtype, device=x.device)
    else:
        result = torch.ops.reduce_rs.reduce(x, op, layout, rows, cols, results, dtype, reproducible)
        result = result.view(shape)
    if out is None:
        return result
    check_out_tensor(out, torch.Tensor, dtype, shape, x)
    return out.copy_(result)


def segments_traced(
    op: str,
    values: torch.Tensor,
    offsets: Any,
    validate: bool,
    want_values: bool,
    reproducible: bool,
) -> Any:
    """``_segments`` as Dynamo traces it, for offsets given as a tensor (on the values' device,
    int64 or uint64 as the eager call takes them; on the CPU, any integer type, copied there).
    The offsets' checks run in the operator, when the graph runs: for offsets on the GPU where
    ``validate``, for offsets from the host always (as the eager call)."""
    check_cuda_tensor(values)
    result_dtypes = _facts(values)[2]
    if values.dim() != 1:
        raise ValueError(f"values must be one-dimensional, not of shape {tuple(values.shape)}")
    if not isinstance(offsets, torch.Tensor):
        raise TypeError(
            "inside torch.compile the offsets of a segment reduction are a tensor "
            "(torch.tensor(offsets)), not a " + type(offsets).__name__
        )
    if offsets.is_cuda:
        if offsets.device != values.device:
            raise ValueError(f"offsets are on {offsets.device}, values on {values.device}")
        if offsets.dtype not in (torch.int64, torch.uint64):
            raise TypeError(f"offsets must be int64, not {dtype_name(offsets.dtype)}")
    elif offsets.is_floating_point() or offsets.is_complex() or offsets.dtype == torch.bool:
        raise TypeError(f"offsets must be integers, not {dtype_name(offsets.dtype)}")
    if offsets.dim() != 1 or offsets.numel() < 1:
        raise ValueError("offsets need at least one entry (n segments have n + 1 offsets)")
    # Offsets from the host are checked whatever `validate` says, as the eager call checks
    # them (it has them there); `validate` is for offsets already on the GPU.
    validate = validate or not offsets.is_cuda
    values = values.detach().contiguous()
    offsets = offsets.to(device=values.device, dtype=torch.int64).contiguous()
    count = offsets.numel() - 1
    if op in ARG:
        pairs = torch.ops.reduce_rs.segments(values, offsets, op, torch.int64, False, validate)
        return arg_results(pairs, (count,), values, want_values)
    return torch.ops.reduce_rs.segments(values, offsets, op, result_dtypes[op], reproducible, validate)
