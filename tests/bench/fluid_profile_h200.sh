#!/usr/bin/env bash
# fluid_profile_h200.sh - the tuned D3Q19 kernels on a real flow, and what
# limits f16 storage, on a GPU host in one run of at most 115 s: for each
# CONFIG (f16 storage first, then f32), `tessera tune --fix` records it for the
# 3D cavity's task on 256^3 cells (verified and timed on the test inputs) in a
# database of its own, and tessera-fluid runs the cavity (a real flow) with it
# for 200 steps, the first 2 checked against the float64 reference. Nsight
# Compute profiles one cavity step with the f16 config, then (time allowing)
# its first launch on the operator's test inputs (speed of light, compute and
# memory workload, instruction mix, warp stalls, occupancy). Skips the
# profiles where ncu is missing. Builds nothing.
# usage: R=OUTDIR TESSERA_BUILD=BUILD tests/bench/fluid_profile_h200.sh F16_CONFIG F32_CONFIG
# Writes under R: DTYPE-tune.txt, DTYPE-run.txt, ncu-f16-cavity.txt, ncu-f16-inputs.txt.
set -u
B=${TESSERA_BUILD:-build-gpu}
start=$(date +%s); cap=${FLUID_CAP:-115}
left() { echo $((cap - ($(date +%s) - start))); }
[ $# -eq 2 ] || { echo "usage: R=OUTDIR $0 F16_CONFIG F32_CONFIG" >&2; exit 2; }
# the cavity's task as tessera-fluid names it (run.c): Re 100 at lid speed 0.1 across 254 cells
spec="lbm_d3q19:collision=bgk,layout=soa,omega=0.79239302694136293,ux=0.10000000000000001"
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
          --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats)
summary() { grep -E "DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per Thread|Duration" "$1" | head -8; }
f16=$1
for dt in f16 f32; do
  config=$1; shift
  db=$R/$dt.db
  l=$(left); [ "$l" -gt 25 ] || { echo "skip (time): $dt"; continue; }
  echo "== $(date +%T) $dt $config (left $l s)"
  timeout 20 "$B/tessera" tune "$spec" --shape 256x256x256 --dtype "$dt" --backend cuda --fix "$config" --budget 1 \
    --transfer off --db "$db" > "$R/$dt-tune.txt" 2>&1 || { echo "tune $dt: rc=$?"; tail -3 "$R/$dt-tune.txt"; continue; }
  timeout 30 "$B/tessera-fluid" --case cavity3d --size 254 --re 100 --backend cuda --dtype "$dt" --steps 200 \
    --tolerance 0 --check 2 --db "$db" > "$R/$dt-run.txt" 2>&1; echo "run $dt: rc=$?"
  grep -E "kernel|check|run " "$R/$dt-run.txt"
  l=$(left)
  if [ "$dt" = f16 ] && command -v ncu >/dev/null && [ "$l" -gt 60 ]; then
    echo "== $(date +%T) ncu f16 cavity step (left $l s)"
    timeout 30 ncu --target-processes all --kernel-name tess_lbm --launch-skip 1 --launch-count 1 "${sections[@]}" \
      "$B/tessera-fluid" --case cavity3d --size 254 --re 100 --backend cuda --dtype f16 --steps 3 --tolerance 0 \
      --db "$db" > "$R/ncu-f16-cavity.txt" 2>&1; echo "ncu: rc=$?"
    summary "$R/ncu-f16-cavity.txt"
  fi
  rm -f "$db"
done
l=$(left)
if command -v ncu >/dev/null && [ "$l" -gt 30 ]; then
  echo "== $(date +%T) ncu f16 test inputs (left $l s)"
  timeout $((l - 3)) ncu --target-processes all --kernel-name tess_lbm --launch-count 1 "${sections[@]}" \
    "$B/tessera" tune lbm_d3q19:ux=0.05 --shape 256x256x256 --dtype f16 --backend cuda --budget 1 --fix "$f16" \
    --transfer off --db "$R/ncu.db" > "$R/ncu-f16-inputs.txt" 2>&1; echo "ncu: rc=$?"
  rm -f "$R/ncu.db"
  summary "$R/ncu-f16-inputs.txt"
fi
echo "== done $(date +%T) ($(( $(date +%s) - start )) s)"
