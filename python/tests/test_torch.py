"""reduce_rs on PyTorch CUDA tensors, against PyTorch's own results (skipped without a GPU).

Run on a GPU machine: ``pytest python/tests``. Each difference from PyTorch the package
documents (float32 sums of 16-bit floats, wrapping integer sums, ``-0.0 < +0.0``, strided arg
results, empty segments) is pinned here as well as in test_numpy.py.
"""

import math

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for PyTorch", allow_module_level=True)

import reduce_rs  # noqa: E402

DEVICE = "cuda"
TORCH_DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64"]
FLOATS = {"float32", "float64", "float16", "bfloat16"}


def make(shape, dtype, seed=0):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    if dtype in FLOATS:
        return (torch.randn(shape, generator=g, device=DEVICE) * 10).to(getattr(torch, dtype))
    info = torch.iinfo(getattr(torch, dtype))
    return torch.randint(info.min, info.max, shape, generator=g, device=DEVICE, dtype=getattr(torch, dtype))


def expected_sum(x, dim):
    if x.is_floating_point():
        return torch.sum(x.double(), dim=dim) if dim is not None else torch.sum(x.double())
    wide = torch.sum(x, dim=dim) if dim is not None else torch.sum(x)  # int64, wraps
    return wide.to(x.dtype)


def check_close(got, want, x, dim, result_dtype):
    eps = torch.finfo(getattr(torch, result_dtype)).eps
    magnitude = torch.sum(x.double().abs(), dim=dim) if dim is not None else torch.sum(x.double().abs())
    assert torch.all((got.double() - want.double()).abs() <= 8 * eps * magnitude + 1e-30), (got, want)


def result_type(op, dtype):
    if op == "sum":
        return "float32" if dtype in ("float16", "bfloat16") else dtype
    if op == "mean":
        return {"float64": "float64"}.get(dtype, "float32") if dtype in FLOATS else "float64"
    if op in ("argmax", "argmin"):
        return "int64"
    return dtype


SHAPES = [
    ((1,), None),
    ((1000,), None),
    (((1 << 20) + 3,), None),
    ((64, 128256), -1),
    ((1, 128256), -1),
    ((8, 100000), 1),
    ((65536, 512), -1),
    ((16, 1 << 18), -1),
    ((4096, 64), 0),
    ((513, 1000), 0),
    ((6, 40, 7), 1),
    ((33, 17, 5), -1),
]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "argmax", "argmin"])
@pytest.mark.parametrize("shape,dim", SHAPES, ids=[f"{s}-{d}" for s, d in SHAPES])
def test_against_pytorch(op, dtype, shape, dim):
    x = make(shape, dtype, seed=hash((op, dtype, shape)) % 1000)
    got = getattr(reduce_rs, op)(x, dim=dim)
    assert isinstance(got, torch.Tensor) and got.device == x.device
    assert str(got.dtype).endswith(result_type(op, dtype)), got.dtype
    if op == "sum":
        want = expected_sum(x, dim)
        if x.is_floating_point():
            check_close(got, want, x, dim, result_type(op, dtype))
        else:
            assert torch.equal(got, want)
    elif op == "mean":
        want = torch.mean(x.double(), dim=dim) if dim is not None else torch.mean(x.double())
        count = x.numel() if dim is None else x.shape[dim]
        magnitude = torch.sum(x.double().abs(), dim=dim) if dim is not None else torch.sum(x.double().abs())
        eps = torch.finfo(got.dtype).eps
        assert torch.all((got.double() - want).abs() <= 8 * eps * magnitude / count + 1e-30)
    else:
        torch_op = getattr(torch, op)
        want = torch_op(x, dim=dim) if dim is not None else torch_op(x)
        assert got.shape == want.shape
        assert torch.equal(got, want), (got, want)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int32"])
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("dims", [(1, 2), (0, 1), (0, 2), (-1, 0), (0, 1, 2), ()])
@pytest.mark.parametrize("keepdim", [False, True])
def test_several_dims_as_pytorch(op, dtype, dims, keepdim):
    x = make((24, 33, 40), dtype, seed=sum(dims) + 7 * len(dims))
    got = getattr(reduce_rs, op)(x, dim=dims, keepdim=keepdim)
    if op in ("sum", "mean"):
        want = getattr(torch, op)(x.double(), dim=dims, keepdim=keepdim)
        eps = torch.finfo(got.dtype).eps if got.is_floating_point() else 0
        magnitude = torch.sum(x.double().abs(), dim=dims, keepdim=keepdim)
        count = x.numel() // max(want.numel(), 1) if op == "mean" else 1
        assert got.shape == want.shape
        if got.is_floating_point():
            # Means of integers too (float64 here; PyTorch refuses them, so its float64 mean
            # of the same values is the reference).
            assert torch.all((got.double() - want).abs() <= 8 * eps * magnitude / count + 1e-30)
        else:
            assert torch.equal(got, torch.sum(x, dim=dims, keepdim=keepdim).to(x.dtype))
    else:
        want = getattr(torch, op)(x, dim=dims, keepdim=keepdim)
        assert got.shape == want.shape and torch.equal(got, want), (got, want)


def test_max_with_a_dim_matches_torch_max():
    x = make((64, 128256), "bfloat16")
    values, indices = reduce_rs.max(x, dim=-1)
    want = torch.max(x, dim=-1)
    assert torch.equal(values, want.values) and torch.equal(indices, want.indices)
    values, indices = reduce_rs.min(x, dim=0, keepdim=True)
    want = torch.min(x, dim=0, keepdim=True)
    assert torch.equal(values, want.values) and torch.equal(indices, want.indices)


def test_arg_results_are_strided_views_of_one_buffer():
    ids = reduce_rs.argmax(make((4, 300), "float32"), dim=1)
    assert ids.dtype == torch.int64 and not ids.is_contiguous() and ids.stride() == (2,)
    assert ids.contiguous().is_contiguous()


def test_sums_of_16_bit_floats_are_float32_unlike_pytorch():
    x = torch.full((3000,), 0.1, device=DEVICE, dtype=torch.float16)
    got = reduce_rs.sum(x)
    assert got.dtype == torch.float32 and torch.sum(x).dtype == torch.float16
    assert abs(got.item() - 3000 * float(torch.tensor(0.1, dtype=torch.float16))) < 1e-2


def test_integer_sums_wrap_unlike_pytorch():
    x = torch.tensor([2**31 - 1, 1], device=DEVICE, dtype=torch.int32)
    assert reduce_rs.sum(x).item() == -(2**31) and torch.sum(x).item() == 2**31


def test_signed_zeros_unlike_pytorch():
    x = torch.tensor([-0.0, 0.0], device=DEVICE)
    assert reduce_rs.argmax(x).item() == 1 and torch.argmax(x).item() == 0


def test_nan_and_ties_as_pytorch():
    x = torch.tensor([1.0, float("nan"), 9.0, float("nan")], device=DEVICE)
    assert reduce_rs.argmax(x).item() == torch.argmax(x).item() == 1
    assert math.isnan(reduce_rs.amax(x).item())
    y = torch.tensor([[3, 9, 9], [1, 1, 0]], device=DEVICE, dtype=torch.int32)
    assert torch.equal(reduce_rs.argmax(y, dim=1), torch.argmax(y, dim=1))


def test_empty_inputs_as_pytorch():
    empty = torch.empty(0, device=DEVICE)
    assert reduce_rs.sum(empty).item() == 0 and math.isnan(reduce_rs.mean(empty).item())
    with pytest.raises(ValueError):
        reduce_rs.argmax(empty)
    with pytest.raises((RuntimeError, IndexError)):
        torch.argmax(empty)


# Streams, out=, layouts -------------------------------------------------------------------------


def test_runs_on_the_current_stream_without_waiting():
    side = torch.cuda.Stream()
    x = make((1 << 22,), "float32")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        # The side stream is busy for a while; the reduction queues behind the write below.
        torch.cuda._sleep(50_000_000)
        y = x * 2
        total = reduce_rs.sum(y)
        ids = reduce_rs.argmax(y.view(1024, -1), dim=1)
    assert not side.query(), "the call waited for the GPU"
    side.synchronize()
    check_close(total, torch.sum(y.double()), y, None, "float32")
    assert torch.equal(ids, torch.argmax(y.view(1024, -1), dim=1))


def test_out_is_written_in_place():
    x = make((128, 1000), "float32")
    out = torch.empty(128, device=DEVICE)
    assert reduce_rs.amax(x, dim=1, out=out) is out
    assert torch.equal(out, torch.amax(x, dim=1))
    with pytest.raises(ValueError, match="out="):
        reduce_rs.amax(x, dim=1, out=torch.empty(127, device=DEVICE))


def test_non_contiguous_and_middle_dims():
    x = make((40, 50, 6), "float64")
    check_close(reduce_rs.sum(x, dim=1), torch.sum(x, dim=1), x, 1, "float64")
    t = x.transpose(0, 2)
    assert torch.equal(reduce_rs.argmax(t, dim=-1), torch.argmax(t, dim=-1))


def test_cpu_tensors_are_refused_with_a_hint():
    with pytest.raises(ValueError, match=r"\.cuda\(\)"):
        reduce_rs.sum(torch.ones(3))


def test_unsupported_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="int8"):
        reduce_rs.sum(torch.ones(3, device=DEVICE, dtype=torch.int8))


# Segments ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("validate", [True, False])
def test_segments_with_offsets_on_the_gpu(validate):
    lengths = torch.randint(0, 600, (1000,), generator=torch.Generator().manual_seed(3))
    lengths[::7] = 0
    offsets = torch.zeros(1001, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    values = make((int(offsets[-1]),), "float32")
    got = reduce_rs.segment_sum(values, offsets.to(DEVICE), validate=validate)
    want = torch.segment_reduce(values, "sum", lengths=lengths.to(DEVICE), unsafe=True)
    assert torch.allclose(got.double(), want.double(), rtol=1e-5, atol=1e-3)
    ids = reduce_rs.segment_argmax(values, offsets)
    for i in (1, 2, 8, 500):
        start, end = int(offsets[i]), int(offsets[i + 1])
        want_id = -1 if start == end else int(torch.argmax(values[start:end]))
        assert ids[i].item() == want_id


def test_bad_offsets_on_the_gpu_are_refused_when_validated():
    values = make((10,), "float32")
    with pytest.raises(ValueError, match="must not decrease"):
        reduce_rs.segment_sum(values, torch.tensor([0, 5, 3], device=DEVICE))
    with pytest.raises(ValueError, match="past the values"):
        reduce_rs.segment_sum(values, torch.tensor([0, 11], device=DEVICE))


# Reproducible sums ------------------------------------------------------------------------------


def test_reproducible_sums_are_order_independent_on_the_gpu():
    x = make((1 << 22,), "float32")
    perm = x[torch.randperm(x.numel(), device=DEVICE)]
    a, b = reduce_rs.sum(x, reproducible=True), reduce_rs.sum(perm, reproducible=True)
    assert a.item() == b.item() and a.view(torch.int32).item() == b.view(torch.int32).item()


# CUDA graphs (the stretch goal: where LLM samplers run) -----------------------------------------


def test_captured_in_a_cuda_graph():
    logits = make((64, 128256), "bfloat16")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # warm up on the capture stream: scratch memory exists
        reduce_rs.argmax(logits, dim=-1)
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        ids = reduce_rs.argmax(logits, dim=-1)
    for seed in (1, 2):
        logits.copy_(make((64, 128256), "bfloat16", seed=seed))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(ids, torch.argmax(logits, dim=-1))
