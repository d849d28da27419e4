#!/usr/bin/env bash
# call 18 (H100): the final sources (f32 max and min by max.f32/min.f32 over a group, the arg
# operators unchanged; rows of no whole vectors read flat): the changed shapes beside PyTorch,
# CUB and the CUDA twin; then every GPU test and the pytest suite (correctness, in parallel).
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c18; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c18.tar.xz c18; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
S=f32:max:rows:32768x4096,f32:min:rows:65536x512,f32:max:whole:2^28,f32:min:whole:2^22,f32:max:rows:32768x2048,f32:sum:columns:1048576x14,f32:sum:columns:262144x14,f64:sum:columns:1048576x15
timeout 280 $BIN/reduce-rs bench --shapes "$S" --out /tmp/o > $W/peers.log 2>&1
pack
( timeout 330 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -3 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 300 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -2 $W/pytest.log ) &
wait
pack
grep -E '^(f32|f64) ' $W/peers.log | grep -v reproducible | awk '{k=$1" "$2" "$3" "$4; v=""; for(i=5;i<=NF;i++) if ($i ~ /^[0-9]+\.[0-9]+$/) {v=$i; break}; t[k]=t[k]" "$6"="v} END{for(k in t) print k, t[k]}' | sort
