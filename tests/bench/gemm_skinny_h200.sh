#!/usr/bin/env bash
# gemm_skinny_h200.sh - the GEMM benchmark's shapes of few rows of A within a
# short GPU session: calibrates the device once (the copy bandwidth that
# bounds them), runs gemm_h200.sh on the decoding shapes (1 to 32 rows) in
# the skinny path's sub-space and on the batch of 128 rows in the mma path's
# (tiles with K split over blocks), with cuBLAS measured through PyTorch in
# the same run, prints one table of them all (gemm_table.py: the fraction
# of the copy bandwidth and the ratio to cuBLAS), then runs the GPU test of
# the skinny path and of K split over blocks (test_gemm_skinny_gpu).
#
# usage: tests/bench/gemm_skinny_h200.sh [--out DIR] [--seconds S] [--budget N]
#   --out      where the logs, reports and table go (default data/bench/gemm-skinny-DATE)
#   --seconds  wall-clock limit of each case's tuning (default 10)
#   --budget   evaluations per case at most (default 24)
# Environment: TESSERA (the binary, default build/tessera; the GPU test is
# looked for beside it, in tests/), PYTHON (python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
out="" seconds=10 budget=24
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "gemm_skinny_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "gemm_skinny_h200.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
out=${out:-data/bench/gemm-skinny-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA="$tessera" PYTHON="$python" TESSERA_DB=${TESSERA_DB:-$out/records.db}

echo "== calibrate (cuda)" >&2
"$tessera" calibrate --backend cuda > "$out/calibrate.txt"

# name; cases (a regex over gemm_h200.sh's); the sub-space
groups=(
    "decode;^gemm:(1|4|8|16|32)x;path=skinny"
    "batch128;^gemm:128x8192x8192$;path=mma"
)
failed=0
for g in "${groups[@]}"; do
    IFS=';' read -r name only fix <<< "$g"
    echo "== $name: $only in $fix" >&2
    if ! "$here/gemm_h200.sh" --skip-calibrate --only "$only" --fix "$fix" --seconds "$seconds" --budget "$budget" \
            --out "$out/$name" > "$out/$name.log" 2>&1; then
        echo "gemm_skinny_h200.sh: group $name failed (see $out/$name.log)" >&2
        failed=1
    fi
done

for f in tessera.jsonl torch.jsonl; do
    for g in "${groups[@]}"; do cat "$out/${g%%;*}/$f" 2>/dev/null || true; done > "$out/$f"
done
"$python" "$here/gemm_table.py" "$out/tessera.jsonl" "$out/torch.jsonl" | tee "$out/table.txt"

test_bin="$(dirname "$tessera")/tests/test_gemm_skinny_gpu"
echo "== $test_bin" >&2
line_buffered=$(command -v stdbuf > /dev/null && echo "stdbuf -oL -eL" || true)   # a run cut short keeps its lines
test_rc=0
$line_buffered "$test_bin" > "$out/gpu_test.log" 2>&1 || test_rc=$?
if [ "$test_rc" != 0 ] && [ "$test_rc" != 77 ]; then   # 77: skipped (no GPU)
    echo "gemm_skinny_h200.sh: the GPU test failed (see $out/gpu_test.log)" >&2
    failed=1
fi
exit "$failed"
