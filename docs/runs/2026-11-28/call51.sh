#!/usr/bin/env bash
# call 51 (H100): the Python package with a wheel of e7d44fa (+ bench cases): pytest, the
# greedy sampler, the host's cost, bench_torch.py --compile.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
BENCH_ARGS=--compile timeout 580 scripts/gpu_session.sh python $OUT
