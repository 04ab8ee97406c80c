#!/usr/bin/env bash
# rowwise_long_rows.sh - the long-row variants on a GPU host: for softmax,
# layernorm and rmsnorm over 4096x65536 bf16, every legal config with the row
# in registers and one block's rows fixed (vec=8, rows_per_block=1), that is
# threads per row against the cluster's size, measured in order (strategy
# exhaustive), beside PyTorch eager on the same shapes and the copy
# bandwidth, both measured first in the same run. Every config's time is in
# records.jsonl; variants.txt is the table of them (rowwise_variants.py).
# Last, softmax over 32768x8192 searched freely, to compare.
#
# usage: tests/bench/rowwise_long_rows.sh [--out DIR] [--seconds S] [--shape RxC]
#   --seconds  the time limit of a case (default 6; the long rows of softmax,
#              whose space has keep_exp too, get 2 s more, layernorm's 1 s)
# Environment: TESSERA (the binary, default build/tessera), PYTHON (python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
out="" seconds=6 shape=4096x65536 mid=32768x8192
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --shape) shape=${2:?--shape needs a value}; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "rowwise_long_rows.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "rowwise_long_rows.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
out=${out:-data/bench/rowwise-long-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA_DB=${TESSERA_DB:-$out/records.db}

echo "== PyTorch eager (at most 8 s)" >&2
timeout 8 "$python" "$here/rowwise_torch.py" --device cuda --dtype bf16 --forms eager \
    "softmax:$shape" "layernorm:$shape" "rmsnorm:$shape" "softmax:$mid" > "$out/torch.jsonl" 2> "$out/torch.log" ||
    echo "rowwise_long_rows.sh: PyTorch anchor incomplete: $(tail -1 "$out/torch.log")" >&2
echo "== calibrate" >&2
timeout 8 "$tessera" calibrate --backend cuda > "$out/calibrate.txt" 2>&1 ||
    echo "rowwise_long_rows.sh: calibrate did not finish" >&2
cat "$out/calibrate.txt" >&2

: > "$out/tessera.jsonl"
# operator|shape|fixed parameters|strategy|seconds
cases=(
    "softmax|$shape|vec=8,rows_per_block=1,cache=registers,unroll=1,online=0|exhaustive|$((seconds + 2))"
    "layernorm|$shape|vec=8,rows_per_block=1,cache=registers,unroll=1|exhaustive|$((seconds + 1))"
    "rmsnorm|$shape|vec=8,rows_per_block=1,cache=registers,unroll=1|exhaustive|$seconds"
    "softmax|$mid||agent|$((seconds + 1))"
)
for c in "${cases[@]}"; do
    IFS='|' read -r op shp fix strategy secs <<< "$c"
    echo "== $op $shp ${fix:-(free)}" >&2
    timeout $((secs + 3)) "$tessera" tune "$op" --shape "$shp" --dtype bf16 --backend cuda --strategy "$strategy" \
        --budget 40 --seconds "$secs" --transfer off ${fix:+--fix "$fix"} --json >> "$out/tessera.jsonl" 2>> "$out/tune.log" ||
        echo "rowwise_long_rows.sh: tune $op $shp stopped early (see tune.log)" >&2
    "$tessera" db export -o "$out/records.jsonl" 2>> "$out/tune.log" || true   # kept if a later case is cut off
done
"$python" "$here/rowwise_variants.py" "$out/records.jsonl" "$out/torch.jsonl" "$out/calibrate.txt" | tee "$out/variants.txt"
