"""How a call's ``dim`` and ``keepdim`` become a launch: which dims are reduced (one int, a
tuple of them, or every one), the layout the kernels take for them (the whole array, rows or
columns, or rows once the reduced dims are moved last), and the result's shape, with the
errors PyTorch gives for a dim it would refuse."""

from __future__ import annotations

import math
import operator
from typing import Any, Optional, Sequence, Tuple, Union

from ._codes import COLUMNS, ROWS, WHOLE

Dim = Optional[Union[int, Sequence[int]]]

# The functions that take one dim, as PyTorch's.
ONE_DIM = frozenset(("argmin", "argmax", "max", "min"))
PUBLIC_NAMES = {"max": "amax", "min": "amin"}


def out_of_range(d: int, ndim: int) -> IndexError:
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    return IndexError(
        f"Dimension out of range (expected to be in range of [{low}, {high}], but got {d})"
    )


def as_dim(d: Any) -> int:
    """``d`` as a dim: an int (a NumPy integer too), never a bool, as PyTorch takes it."""
    if isinstance(d, bool):
        raise TypeError("dim must be an int or a sequence of ints, not bool")
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(f"dim must be an int or a sequence of ints, not {type(d).__name__}") from None


def reduced_dims(name: str, dim: Dim, ndim: int) -> Optional[Tuple[int, ...]]:
    """The dims ``dim`` names, each in ``[0, ndim)``, sorted; ``None`` for the whole array
    (``dim=None``, or ``()`` as in PyTorch). ``name``: the function called, for its errors (the
    arg operations, and ``max``/``min`` with a dim, take one dim, as PyTorch's)."""
    if dim is None:
        return None
    if hasattr(dim, "__index__") or isinstance(dim, (str, bytes)) or not hasattr(dim, "__iter__"):
        # One dim (an int, a NumPy integer or 0-d integer array), or what no dim can be.
        dims: Tuple[int, ...] = (as_dim(dim),)
    else:
        dims = tuple([as_dim(d) for d in dim])
    if not dims:
        return None
    if len(dims) > 1 and name in ONE_DIM:
        raise TypeError(f"{name}() reduces one dim (an int), as torch.{name} does, not dim={dims}")
    for d in dims:
        if not (-ndim <= d < ndim or (ndim == 0 and d in (0, -1))):
            raise out_of_range(d, ndim)
    normal = sorted([d % ndim if ndim else 0 for d in dims])
    for a, b in zip(normal, normal[1:]):
        if a == b:
            raise ValueError(f"dim {a} appears multiple times in the list of dims")
    return tuple(normal) if ndim else None


def dim_layout(op: str, shape: Sequence[int], dim: Dim, keepdim: bool, want_values: bool = False):
    """``(layout, rows, cols, result shape, results, dims to move last or None)`` for reducing
    an array of ``shape`` over ``dim`` (one dim or several) with ``op`` (``want_values``: for
    ``max``/``min``): the whole array; every row, when the reduced dims are the last
    non-trivial ones; every column, when they are the first; else every row once the reduced
    dims are moved last (a copy)."""
    ndim = len(shape)
    if type(dim) is int and ndim:
        # One dim, the common case, in as few steps as a small tensor's call can afford.
        if not -ndim <= dim < ndim:
            raise out_of_range(dim, ndim)
        d = dim % ndim
        outer, size, inner = math.prod(shape[:d]), shape[d], math.prod(shape[d + 1 :])
        out = tuple(shape[:d]) + ((1,) if keepdim else ()) + tuple(shape[d + 1 :])
        dims: Optional[Tuple[int, ...]] = (d,)
    else:
        dims = reduced_dims(public_name(op, want_values), dim, ndim)
        if dims is None:
            return WHOLE, 0, 0, (1,) * ndim if keepdim else (), 1, None
        kept = [d for d in range(ndim) if d not in dims]
        size = math.prod([shape[d] for d in dims])
        outer = math.prod([shape[d] for d in kept if d < dims[0]])
        inner = math.prod([shape[d] for d in kept if d > dims[-1]])
        out = tuple([1 if d in dims else shape[d] for d in range(ndim) if keepdim or d not in dims])
    results = math.prod(out)
    # Reduced dims next to each other are one dim of their product.
    adjacent = dims[-1] - dims[0] + 1 == len(dims)
    if adjacent and inner == 1:
        return ROWS, outer, size, out, results, None
    if adjacent and outer == 1:
        return COLUMNS, size, inner, out, results, None
    return ROWS, results, size, out, results, dims


def public_name(op: str, want_values: bool) -> str:
    """The function the user called: ``amax`` for ``max``, and ``max`` for ``argmax`` with its
    values."""
    if want_values:
        return "max" if op == "argmax" else "min"
    return PUBLIC_NAMES.get(op, op)


def tensor_layout(op: str, x: Any, dim: Dim, keepdim: bool, want_values: bool = False):
    """``(x, layout, rows, cols, result shape, results)`` for reducing the PyTorch tensor ``x``
    over ``dim``: ``x`` made contiguous, with the reduced dims moved last where the layout
    needs it (a copy). The eager call's and the traced call's one way to lay a tensor out."""
    if not x.is_contiguous():
        x = x.contiguous()
    if dim is None:
        return x, WHOLE, 0, 0, (1,) * x.dim() if keepdim else (), 1
    layout, rows, cols, shape, results, move = dim_layout(op, x.shape, dim, keepdim, want_values)
    if move is not None:
        x = x.movedim(move, tuple(range(-len(move), 0))).contiguous()
    return x, layout, rows, cols, shape, results
