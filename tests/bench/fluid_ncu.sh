#!/usr/bin/env bash
# fluid_ncu.sh - Nsight Compute's view of one lattice Boltzmann step on a GPU
# host: tessera-fluid runs a few steps of the 3D cavity (a 256^3 grid: walls
# on the faces, a lid, fluid inside, so the boundary rules are rare as in a
# real flow) under ncu, which profiles the first six stream-collide launches
# (the check of the kernel on random inputs when it is first used, then the
# cavity's steps): DRAM throughput against its peak, achieved occupancy, and
# where warps stall.
# Skips (exit 77) where ncu is missing.
#
# usage: tests/bench/fluid_ncu.sh --fluid PATH --out DIR [--dtype f32|f16] [--layout soa|aos]
# Writes: ncu-DTYPE-LAYOUT.txt (the report), ncu-DTYPE-LAYOUT.log (the run's output).
set -euo pipefail

fluid="" out="" dtype=f32 layout=soa
while [ $# -gt 0 ]; do
    case $1 in
    --fluid) fluid=${2:?--fluid needs a path}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --dtype) dtype=${2:?--dtype needs a value}; shift 2 ;;
    --layout) layout=${2:?--layout needs a value}; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "fluid_ncu.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$fluid" ] && [ -n "$out" ] || { echo "fluid_ncu.sh: error: --fluid and --out are required" >&2; exit 2; }
[ -x "$fluid" ] || { echo "fluid_ncu.sh: error: no tessera-fluid binary at $fluid" >&2; exit 1; }
command -v ncu >/dev/null || { echo "fluid_ncu.sh: ncu is not installed here: skipped" >&2; exit 77; }
mkdir -p "$out"
name=$out/ncu-$dtype-$layout
ncu --target-processes all --kernel-name tess_lbm --launch-count 6 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats \
    "$fluid" --case cavity3d --size 254 --re 100 --backend cuda --dtype "$dtype" --layout "$layout" \
    --steps 3 --tolerance 0 > "$name.txt" 2> "$name.log"
grep -E "DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Duration|Stall" "$name.txt" || true
