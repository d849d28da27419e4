#!/usr/bin/env bash
# call 36: the final sources (the arg operators' column bands fill half a wave): every GPU test
# and the pytest suite in parallel (the wheel imported from /tmp, test_torch.py alone too), then
# the arg operators' column shapes beside PyTorch.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c36; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c36.tar.xz c36; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
( timeout 300 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -1 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 280 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -1 $W/pytest.log; PYTHONPATH=$SITE timeout 200 python3 -m pytest -q -p no:cacheprovider -rs $OLDPWD/python/tests/test_torch.py > $W/torch.log 2>&1; tail -1 $W/torch.log ) &
wait
pack
S=f32:argmax:columns:2048x2048,f32:argmax:columns:4096x4096,f32:argmax:columns:8192x8192,f32:argmax:columns:16384x1024,f32:argmax:columns:4096x4094,f32:argmin:columns:4096x4096,bf16:argmax:columns:4096x4096,bf16:argmax:columns:4096x4094,f64:argmax:columns:4096x4096,i32:argmax:columns:4096x4096
timeout 250 $BIN/reduce-rs bench --no-cub --shapes "$S" --out /tmp/o > $W/arg.log 2>&1; echo "arg rc=$?"
pack
grep -c FAIL $W/arg.log
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|torch|read-only) ' $W/arg.log | sed 's/(fastest peer)//; s/ \* / * /' | awk '{print $1,$2,$3,$4,$5,$6,$7,$8}'
