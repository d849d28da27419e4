"""reduce_rs inside ``torch.compile`` (skipped without PyTorch 2.4 or later).

Two halves. Without a GPU (anywhere PyTorch is installed): the path Dynamo traces, run on CPU
tensors by the simulator — CPU kernels for ``reduce_rs::reduce`` and ``reduce_rs::segments``
registered here, the CUDA check lifted — through every backend with ``fullgraph=True``,
against the same reductions in PyTorch: the layouts, the result shapes, the arg operators'
views, ``out=``, segments, dynamic shapes and the errors. On a GPU: the operator's own CUDA kernel in Inductor's graphs and in CUDA
graphs (``mode="reduce-overhead"``), against eager reduce_rs and PyTorch.
"""

import pytest

torch = pytest.importorskip("torch")
from torch._dynamo import testing as dynamo_testing  # noqa: E402
if not hasattr(torch.library, "register_fake"):
    pytest.skip("PyTorch before 2.4 has no torch.library.register_fake", allow_module_level=True)

import reduce_rs  # noqa: E402
from reduce_rs import _native  # noqa: E402
from reduce_rs._codes import DTYPE_CODE, OP_CODE, SEGMENTS  # noqa: E402

reduce_rs._torch_ready()  # registers the operator (as the first call on a tensor would)
import reduce_rs._compile as traced  # noqa: E402

BACKENDS = ["eager", "aot_eager", "inductor"]
CUDA = torch.cuda.is_available()


def on_the_simulator(op, x, layout, rows, cols, results, dtype, reproducible, offsets=None):
    """What the CUDA kernels write, for CPU tensors, by the native module's host path: one
    value per result, or the arg operators' (index, value) pairs."""
    arg = op in ("argmin", "argmax")
    name = str(x.dtype).rsplit(".", 1)[-1]
    # The host path writes the segments that are not empty (as the eager call's buffers,
    # these start as what an empty segment gives).
    values = torch.full((results,), reduce_rs._empty_value(op, name), dtype=x.dtype if arg else dtype)
    indices = torch.full((results,), -1, dtype=torch.int64)
    _native.reduce_host(
        OP_CODE[op], DTYPE_CODE[name], layout, x.data_ptr(), x.numel(), values.data_ptr(),
        indices.data_ptr() if arg else 0, rows, cols,
        0 if offsets is None else offsets.data_ptr(), 0 if offsets is None else results,
        reproducible,
    )
    if not arg:
        return values
    pairs = torch.zeros((results, 2), dtype=torch.int64)
    pairs[:, 0] = indices
    pairs.view(x.dtype)[:, 8 // x.element_size()] = values
    return pairs


@torch.library.register_kernel(traced.OPERATOR, "cpu")
def _reduce_on_cpu(x, op, layout, rows, cols, results, dtype, reproducible):
    return on_the_simulator(op, x, layout, rows, cols, results, dtype, reproducible)


@torch.library.register_kernel(traced.SEGMENTS_OPERATOR, "cpu")
def _segments_on_cpu(values, offsets, op, dtype, reproducible, validate):
    if validate:
        reduce_rs._checks.check_offsets(offsets.numpy(), values.numel())
    count = offsets.numel() - 1
    return on_the_simulator(op, values, SEGMENTS, 0, 0, count, dtype, reproducible, offsets)


@pytest.fixture
def on_cpu(monkeypatch):
    """CPU tensors through the traced path (the eager path still refuses them)."""
    monkeypatch.setattr(traced, "check_cuda_tensor", lambda x: None)
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def compiled(fn, backend, **options):
    return torch.compile(fn, backend=backend, fullgraph=True, **options)


def sampler(logits):
    """What an LLM's sampler asks of a batch of logits."""
    values, indices = reduce_rs.max(logits, dim=-1)
    return reduce_rs.argmax(logits, dim=-1), values, indices


def assert_same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    assert torch.equal(got, want), (got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_arg_operators_in_one_graph(on_cpu, backend, dtype):
    logits = torch.randn(16, 1000).to(dtype)
    ids, values, indices = compiled(sampler, backend)(logits)
    assert_same(ids, torch.argmax(logits, dim=-1))
    assert_same(values, torch.max(logits, dim=-1).values)
    assert_same(indices, torch.max(logits, dim=-1).indices)
    # The same strided views of (index, value) pairs as the eager call gives.
    assert ids.stride() == (2,) and values.stride() == (16 // logits.element_size(),)


CASES = [
    # (function, dim, keepdim, shape): whole, rows, columns, dims moved last, a tuple of dims.
    (reduce_rs.sum, None, False, (7, 9)),
    (reduce_rs.sum, -1, False, (7, 9)),
    (reduce_rs.sum, 0, True, (7, 9)),
    (reduce_rs.mean, 1, False, (4, 5, 6)),
    (reduce_rs.mean, (0, 2), True, (4, 5, 6)),
    (reduce_rs.amax, (1, 2), False, (4, 5, 6)),
    (reduce_rs.amin, None, True, (4, 5, 6)),
    (reduce_rs.argmin, 1, True, (4, 5, 6)),
    (reduce_rs.argmax, None, False, (4, 5, 6)),
]
TORCH_OF = {
    reduce_rs.sum: torch.sum,
    reduce_rs.mean: torch.mean,
    reduce_rs.amax: torch.amax,
    reduce_rs.amin: torch.amin,
    reduce_rs.argmin: torch.argmin,
    reduce_rs.argmax: torch.argmax,
}


def torch_call(function, x, dim, keepdim):
    ours = TORCH_OF[function]
    if dim is None:
        if function in (reduce_rs.amax, reduce_rs.amin):
            return ours(x, dim=tuple(range(x.dim())), keepdim=keepdim)
        return ours(x, keepdim=keepdim) if function in (reduce_rs.argmax, reduce_rs.argmin) else ours(x)
    return ours(x, dim=dim, keepdim=keepdim)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].__name__}-{c[1]}-{c[2]}")
def test_every_layout_traced(on_cpu, backend, case):
    function, dim, keepdim, shape = case
    x = torch.randn(shape)
    got = compiled(lambda t: function(t, dim, keepdim), backend)(x)
    want = torch_call(function, x, dim, keepdim)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_and_reproducible_traced(on_cpu, backend):
    x = torch.randn(33, 17)

    def program(t, into):
        return reduce_rs.sum(t, dim=-1, out=into), reduce_rs.sum(t, reproducible=True)

    into = torch.empty(33)
    rows, whole = compiled(program, backend)(x, into)
    torch.testing.assert_close(into, x.sum(-1), rtol=1e-5, atol=1e-5)
    assert rows.data_ptr() == into.data_ptr()
    # The reproducible sum's bits are the eager call's (NumPy, the simulator).
    assert whole.item() == float(reduce_rs.sum(x.numpy(), reproducible=True))


@pytest.mark.parametrize("backend", BACKENDS)
def test_segments_traced(on_cpu, backend):
    values = torch.randn(1000)
    offsets = torch.tensor([0, 10, 10, 400, 1000])

    def program(v, o):
        return (
            reduce_rs.segment_sum(v, o),
            reduce_rs.segment_max(v, o),
            reduce_rs.segment_argmax(v, o),
            reduce_rs.segment_mean(v, o, validate=False),
        )

    sums, maxima, ids, means = compiled(program, backend)(values, offsets)
    pieces = [values[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    torch.testing.assert_close(sums, torch.stack([p.sum() for p in pieces]), rtol=1e-5, atol=1e-5)
    assert torch.equal(maxima[[0, 2, 3]], torch.stack([pieces[k].max() for k in (0, 2, 3)]))
    assert maxima[1] == -torch.inf and ids[1] == -1 and torch.isnan(means[1])
    assert ids.tolist() == [int(pieces[0].argmax()), -1, int(pieces[2].argmax()), int(pieces[3].argmax())]


def test_segments_offsets_checked_when_the_graph_runs(on_cpu):
    # Python's check (`check_offsets`), before the simulator's own ("segment offsets …").
    program = compiled(lambda v, o: reduce_rs.segment_sum(v, o), "aot_eager")
    with pytest.raises(ValueError, match="^offsets must not decrease"):
        program(torch.randn(10), torch.tensor([0, 5, 3, 10]))
    # Offsets from the host are checked with validate=False too, as the eager call checks them.
    program = compiled(lambda v, o: reduce_rs.segment_sum(v, o, validate=False), "aot_eager")
    with pytest.raises(ValueError, match="^the last segment ends at 11, past the values' 10"):
        program(torch.randn(10), torch.tensor([0, 5, 11]))
    with pytest.raises(Exception, match="offsets of a segment reduction are a tensor"):
        compiled(lambda v: reduce_rs.segment_sum(v, [0, 5, 10]), "eager")(torch.randn(10))


def test_parameters_and_gradients_as_eager(on_cpu):
    """An nn.Parameter (a subclass of torch.Tensor) is traced too, and as the eager call
    the reduction passes no gradient on: the graph is built and differentiated without it."""
    layer = torch.nn.Linear(20, 30)

    def program(x):
        y = layer(x)
        return reduce_rs.amax(layer.weight, dim=-1), reduce_rs.sum(y, dim=0), (y**2).sum()

    x = torch.randn(8, 20)
    for backend in ("eager", "aot_eager", "inductor"):
        torch._dynamo.reset()
        peak, sums, loss = compiled(program, backend)(x)
        assert not peak.requires_grad and not sums.requires_grad
        torch.testing.assert_close(peak, layer.weight.detach().amax(-1))
        torch.testing.assert_close(sums, layer(x).detach().sum(0), rtol=1e-5, atol=1e-5)
        layer.zero_grad()
        loss.backward()
        assert layer.weight.grad is not None


def test_a_segment_call_first_in_a_fresh_process_is_traced():
    """reduce_rs imported before torch, and a segment reduction its first call, inside a
    compiled function: Dynamo traces it to the operator (here, without a CPU kernel for it,
    the graph's run says so), where it used to read the tensor's address."""
    import subprocess
    import sys

    program = (
        "import reduce_rs, reduce_rs._checks as checks\n"
        "checks.check_cuda_tensor = lambda x: None\n"
        "import torch\n"
        "f = torch.compile(lambda v, o: reduce_rs.segment_sum(v, o), fullgraph=True, backend='eager')\n"
        "try:\n"
        "    f(torch.randn(10), torch.tensor([0, 4, 10]))\n"
        "except NotImplementedError as e:\n"
        "    assert \"'reduce_rs::segments'\" in str(e) and \"'CPU' backend\" in str(e), e\n"
        "else:\n"
        "    raise AssertionError('ran without a CPU kernel')\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True, timeout=300)


def test_dynamic_shapes_one_graph(on_cpu):
    counter = dynamo_testing.CompileCounterWithBackend("inductor")
    function = compiled(lambda t: (reduce_rs.sum(t, dim=0), reduce_rs.argmax(t, dim=-1)), counter, dynamic=True)
    for rows in (5, 9, 130):
        x = torch.randn(rows, 11)
        sums, ids = function(x)
        torch.testing.assert_close(sums, x.sum(0), rtol=1e-5, atol=1e-5)
        assert_same(ids, x.argmax(-1))
    assert counter.frame_count == 1


def test_what_eager_refuses_is_refused_traced(on_cpu):
    # With fullgraph, Dynamo says that the traced code raised (without it, it runs the eager
    # call, whose error the caller sees: the GPU test below).
    with pytest.raises(Exception, match="no elements to reduce"):
        compiled(lambda t: reduce_rs.amax(t, dim=0), "eager")(torch.empty(0, 3))
    with pytest.raises(Exception, match="appears multiple times"):
        compiled(lambda t: reduce_rs.sum(t, dim=(0, 0)), "eager")(torch.ones(2, 2))


def test_the_traced_path_refuses_cpu_tensors():
    torch._dynamo.reset()
    with pytest.raises(ValueError, match="reduces CUDA tensors"):
        torch.compile(lambda t: reduce_rs.sum(t))(torch.ones(3))


@pytest.mark.parametrize("grad", [False, True])
def test_opcheck(grad):
    """PyTorch's own checks of an operator (schema, fake kernel, dispatch, autograd
    registration), with inputs that do and do not ask for gradients."""
    x = torch.randn(4, 5, requires_grad=grad)
    torch.library.opcheck(torch.ops.reduce_rs.reduce.default, (x, "argmax", 1, 4, 5, 4, torch.int64, False))
    v = torch.randn(10, requires_grad=grad)
    offsets = torch.tensor([0, 4, 10])
    torch.library.opcheck(torch.ops.reduce_rs.segments.default, (v, offsets, "sum", torch.float32, False, True))


def test_the_operators_are_not_differentiable():
    """Called directly too, as the eager call: no grad_fn (PyTorch's fallback would have given
    the result one that silently drops the reduction's gradient)."""
    x = torch.randn(4, 5, requires_grad=True)
    assert not torch.ops.reduce_rs.reduce(x, "sum", 0, 1, 20, 1, torch.float32, False).requires_grad
    offsets = torch.tensor([0, 4, 20])
    assert not torch.ops.reduce_rs.segments(x.view(-1), offsets, "max", torch.float32, False, True).requires_grad


def test_a_direct_call_with_a_dtype_without_kernels_says_so():
    with pytest.raises(TypeError, match="^reduce_rs has no kernels for dtype torch.int8"):
        traced.reduce(torch.ones(4, dtype=torch.int8), "sum", 0, 1, 4, 1, torch.int64, False)
    with pytest.raises(TypeError, match="^reduce_rs has no kernels for dtype torch.int16"):
        traced.segments(torch.ones(4, dtype=torch.int16), torch.tensor([0, 4]), "max", torch.int16, False, True)


def test_the_operators_are_pt2_compliant():
    for operator in (torch.ops.reduce_rs.reduce.default, torch.ops.reduce_rs.segments.default):
        assert torch.Tag.pt2_compliant_tag in operator.tags


def test_a_reload_replaces_the_operators(monkeypatch):
    """``importlib.reload`` (IPython's autoreload) defines the namespace again."""
    import importlib

    importlib.reload(traced)
    monkeypatch.setattr(traced, "check_cuda_tensor", lambda x: None)  # after: reload rebinds it
    torch._dynamo.reset()
    x = torch.randn(3, 7)
    assert_same(compiled(lambda t: reduce_rs.argmax(t, dim=-1), "eager")(x), x.argmax(-1))


# On the GPU ---------------------------------------------------------------------------------

gpu = pytest.mark.skipif(not CUDA, reason="no CUDA device for PyTorch")


@gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_sampler_in_inductor_on_the_gpu(dtype):
    torch._dynamo.reset()
    logits = torch.randn(64, 128256, device="cuda").to(dtype)
    ids, values, indices = compiled(sampler, "inductor")(logits)
    assert_same(ids, reduce_rs.argmax(logits, dim=-1))
    assert_same(ids, torch.argmax(logits, dim=-1))
    assert_same(values, torch.max(logits, dim=-1).values)
    assert_same(indices, torch.max(logits, dim=-1).indices)


@gpu
def test_cuda_graphs_replay_new_inputs():
    """mode="reduce-overhead" captures the kernels in a CUDA graph: each replay reduces
    what the input holds then."""
    torch._dynamo.reset()

    def step(logits, scale):
        return reduce_rs.argmax(logits * scale, dim=-1), reduce_rs.sum(logits, dim=0)

    function = torch.compile(step, mode="reduce-overhead", fullgraph=True)
    for seed in range(5):
        torch.manual_seed(seed)
        logits = torch.randn(8, 32000, device="cuda", dtype=torch.bfloat16)
        scale = torch.rand(8, 1, device="cuda", dtype=torch.bfloat16) + 0.5
        ids, sums = function(logits, scale)
        assert_same(ids, torch.argmax(logits * scale, dim=-1))
        assert_same(sums, reduce_rs.sum(logits, dim=0))


@gpu
def test_first_call_inside_a_compiled_function():
    """reduce_rs imported before torch (as isort orders them) and first called in a graph:
    Dynamo traces the registration of the operator too."""
    import subprocess
    import sys

    program = (
        "import reduce_rs\n"
        "import torch\n"
        "f = torch.compile(lambda t: reduce_rs.argmax(t, dim=-1), fullgraph=True)\n"
        "x = torch.randn(16, 5000, device='cuda')\n"
        "assert torch.equal(f(x), torch.argmax(x, dim=-1))\n"
        "assert reduce_rs._reduce_traced is not None\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True)
    program = (
        "import reduce_rs\n"
        "import torch\n"
        "f = torch.compile(lambda v, o: reduce_rs.segment_max(v, o), fullgraph=True)\n"
        "v, o = torch.randn(1000, device='cuda'), torch.tensor([0, 10, 10, 1000], device='cuda')\n"
        "assert torch.equal(f(v, o), reduce_rs.segment_max(v, o))\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True)


@gpu
def test_errors_of_eager_calls_through_compile():
    torch._dynamo.reset()
    with pytest.raises(ValueError, match="no elements to reduce"):
        torch.compile(lambda t: reduce_rs.argmax(t, dim=0))(torch.empty(0, 3, device="cuda"))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.compile(lambda t: reduce_rs.sum(t, dim=2) + 1)(torch.ones(3, 3, device="cuda"))


@gpu
@pytest.mark.parametrize("validate", [True, False])
def test_segments_in_inductor_on_the_gpu(validate):
    torch._dynamo.reset()
    values = torch.randn(100_000, device="cuda")
    lengths = torch.randint(0, 600, (300,))
    offsets = torch.zeros(301, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    offsets = offsets.cuda()
    values = values[: int(offsets[-1])]

    def program(v, o):
        return reduce_rs.segment_sum(v * 2, o, validate=validate) + 1, reduce_rs.segment_argmax(v, o, validate=validate)

    sums, ids = compiled(program, "inductor")(values, offsets)
    assert torch.equal(sums, reduce_rs.segment_sum(values * 2, offsets) + 1)
    assert torch.equal(ids, reduce_rs.segment_argmax(values, offsets))
    if validate:
        bad = offsets.clone()
        bad[5] = bad[4] - 1
        with pytest.raises(ValueError, match="^offsets must not decrease"):
            compiled(program, "inductor")(values, bad)


@gpu
def test_reproducible_bits_traced_on_the_gpu():
    torch._dynamo.reset()
    x = torch.randn(1000, 333, device="cuda")
    function = compiled(lambda t: (reduce_rs.sum(t, reproducible=True), reduce_rs.mean(t, dim=-1, reproducible=True)), "inductor")
    whole, rows = function(x)
    assert torch.equal(whole, reduce_rs.sum(x, reproducible=True))
    assert torch.equal(rows, reduce_rs.mean(x, dim=-1, reproducible=True))
