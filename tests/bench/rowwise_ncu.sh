#!/usr/bin/env bash
# rowwise_ncu.sh - Nsight Compute's view of one row-wise kernel on a GPU
# host: tessera tune runs the one config --config gives (every parameter
# fixed) and ncu profiles its first launch (the check on random inputs):
# DRAM throughput against its peak, achieved and theoretical occupancy and
# what limits it (registers, shared memory, the shared memory carve-out),
# and where warps stall. Skips (exit 77) where ncu is missing.
#
# usage: tests/bench/rowwise_ncu.sh --op OP --shape RxC --config TEXT --out DIR [--dtype bf16]
# Writes: ncu-OP-RxC-N.txt (the report; N counts the reports of that case
# in DIR) and its .log (the run's output); prints the report's key lines.
# Environment: TESSERA (the binary, default build/tessera).
set -euo pipefail

tessera=${TESSERA:-build/tessera}
op="" shape="" config="" out="" dtype=bf16
while [ $# -gt 0 ]; do
    case $1 in
    --op) op=${2:?--op needs a value}; shift 2 ;;
    --shape) shape=${2:?--shape needs a value}; shift 2 ;;
    --config) config=${2:?--config needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --dtype) dtype=${2:?--dtype needs a value}; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "rowwise_ncu.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$op" ] && [ -n "$shape" ] && [ -n "$config" ] && [ -n "$out" ] ||
    { echo "rowwise_ncu.sh: error: --op, --shape, --config and --out are required" >&2; exit 2; }
[ -x "$tessera" ] || { echo "rowwise_ncu.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
command -v ncu >/dev/null || { echo "rowwise_ncu.sh: ncu is not installed here: skipped" >&2; exit 77; }
mkdir -p "$out"
n=1
while [ -e "$out/ncu-$op-$shape-$n.txt" ]; do n=$((n + 1)); done
name=$out/ncu-$op-$shape-$n
echo "# $op $shape $dtype $config" > "$name.txt"
ncu --target-processes all --kernel-name "${op}_rows" --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats \
    "$tessera" tune "$op" --shape "$shape" --dtype "$dtype" --backend cuda --fix "$config" --budget 1 \
    --seconds 1 --transfer off >> "$name.txt" 2> "$name.log" || echo "rowwise_ncu.sh: ncu or tune failed (see $name.log)" >&2
echo "== $op $shape $config"
grep -E "DRAM Throughput|^ +Duration|Achieved Occupancy|Theoretical Occupancy|Block Limit (Registers|Shared Mem)|Shared Memory Configuration Size|Registers Per Thread|Warp Cycles Per Issued|stalled" "$name.txt" |
    sed -E 's/ {2,}/ /g' | cut -c1-220 || true
