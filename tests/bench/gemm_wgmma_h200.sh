#!/usr/bin/env bash
# gemm_wgmma_h200.sh - the wgmma rows of the GEMM benchmark within a short
# GPU session: calibrates the device once (the tensor-core ceilings), then
# runs gemm_h200.sh on three groups of cases, each tuned in the wgmma
# path's sub-space that holds its best configs (the large bf16 GEMMs with
# 128 x 256 tiles, the fp8 GEMMs, the ResNet-50 convolutions), with cuBLAS,
# cuBLASLt fp8 and cuDNN measured through PyTorch in the same run, and
# prints one table of them all (gemm_table.py).
#
# usage: tests/bench/gemm_wgmma_h200.sh [--out DIR] [--seconds S] [--budget N]
#   --out      where the logs, reports and table go (default data/bench/gemm-wgmma-DATE)
#   --seconds  wall-clock limit of each case's tuning (default 6)
#   --budget   evaluations per case at most (default 6)
# Environment: TESSERA (the binary, default build/tessera), PYTHON (python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
out="" seconds=6 budget=6
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "gemm_wgmma_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "gemm_wgmma_h200.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
out=${out:-data/bench/gemm-wgmma-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA="$tessera" PYTHON="$python" TESSERA_DB=${TESSERA_DB:-$out/records.db}

echo "== calibrate (cuda)" >&2
"$tessera" calibrate --backend cuda > "$out/calibrate.txt"

# name, cases (a regex over gemm_h200.sh's), the sub-space
groups=(
    "bf16|^gemm:(8192x8192x8192|4096x4096x4096|4096x14336x4096)$|path=wgmma,bm=128,bn=256,wm=2,group_m=8"
    "fp8|^gemm_fp8:|path=wgmma,bm=128,wm=2,group_m=8"
    "conv|^conv2d:|path=wgmma,wm=2,wn=2"
)
failed=0
for g in "${groups[@]}"; do
    IFS='|' read -r name only fix <<< "$g"
    if ! "$here/gemm_h200.sh" --skip-calibrate --only "$only" --fix "$fix" --seconds "$seconds" --budget "$budget" \
            --out "$out/$name" > "$out/$name.log" 2>&1; then
        echo "gemm_wgmma_h200.sh: group $name failed (see $out/$name.log)" >&2
        failed=1
    fi
done

for f in tessera.jsonl torch.jsonl; do
    for g in "${groups[@]}"; do cat "$out/${g%%|*}/$f" 2>/dev/null || true; done > "$out/$f"
done
"$python" "$here/gemm_table.py" "$out/tessera.jsonl" "$out/torch.jsonl" | tee "$out/table.txt"
exit "$failed"
