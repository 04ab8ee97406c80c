#!/usr/bin/env bash
# rowwise_h200.sh - the row-wise benchmark on a GPU host (the issue's shapes,
# bf16; the sum of all elements in f32): runs the PyTorch anchor first, with
# a time limit of its own (eager and torch.compile on the same shapes,
# rowwise_torch.py), calibrates the copy and read bandwidths, tunes each
# case with a modest budget and at most --seconds, and prints one table
# (rowwise_table.py): GB/s beside the bandwidth of the same run and
# PyTorch's, and the largest error each best kernel's verification saw
# (random and typical inputs, against a float64 reference). gelu is also
# tuned under an error budget of 1e-3, whose row adds the best config that
# takes no shortcut. The reductions along an axis have the read bandwidth
# as their reference, no PyTorch column. On the GPU the long rows search a
# sub-space for twice the time (long_fix below).
#
# usage: tests/bench/rowwise_h200.sh [--backend cuda|cpu] [--small|--host-sizes] [--budget N] [--seconds S]
#                                    [--torch-seconds T] [--torch-forms eager[,compile]] [--only REGEX]
#                                    [--reductions] [--long-fix TEXT] [--long-fix-op OP=TEXT]... [--out DIR]
#   --small   small shapes (what tests/cli/cli_rowwise_bench.sh runs on the cpu)
#   --host-sizes  shapes for a CPU: 128 MiB of bf16 per input, four times a
#             32 MiB last-level cache, so every operator streams from memory
#   --seconds the time limit of each tune (default 5)
#   --torch-seconds  the time limit of the PyTorch anchor (default 90)
#   --torch-forms    PyTorch's forms to time (default eager,compile)
#   --only    the cases whose label matches the extended regular expression
#   --reductions  only the reductions: the sum of all elements beside
#             torch.sum (eager) and the reductions along an axis (the same
#             as --only '^(sum|reduce)' --torch-forms eager)
#   --long-fix    the parameters the long rows fix on the GPU (default
#             vec=8,rows_per_block=1)
#   --long-fix-op OP=TEXT  the same for the long rows of one operator
#             (softmax, layernorm or rmsnorm), instead of --long-fix
# Environment: TESSERA (the binary, default build/tessera), PYTHON (python3).
set -euo pipefail
declare -A long_fix_op=()

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
backend=cuda budget=20 seconds=5 sizes=gpu out="" torch_seconds=90 torch_forms=eager,compile only="" long_fix_gpu=vec=8,rows_per_block=1
while [ $# -gt 0 ]; do
    case $1 in
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --torch-seconds) torch_seconds=${2:?--torch-seconds needs a value}; shift 2 ;;
    --torch-forms) torch_forms=${2:?--torch-forms needs a value}; shift 2 ;;
    --only) only=${2:?--only needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --reductions) only='^(sum|reduce)'; torch_forms=eager; shift ;;
    --long-fix) long_fix_gpu=${2:?--long-fix needs a value}; shift 2 ;;
    --long-fix-op)
        spec=${2:?--long-fix-op needs OP=TEXT}
        [[ $spec == *=* ]] || { echo "rowwise_h200.sh: error: --long-fix-op needs OP=TEXT, not '$spec'" >&2; exit 2; }
        long_fix_op[${spec%%=*}]=${spec#*=}; shift 2 ;;
    --small) sizes=small; shift ;;
    --host-sizes) sizes=host; shift ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "rowwise_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "rowwise_h200.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
out=${out:-data/bench/rowwise-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA_DB=${TESSERA_DB:-$out/records.db}

if [ "$sizes" = small ]; then
    rows_mid=64x1024 rows_long=4x8192 rows_short=256x128 flat=100003 cube=4x64x100 total=100003
elif [ "$sizes" = host ]; then
    rows_mid=8192x8192 rows_long=1024x65536 rows_short=65536x1024 flat=67108864 cube=16x2048x2048 total=67108864
else
    rows_mid=32768x8192 rows_long=4096x65536 rows_short=65536x1024 flat=268435456 cube=64x2048x2048 total=1073741824
fi
# Long rows on the GPU: a sub-space (16-byte loads, a row group per block;
# the row's slice in registers or in shared memory), twice the time, for
# threads per row, clusters, unrolls and row loops: the whole space is too
# large for a few seconds.
long_fix="" long_time=1
if [ "$backend" = cuda ]; then long_fix=$long_fix_gpu long_time=2; fi
# the long rows' fixed parameters of one operator
long_fix_of() {
    if [ "$backend" = cuda ] && [ -n "${long_fix_op[$1]:-}" ]; then echo "${long_fix_op[$1]}"; else echo "$long_fix"; fi
}
# label, operator, shape, dtype, parameters fixed, time (times --seconds), extra options
all_cases=(
    "softmax $rows_mid|softmax|$rows_mid|bf16||1|"
    "layernorm $rows_mid|layernorm|$rows_mid|bf16||1|"
    "rmsnorm $rows_mid|rmsnorm|$rows_mid|bf16||1|"
    "log_softmax $rows_mid|log_softmax|$rows_mid|bf16||1|"
    "cross_entropy $rows_mid|cross_entropy|$rows_mid|bf16||1|"
    "add_rmsnorm $rows_mid|add_rmsnorm|$rows_mid|bf16||1|"
    "softmax $rows_long|softmax|$rows_long|bf16|$(long_fix_of softmax)|$long_time|"
    "layernorm $rows_long|layernorm|$rows_long|bf16|$(long_fix_of layernorm)|$long_time|"
    "rmsnorm $rows_long|rmsnorm|$rows_long|bf16|$(long_fix_of rmsnorm)|$long_time|"
    "softmax $rows_short|softmax|$rows_short|bf16||1|"
    "layernorm $rows_short|layernorm|$rows_short|bf16||1|"
    "rmsnorm $rows_short|rmsnorm|$rows_short|bf16||1|"
    "gelu (erf)|gelu|$flat|bf16||1|"
    "gelu (erf), error budget 1e-3|gelu|$flat|bf16||1|--error-budget 1e-3"
    "gelu_tanh|gelu_tanh|$flat|bf16||1|"
    "silu|silu|$flat|bf16||1|"
    "sum $total f32|sum|$total|f32||1|"
    "reduce sum, axis 0 (columns)|reduce:kind=sum,axis=0|$cube|bf16||1|"
    "reduce mean, axis 2 (rows)|reduce:kind=mean,axis=2|$cube|bf16||1|"
)
cases=() torch_cases=()
for c in "${all_cases[@]}"; do
    IFS='|' read -r label op shape dtype fix times extra <<< "$c"
    if [ -n "$only" ] && ! [[ $label =~ $only ]]; then continue; fi
    cases+=("$c")
    # the anchor has the operators without attributes
    if [ -z "$extra" ] && [[ $op != *:* ]]; then torch_cases+=("$op:$shape:$dtype"); fi
done
[ ${#cases[@]} -gt 0 ] || { echo "rowwise_h200.sh: error: no case matches --only '$only'" >&2; exit 2; }

: > "$out/torch.jsonl"
if [ ${#torch_cases[@]} -gt 0 ]; then
    echo "== PyTorch anchor ($torch_forms, at most $torch_seconds s)" >&2
    device=$([ "$backend" = cuda ] && echo cuda || echo cpu)
    # what it measured before its time ran out is kept
    if ! timeout "$torch_seconds" "$python" "$here/rowwise_torch.py" --device "$device" --forms "$torch_forms" \
            "${torch_cases[@]}" > "$out/torch.jsonl" 2> "$out/torch.log"; then
        echo "rowwise_h200.sh: the PyTorch anchor stopped early (its missing cases are n/a): $(tail -1 "$out/torch.log")" >&2
    fi
fi

echo "== calibrate ($backend)" >&2
"$tessera" calibrate --backend "$backend" | tee "$out/calibrate.txt" >&2

: > "$out/tessera.jsonl"
failed=0
for c in "${cases[@]}"; do
    IFS='|' read -r label op shape dtype fix times extra <<< "$c"
    echo "== tune $label ($shape $dtype${fix:+, $fix})" >&2
    echo "# $label" >> "$out/tessera.jsonl"
    # shellcheck disable=SC2086  # extra holds options, split on purpose
    if ! "$tessera" tune "$op" --shape "$shape" --dtype "$dtype" --backend "$backend" --budget "$((budget * times))" \
            --seconds "$(awk "BEGIN { print $seconds * $times }")" --transfer off ${fix:+--fix "$fix"} --json $extra \
            >> "$out/tessera.jsonl" 2>> "$out/tune.log"; then
        echo "rowwise_h200.sh: error: tune $label failed (see $out/tune.log)" >&2
        sed -i '$ d' "$out/tessera.jsonl"   # its label, without a result
        failed=1
    fi
done
"$python" "$here/rowwise_table.py" "$out/tessera.jsonl" "$out/torch.jsonl" "$out/calibrate.txt" | tee "$out/table.txt"
exit $failed
