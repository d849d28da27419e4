"""reduce_rs against PyTorch (and CuPy, where installed) in one process, on the same tensors.

    python python/bench/bench_torch.py [--quick] [--compile] [--csv FILE]

For every case: the result is checked against PyTorch's, then two figures for each library:
- **GPU µs**: CUDA events around one call, behind a GPU pre-roll (``torch.cuda._sleep``, about
  200 µs) long enough for the host to queue the call before the GPU reaches the start event,
  so that the events time the GPU only; inputs rotated over copies that together are three
  times the L2 cache, so that none is in it; the median of the runs.
- **wall µs/call**: 1000 calls back to back, then one synchronisation, over 1000: what a loop
  of calls costs, host overhead included (for small tensors the host is the bottleneck).
``--compile`` adds ``torch.compile`` of the same PyTorch call (after its warm-up compilation),
and of the reduce_rs call (one custom operator in the graph; the GPU time should be eager
reduce_rs's, the host's cost of a call the compiled function's).
"""

import argparse
import csv
import statistics
import sys
import time

import torch

import reduce_rs

DEVICE = "cuda"


PREROLL_CYCLES = 400_000


def copies_of(x, l2_bytes):
    """``x`` and enough clones of it that together they are three times the L2 cache."""
    count = max(1, min(64, -(-3 * l2_bytes // max(x.numel() * x.element_size(), 1))))
    return [x] + [x.clone() for _ in range(count - 1)]


def gpu_time_us(fn, inputs, runs):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for k in range(runs):
        x = inputs[k % len(inputs)]
        torch.cuda._sleep(PREROLL_CYCLES)
        start.record()
        fn(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return statistics.median(times)


def wall_us(fn, calls):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def offsets_for(segments, mean_len, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, 2 * mean_len + 1, (segments,), generator=g)
    offsets = torch.zeros(segments + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    return lengths.to(DEVICE), offsets.to(DEVICE)


def cases(quick):
    """(name, input, reduce_rs call, torch call, cupy call or None, compare)."""
    big = 1 << (24 if quick else 28)
    out = []

    def add(name, x, ours, theirs, cupy_fn=None, compare="close"):
        out.append((name, x, ours, theirs, cupy_fn, compare))

    def along(name, x, op, dim, cupy_op=None, compare="close"):
        """`op` along `dim`, by the same name in reduce_rs and PyTorch (CuPy's: `cupy_op`)."""
        add(
            name,
            x,
            lambda t: getattr(reduce_rs, op)(t, dim=dim),
            lambda t: getattr(torch, op)(t, dim=dim),
            lambda c: getattr(c, cupy_op or op)(axis=dim),
            compare,
        )

    f32 = lambda *shape: torch.randn(*shape, device=DEVICE)  # noqa: E731
    bf16 = lambda *shape: torch.randn(*shape, device=DEVICE, dtype=torch.bfloat16)  # noqa: E731

    add("sum 1024 f32", f32(1024), reduce_rs.sum, torch.sum, lambda c: c.sum())
    add("sum 2^20 f32", f32(1 << 20), reduce_rs.sum, torch.sum, lambda c: c.sum())
    add(f"sum 2^{big.bit_length() - 1} f32", f32(big), reduce_rs.sum, torch.sum, lambda c: c.sum())
    add("mean 2^24 f32", f32(1 << 24), reduce_rs.mean, torch.mean, lambda c: c.mean())
    add(
        "argmax 1×128256 bf16 dim=-1",
        bf16(1, 128256),
        lambda x: reduce_rs.argmax(x, dim=-1),
        lambda x: torch.argmax(x, dim=-1),
        None,
        "equal",
    )
    add(
        "argmax 64×128256 bf16 dim=-1",
        bf16(64, 128256),
        lambda x: reduce_rs.argmax(x, dim=-1),
        lambda x: torch.argmax(x, dim=-1),
        None,
        "equal",
    )
    add(
        "max 64×128256 bf16 dim=-1 (values, indices)",
        bf16(64, 128256),
        lambda x: reduce_rs.max(x, dim=-1),
        lambda x: torch.max(x, dim=-1),
        None,
        "pair",
    )
    along("argmax 8×128256 f32 dim=-1", f32(8, 128256), "argmax", -1, compare="equal")
    along("sum rows 65536×512 f32", f32(65536, 512), "sum", -1)
    if not quick:
        along("sum rows 8192×8192 f32", f32(8192, 8192), "sum", -1)
        along("sum rows 16×2^22 f32", f32(16, 1 << 22), "sum", -1)
        along("sum columns 8192×8192 f32", f32(8192, 8192), "sum", 0)
        along("sum columns 4096×4096 f32", f32(4096, 4096), "sum", 0)
        along("sum columns 2^20×8 f32", f32(1 << 20, 8), "sum", 0)
        along("amax rows 32768×4096 f32", f32(32768, 4096), "amax", -1, "max", compare="equal")
        along("argmax rows 32768×4096 f32", f32(32768, 4096), "argmax", -1, compare="equal")
        add(
            f"argmax 2^{big.bit_length() - 1} bf16",
            bf16(big),
            reduce_rs.argmax,
            torch.argmax,
            None,
            "equal",
        )
    lengths, offsets = offsets_for(100_000, 300)
    values = f32(int(offsets[-1]))
    add(
        "segment_sum 100000×~300 f32",
        values,
        lambda x: reduce_rs.segment_sum(x, offsets, validate=False),
        lambda x: torch.segment_reduce(x, "sum", lengths=lengths, unsafe=True),
        None,
    )
    return out


def same(compare, ours, theirs):
    if compare == "pair":
        return torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1])
    if compare == "equal":
        return torch.equal(ours, theirs)
    return torch.allclose(ours.double(), theirs.double(), rtol=1e-4, atol=1e-2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    parser.add_argument("--compile", action="store_true", help="add torch.compile")
    parser.add_argument("--csv", help="write the figures to this CSV file")
    parser.add_argument("--runs", type=int, default=0, help="GPU-timed runs per call")
    args = parser.parse_args()
    runs = args.runs or (10 if args.quick else 30)
    calls = 200 if args.quick else 1000
    try:
        import cupy
    except ImportError:
        cupy = None
    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, torch {torch.__version__}, reduce_rs {reduce_rs.__version__}"
          + (f", cupy {cupy.__version__}" if cupy else "") + f"; median of {runs}, wall over {calls} calls")
    header = ["case", "check", "reduce_rs GPU µs", "torch GPU µs", "torch/ours",
              "reduce_rs wall µs/call", "torch wall µs/call"]
    if cupy:
        header += ["cupy GPU µs", "cupy wall µs/call"]
    if args.compile:
        header += ["compile GPU µs", "compile wall µs/call", "reduce_rs compiled GPU µs",
                   "reduce_rs compiled wall µs/call"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    rows = []
    failed = False
    for name, x, ours, theirs, cupy_fn, compare in cases(args.quick):
        ok = same(compare, ours(x), theirs(x))
        failed |= not ok
        row = {"case": name, "check": "PASS" if ok else "FAIL"}
        inputs = copies_of(x, props.L2_cache_size)
        for label, fn in (("reduce_rs", ours), ("torch", theirs)):
            fn(x)
            row[f"{label} GPU µs"] = gpu_time_us(fn, inputs, runs)
            row[f"{label} wall µs/call"] = wall_us(lambda: fn(x), calls)
        row["torch/ours"] = row["torch GPU µs"] / row["reduce_rs GPU µs"]
        if cupy:
            if cupy_fn is not None:
                as_cupy = {id(t): cupy.from_dlpack(t) for t in inputs}
                fn = lambda t: cupy_fn(as_cupy[id(t)])  # noqa: E731
                fn(x)
                row["cupy GPU µs"] = gpu_time_us(fn, inputs, runs)
                row["cupy wall µs/call"] = wall_us(lambda: fn(x), calls)
            else:
                row["cupy GPU µs"] = row["cupy wall µs/call"] = float("nan")
        if args.compile:
            # A fresh Dynamo for each case, shapes static: the cases share functions (the lambda
            # of `along`; torch.sum, torch.mean and torch.argmax, which Dynamo wraps in one
            # function of its own), and Dynamo recompiles a function met again with another
            # shape for symbolic sizes (automatic dynamic shapes), whose kernels are not the
            # ones compiled for the shape (the 2^28 sum, compiled so after those of 1024 and
            # 2^20 elements, took 574.9 µs in call 77, eager PyTorch 347.7).
            torch._dynamo.reset()
            compiled = torch.compile(theirs, dynamic=False)
            compiled(x)
            row["compile GPU µs"] = gpu_time_us(compiled, inputs, runs)
            row["compile wall µs/call"] = wall_us(lambda: compiled(x), calls)
            ours_compiled = torch.compile(ours, dynamic=False)
            ok = same(compare, ours_compiled(x), theirs(x))
            failed |= not ok
            if not ok:
                row["check"] = "FAIL (reduce_rs compiled)"
            row["reduce_rs compiled GPU µs"] = gpu_time_us(ours_compiled, inputs, runs)
            row["reduce_rs compiled wall µs/call"] = wall_us(lambda: ours_compiled(x), calls)
        rows.append(row)
        cells = [f"{row[h]:.2f}" if isinstance(row[h], float) else str(row[h]) for h in header]
        print("| " + " | ".join(cells) + " |", flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=header)
            writer.writeheader()
            writer.writerows(rows)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
