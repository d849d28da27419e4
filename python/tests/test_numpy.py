"""reduce_rs on NumPy arrays: every function × dtype × shape class × edge case, against NumPy.

Without a GPU the arrays are reduced on the CPU simulator (every memory access of the kernels
checked), which is how CI runs this file; with one, on GPU 0.
"""

import math

import numpy as np
import pytest

import reduce_rs
from reference import FLOATS, NUMPY_DTYPES, assert_matches, mean_type, random_array, sum_type

OPS = ["sum", "mean", "amax", "amin", "argmax", "argmin"]

# Whole arrays: empty, one element, around a warp, a block and a vector, and a few blocks.
LENGTHS = [1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 4099]

# (shape, dim): rows (the last dim), columns (the first), a middle dim, negative dims, 1-D.
SHAPED = [
    ((7, 13), -1),
    ((7, 13), 1),
    ((7, 13), 0),
    ((64, 130), -1),
    ((130, 64), 0),
    ((3, 5, 4), 1),
    ((3, 5, 4), -3),
    ((2, 1, 3), 2),
    ((17,), 0),
    ((1, 600), -1),
    ((600, 1), 0),
]


def call(op, x, **kwargs):
    return getattr(reduce_rs, op)(x, **kwargs)


@pytest.fixture
def rng():
    return np.random.default_rng(20261125)


def test_backend_is_named():
    assert reduce_rs.backend() == "simulator" or reduce_rs.backend().startswith("GPU ")


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("length", LENGTHS)
def test_whole_arrays(rng, op, dtype, length):
    x = random_array(rng, length, dtype)
    got = call(op, x)
    assert np.ndim(got) == 0
    assert_matches(op, got, x)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape,dim", SHAPED)
def test_along_a_dim(rng, op, dtype, shape, dim):
    x = random_array(rng, shape, dtype)
    got = call(op, x, dim=dim)
    assert_matches(op, got, x, axis=dim)


@pytest.mark.parametrize("op", OPS)
def test_keepdim_keeps_a_dim_of_one(rng, op):
    x = random_array(rng, (4, 6, 5), "float32")
    for dim in (0, 1, 2, -1):
        got = call(op, x, dim=dim, keepdim=True)
        want, _ = __import__("reference").reference(op, x, dim)
        assert got.shape == np.expand_dims(want, dim).shape
    assert call(op, x, keepdim=True).shape == (1, 1, 1)


# (shape, dims) for the reductions that take several dims (as torch.sum, torch.amax: a tuple):
# trailing dims (rows of their product), leading dims (columns), middle dims and dims apart
# (moved last first), negative dims, every dim, none (the whole array), one in a tuple.
SEVERAL_DIMS = [
    ((4, 5, 6), (1, 2)),
    ((4, 5, 6), (0, 1)),
    ((3, 4, 5, 6), (1, 2)),
    ((4, 5, 6), (0, 2)),
    ((3, 4, 5, 6), (0, 2, 3)),
    ((4, 5, 6), (-1, 0)),
    ((4, 5, 6), (2, 1, 0)),
    ((4, 5, 6), ()),
    ((2, 1, 3), (0, 2)),
    ((7, 1, 1), (1, 2)),
    ((40, 33), [0]),
]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("shape,dims", SEVERAL_DIMS, ids=[f"{s}-{d}" for s, d in SEVERAL_DIMS])
def test_along_several_dims(rng, op, dtype, shape, dims):
    x = random_array(rng, shape, dtype)
    axis = tuple(dims) if len(dims) else None
    assert_matches(op, call(op, x, dim=dims), x, axis=axis)
    kept = call(op, x, dim=dims, keepdim=True)
    reduced = range(x.ndim) if axis is None else [a % x.ndim for a in axis]
    assert kept.shape == tuple(1 if d in reduced else n for d, n in enumerate(shape))


@pytest.mark.parametrize("dims", [(0, 2), (0, 1), (1, 2)])
def test_several_dims_reproducible_have_the_bits_of_each_slice_alone(rng, dims):
    # Dims apart (moved last), leading dims (columns), trailing dims (rows).
    x = random_array(rng, (6, 50, 7), "float32")
    (kept,) = [d for d in range(3) if d not in dims]
    for function in (reduce_rs.sum, reduce_rs.mean):
        got = function(x, dim=dims, reproducible=True)
        for j in range(x.shape[kept]):
            alone = function(np.ascontiguousarray(np.take(x, j, axis=kept)), reproducible=True)
            assert got[j].tobytes() == np.float32(alone).tobytes(), (function, j)


def test_several_dims_of_a_scalar_and_into_out(rng):
    scalar = np.array(2.5, dtype=np.float32)
    for dims in [(), (0,), (-1,), 0]:
        assert reduce_rs.sum(scalar, dim=dims) == 2.5
        assert reduce_rs.amax(scalar, dim=dims, keepdim=True).shape == ()
    x = random_array(rng, (4, 5, 6), "float32")
    out = np.empty(5, np.float32)
    assert reduce_rs.sum(x, dim=(0, 2), out=out) is out
    assert_matches("sum", out, x, axis=(0, 2))
    with pytest.raises(ValueError, match="out="):
        reduce_rs.sum(x, dim=(0, 2), out=np.empty(6, np.float32))


def test_dims_may_be_numpy_integers(rng):
    x = random_array(rng, (5, 6), "float32")
    assert_matches("amax", reduce_rs.amax(x, dim=np.int64(1)), x, axis=1)
    assert_matches("sum", reduce_rs.sum(x, dim=(np.int32(0), 1)), x, axis=(0, 1))
    # A 0-d integer array is one dim (it has __index__), not a sequence of them.
    assert_matches("sum", reduce_rs.sum(x, dim=np.array(1)), x, axis=1)
    assert reduce_rs.argmax(x, dim=np.array(0)).shape == (6,)


def test_max_and_min_with_a_dim_return_values_and_indices(rng):
    x = random_array(rng, (9, 40), "float64")
    values, indices = reduce_rs.max(x, dim=1)
    assert np.array_equal(values, x.max(axis=1)) and np.array_equal(indices, x.argmax(axis=1))
    result = reduce_rs.min(x, dim=0)
    assert np.array_equal(result.values, x.min(axis=0))
    assert np.array_equal(result.indices, x.argmin(axis=0))
    assert reduce_rs.max(x) == x.max() and reduce_rs.min(x) == x.min()


# Special values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nan_propagates_and_the_first_nan_wins(dtype):
    x = np.array([1.0, np.nan, 7.0, np.nan, -2.0], dtype=dtype)
    assert np.isnan(reduce_rs.amax(x)) and np.isnan(reduce_rs.amin(x))
    assert np.isnan(reduce_rs.sum(x)) and np.isnan(reduce_rs.mean(x))
    assert reduce_rs.argmax(x) == 1 and reduce_rs.argmin(x) == 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_infinities(dtype):
    x = np.array([1.0, np.inf, -3.0], dtype=dtype)
    assert reduce_rs.sum(x) == np.inf and reduce_rs.amax(x) == np.inf
    assert np.isnan(reduce_rs.sum(np.array([np.inf, -np.inf], dtype=dtype)))
    assert reduce_rs.argmin(np.array([0.0, -np.inf, -np.inf], dtype=dtype)) == 1


def test_ties_go_to_the_first_index():
    x = np.array([3, 9, 1, 9, 1], dtype=np.int32)
    assert reduce_rs.argmax(x) == 1 and reduce_rs.argmin(x) == 2
    rows = np.array([[5, 5, 5], [0, 2, 2]], dtype=np.int64)
    assert reduce_rs.argmax(rows, dim=1).tolist() == [0, 1]


def test_negative_zero_is_below_positive_zero_unlike_pytorch():
    # PyTorch (and NumPy) treat the zeros as equal: argmax([-0.0, 0.0]) is 0 there.
    x = np.array([-0.0, 0.0], dtype=np.float32)
    assert reduce_rs.argmax(x) == 1 and reduce_rs.argmin(x) == 0
    assert math.copysign(1.0, reduce_rs.amax(x)) == 1.0
    assert math.copysign(1.0, reduce_rs.amin(x)) == -1.0


def test_integer_sums_wrap_in_their_own_type_unlike_pytorch():
    # PyTorch sums int32 into int64 (2147483648 here).
    x = np.array([2**31 - 1, 1], dtype=np.int32)
    got = reduce_rs.sum(x)
    assert got.dtype == np.int32 and got == -(2**31)
    assert reduce_rs.sum(np.array([2**64 - 1, 2], dtype=np.uint64)) == 1


def test_half_precision_sums_are_float32():
    x = np.full(3000, 0.1, dtype=np.float16)
    got = reduce_rs.sum(x)
    assert got.dtype == np.float32
    # float16 accumulation would stall far below; float32 gets 3000 × 0.0999755859375.
    assert abs(got - 3000 * float(np.float16(0.1))) < 1e-2
    assert reduce_rs.mean(x).dtype == np.float32


def test_means_of_integers_are_float64():
    got = reduce_rs.mean(np.array([1, 2, 4], dtype=np.int64))
    assert got.dtype == np.float64 and got == 7 / 3


# Empty inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_empty_arrays_as_pytorch(dtype):
    x = np.zeros(0, dtype=dtype)
    assert reduce_rs.sum(x) == 0 and reduce_rs.sum(x).dtype.name == sum_type(dtype)
    assert np.isnan(reduce_rs.mean(x)) and reduce_rs.mean(x).dtype.name == mean_type(dtype)
    for op in ("amax", "amin", "argmax", "argmin"):
        with pytest.raises(ValueError, match="no elements"):
            call(op, x)


def test_empty_dims():
    x = np.zeros((4, 0), dtype=np.float32)
    assert reduce_rs.sum(x, dim=1).tolist() == [0, 0, 0, 0]
    assert np.all(np.isnan(reduce_rs.mean(x, dim=1)))
    with pytest.raises(ValueError, match="no elements"):
        reduce_rs.amax(x, dim=1)
    # No result to compute: an empty result, as NumPy gives.
    assert reduce_rs.amax(x, dim=0).shape == (0,)
    assert reduce_rs.argmax(np.zeros((0, 3), np.int32), dim=1).shape == (0,)
    # Several dims, one of them empty: every result reduces nothing.
    y = np.zeros((2, 0, 3), dtype=np.float32)
    assert reduce_rs.sum(y, dim=(0, 1)).tolist() == [0, 0, 0]
    assert np.all(np.isnan(reduce_rs.mean(y, dim=(1, 0))))
    assert reduce_rs.sum(y, dim=(0, 2)).shape == (0,)


# Segments ---------------------------------------------------------------------------------------


SEGMENT_OPS = {
    "segment_sum": "sum",
    "segment_mean": "mean",
    "segment_max": "amax",
    "segment_min": "amin",
    "segment_argmax": "argmax",
    "segment_argmin": "argmin",
}


def empty_segment_value(op, dtype):
    if op == "segment_sum":
        return 0
    if op == "segment_mean":
        return np.nan
    if op in ("segment_argmax", "segment_argmin"):
        return -1
    high = op == "segment_min"
    if dtype in FLOATS:
        return np.inf if high else -np.inf
    info = np.iinfo(dtype)
    return info.max if high else info.min


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("function", list(SEGMENT_OPS))
@pytest.mark.parametrize(
    "offsets",
    [[0, 5], [0, 0, 3, 3, 10], [2, 2, 9], [0, 1, 2, 3], [0, 300, 301, 900, 2000], [4]],
    ids=["one", "with-empties", "from-2", "singletons", "ragged", "none"],
)
def test_segments(rng, function, dtype, offsets):
    x = random_array(rng, max(offsets[-1], 1) + 3, dtype)
    got = getattr(reduce_rs, function)(x, np.array(offsets))
    op = SEGMENT_OPS[function]
    assert got.shape == (len(offsets) - 1,)
    for i, (start, end) in enumerate(zip(offsets, offsets[1:])):
        if start == end:
            want = empty_segment_value(function, dtype)
            assert (np.isnan(got[i]) and np.isnan(want)) or got[i] == want, (i, got[i], want)
        else:
            assert_matches(op, got[i], x[start:end])


def test_segment_offsets_as_a_list_or_any_integer_array():
    x = np.arange(6, dtype=np.float32)
    for offsets in ([0, 2, 6], np.array([0, 2, 6], np.int32), np.array([0, 2, 6], np.uint64)):
        assert reduce_rs.segment_sum(x, offsets).tolist() == [1.0, 14.0]


# Reproducible sums ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_reproducible_sums_do_not_depend_on_the_order(rng, dtype):
    x = random_array(rng, 5000, dtype)
    shuffled = rng.permutation(x)
    a = reduce_rs.sum(x, reproducible=True)
    b = reduce_rs.sum(shuffled, reproducible=True)
    assert a.tobytes() == b.tobytes()
    assert_matches("sum", a, x)
    assert reduce_rs.mean(x, reproducible=True).tobytes() == reduce_rs.mean(shuffled, reproducible=True).tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_reproducible_rows_columns_and_segments_have_the_bits_of_the_slice_alone(rng, dtype):
    x = random_array(rng, 64 * 301, dtype).reshape(64, 301)
    for op in (reduce_rs.sum, reduce_rs.mean):
        rows = op(x, dim=1, reproducible=True)
        columns = op(np.ascontiguousarray(x.T), dim=0, reproducible=True)
        for i in (0, 17, 63):
            alone = op(np.ascontiguousarray(x[i]), reproducible=True)
            assert rows[i].tobytes() == alone.tobytes()
            assert columns[i].tobytes() == alone.tobytes()
    values = x.reshape(-1)
    offsets = np.array([0, 5, 5, 301, 1000, 4000, values.size], np.int64)
    for op, segment_op in ((reduce_rs.sum, reduce_rs.segment_sum), (reduce_rs.mean, reduce_rs.segment_mean)):
        got = segment_op(values, offsets, reproducible=True)
        for i in (0, 2, 3, 5):
            alone = op(np.ascontiguousarray(values[offsets[i]:offsets[i + 1]]), reproducible=True)
            assert got[i].tobytes() == alone.tobytes()



# Layouts and out= ------------------------------------------------------------------------------


def test_non_contiguous_arrays_are_copied_first(rng):
    x = random_array(rng, (20, 30), "float64")
    view = x[::2, 1::3]
    assert not view.flags.c_contiguous
    assert_matches("sum", reduce_rs.sum(view, dim=1), view, axis=1)
    assert reduce_rs.argmax(x.T, dim=0).tolist() == np.argmax(x.T, axis=0).tolist()


def test_out_is_written_and_returned(rng):
    x = random_array(rng, (6, 10), "float32")
    out = np.empty(6, np.float32)
    result = reduce_rs.sum(x, dim=1, out=out)
    assert result is out
    assert_matches("sum", out, x, axis=1)
    with pytest.raises(ValueError, match="out="):
        reduce_rs.sum(x, dim=1, out=np.empty(5, np.float32))
    with pytest.raises(ValueError, match="out="):
        reduce_rs.sum(x, dim=1, out=np.empty(6, np.float64))


def test_python_scalars_and_lists():
    assert reduce_rs.sum([1.5, 2.5]) == 4.0
    assert reduce_rs.argmax([[1, 5], [7, 2]], dim=1).tolist() == [1, 0]


# Bad input: one exception with a one-line message -----------------------------------------------


@pytest.mark.parametrize(
    "call_it,error,message",
    [
        (lambda: reduce_rs.sum(np.ones(3, np.int8)), TypeError, "no kernels for dtype int8"),
        (lambda: reduce_rs.sum(np.ones(3, bool)), TypeError, "no kernels for dtype bool"),
        (lambda: reduce_rs.amax(np.ones(3, np.complex64)), TypeError, "complex64"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim=2), IndexError, "Dimension out of range"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim=-3), IndexError, "Dimension out of range"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim=(0, 2)), IndexError, "Dimension out of range"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim=(1, -1)), ValueError, "dim 1 appears multiple"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim="rows"), TypeError, "dim must be an int"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim=1.0), TypeError, "not float"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim=(0, 1.0)), TypeError, "not float"),
        (lambda: reduce_rs.sum(np.ones((2, 3)), dim=True), TypeError, "not bool"),
        (lambda: reduce_rs.sum(np.ones(()), dim=(0, -1)), ValueError, "dim 0 appears multiple"),
        (lambda: reduce_rs.argmax(np.ones((2, 3)), dim=(0, 1)), TypeError, r"^argmax\(\) reduces one dim"),
        (lambda: reduce_rs.max(np.ones((2, 3)), dim=(0, 1)), TypeError, r"^max\(\) reduces one dim"),
        (lambda: reduce_rs.amax(np.zeros((2, 0, 3)), dim=(0, 1)), ValueError, "no elements"),
        (lambda: reduce_rs.sum("text"), TypeError, "str"),
        (lambda: reduce_rs.segment_sum(np.ones(5), [0, 3, 2]), ValueError, "must not decrease"),
        (lambda: reduce_rs.segment_sum(np.ones(5), [0, 6]), ValueError, "past the values"),
        (lambda: reduce_rs.segment_sum(np.ones(5), [-1, 2]), ValueError, "negative"),
        (lambda: reduce_rs.segment_sum(np.ones(5), []), ValueError, "at least one entry"),
        (lambda: reduce_rs.segment_sum(np.ones(5), [0.0, 2.0]), TypeError, "integers"),
        (lambda: reduce_rs.segment_sum(np.ones((2, 2)), [0, 2]), ValueError, "one-dimensional"),
    ],
)
def test_bad_input_is_an_exception_with_a_one_line_message(call_it, error, message):
    with pytest.raises(error, match=message) as caught:
        call_it()
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("zeros", [(-0.0, 0.0), (0.0, -0.0)])
def test_the_two_zeros_in_one_vector_of_a_long_array(dtype, zeros):
    """-0.0 < +0.0 where both zeros share a vector deep in a long array: the kernels find each
    group's extreme at once (f32: max.f32 over its lanes), and that must order the zeros too."""
    rng = np.random.default_rng(11)
    n = 1 << 16
    positive = 0 if not np.signbit(zeros[0]) else 1
    for at in [5, 4101, 40001]:
        below = (-rng.uniform(0.5, 1.0, n)).astype(dtype)
        below[at], below[at + 1] = zeros
        largest = reduce_rs.amax(below)
        assert largest == 0 and not np.signbit(largest), (at, largest)
        assert reduce_rs.argmax(below) == at + positive
        above = rng.uniform(0.5, 1.0, n).astype(dtype)
        above[at], above[at + 1] = zeros
        smallest = reduce_rs.amin(above)
        assert smallest == 0 and np.signbit(smallest), (at, smallest)
        assert reduce_rs.argmin(above) == at + 1 - positive
