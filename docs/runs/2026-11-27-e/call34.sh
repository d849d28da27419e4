#!/usr/bin/env bash
# call 34: the final sources (the band kernel's dealt-out scalar loads): every GPU test and the
# pytest suite in parallel (the wheel imported from /tmp, test_torch.py alone too), then
# `bench --shapes table` with PyTorch, CUB and the CUDA twin.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c34; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c34.tar.xz c34; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
( timeout 300 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -3 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 280 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -2 $W/pytest.log; PYTHONPATH=$SITE python3 -c 'import reduce_rs, torch; x = torch.randn(4096, 4096, device="cuda"); x[7, 3] = float("nan"); same = lambda a, b: bool(torch.allclose(a, b, rtol=0, atol=0, equal_nan=True)); print(reduce_rs.__file__, reduce_rs.backend(), same(reduce_rs.amax(x, dim=0), x.amax(dim=0)), same(reduce_rs.amin(x, dim=1), x.amin(dim=1)), same(reduce_rs.amax(x[:, :2].contiguous(), dim=0), x[:, :2].amax(dim=0)))' > $W/torch_import.log 2>&1; PYTHONPATH=$SITE timeout 200 python3 -m pytest -q -p no:cacheprovider -rs $OLDPWD/python/tests/test_torch.py > $W/torch.log 2>&1; cat $W/torch_import.log; tail -1 $W/torch.log ) &
wait
pack
timeout 290 $BIN/reduce-rs bench --shapes table --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
pack
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|torch|cub|cuda|read-only) ' $W/table.log | grep -v reproducible | sed 's/(fastest peer)//; s/ \* / * /' | awk '{print $1,$2,$3,$4,$5,$6,$7,$8}'
