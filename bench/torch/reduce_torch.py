#!/usr/bin/env python3
"""reduce_torch.py - PyTorch on the reductions of bench/cuda/reduce_shapes.cu, timed the same way.

Same data (element i is a hash of i, bench/cuda/reduce_shapes.cu's generator), same cases and
shapes, same method: the GPU is kept busy before the start event by torch.cuda._sleep (calibrated
to --preroll-us), each run reads the next of several input copies adding up to at least 256 MiB
(so L2 holds none of them), exactly two CUDA events around the one call, the median of --repeat
runs after --warmup, and a CPU check of every run's result. Prints a table and writes CSV with the
columns of reduce_shapes (impl is "torch").

--error-sizes also measures the relative error of the float32 x.sum() against the float64 sum
of the same float32 data (x.double().sum() on the GPU).

Run `python3 bench/torch/reduce_torch.py --help` for the options; bench/torch/README.md says
how the Rust bench calls it.
"""

import argparse
import math
import os
import statistics
import sys
import time

torch = None  # imported by require_torch(), so that --help works without PyTorch

MIB = 1 << 20
ROTATE_TOTAL_BYTES = 256 * MIB  # the input copies add up to at least this
DTYPES = ["f32", "f64", "f16", "bf16", "i64", "u64"]
CASE_OPS = {
    "whole": ["sum", "mean", "max", "argmax", "argmin"],
    "rows": ["sum", "mean", "max", "max_idx", "argmax"],
    "columns": ["sum", "mean", "max", "argmax"],
    "segments": ["sum", "max"],
}
# What each op calls (x: the input; for rows and columns the rows x cols view).
OP_CALLS = {
    ("whole", "sum"): "x.sum()",
    ("whole", "mean"): "x.mean()",
    ("whole", "max"): "x.amax()",
    ("whole", "argmax"): "x.argmax()",
    ("whole", "argmin"): "x.argmin()",
    ("rows", "sum"): "x.sum(dim=1)",
    ("rows", "mean"): "x.mean(dim=1)",
    ("rows", "max"): "x.amax(dim=1)",
    ("rows", "max_idx"): "x.max(dim=1) (values and indices)",
    ("rows", "argmax"): "x.argmax(dim=1)",
    ("columns", "sum"): "x.sum(dim=0)",
    ("columns", "mean"): "x.mean(dim=0)",
    ("columns", "max"): "x.amax(dim=0)",
    ("columns", "argmax"): "x.argmax(dim=0)",
    ("segments", "sum"): "torch.segment_reduce(x, 'sum', offsets=offsets, unsafe=True)",
    ("segments", "max"): "torch.segment_reduce(x, 'max', offsets=offsets, unsafe=True)",
}


def die(message):
    print(f"{os.path.basename(sys.argv[0])}: {message}", file=sys.stderr)
    sys.exit(1)


def require_torch():
    """Imports torch and checks for a CUDA device; one clear line and exit 1 otherwise."""
    global torch
    if torch is not None:
        return torch
    try:
        import torch as _torch
    except ImportError as e:
        die(f"PyTorch is not installed or does not import ({e})")
    if not _torch.cuda.is_available():
        die(f"PyTorch {_torch.__version__} sees no CUDA device (torch.version.cuda = {_torch.version.cuda})")
    torch = _torch
    return torch


# ---------------------------------------------------------------------------------------------
# Inputs: the generator of reduce_shapes.cu (splitmix64 of the index), on int64 tensors.
# ---------------------------------------------------------------------------------------------

MASK64 = (1 << 64) - 1


def as_s64(v):
    """A 64-bit pattern as a signed Python int (what an int64 tensor holds)."""
    v &= MASK64
    return v - (1 << 64) if v >> 63 else v


def splitmix64_int(x):
    """The reference splitmix64 on Python ints."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def srl(x, k):
    """Logical right shift of int64 values (>> is arithmetic on int64)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def hash_bits(i):
    """splitmix64 of each element of an int64 array (torch or numpy), as int64 bit patterns.
    Uses only + * ^ >> &, which wrap modulo 2^64 on int64 arrays."""
    x = i + as_s64(0x9E3779B97F4A7C15)
    x = (x ^ srl(x, 30)) * as_s64(0xBF58476D1CE4E5B9)
    x = (x ^ srl(x, 27)) * as_s64(0x94D049BB133111EB)
    return x ^ srl(x, 31)


def torch_dtype(name):
    return {
        "f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
        "bf16": torch.bfloat16, "i64": torch.int64, "u64": torch.uint64,
    }[name]


def is_float(name):
    return name in ("f32", "f64", "f16", "bf16")


def values_from_bits(h, name):
    """Element values from hash bits, exactly as input_value<T> in reduce_shapes.cu."""
    if name == "f32":
        return (srl(h, 40) - (1 << 23)).to(torch.float32) * 2.0 ** -23
    if name == "f64":
        return srl(h, 11).to(torch.float64) * 2.0 ** -52 - 1.0
    if name == "f16":
        return ((srl(h, 53) - 1024).to(torch.float32) * 2.0 ** -10).to(torch.float16)
    if name == "bf16":
        return ((srl(h, 56) - 128).to(torch.float32) * 2.0 ** -7).to(torch.bfloat16)
    if name == "i64":
        return h
    return h.view(torch.uint64)


def value_py(i, name):
    """Element i as a Python number, from the Python-int hash (for the self-check)."""
    h = splitmix64_int(i)
    if name == "f32":
        return ((h >> 40) - (1 << 23)) * 2.0 ** -23
    if name == "f64":
        return (h >> 11) * 2.0 ** -52 - 1.0
    if name == "f16":
        return ((h >> 53) - 1024) * 2.0 ** -10
    if name == "bf16":
        return ((h >> 56) - 128) * 2.0 ** -7
    if name == "i64":
        return as_s64(h)
    return h


def as_int_list(t):
    """Integer tensor -> list of Python ints of the same 64-bit patterns (u64 via int64)."""
    t = t.cpu()
    if t.dtype == torch.uint64:
        t = t.view(torch.int64)
    return t.tolist()


def fill_inputs(dst, name, device, offset=0, chunk=1 << 26):
    """dst[i] = element offset + i, generated on the GPU in chunks (bounded temporaries)."""
    n = dst.numel()
    for start in range(0, n, chunk):
        count = min(chunk, n - start)
        idx = torch.arange(offset + start, offset + start + count, dtype=torch.int64, device=device)
        dst[start:start + count] = values_from_bits(hash_bits(idx), name)


def self_check_generator(device):
    """The tensor generator against the Python-int one, for every dtype, at a few indices
    (catches an int64 operation that does not wrap as assumed)."""
    idx_list = [0, 1, 2, 3, 12345, 1000003, (1 << 28) - 1, (1 << 31) - 2]
    idx = torch.tensor(idx_list, dtype=torch.int64, device=device)
    bits = hash_bits(idx)
    for name in DTYPES:
        got = values_from_bits(bits, name)
        got = as_int_list(got) if not is_float(name) else got.double().cpu().tolist()
        want = [value_py(i, name) for i in idx_list]
        if not is_float(name):
            want = [as_s64(w) for w in want]
        if got != want:
            die(f"input generator self-check failed for {name}: {got} != {want}")


def segment_offsets(segments, mean_len, seed):
    """Ragged segment offsets, as segment_offsets() in reduce_shapes.cu: segment s is empty
    when (u & 15) == 0, else 1 + (u >> 4) % hi long, u = splitmix64(splitmix64(seed) + s),
    hi = max(1, llround(2 * mean_len * 16 / 15) - 1). Returns a CPU int64 tensor of S + 1."""
    base = splitmix64_int(seed)
    hi = max(1, math.floor(2.0 * mean_len * 16.0 / 15.0 + 0.5) - 1)
    s = torch.arange(segments, dtype=torch.int64)
    u = hash_bits(s + as_s64(base))
    lengths = torch.where((u & 15) == 0, torch.zeros_like(u), 1 + srl(u, 4) % hi)
    # the Python-int version for a few segments (the same numbers, by another route)
    for k in sorted({0, 1, segments // 2, segments - 1}):
        uk = splitmix64_int((base + k) & MASK64)
        lk = 0 if (uk & 15) == 0 else 1 + (uk >> 4) % hi
        if lengths[k].item() != lk:
            die(f"segment length self-check failed at {k}: {lengths[k].item()} != {lk}")
    offsets = torch.zeros(segments + 1, dtype=torch.int64)
    torch.cumsum(lengths, 0, out=offsets[1:])
    if offsets[-1].item() > (1 << 31) - 1:
        die("segments: more than 2^31 - 1 elements in all")
    return offsets


# ---------------------------------------------------------------------------------------------
# Layouts and inputs on the device
# ---------------------------------------------------------------------------------------------

class Layout:
    def __init__(self, case, rows=1, cols=0, n=0, offsets=None):
        self.case, self.rows, self.cols, self.n, self.offsets = case, rows, cols, n, offsets

    def outputs(self):
        return {"whole": 1, "rows": self.rows, "columns": self.cols,
                "segments": (len(self.offsets) - 1) if self.offsets is not None else 0}[self.case]

    def csv_rows_cols(self):
        if self.case == "segments":
            return self.outputs(), 0
        return self.rows, self.cols


class Inputs:
    """Copies of the input, 256-byte aligned, adding up to at least 256 MiB; next() gives the
    next copy (one counter for every op), shaped for the case."""

    def __init__(self, layout, name, nan_at, device):
        self.layout = layout
        dt = torch_dtype(name)
        esize = torch.empty((), dtype=dt).element_size()
        n = layout.n
        self.stride = -(-max(n * esize, 1) // 256) * 256 // esize
        stride_bytes = self.stride * esize
        copies = max(1, -(-ROTATE_TOTAL_BYTES // stride_bytes))
        free, _total = torch.cuda.mem_get_info(device)
        budget = free // 10 * 4  # leave room for outputs, temporaries and the CPU-check copies
        if copies * stride_bytes > budget:
            copies = max(1, budget // stride_bytes)
        self.copies = copies
        self.buf = torch.empty(copies * self.stride, dtype=dt, device=device)
        first = self.buf[:n]
        fill_inputs(first, name, device)
        self.planted = 0
        for i in nan_at:
            if i < n:
                first[i] = float("nan")
                self.planted += 1
        grid = self.buf.view(copies, self.stride)
        filled = 1
        while filled < copies:  # double the filled copies each step
            count = min(filled, copies - filled)
            grid[filled:filled + count].copy_(grid[:count])
            filled += count
        torch.cuda.synchronize(device)
        self.next_copy = 0

    def view(self, k):
        x = self.buf[k * self.stride:k * self.stride + self.layout.n]
        if self.layout.case in ("rows", "columns"):
            x = x.view(self.layout.rows, self.layout.cols)
        return x

    def next(self):
        x = self.view(self.next_copy)
        self.next_copy = (self.next_copy + 1) % self.copies
        return x

    def total_bytes(self):
        return self.copies * self.stride * self.buf.element_size()


# ---------------------------------------------------------------------------------------------
# CPU references: per output, in float64 (floats) or exact 64-bit patterns (integers)
# ---------------------------------------------------------------------------------------------

class Reference:
    pass


def first_true(mask, length):
    """Per row of a 2-D bool tensor, the first True position (length when none). Rows are taken
    in blocks of about 2^24 elements to bound the temporaries."""
    rows = mask.shape[0]
    out = torch.empty(rows, dtype=torch.int64)
    if rows == 1:
        nz = torch.nonzero(mask[0])
        out[0] = int(nz[0, 0]) if nz.numel() else length
        return out
    pos = torch.arange(length, dtype=torch.int64)
    step = max(1, (1 << 24) // max(length, 1))
    for r0 in range(0, rows, step):
        out[r0:r0 + step] = torch.where(mask[r0:r0 + step], pos, length).amin(dim=1)
    return out


def reference(x_cpu, layout, name):
    """x_cpu: the flat input on the CPU. Per output j: len, sum (float64, or the sum mod 2^64 as
    a Python int), abs_sum, max/min over the non-NaN elements with their first positions,
    has_nan and the first NaN's position (len when none)."""
    if layout.case == "segments":
        return reference_segments(x_cpu, layout, name)
    r = Reference()
    if layout.case == "whole":
        m = x_cpu.view(1, -1)
    elif layout.case == "rows":
        m = x_cpu.view(layout.rows, layout.cols)
    else:  # columns: output j reduces column j
        m = x_cpu.view(layout.rows, layout.cols).t()
    outputs, length = m.shape
    r.len = torch.full((outputs,), length, dtype=torch.int64)
    if is_float(name):
        nan = torch.isnan(m)
        r.has_nan = nan.any(dim=1)
        if bool(r.has_nan.any()):
            r.first_nan = first_true(nan, length)
            clean = m.masked_fill(nan, 0)
            lo, hi = m.masked_fill(nan, -math.inf), m.masked_fill(nan, math.inf)
        else:
            r.first_nan = torch.full((outputs,), length, dtype=torch.int64)
            clean = lo = hi = m
        del nan
        r.sum = clean.sum(dim=1, dtype=torch.float64)  # accumulated in float64 (inputs are exact)
        r.abs_sum = clean.abs().sum(dim=1, dtype=torch.float64)
        mx, mn = lo.amax(dim=1, keepdim=True), hi.amin(dim=1, keepdim=True)
        r.amax = first_true(lo == mx, length)
        r.amin = first_true(hi == mn, length)
        r.mx, r.mn = mx.view(-1).double(), mn.view(-1).double()
    else:
        bits = m.view(torch.int64) if m.dtype == torch.uint64 else m
        # unsigned order = the signed order of the bits with the top bit flipped
        v = bits ^ as_s64(1 << 63) if name == "u64" else bits
        r.has_nan = torch.zeros(outputs, dtype=torch.bool)
        r.first_nan = torch.full((outputs,), length, dtype=torch.int64)
        lo_sum = (bits & 0xFFFFFFFF).sum(dim=1).tolist()  # exact: < 2^31 * 2^32
        hi_sum = (bits >> 32).sum(dim=1).tolist()         # exact: |.| < 2^31 * 2^31
        r.sum = [((h << 32) + l) & MASK64 for h, l in zip(hi_sum, lo_sum)]
        r.abs_sum = None
        mx, mn = v.amax(dim=1, keepdim=True), v.amin(dim=1, keepdim=True)
        r.amax = first_true(v == mx, length)
        r.amin = first_true(v == mn, length)
        if name == "u64":
            mx, mn = mx ^ as_s64(1 << 63), mn ^ as_s64(1 << 63)
        r.mx = [w & MASK64 for w in mx.view(-1).tolist()]
        r.mn = [w & MASK64 for w in mn.view(-1).tolist()]
    return r


def reference_segments(x_cpu, layout, name):
    """Segment sums and maxima (torch.segment_reduce takes floats only); each segment's
    elements are added in order, in float64."""
    r = Reference()
    offsets = layout.offsets
    lengths = offsets[1:] - offsets[:-1]
    segs = len(lengths)
    seg = torch.repeat_interleave(torch.arange(segs, dtype=torch.int64), lengths)
    d = x_cpu.double()
    nan = torch.isnan(d)
    r.len = lengths
    r.has_nan = torch.zeros(segs, dtype=torch.int64).index_add_(0, seg, nan.to(torch.int64)) > 0
    pos = torch.arange(len(d), dtype=torch.int64) - offsets[:-1][seg]
    none = 1 << 62
    r.first_nan = torch.full((segs,), none, dtype=torch.int64).scatter_reduce_(
        0, seg, torch.where(nan, pos, none), "amin")
    clean = d.masked_fill(nan, 0)
    r.sum = torch.zeros(segs, dtype=torch.float64).index_add_(0, seg, clean)
    r.abs_sum = torch.zeros(segs, dtype=torch.float64).index_add_(0, seg, clean.abs())
    lo = d.masked_fill(nan, -math.inf)
    r.mx = torch.full((segs,), -math.inf, dtype=torch.float64).scatter_reduce_(0, seg, lo, "amax")
    r.mn = None
    r.amax = torch.full((segs,), none, dtype=torch.int64).scatter_reduce_(
        0, seg, torch.where(lo == r.mx[seg], pos, none), "amin")
    r.amin = None
    return r


# ---------------------------------------------------------------------------------------------
# The timed calls and their checks
# ---------------------------------------------------------------------------------------------

def make_call(layout, op, offsets_dev):
    case = layout.case
    if case == "whole":
        return {"sum": lambda x: x.sum(), "mean": lambda x: x.mean(), "max": lambda x: x.amax(),
                "argmax": lambda x: x.argmax(), "argmin": lambda x: x.argmin()}[op]
    if case == "rows":
        return {"sum": lambda x: x.sum(dim=1), "mean": lambda x: x.mean(dim=1),
                "max": lambda x: x.amax(dim=1), "max_idx": lambda x: x.max(dim=1),
                "argmax": lambda x: x.argmax(dim=1)}[op]
    if case == "columns":
        return {"sum": lambda x: x.sum(dim=0), "mean": lambda x: x.mean(dim=0),
                "max": lambda x: x.amax(dim=0), "argmax": lambda x: x.argmax(dim=0)}[op]
    return lambda x: torch.segment_reduce(x, op, offsets=offsets_dev, axis=0, unsafe=True)


EPS = {"f32": 2.0 ** -23, "f64": 2.0 ** -52, "f16": 2.0 ** -10, "bf16": 2.0 ** -7}


def sum_tolerance(layout, op, name, ref):
    """|got - ref| allowed per output: chain * eps(accumulator) * sum|x|, chain = the output's
    element count (PyTorch's order is not known), plus the reference's own error, plus the
    rounding of the result to the element type, eps(T) * |result| (f16/bf16: PyTorch
    accumulates in float32, then rounds). torch.segment_reduce accumulates in the element type."""
    chain = ref.len.double()
    if name in ("f16", "bf16"):
        acc_eps = EPS[name] if layout.case == "segments" else EPS["f32"]
        out_eps = EPS[name]
    else:
        acc_eps, out_eps = EPS[name], 0.0
    acc_tol = (chain * acc_eps + 4 * 2.0 ** -53) * ref.abs_sum
    tol = acc_tol + out_eps * (ref.sum.abs() + acc_tol)  # the final rounding, relative to the result
    if op == "mean":  # the division's rounding is within the chain * eps term
        tol = tol / ref.len.clamp(min=1).double()
    return tol


class Verdict:
    LABELS = ("nan-propagated", "nan-propagated-not-first", "nan-ignored")

    def __init__(self):
        self.bad_runs = 0
        self.first_bad = None
        self.labels = set()
        self.max_err = None

    def result(self):
        if self.bad_runs:
            return "FAIL"
        if not self.labels:
            return "PASS"
        return next(iter(self.labels)) if len(self.labels) == 1 else "nan-mixed"


def check_run(out, layout, op, name, ref, x_flat_cpu, verdict, run):
    """Classifies every output of one run as reduce_shapes.cu does (PASS, FAIL, nan-* labels)."""
    bad = []  # (output, message)
    labels = set()
    case = layout.case
    if op == "max_idx":
        values, indices = out.values, out.indices
    elif op in ("argmax", "argmin"):
        values, indices = None, out
    else:
        values, indices = out, None
    values = values.reshape(-1) if values is not None else None
    indices = indices.reshape(-1).cpu() if indices is not None else None
    has_nan = ref.has_nan
    empty = ref.len == 0

    if op in ("sum", "mean"):
        if is_float(name):
            g = values.double().cpu()
            want = ref.sum / ref.len.clamp(min=1).double() if op == "mean" else ref.sum
            err = (g - want).abs()
            tol = sum_tolerance(layout, op, name, ref)
            ok = err <= tol  # NaN: not ok (mean is offered for whole, rows and columns, never empty)
            prop = has_nan & torch.isnan(g)
            for j in torch.nonzero(~ok & ~has_nan).flatten()[:1].tolist():
                bad.append((j, f"{op} {g[j].item()!r}, expected {want[j].item()!r} within {tol[j].item():.3g}"))
            for j in torch.nonzero(has_nan & ~prop).flatten()[:1].tolist():
                bad.append((j, f"{op} {g[j].item()!r} from elements holding a NaN"))
            if prop.any():
                labels.add("nan-propagated")
            okc = ok & ~has_nan & (ref.abs_sum > 0)
            if okc.any() and op == "sum":
                e = (err[okc] / ref.abs_sum[okc]).max().item()
                verdict.max_err = e if verdict.max_err is None else max(verdict.max_err, e)
        else:  # integer sums mod 2^64 (mean of integers is not offered by PyTorch)
            got = [w & MASK64 for w in as_int_list(values)]
            for j, (a, b) in enumerate(zip(got, ref.sum)):
                if a != b:
                    bad.append((j, f"sum {a}, expected {b} (mod 2^64)"))
                    break
    if op in ("max", "max_idx"):
        if is_float(name):
            g = values.double().cpu()
            want = torch.where(empty, torch.full((), -math.inf, dtype=torch.float64), ref.mx)
            same = g == want
            prop = has_nan & torch.isnan(g)
            ign = has_nan & same
            for j in torch.nonzero(~has_nan & ~same).flatten()[:1].tolist():
                bad.append((j, f"max {g[j].item()!r}, expected {want[j].item()!r}"))
            for j in torch.nonzero(has_nan & ~prop & ~ign).flatten()[:1].tolist():
                bad.append((j, f"max {g[j].item()!r} from elements holding a NaN"))
            if prop.any():
                labels.add("nan-propagated")
            if ign.any():
                labels.add("nan-ignored")
        else:
            got = [w & MASK64 for w in as_int_list(values)]
            for j, (a, b) in enumerate(zip(got, ref.mx)):
                if a != b:
                    bad.append((j, f"max {a}, expected {b}"))
                    break
    if indices is not None:
        is_min = op == "argmin"
        want = ref.amin if is_min else ref.amax
        idx = indices.to(torch.int64)
        if is_float(name):
            first = idx == ref.first_nan
            same = idx == want
            later = torch.zeros_like(first)
            cand = has_nan & ~first & ~same
            if cand.any():  # a NaN, but not the first one?
                for j in torch.nonzero(cand).flatten().tolist():
                    p = int(idx[j])
                    if 0 <= p < int(ref.len[j]) and math.isnan(x_flat_cpu[flat_index(layout, j, p)].item()):
                        later[j] = True
            for j in torch.nonzero(~has_nan & ~same).flatten()[:1].tolist():
                bad.append((j, f"{op} index {int(idx[j])}, expected {int(want[j])} (first occurrence)"))
            for j in torch.nonzero(has_nan & ~first & ~later & ~same).flatten()[:1].tolist():
                bad.append((j, f"{op} index {int(idx[j])} from elements holding a NaN"))
            if (has_nan & first).any():
                labels.add("nan-propagated")
            if (has_nan & later).any():
                labels.add("nan-propagated-not-first")
            if (has_nan & ~first & ~later & same).any():
                labels.add("nan-ignored")
        else:
            for j in torch.nonzero(idx != want).flatten()[:1].tolist():
                bad.append((j, f"{op} index {int(idx[j])}, expected {int(want[j])} (first occurrence)"))
    if bad:
        verdict.bad_runs += 1
        if verdict.first_bad is None:
            j, msg = bad[0]
            verdict.first_bad = f"run {run}, output {j}: {msg}"
    verdict.labels |= labels


def flat_index(layout, j, p):
    if layout.case == "whole":
        return p
    if layout.case == "rows":
        return j * layout.cols + p
    if layout.case == "columns":
        return p * layout.cols + j
    return int(layout.offsets[j]) + p


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------

def calibrate_sleep(preroll_ns):
    """Cycles of torch.cuda._sleep that spin about preroll_ns on this GPU now."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles = 10_000_000
    torch.cuda._sleep(cycles)  # warm up the clocks
    samples = []
    for _ in range(5):
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    per_ns = cycles / (statistics.median(samples) * 1e6)
    return max(1, int(preroll_ns * per_ns)), per_ns


def time_runs(inputs, call, after, warmup, repeat, sleep_cycles, preroll_ns):
    """warmup + repeat runs, each on the next input copy: _sleep, start event, the call, end
    event (exactly two events). Returns (median ms, late) where late counts the timed runs whose
    host-side enqueue took longer than the pre-roll."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times, late = [], 0
    for run in range(warmup + repeat):
        x = inputs.next()
        t0 = time.perf_counter_ns()
        torch.cuda._sleep(sleep_cycles)
        start.record()
        out = call(x)
        end.record()
        t1 = time.perf_counter_ns()
        end.synchronize()
        after(out, run)
        if run >= warmup:
            times.append(start.elapsed_time(end))
            if t1 - t0 >= preroll_ns:
                late += 1
    return statistics.median(times), late


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

CSV_HEADER = "impl,case,op,dtype,rows,cols,n,ms,gbps,check"


class Output:
    def __init__(self, path, append):
        self.f = None
        self.any_fail = False
        if path:
            need_header = not (append and os.path.exists(path) and os.path.getsize(path) > 0)
            self.f = open(path, "a" if append else "w")
            if need_header:
                self.f.write(CSV_HEADER + "\n")

    def close(self):
        if self.f:
            self.f.close()


def print_table_header():
    print(f"{'impl':<5} {'case':<8} {'op':<7} {'dtype':<5} {'rows':>10} {'cols':>10} {'n':>12} "
          f"{'ms':>11} {'GB/s':>9} {'late':>4} {'check':<14} max|err|/sum|x|")


def emit(out, layout, op, name, ms, gbps, late, check, max_err):
    rows, cols = layout.csv_rows_cols()
    err = f"{max_err:.2e}" if max_err is not None else "-"
    print(f"{'torch':<5} {layout.case:<8} {op:<7} {name:<5} {rows:>10} {cols:>10} {layout.n:>12} "
          f"{ms:>11.4f} {gbps:>9.1f} {late:>4} {check:<14} {err}")
    if out.f:
        out.f.write(f"torch,{layout.case},{op},{name},{rows},{cols},{layout.n},{ms:.6f},{gbps:.3f},{check}\n")
        out.f.flush()
    if check == "FAIL":
        out.any_fail = True


def run_layout(layout, name, args, device, sleep_cycles, out):
    dt = torch_dtype(name)
    inputs = Inputs(layout, name, args.nan_at, device)
    x_flat_cpu = inputs.buf[:layout.n].cpu()
    ref = reference(x_flat_cpu, layout, name)
    offsets_dev = layout.offsets.to(device) if layout.case == "segments" else None
    esize = inputs.buf.element_size()

    desc = {"whole": f"n = {layout.n}",
            "rows": f"{layout.rows} rows x {layout.cols} cols (row-major)",
            "columns": f"{layout.rows} rows x {layout.cols} cols (row-major)"}.get(layout.case)
    if layout.case == "segments":
        lengths = layout.offsets[1:] - layout.offsets[:-1]
        desc = (f"{layout.outputs()} segments ({int((lengths == 0).sum())} empty), mean length "
                f"{args.mean_len:g} asked, {layout.n / layout.outputs():.2f} got, seed {args.seed}, n = {layout.n}")
    warn = " [WARNING: under 256 MiB, GPU memory short]" if inputs.total_bytes() < ROTATE_TOTAL_BYTES else ""
    planted = f"; {inputs.planted} NaN planted" if inputs.planted else ""
    print(f"\n# {layout.case} {name}: {desc}, {layout.n * esize / MIB:.3f} MiB; rotated among "
          f"{inputs.copies} copies ({inputs.total_bytes() / MIB:.1f} MiB){warn}{planted}")
    print_table_header()

    ops = args.op or CASE_OPS[layout.case]
    for op in ops:
        if layout.case == "segments" and not hasattr(torch, "segment_reduce"):
            print(f"torch {layout.case:<8} {op:<7} {name:<5} unsupported: this PyTorch has no torch.segment_reduce")
            continue
        call = make_call(layout, op, offsets_dev)
        try:  # does this PyTorch offer the op for this dtype at all?
            call(inputs.view(0))
            torch.cuda.synchronize(device)
        except (RuntimeError, NotImplementedError, TypeError) as e:
            first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            print(f"torch {layout.case:<8} {op:<7} {name:<5} unsupported: {first_line}")
            continue
        verdict = Verdict()

        def after(result, run, verdict=verdict, op=op):
            check_run(result, layout, op, name, ref, x_flat_cpu, verdict, run)

        ms, late = time_runs(inputs, call, after, args.warmup, args.repeat, sleep_cycles, args.preroll_ns)
        gbps = layout.n * esize / (ms * 1e6)
        check = verdict.result()
        emit(out, layout, op, name, ms, gbps, late, check, verdict.max_err)
        if check == "FAIL":
            print(f"FAIL torch {layout.case} {op} {name} n={layout.n}: {verdict.bad_runs} of "
                  f"{args.warmup + args.repeat} runs wrong; first: {verdict.first_bad}", file=sys.stderr)
        if late:
            print(f"WARNING torch {layout.case} {op} {name}: {late} of {args.repeat} timed runs took the CPU "
                  f"longer than the {args.preroll_ns / 1000:.0f} us pre-roll to enqueue (raise --preroll-us)",
                  file=sys.stderr)
    del inputs
    torch.cuda.empty_cache()


def measure_errors(sizes, device, csv_path):
    """Relative error of the float32 x.sum() against the float64 sum of the same float32 data."""
    print("\n# f32 sum accuracy: x.sum() (float32) against x.double().sum() (float64, on the GPU), same data")
    print(f"{'n':>12} {'sum_f32':>22} {'sum_f64':>24} {'|err|/|sum|':>12} {'|err|/sum|x|':>13} {'err/(eps*sum|x|)':>17}")
    rows = []
    for n in sizes:
        x = torch.empty(n, dtype=torch.float32, device=device)
        fill_inputs(x, "f32", device)
        s32 = x.sum().item()
        xd = x.double()
        s64 = xd.sum().item()
        abs_sum = xd.abs().sum().item()
        del xd, x
        torch.cuda.empty_cache()
        err = abs(s32 - s64)
        rel = err / abs(s64) if s64 != 0 else math.inf
        rel_abs = err / abs_sum if abs_sum else 0.0
        in_eps = rel_abs / EPS["f32"]
        print(f"{n:>12} {s32:>22.9g} {s64:>24.17g} {rel:>12.3e} {rel_abs:>13.3e} {in_eps:>17.3f}")
        rows.append((n, s32, s64, rel, rel_abs))
    if csv_path:
        with open(csv_path, "w") as f:
            f.write("impl,dtype,n,sum,exact,rel_err,err_over_abs_sum\n")
            for n, s32, s64, rel, rel_abs in rows:
                f.write(f"torch,f32,{n},{s32!r},{s64!r},{rel:.6e},{rel_abs:.6e}\n")


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

def parse_size(s, what="size"):
    s = s.strip()
    if s.startswith("2^"):
        k = s[2:]
        if not k.isdigit() or int(k) > 31:
            raise argparse.ArgumentTypeError(f"bad {what} '{s}'")
        return 1 << int(k)
    if not s.isdigit():
        raise argparse.ArgumentTypeError(f"bad {what} '{s}'")
    return int(s)


def parse_sizes(arg):
    sizes = []
    for item in arg.split(","):
        if ".." in item:
            lo, hi = (parse_size(p) for p in item.split("..", 1))
            if lo & (lo - 1) or hi & (hi - 1) or lo > hi or lo < 1:
                raise argparse.ArgumentTypeError(f"bad range '{item}': want 2^a..2^b with a <= b")
            n = lo
            while n <= hi:
                sizes.append(n)
                n *= 2
        else:
            sizes.append(parse_size(item))
    for n in sizes:
        if not 1 <= n <= (1 << 31) - 1:
            raise argparse.ArgumentTypeError(f"size {n} out of range: 1 <= n <= 2^31-1")
    return sizes


def parse_shapes(arg):
    shapes = []
    for item in arg.split(","):
        if "x" not in item:
            raise argparse.ArgumentTypeError(f"bad shape '{item}': want RxC, e.g. 8192x8192")
        r, c = item.split("x", 1)
        shapes.append((parse_size(r, "rows"), parse_size(c, "cols")))
    return shapes


def parse_list(choices, what):
    def parse(arg):
        items = arg.split(",")
        for it in items:
            if it not in choices:
                raise argparse.ArgumentTypeError(f"unknown {what} '{it}' ({', '.join(choices)})")
        return items
    return parse


class Parser(argparse.ArgumentParser):
    """Usage errors exit 1 with one line (exit 2 means a failed check, as in reduce_shapes)."""

    def error(self, message):
        die(message)


def parse_args(argv):
    all_ops = sorted({op for ops in CASE_OPS.values() for op in ops})
    p = Parser(
        description="PyTorch on the reductions of bench/cuda/reduce_shapes.cu: same data, same timing "
                    "method (GPU pre-roll, rotated inputs, two CUDA events, median, CPU check of every run).",
        epilog="ops per case: " + "; ".join(f"{c}: {','.join(o)}" for c, o in CASE_OPS.items()))
    p.add_argument("--case", choices=list(CASE_OPS), help="whole, rows, columns or segments "
                   "(may be left out with --error-sizes)")
    p.add_argument("--op", "--ops", type=parse_list(all_ops, "op"), help="comma list (default: all of the case's ops)")
    p.add_argument("--dtype", "--dtypes", type=parse_list(DTYPES, "dtype"), default=["f32"],
                   help="comma list of f32, f64, f16, bf16, i64, u64 (default f32)")
    p.add_argument("--n", "--sizes", dest="sizes", type=parse_sizes, default=[1 << 25],
                   help="whole: sizes, as 1000003, 2^28 or 2^20..2^28 (default 2^25)")
    p.add_argument("--rows", type=lambda s: parse_size(s, "rows"))
    p.add_argument("--cols", type=lambda s: parse_size(s, "cols"))
    p.add_argument("--shapes", type=parse_shapes, default=[(8192, 8192)],
                   help="rows/columns: RxC list (default 8192x8192); --rows/--cols set one")
    p.add_argument("--segments", type=lambda s: parse_size(s, "segments"), default=100000)
    p.add_argument("--mean-len", type=float, default=300.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--preroll-us", type=float, default=50.0, help="GPU busy time before each start event (default 50)")
    p.add_argument("--nan-at", type=lambda a: [parse_size(s, "index") for s in a.split(",")], default=[],
                   help="comma list of element indices set to NaN (float dtypes)")
    p.add_argument("--csv", help="write the rows as CSV (impl,case,op,dtype,rows,cols,n,ms,gbps,check)")
    p.add_argument("--csv-append", help="append the rows, writing the header only to a new or empty file")
    p.add_argument("--error-sizes", type=parse_sizes,
                   help="also measure the f32 sum's relative error at these sizes (e.g. 2^20,2^24,2^28)")
    p.add_argument("--error-csv", help="write the error measurements as CSV")
    p.add_argument("--device", type=int, default=0)
    args = p.parse_args(argv)
    if args.case is None and not args.error_sizes:
        p.error("--case is required (or --error-sizes alone)")
    if (args.rows is None) != (args.cols is None):
        p.error("give both --rows and --cols")
    if args.rows is not None:
        args.shapes = [(args.rows, args.cols)]
    for r, c in args.shapes:
        if r < 1 or c < 1 or r * c > (1 << 31) - 1:
            p.error(f"shape {r}x{c} out of range: rows, cols >= 1 and rows*cols <= 2^31-1")
    if args.case and args.op:
        for op in args.op:
            if op not in CASE_OPS[args.case]:
                p.error(f"op {op} is not offered for case {args.case} ({','.join(CASE_OPS[args.case])})")
    if args.nan_at and any(not is_float(d) for d in args.dtype):
        p.error("--nan-at needs float dtypes")
    if args.case == "segments" and any(not is_float(d) for d in args.dtype):
        p.error("torch.segment_reduce takes float dtypes only (f32, f64, f16, bf16)")
    if args.repeat < 1 or args.warmup < 0:
        p.error("--repeat must be at least 1 and --warmup at least 0")
    if not 0.5 <= args.mean_len <= 1e9:
        p.error("bad --mean-len")
    if not 1 <= args.segments <= (1 << 31) - 2:
        p.error("--segments out of range")
    if not 0 <= args.seed < (1 << 64):
        p.error("--seed out of range")
    args.preroll_ns = int(args.preroll_us * 1000)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    require_torch()
    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    self_check_generator(device)
    prop = torch.cuda.get_device_properties(device)
    sleep_cycles, per_ns = calibrate_sleep(args.preroll_ns)
    l2 = getattr(prop, "L2_cache_size", 0)
    print(f"# device: {prop.name}, sm_{prop.major}{prop.minor}, {prop.multi_processor_count} SMs, "
          f"L2 {l2 / MIB:.1f} MiB, {prop.total_memory / (1 << 30):.1f} GiB; torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}")
    print(f"# timing: torch.cuda._sleep({sleep_cycles}) (about {args.preroll_us:g} us at the calibrated "
          f"{per_ns:.3f} cycles/ns) before each timed run, then exactly two CUDA events around the one call; "
          f"{args.warmup} warm-up + {args.repeat} timed runs; the MEDIAN is reported; late = timed runs whose "
          f"CPU enqueue outlasted the pre-roll")
    print(f"# L2: each run reads the next of several input copies adding up to at least {ROTATE_TOTAL_BYTES // MIB} MiB; "
          f"GB/s = input bytes / ms")
    print("# check: every run on the CPU; sums within chain*eps*sum|x| (chain = the output's element count), "
          "integers exact mod 2^64; max exact; argmax/argmin the first occurrence; nan-* labels: what PyTorch "
          "did with --nan-at NaNs")

    out = Output(args.csv_append or args.csv, append=bool(args.csv_append))
    if args.case:
        if args.case == "whole":
            layouts = [Layout("whole", rows=1, cols=n, n=n) for n in args.sizes]
        elif args.case in ("rows", "columns"):
            layouts = [Layout(args.case, rows=r, cols=c, n=r * c) for r, c in args.shapes]
        else:
            offsets = segment_offsets(args.segments, args.mean_len, args.seed)
            if int(offsets[-1]) == 0:
                die("segments: every segment is empty")
            layouts = [Layout("segments", rows=args.segments, cols=0, n=int(offsets[-1]), offsets=offsets)]
        for layout in layouts:
            for name in args.dtype:
                run_layout(layout, name, args, device, sleep_cycles, out)
    if args.error_sizes:
        measure_errors(args.error_sizes, device, args.error_csv)
    out.close()
    return 2 if out.any_fail else 0


if __name__ == "__main__":
    sys.exit(main())
