#!/usr/bin/env bash
# call 52: the Triton code torch.compile generates for column and row sums and the row max.
nvidia-smi --query-gpu=name --format=csv,noheader
TORCH_LOGS=output_code python3 .device/inductor_code.py > $OUT/inductor.log 2>&1
grep -n "########\|def triton\|XBLOCK\|RBLOCK\|R0_BLOCK\|grid\|triton_heuristics\|num_warps\|reduction_hint\|size_hints\|\.run(" $OUT/inductor.log | head -150
