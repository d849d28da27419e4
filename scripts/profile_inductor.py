"""Nsight Compute beside torch.compile: one call each of Inductor's kernels, ours and CuPy's on
the shapes where torch.compile was ahead in the Python table, after every one has warmed up
(compiled, autotuned), inside cudaProfilerStart/Stop. On a GPU machine, with the wheel
installed (`PYTHONPATH`):

    ncu --clock-control none --profile-from-start off --nvtx --section SpeedOfLight \
        --section Occupancy --section WarpStateStats python3 scripts/profile_inductor.py
"""
import sys

import torch

import reduce_rs

try:
    import cupy
except ImportError:
    cupy = None

# (label, shape, dim): rows of 2 KiB, square columns.
CASES = [
    ("rows_65536x512", (65536, 512), -1),
    ("cols_8192", (8192, 8192), 0),
    ("cols_4096", (4096, 4096), 0),
]


def calls_of(x, dim):
    """(who, call) for each library's sum of `x` along `dim`."""
    compiled = torch.compile(lambda t: torch.sum(t, dim=dim), dynamic=False)
    calls = [("inductor", lambda: compiled(x)), ("ours", lambda: reduce_rs.sum(x, dim=dim))]
    if cupy is not None:
        c = cupy.from_dlpack(x)
        calls.append(("cupy", lambda: c.sum(axis=dim)))
    return calls


plans = []
for label, shape, dim in CASES:
    calls = calls_of(torch.randn(*shape, device="cuda"), dim)
    for _ in range(3):
        for _, call in calls:
            call()
    torch.cuda.synchronize()
    plans.append((label, calls))
torch.cuda.cudart().cudaProfilerStart()
for label, calls in plans:
    for who, call in calls:
        torch.cuda.nvtx.range_push(f"{label}:{who}")
        call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
torch.cuda.cudart().cudaProfilerStop()
print("done", file=sys.stderr)
