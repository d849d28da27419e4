"""What each reduction must return, computed independently with NumPy in float64 or exact
integer arithmetic, and the tolerance float results are held to."""

import numpy as np

#: Element types NumPy has (bfloat16 is tested with PyTorch tensors).
NUMPY_DTYPES = ["float32", "float64", "float16", "int32", "uint32", "int64", "uint64"]
FLOATS = {"float32", "float64", "float16", "bfloat16"}

SUM_TYPE = {"float16": "float32", "bfloat16": "float32"}
MEAN_TYPE = {"float32": "float32", "float16": "float32", "bfloat16": "float32", "float64": "float64"}


def sum_type(dtype):
    return SUM_TYPE.get(dtype, dtype)


def mean_type(dtype):
    return MEAN_TYPE.get(dtype, "float64")


def random_array(rng, shape, dtype):
    """Values of every sign (ints: including the extremes, so that sums wrap)."""
    if dtype in FLOATS:
        return (rng.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def exact_sum(x, axis=None):
    """Float sums in float64 (the reference), integer sums wrapping in their own type."""
    if x.dtype.kind == "f":
        return np.sum(x.astype(np.float64), axis=axis)
    return np.sum(x, axis=axis, dtype=x.dtype)


def exact_mean(x, axis=None):
    return np.mean(x.astype(np.float64), axis=axis)


def float_tolerance(x, axis, result_dtype):
    """|result - exact| allowed: a few ulps of the result type times the sum of magnitudes
    (the error bound of any order of additions is n·u·Σ|x|; the kernels' trees and
    compensation stay far below it, so the looser n-free bound with a margin is used)."""
    eps = np.finfo(result_dtype).eps
    magnitude = np.sum(np.abs(x.astype(np.float64)), axis=axis)
    return 8 * eps * magnitude + np.finfo(result_dtype).tiny


def reference(op, x, axis=None):
    """(expected values, expected dtype) of ``op`` over ``axis``, NumPy semantics where they are
    the library's: NaN wins min/max, first index wins ties, first NaN wins argmin/argmax."""
    if op == "sum":
        return exact_sum(x, axis), sum_type(x.dtype.name)
    if op == "mean":
        return exact_mean(x, axis), mean_type(x.dtype.name)
    if op == "amax":
        return np.max(x, axis=axis), x.dtype.name
    if op == "amin":
        return np.min(x, axis=axis), x.dtype.name
    if op == "argmax":
        return np.argmax(x, axis=axis), "int64"
    if op == "argmin":
        return np.argmin(x, axis=axis), "int64"
    raise ValueError(op)


def assert_matches(op, got, x, axis=None):
    """``got`` is what ``op`` over ``axis`` of ``x`` must be: exactly for integers, indices,
    min and max; within ``float_tolerance`` for float sums and means."""
    want, dtype = reference(op, x, axis)
    got = np.asarray(got)
    assert got.dtype.name == dtype, f"{op}: dtype {got.dtype} != {dtype}"
    assert got.shape == np.shape(want), f"{op}: shape {got.shape} != {np.shape(want)}"
    if op == "mean" or (op == "sum" and x.dtype.kind == "f"):
        tolerance = float_tolerance(x, axis, dtype)
        if op == "mean":
            axes = axis if isinstance(axis, tuple) else (axis,)
            count = x.size if axis is None else int(np.prod([x.shape[a] for a in axes]))
            tolerance = tolerance / max(count, 1)
        with np.errstate(invalid="ignore"):
            both_nan = np.isnan(want) & np.isnan(got.astype(np.float64))
            close = np.abs(got.astype(np.float64) - want) <= tolerance
        assert np.all(both_nan | close | (got.astype(np.float64) == want)), (
            f"{op}: {got} vs {want} (tolerance {tolerance})"
        )
    elif op == "sum":
        assert np.array_equal(got, np.asarray(want).astype(dtype)), f"{op}: {got} vs {want}"
    else:
        assert np.array_equal(got, want, equal_nan=True), f"{op}: {got} vs {want}"
