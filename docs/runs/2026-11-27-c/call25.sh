#!/usr/bin/env bash
# call 25 (asked for an H200): the final sources (162ec59): every GPU test and the pytest suite
# in parallel, then a few shapes through the bench's timing path (Shape::outputs_of); the package imported from /tmp with torch tensors, and test_torch.py alone.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c25; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c25.tar.xz c25; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
( timeout 300 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -3 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 280 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -2 $W/pytest.log; PYTHONPATH=$SITE python3 -c 'import reduce_rs, torch; x = torch.randn(64, 128256, device="cuda"); print(reduce_rs.__file__, reduce_rs.backend(), bool((reduce_rs.argmax(x, dim=1) == x.argmax(dim=1)).all()))' > $W/torch_import.log 2>&1; PYTHONPATH=$SITE timeout 200 python3 -m pytest -q -p no:cacheprovider -rs $OLDPWD/python/tests/test_torch.py > $W/torch.log 2>&1; cat $W/torch_import.log; tail -1 $W/torch.log ) &
wait
pack
S=f32:sum:columns:524288x20,f64:sum:columns:524288x20,f32:argmax:rows:64x128256,f32:sum:segments:100000x300,bf16:argmax:rows:8x128256
timeout 60 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/bench.log 2>&1; echo "bench rc=$?"
grep -h 'reduce-rs.*\*' $W/bench.log | awk '{print $1,$2,$3,$4,$6,$(NF-6),$NF}'
pack
