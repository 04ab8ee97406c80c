#!/usr/bin/env bash
# attention_h200.sh - the attention benchmark on a GPU host (the issue's
# shapes, bf16): runs PyTorch's scaled_dot_product_attention under its flash
# and cuDNN backends on the same shapes in the same run (attention_torch.py),
# tunes each case with a modest budget, and prints one table of TFLOP/s
# (prefill) and GB/s (decode, paged and unpaged) with tessera's ratio to
# each backend (attention_table.py); then what a decode call costs beyond
# its kernels, on its tuned config (bench_decode_dispatch: dispatch.jsonl).
#
# usage: tests/bench/attention_h200.sh [--budget N] [--seconds S] [--prefill-fix P] [--only TEXT] [--calibrate]
#                                      [--out DIR]
#   --budget N    evaluations per case (default 8)
#   --seconds S   tuning time per case, at most (default 12: the whole run in about three minutes)
#   --prefill-fix P  the parameters prefill tunes hold (default kernel=wgmma, the sm_90a kernel;
#                 kernel=mma for the mma.sync one)
#   --only TEXT   run only the cases whose label contains TEXT ("decode B64")
#   --calibrate   measure the device's ceilings first (the tune reports' fractions)
# Environment: TESSERA (the binary, default build/tessera), PYTHON (python3), DISPATCH_BENCH
# (default: tests/bench_decode_dispatch beside the binary; skipped when it is not there).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
budget=8 seconds=12 calibrate=0 out="" prefill_fix=kernel=wgmma only=""
while [ $# -gt 0 ]; do
    case $1 in
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --prefill-fix) prefill_fix=${2:?--prefill-fix needs a value}; shift 2 ;;
    --only) only=${2:?--only needs a value}; shift 2 ;;
    --calibrate) calibrate=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "attention_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "attention_h200.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
out=${out:-data/bench/attention-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA_DB=${TESSERA_DB:-$out/records.db}

# label|operator with attributes|shape|the PyTorch case|tune options (prefill: the tensor-core kernel only)
# [|dispatch: then measure a call's cost on the config just tuned]
pre="--fix $prefill_fix"
cases=(
    "B4 H16 S4096 D128|attention|4x16x4096x4096x128|attention:4x16x4096x4096x128|$pre"
    "B4 H16 S4096 D128 causal|attention:causal=1|4x16x4096x4096x128|attention:4x16x4096x4096x128:causal|$pre"
    "B4 H16 S4096 D64|attention|4x16x4096x4096x64|attention:4x16x4096x4096x64|$pre"
    "B2 H32 S8192 D128 causal|attention:causal=1|2x32x8192x8192x128|attention:2x32x8192x8192x128:causal|$pre"
    "decode B8 H32 KV32768 D128 paged 16|attention_decode:page_size=16|8x32x32768x128|attention_decode:8x32x32768x128||dispatch"
    "decode B64 H8 KV8192 D128 paged 16|attention_decode:page_size=16|64x8x8192x128|attention_decode:64x8x8192x128||dispatch"
    "decode B8 H32 KV32768 D128 unpaged|attention_decode:page_size=0|8x32x32768x128|attention_decode:8x32x32768x128|"
    "decode B64 H8 KV8192 D128 unpaged|attention_decode:page_size=0|64x8x8192x128|attention_decode:64x8x8192x128|"
)
selected=()
for c in "${cases[@]}"; do
    [[ ${c%%|*} == *"$only"* ]] && selected+=("$c")
done
[ ${#selected[@]} -gt 0 ] || { echo "attention_h200.sh: error: no case label contains '$only'" >&2; exit 2; }
cases=("${selected[@]}")

if [ "$calibrate" = 1 ]; then
    echo "== calibrate (cuda)" >&2
    "$tessera" calibrate --backend cuda | tee "$out/calibrate.txt" >&2
fi

echo "== PyTorch SDPA (flash, cuDNN)" >&2
torch_cases=()
for c in "${cases[@]}"; do
    IFS='|' read -r _ _ _ tcase _ <<< "$c"
    torch_cases+=("$tcase")
done
if ! "$python" "$here/attention_torch.py" "${torch_cases[@]}" > "$out/torch.jsonl" 2> "$out/torch.log"; then
    echo "attention_h200.sh: PyTorch anchor failed, its columns are n/a: $(tail -1 "$out/torch.log")" >&2
fi

: > "$out/tessera.jsonl"
dispatch=${DISPATCH_BENCH:-$(dirname "$tessera")/tests/bench_decode_dispatch}
status=0
for c in "${cases[@]}"; do
    IFS='|' read -r label op shape tcase extra then <<< "$c"
    echo "== $(date -u +%H:%M:%S) tune $label" >&2
    echo "# $label|$tcase" >> "$out/tessera.jsonl"
    # shellcheck disable=SC2086  # extra holds options, split on purpose
    if ! "$tessera" tune "$op" --shape "$shape" --dtype bf16 --backend cuda --budget "$budget" \
            --seconds "$seconds" --transfer off --json $extra >> "$out/tessera.jsonl" 2>> "$out/tune.log"; then
        echo "attention_h200.sh: error: tune $label failed (see $out/tune.log)" >&2
        status=1
    fi
    if [ "$then" = dispatch ] && [ -x "$dispatch" ]; then
        echo "== $(date -u +%H:%M:%S) decode dispatch overhead, $op $shape" >&2
        page=${op##*page_size=}
        if ! "$dispatch" --shape "$shape" --page-size "$page" >> "$out/dispatch.jsonl" 2>> "$out/tune.log"; then
            echo "attention_h200.sh: error: $dispatch failed (see $out/tune.log)" >&2
            status=1
        fi
    fi
done
"$tessera" db export -o "$out/records.jsonl" >&2 || status=1
"$python" "$here/attention_table.py" "$out/tessera.jsonl" "$out/torch.jsonl" | tee "$out/table.txt"
[ -s "$out/dispatch.jsonl" ] && cat "$out/dispatch.jsonl"
exit $status
