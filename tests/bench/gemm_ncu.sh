#!/usr/bin/env bash
# gemm_ncu.sh - Nsight Compute's view of one gemm or conv2d kernel on a GPU
# host: a tune of a single config (its first launch profiled: speed of
# light of compute and memory, occupancy, warp stall reasons), in a scratch
# database of its own so the profiled, slower time is not recorded beside
# the benchmark's.
#
# usage: tests/bench/gemm_ncu.sh OP SHAPE DTYPES CONFIG OUT
#   e.g. tests/bench/gemm_ncu.sh gemm:layout=nt 4096x4096x4096 bf16,f32,bf16 path=wgmma,bm=128,... ncu.txt
# Environment: TESSERA (the binary, default build/tessera), NCU (default ncu).
set -euo pipefail

[ $# -eq 5 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
op=$1 shape=$2 dtypes=$3 config=$4 out=$5
tessera=${TESSERA:-build/tessera}
ncu=${NCU:-ncu}
command -v "$ncu" > /dev/null || { echo "gemm_ncu.sh: error: no Nsight Compute ($ncu) on this host" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
TESSERA_DB=$scratch/records.db "$ncu" --target-processes all -k regex:gemm_ -c 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    "$tessera" tune "$op" --shape "$shape" --dtype "$dtypes" --backend cuda --budget 1 --fix "$config" > "$out" 2>&1
