#!/usr/bin/env bash
# rowwise_h200.sh - the row-wise benchmark on a GPU host (the issue's shapes,
# bf16): calibrates the copy bandwidth, tunes each operator with a modest
# budget and at most --seconds each (aimed at about four minutes in all on an H200
# host), runs the PyTorch anchor (eager and torch.compile) on the same shapes
# in the same run, measures the error of each case's best kernel against a
# float64 reference (rowwise_error.py, through tessera's Python package), and
# prints one table (rowwise_table.py). gelu is also tuned
# under an error budget of 1e-3, whose shortcuts show in its best config.
# The reductions along an axis (reduce) have the copy bandwidth as their
# reference, no PyTorch column.
#
# usage: tests/bench/rowwise_h200.sh [--backend cuda|cpu] [--small|--host-sizes] [--budget N] [--seconds S] [--out DIR]
#   --small   small shapes (what tests/cli/cli_rowwise_bench.sh runs on the cpu)
#   --host-sizes  shapes for a CPU: 128 MiB of bf16 per input, four times a
#             32 MiB last-level cache, so every operator streams from memory
#   --seconds the time limit of each tune (default 5)
# Environment: TESSERA (the binary, default build/tessera), TESSERA_LIBRARY
# (libtessera.so, default beside the binary), PYTHON (python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
backend=cuda budget=20 seconds=5 sizes=gpu out=""
while [ $# -gt 0 ]; do
    case $1 in
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --small) sizes=small; shift ;;
    --host-sizes) sizes=host; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "rowwise_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "rowwise_h200.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
out=${out:-data/bench/rowwise-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA_DB=${TESSERA_DB:-$out/records.db}

if [ "$sizes" = small ]; then
    rows_mid=64x1024 rows_long=4x8192 rows_short=256x128 flat=100003 cube=4x64x100
elif [ "$sizes" = host ]; then
    rows_mid=8192x8192 rows_long=1024x65536 rows_short=65536x1024 flat=67108864 cube=16x2048x2048
else
    rows_mid=32768x8192 rows_long=4096x65536 rows_short=65536x1024 flat=268435456 cube=64x2048x2048
fi
# label, operator, shape, extra options
cases=(
    "softmax $rows_mid|softmax|$rows_mid|"
    "layernorm $rows_mid|layernorm|$rows_mid|"
    "rmsnorm $rows_mid|rmsnorm|$rows_mid|"
    "log_softmax $rows_mid|log_softmax|$rows_mid|"
    "cross_entropy $rows_mid|cross_entropy|$rows_mid|"
    "add_rmsnorm $rows_mid|add_rmsnorm|$rows_mid|"
    "softmax $rows_long|softmax|$rows_long|"
    "layernorm $rows_long|layernorm|$rows_long|"
    "rmsnorm $rows_long|rmsnorm|$rows_long|"
    "softmax $rows_short|softmax|$rows_short|"
    "layernorm $rows_short|layernorm|$rows_short|"
    "rmsnorm $rows_short|rmsnorm|$rows_short|"
    "gelu (erf)|gelu|$flat|"
    "gelu (erf), error budget 1e-3|gelu|$flat|--error-budget 1e-3"
    "gelu_tanh|gelu_tanh|$flat|"
    "silu|silu|$flat|"
    "reduce sum, axis 0 (columns)|reduce:kind=sum,axis=0|$cube|"
    "reduce mean, axis 2 (rows)|reduce:kind=mean,axis=2|$cube|"
)
# long rows cut over thread-block clusters (sm_90), beside the search's own choice
if [ "$backend" = cuda ]; then
    cases+=("softmax $rows_long cluster=8|softmax|$rows_long|--fix cluster=8"
            "layernorm $rows_long cluster=8|layernorm|$rows_long|--fix cluster=8")
fi

echo "== calibrate ($backend)" >&2
"$tessera" calibrate --backend "$backend" | tee "$out/calibrate.txt" >&2

: > "$out/tessera.jsonl"
torch_cases=() error_cases=()
for c in "${cases[@]}"; do
    IFS='|' read -r label op shape extra <<< "$c"
    echo "== tune $label ($shape)" >&2
    echo "# $label" >> "$out/tessera.jsonl"
    # shellcheck disable=SC2086  # extra holds options, split on purpose
    if ! "$tessera" tune "$op" --shape "$shape" --dtype bf16 --backend "$backend" --budget "$budget" \
            --seconds "$seconds" --transfer off --json $extra >> "$out/tessera.jsonl" 2>> "$out/tune.log"; then
        echo "rowwise_h200.sh: error: tune $label failed (see $out/tune.log)" >&2
        exit 1
    fi
    # the anchor has the operators without attributes
    if [ -z "$extra" ] && [[ $op != *:* ]]; then torch_cases+=("$op:$shape"); fi
    # the error of the task's best kernel: a case with --fix shares its task with the unpinned one
    if [ -z "$extra" ]; then error_cases+=("$label|$op|$shape|"); fi
    if [[ $extra == --error-budget* ]]; then error_cases+=("$label|$op|$shape|${extra#--error-budget }"); fi
done

echo "== PyTorch anchor" >&2
device=$([ "$backend" = cuda ] && echo cuda || echo cpu)
if ! "$python" "$here/rowwise_torch.py" --device "$device" --dtype bf16 "${torch_cases[@]}" \
        > "$out/torch.jsonl" 2> "$out/torch.log"; then
    echo "rowwise_h200.sh: PyTorch anchor failed, its columns are n/a: $(tail -1 "$out/torch.log")" >&2
fi
echo "== errors of the best kernels" >&2
if ! PYTHONPATH="$here/../../python${PYTHONPATH:+:$PYTHONPATH}" \
        TESSERA_LIBRARY=${TESSERA_LIBRARY:-$(dirname "$tessera")/libtessera.so} \
        "$python" "$here/rowwise_error.py" --backend "$backend" --dtype bf16 "${error_cases[@]}" \
        > "$out/errors.jsonl" 2> "$out/errors.log"; then
    echo "rowwise_h200.sh: the error measurement failed, its column is n/a: $(tail -1 "$out/errors.log")" >&2
fi
"$python" "$here/rowwise_table.py" "$out/tessera.jsonl" "$out/torch.jsonl" "$out/errors.jsonl" | tee "$out/table.txt"
