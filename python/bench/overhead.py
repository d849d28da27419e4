"""Where the host time of one call goes: each piece of a reduce_rs call timed on its own, over
many calls back to back (no synchronisation inside the loop; the GPU keeps up with these
small launches, so the time is the host's), beside PyTorch's own call.

    python python/bench/overhead.py [--calls 20000] [--compiled]

``--compiled``: the same for calls inside ``torch.compile`` (Inductor, static shapes): the
graph's own cost (a one-kernel graph of PyTorch's), reduce_rs's operator there and alone, and
the operator registered as ``torch.library.custom_op`` instead (as reduce_rs once did), then
a profile of the compiled calls' host time.
"""

import argparse
import cProfile
import pstats
import time

import torch

import reduce_rs
from reduce_rs import _native


def per_call_us(fn, calls):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--compiled", action="store_true", help="calls inside torch.compile")
    args = parser.parse_args()
    if args.compiled:
        return compiled(args.calls)
    calls = args.calls
    x = torch.randn(1024, device="cuda")
    rows = torch.randn(64, 128256, device="cuda", dtype=torch.bfloat16)
    out = torch.empty((), device="cuda")
    pairs = torch.empty((64, 2), dtype=torch.int64, device="cuda")
    device = x.get_device()
    cuda = x.device
    stream = torch._C._cuda_getCurrentRawStream(device)
    pieces = [
        ("torch.sum(x) [1024 f32]", lambda: torch.sum(x)),
        ("reduce_rs.sum(x)", lambda: reduce_rs.sum(x)),
        ("reduce_rs.sum(x, out=out)", lambda: reduce_rs.sum(x, out=out)),
        ("_native.reduce_cuda (whole, preallocated)",
         lambda: _native.reduce_cuda(0, 0, 0, x.data_ptr(), 1024, out.data_ptr(), device, stream, 0, 0, 0, 0, False)),
        ("torch.empty((), f32, device=x.device)", lambda: torch.empty((), dtype=torch.float32, device=x.device)),
        ("torch.empty((), f32, device=<cached device>)", lambda: torch.empty((), dtype=torch.float32, device=cuda)),
        ("torch.empty((), f32, device=0)", lambda: torch.empty((), dtype=torch.float32, device=0)),
        ("x.new_empty(())", lambda: x.new_empty(())),
        ("x.new_empty((), dtype=f32)", lambda: x.new_empty((), dtype=torch.float32)),
        ("torch.empty((), f32) [CPU, reference]", lambda: torch.empty((), dtype=torch.float32)),
        ("x.add_(0) [a launch through PyTorch, no allocation]", lambda: x.add_(0)),
        ("x.data_ptr() + x.get_device() + raw stream",
         lambda: (x.data_ptr(), x.get_device(), torch._C._cuda_getCurrentRawStream(device))),
        ("torch.argmax(rows, -1) [64×128256 bf16]", lambda: torch.argmax(rows, dim=-1)),
        ("reduce_rs.argmax(rows, dim=-1)", lambda: reduce_rs.argmax(rows, dim=-1)),
        ("_native.reduce_cuda (rows argmax, preallocated)",
         lambda: _native.reduce_cuda(5, 3, 1, rows.data_ptr(), rows.numel(), pairs.data_ptr(), device, stream, 64, 128256, 0, 0, False)),
        ("pairs[:, 0].view((64,))", lambda: pairs[:, 0].view((64,))),
        ("pairs[:, 0]", lambda: pairs[:, 0]),
        ("pairs.select(1, 0)", lambda: pairs.select(1, 0)),
        ("pairs.as_strided((64,), (2,))", lambda: pairs.as_strided((64,), (2,))),
        ("torch.max(rows, -1)", lambda: torch.max(rows, dim=-1)),
        ("reduce_rs.max(rows, dim=-1)", lambda: reduce_rs.max(rows, dim=-1)),
    ]
    print(f"# {torch.cuda.get_device_name()}, host µs per call over {calls} calls")
    for name, fn in pieces:
        print(f"{per_call_us(fn, calls):8.2f}  {name}", flush=True)


def compiled(calls):
    """Host µs per call of one reduction inside a compiled function, and what of it is whose."""
    from reduce_rs import _compile

    @torch.library.custom_op("reduce_rs_overhead::reduce", mutates_args=(), device_types="cuda")
    def as_custom_op(x: torch.Tensor, op: str, layout: int, rows: int, cols: int, results: int,
                     dtype: torch.dtype, reproducible: bool) -> torch.Tensor:
        return _compile.reduce(x, op, layout, rows, cols, results, dtype, reproducible)

    as_custom_op.register_fake(_compile._reduce_fake)
    x = torch.randn(1024, device="cuda")
    operator = torch.ops.reduce_rs.reduce
    args = ("sum", 0, 1, 1024, 1, torch.float32, False)

    def static(fn):
        """``fn`` compiled (static shapes, one graph), called on ``x``."""
        compiled = torch.compile(fn, dynamic=False, fullgraph=True)
        return lambda: compiled(x)

    pieces = [
        ("torch.sum(x) [1024 f32]", lambda: torch.sum(x)),
        ("reduce_rs.sum(x)", lambda: reduce_rs.sum(x)),
        ("torch.ops.reduce_rs.reduce(x, …) [Library.define/impl]", lambda: operator(x, *args)),
        ("the same as torch.library.custom_op", lambda: as_custom_op(x, *args)),
        ("compiled: x + 1 [Inductor's floor: a one-kernel graph]", static(lambda t: t + 1)),
        ("compiled: torch.sum(x)", static(lambda t: torch.sum(t))),
        ("compiled: reduce_rs.sum(x)", static(lambda t: reduce_rs.sum(t))),
        ("compiled: torch.ops.reduce_rs.reduce(x, …)", static(lambda t: operator(t, *args))),
        ("compiled: the custom_op", static(lambda t: as_custom_op(t, *args))),
    ]
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, host µs per call "
          f"over {calls} calls")
    for name, fn in pieces:
        print(f"{per_call_us(fn, calls):8.2f}  {name}", flush=True)
    fn = dict(pieces)["compiled: reduce_rs.sum(x)"]  # compiled and warmed up above
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        fn()
    profile.disable()
    print(f"\n# compiled reduce_rs.sum(x): the host's time by function, {calls} calls")
    pstats.Stats(profile).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
