"""Nsight Compute beside torch.compile: one call each of Inductor's kernels, ours and CuPy's on
the shapes where torch.compile was ahead in the Python table, after every one has warmed up
(compiled, autotuned), inside cudaProfilerStart/Stop. On a GPU machine, with the wheel
installed (`PYTHONPATH`):

    ncu --clock-control none --profile-from-start off --nvtx --section SpeedOfLight \
        --section Occupancy --section WarpStateStats python3 scripts/profile_inductor.py

`--code DIR` writes the code Inductor generated for each case to DIR/<case>.py (its Triton
kernels, their block sizes and launch grids): how it tiles what it is faster on.
"""
import argparse
import os
import sys

import torch

import reduce_rs

try:
    import cupy
except ImportError:
    cupy = None

# (label, shape, dim, operation): where torch.compile's static-shape kernels were ahead of
# ours in the Python bench of call 83 (H100): rows of 2 KiB and 32 KiB, square columns, and
# whole sums and means of 4 MiB and 64 MiB.
CASES = [
    ("rows_65536x512", (65536, 512), -1, "sum"),
    ("rows_8192x8192", (8192, 8192), -1, "sum"),
    ("cols_8192", (8192, 8192), 0, "sum"),
    ("cols_4096", (4096, 4096), 0, "sum"),
    ("whole_2^20", (1 << 20,), None, "sum"),
    ("mean_2^24", (1 << 24,), None, "mean"),
]


def calls_of(x, dim, op, code_dir):
    """(who, call) for each library's `op` of `x` along `dim` (None: all of it)."""
    theirs, ours = getattr(torch, op), getattr(reduce_rs, op)
    along = {} if dim is None else {"dim": dim}
    compiled = torch.compile(lambda t: theirs(t, **along), dynamic=False)
    calls = [("inductor", lambda: compiled(x)), ("ours", lambda: ours(x, **along))]
    if code_dir is not None:
        from torch._inductor.utils import run_and_get_code

        torch._dynamo.reset()
        _, sources = run_and_get_code(compiled, x)
        return calls, sources
    if cupy is not None:
        c = cupy.from_dlpack(x)
        calls.append(("cupy", lambda: getattr(c, op)(axis=dim)))
    return calls, []


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--code", metavar="DIR", help="write Inductor's code for each case to DIR")
code_dir = parser.parse_args().code
plans = []
for label, shape, dim, op in CASES:
    calls, sources = calls_of(torch.randn(*shape, device="cuda"), dim, op, code_dir)
    if code_dir is not None:
        os.makedirs(code_dir, exist_ok=True)
        with open(os.path.join(code_dir, f"{label}.py"), "w") as file:
            file.write("\n\n# ---- next graph ----\n\n".join(sources))
        print(f"{label}: {len(sources)} graph(s) of code", file=sys.stderr)
        continue
    for _ in range(3):
        for _, call in calls:
            call()
    torch.cuda.synchronize()
    plans.append((label, calls))
if code_dir is not None:
    sys.exit(0)
torch.cuda.cudart().cudaProfilerStart()
for label, calls in plans:
    for who, call in calls:
        torch.cuda.nvtx.range_push(f"{label}:{who}")
        call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
torch.cuda.cudart().cudaProfilerStop()
print("done", file=sys.stderr)
