#!/usr/bin/env python3
"""allreduce_torch.py - the multi-GPU peer: a sum over all GPUs with PyTorch and NCCL.

One process per GPU (torch.multiprocessing.spawn, NCCL backend, MASTER_ADDR=127.0.0.1 and a
free port, NCCL_NVLS_ENABLE=0 so NVLink multicast/SHARP is never used). Rank r holds elements
[r * per_gpu, (r + 1) * per_gpu) of one global float32 array (the generator of
bench/cuda/reduce_shapes.cu and reduce_torch.py). Two things are timed, each with the method of
the single-GPU programs plus a barrier:

  sum+allreduce     s = x.sum(); dist.all_reduce(s)    (local sum, then the 1-element all-reduce)
  allreduce-scalar  dist.all_reduce(s)                 (one float32 alone)

Each run: dist.barrier() and torch.cuda.synchronize() on every rank, torch.cuda._sleep (about
--preroll-us of GPU time), the start event, the call, the end event (exactly two events); the
input rotates among copies adding up to at least 256 MiB per GPU. Each rank times its own GPU;
per run the slowest rank's time counts (ms), and the median over --repeat runs is reported, with
the median of the fastest rank's time (ms_min) beside it. Every run's result is checked on every
rank against a float64 CPU sum of the shards. Rank 0 prints a table and writes CSV.
"""

import argparse
import math
import os
import socket
import statistics
import sys
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduce_torch as rt  # noqa: E402  (the generator, the pre-roll calibration, die)

MIB = 1 << 20
CSV_HEADER = "impl,case,op,dtype,rows,cols,n,ms,gbps,check"


def parse_args(argv):
    p = rt.Parser(description="Multi-GPU sum with PyTorch + NCCL: local x.sum() then dist.all_reduce of the "
                              "1-element result, and the all-reduce of one scalar alone; same timing method as "
                              "reduce_torch.py, plus a barrier before each run.")
    p.add_argument("--per-gpu", type=rt.parse_sizes, default=[1 << 24, 1 << 28, 1 << 30],
                   help="float32 elements per GPU, e.g. 2^24,2^28,2^30 (the default)")
    p.add_argument("--world", type=int, default=0, help="number of GPUs (default: all that PyTorch sees)")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--preroll-us", type=float, default=50.0)
    p.add_argument("--csv", help="write the rows as CSV (impl,case,op,dtype,rows,cols,n,ms,gbps,check)")
    p.add_argument("--csv-append", help="append the rows, writing the header only to a new or empty file")
    args = p.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0:
        p.error("--repeat must be at least 1 and --warmup at least 0")
    args.preroll_ns = int(args.preroll_us * 1000)
    return args


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Shard:
    """This rank's elements, in copies adding up to at least 256 MiB (256-byte aligned)."""

    def __init__(self, torch, per_gpu, rank, device):
        self.n = per_gpu
        self.stride = -(-per_gpu * 4 // 256) * 256 // 4
        stride_bytes = self.stride * 4
        copies = max(1, -(-rt.ROTATE_TOTAL_BYTES // stride_bytes))
        free, _ = torch.cuda.mem_get_info(device)
        if copies * stride_bytes > free // 10 * 6:
            copies = max(1, (free // 10 * 6) // stride_bytes)
        if stride_bytes > free // 10 * 8:
            rt.die(f"rank {rank}: {per_gpu} float32 elements do not fit in GPU memory")
        self.copies = copies
        self.buf = torch.empty(copies * self.stride, dtype=torch.float32, device=device)
        rt.fill_inputs(self.buf[:per_gpu], "f32", device, offset=rank * per_gpu)
        grid = self.buf.view(copies, self.stride)
        filled = 1
        while filled < copies:
            count = min(filled, copies - filled)
            grid[filled:filled + count].copy_(grid[:count])
            filled += count
        torch.cuda.synchronize(device)
        self.next_copy = 0

    def next(self):
        k = self.next_copy
        self.next_copy = (k + 1) % self.copies
        return self.buf[k * self.stride:k * self.stride + self.n]

    def cpu_sums(self, torch):
        """(sum, sum |x|) of this shard on the CPU in float64, in chunks."""
        parts, abs_parts = [], []
        for chunk in self.buf[:self.n].split(1 << 26):
            c = chunk.cpu()
            parts.append(c.sum(dtype=torch.float64).item())
            abs_parts.append(c.abs().sum(dtype=torch.float64).item())
        return math.fsum(parts), math.fsum(abs_parts)


def timed_loop(torch, dist, rank, args, sleep_cycles, prepare, call, check):
    """warmup + repeat runs: prepare(), barrier, synchronize, _sleep, start event, call(), end
    event, then check(result, run) after the end event. Returns (times of the timed runs in ms,
    late runs, wrong runs, first wrong message)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times, late, wrong, first_wrong = [], 0, 0, None
    for run in range(args.warmup + args.repeat):
        x = prepare()
        dist.barrier(device_ids=[rank])
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        torch.cuda._sleep(sleep_cycles)
        start.record()
        out = call(x)
        end.record()
        t1 = time.perf_counter_ns()
        end.synchronize()
        message = check(out, run)
        if message is not None:
            wrong += 1
            if first_wrong is None:
                first_wrong = message
        if run >= args.warmup:
            times.append(start.elapsed_time(end))
            if t1 - t0 >= args.preroll_ns:
                late += 1
    return times, late, wrong, first_wrong


def gather_floats(torch, dist, world, values, device):
    """Every rank's list of floats (same length on all ranks), as a list of lists."""
    t = torch.tensor(values, dtype=torch.float64, device=device)
    out = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(out, t)
    return [o.cpu().tolist() for o in out]


def worker(rank, world, args, port):
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # never NVLink multicast (NVLS)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch = rt.require_torch()
    import torch.distributed as dist

    device = torch.device("cuda", rank)
    torch.cuda.set_device(device)
    try:
        dist.init_process_group("nccl", rank=rank, world_size=world, timeout=timedelta(minutes=10),
                                device_id=device)
    except TypeError:  # a PyTorch without device_id
        dist.init_process_group("nccl", rank=rank, world_size=world, timeout=timedelta(minutes=10))
    rt.self_check_generator(device)
    sleep_cycles, per_ns = rt.calibrate_sleep(args.preroll_ns)
    all_cycles = gather_floats(torch, dist, world, [per_ns], device)

    rows = []
    any_wrong = False
    if rank == 0:
        prop = torch.cuda.get_device_properties(device)
        nccl = torch.cuda.nccl.version()  # a tuple (2, 28, x) in recent PyTorch, an int in old ones
        nccl = ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else str(nccl)
        print(f"# {world} x {prop.name}; torch {torch.__version__}, CUDA {torch.version.cuda}, NCCL {nccl}; "
              f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}")
        print(f"# timing: per run a barrier + synchronize on every rank, torch.cuda._sleep (about "
              f"{args.preroll_us:g} us; calibrated cycles/ns per rank: "
              f"{', '.join(f'{c[0]:.3f}' for c in all_cycles)}), then exactly two CUDA events around the call; "
              f"{args.warmup} warm-up + {args.repeat} timed runs")
        print("# ms: median over runs of the slowest rank's time; ms_min: median of the fastest rank's; "
              "GB/s = all GPUs' input bytes / ms; late: timed runs (all ranks) whose CPU enqueue outlasted the pre-roll")
        print("# check: every run on every rank; the all-reduced sum within n*eps(f32)*sum|x| of the float64 CPU "
              "sum of all shards; the scalar all-reduce exact")
        print(f"\n{'op':<17} {'gpus':>4} {'per_gpu':>11} {'n':>12} {'ms':>10} {'ms_min':>10} {'GB/s':>9} "
              f"{'late':>4} {'check':<6}")

    for per_gpu in args.per_gpu:
        shard = Shard(torch, per_gpu, rank, device)
        local_sum, local_abs = shard.cpu_sums(torch)
        totals = gather_floats(torch, dist, world, [local_sum, local_abs], device)
        want = math.fsum(t[0] for t in totals)
        abs_sum = math.fsum(t[1] for t in totals)
        n_total = world * per_gpu
        tol = (n_total * 2.0 ** -23 + 4 * 2.0 ** -53) * abs_sum

        def check_sum(out, run, want=want, tol=tol):
            got = out.item()
            if not abs(got - want) <= tol:  # NaN fails
                return f"run {run}: {got!r}, expected {want!r} within {tol:.3g}"
            return None

        scalar = torch.empty(1, dtype=torch.float32, device=device)

        def prepare_scalar():
            scalar.fill_(float(rank + 1))
            return scalar

        def call_scalar(s):
            dist.all_reduce(s)
            return s

        want_scalar = float(world * (world + 1) // 2)

        def check_scalar(out, run):
            got = out.item()
            return None if got == want_scalar else f"run {run}: {got!r}, expected {want_scalar!r}"

        def call_sum(x):
            s = x.sum()
            dist.all_reduce(s)
            return s

        for op, prepare, call, check, in_bytes in (
                ("sum+allreduce", shard.next, call_sum, check_sum, n_total * 4),
                ("allreduce-scalar", prepare_scalar, call_scalar, check_scalar, 0)):
            times, late, wrong, first_wrong = timed_loop(torch, dist, rank, args, sleep_cycles,
                                                         prepare, call, check)
            if wrong:
                print(f"FAIL rank {rank} {op} per_gpu={per_gpu}: {wrong} of {args.warmup + args.repeat} runs "
                      f"wrong; first: {first_wrong}", file=sys.stderr)
            per_rank = gather_floats(torch, dist, world, times + [late, wrong], device)
            if rank == 0:
                runs = len(times)
                slowest = [max(r[k] for r in per_rank) for k in range(runs)]
                fastest = [min(r[k] for r in per_rank) for k in range(runs)]
                ms, ms_min = statistics.median(slowest), statistics.median(fastest)
                late_all = int(sum(r[runs] for r in per_rank))
                wrong_all = int(sum(r[runs + 1] for r in per_rank))
                check = "FAIL" if wrong_all else "PASS"
                any_wrong = any_wrong or bool(wrong_all)
                gbps = in_bytes / (ms * 1e6)
                print(f"{op:<17} {world:>4} {per_gpu:>11} {n_total:>12} {ms:>10.4f} {ms_min:>10.4f} "
                      f"{gbps:>9.1f} {late_all:>4} {check:<6}", flush=True)
                rows.append(f"torch-nccl,allreduce,{op},f32,{world},{per_gpu},{n_total},{ms:.6f},{gbps:.3f},{check}")
                if late_all:
                    print(f"WARNING {op} per_gpu={per_gpu}: {late_all} timed runs (all ranks) took the CPU longer "
                          f"than the {args.preroll_us:g} us pre-roll to enqueue (raise --preroll-us)", file=sys.stderr)
        del shard
        torch.cuda.empty_cache()

    if rank == 0 and (args.csv or args.csv_append):
        path = args.csv_append or args.csv
        append = bool(args.csv_append)
        need_header = not (append and os.path.exists(path) and os.path.getsize(path) > 0)
        with open(path, "a" if append else "w") as f:
            if need_header:
                f.write(CSV_HEADER + "\n")
            for line in rows:
                f.write(line + "\n")
    dist.barrier(device_ids=[rank])
    dist.destroy_process_group()
    if rank == 0 and any_wrong:
        sys.exit(2)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    torch = rt.require_torch()
    import torch.multiprocessing as mp

    if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
        rt.die("this PyTorch has no NCCL backend (torch.distributed.is_nccl_available() is False)")
    count = torch.cuda.device_count()
    world = args.world or count
    if not 1 <= world <= count:
        rt.die(f"--world {world}: PyTorch sees {count} GPU(s)")
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # inherited by the workers, which set it again
    port = free_port()
    try:
        mp.spawn(worker, args=(world, args, port), nprocs=world, join=True)
    except mp.ProcessExitedException as e:
        return e.exit_code if e.exit_code in (1, 2) else 1
    except mp.ProcessRaisedException as e:
        print(f"allreduce_torch.py: a worker raised: {str(e).strip().splitlines()[-1]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
