#!/usr/bin/env bash
# call 84: the wheel of c8726e1 (the torch.compile operators as torch.library.Library ops). The
# tests of reduce_rs inside torch.compile on the GPU (call 83's pytest ran out of its 170 s in
# them: the slowest are listed), the rest of the Python tests, the host time of a call eager and
# compiled, Inductor's code for the shapes where it was ahead in call 83, then ncu on them.
set -uo pipefail
cd "$(dirname "$0")/.."
RUN=call84
. scripts/device_preamble.sh
wheel
t0=$SECONDS; (cd /tmp && PYTHONPATH=$SITE timeout 230 python3 -m pytest -q -p no:cacheprovider --durations=15 $OLDPWD/python/tests/test_compile.py > $L/pytest_compile.log 2>&1); echo "pytest compile rc=$? $((SECONDS-t0))s"; tail -n 22 $L/pytest_compile.log; pack
t0=$SECONDS; (cd /tmp && PYTHONPATH=$SITE timeout $((350-SECONDS)) python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests/test_torch.py $OLDPWD/python/tests/test_numpy.py > $L/pytest_rest.log 2>&1); echo "pytest torch+numpy rc=$? $((SECONDS-t0))s"; tail -n 3 $L/pytest_rest.log; pack
t0=$SECONDS; PYTHONPATH=$SITE timeout 40 python3 python/bench/overhead.py --calls 5000 > $L/overhead.log 2>&1; echo "overhead rc=$?"; PYTHONPATH=$SITE timeout $((420-SECONDS)) python3 python/bench/overhead.py --compiled --calls 3000 > $L/overhead_compiled.log 2>&1; echo "overhead compiled rc=$? $((SECONDS-t0))s"; head -n 12 $L/overhead_compiled.log; pack
t0=$SECONDS; PYTHONPATH=$SITE timeout $((470-SECONDS)) python3 scripts/profile_inductor.py --code $L/inductor_code > $L/inductor_code.log 2>&1; echo "inductor code rc=$? $((SECONDS-t0))s"; ls $L/inductor_code; pack
t0=$SECONDS; PYTHONPATH=$SITE timeout $((540-SECONDS)) ncu --clock-control none --profile-from-start off --nvtx --section SpeedOfLight --section Occupancy --section LaunchStats python3 scripts/profile_inductor.py > $L/ncu_inductor.log 2>&1; echo "ncu rc=$? $((SECONDS-t0))s"; pack
