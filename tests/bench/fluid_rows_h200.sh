#!/usr/bin/env bash
# fluid_rows_h200.sh - cells per thread along x (cpx: row segments with one
# vector access per direction) on a GPU host, in one run of at most 140 s:
# D3Q19 256^3 f16 and f32 and D2Q9 8192^2 f32 around run 2's best configs
# (every cpx and min_blocks), then wider tunes of D3Q19 (block shapes,
# cpt, cpz too), each beside the copy bound of the same run (fluid_table.py);
# every measured config with its registers (fluid_configs.py); and, if time
# is left, Nsight Compute on the fastest f16 config. Builds nothing.
# usage: R=OUTDIR TESSERA_BUILD=BUILD tests/bench/fluid_rows_h200.sh
# Writes under R: calibrate.txt, tune.jsonl, tune.log, table.txt, configs.txt,
# records.db, ncu-f16.txt.
set -u
B=${TESSERA_BUILD:-build-gpu}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fluid_bench_lib.sh"
fluid_bench_start "${FLUID_CAP:-140}" 8 6
F3=block_x=128,block_y=1,cpt=1,compute=f32,cpz=2,boundary=select,flags=global
F2=block_x=64,block_y=2,cpt=2,compute=f32,cpz=1,boundary=select,flags=global
W=compute=f32,boundary=select,flags=global
# the first tune also fills the inputs and computes the reference: a longer limit
# around run 2's best: every cpx x min_blocks
t "D3Q19 f16 rows" lbm_d3q19:ux=0.05 256x256x256 f16 19 2 18 22 "$F3" exhaustive
t "D3Q19 f32 rows" lbm_d3q19:ux=0.05 256x256x256 f32 19 4 18 18 "$F3" exhaustive
t "D2Q9 f32 rows" lbm_d2q9:ux=0.05 8192x8192 f32 9 4 18 20 "$F2" exhaustive
# the block shape, cpt and cpz too, warm-started from the above
t "D3Q19 f16 wide" lbm_d3q19:ux=0.05 256x256x256 f16 19 2 30 20 "$W" agent
t "D3Q19 f32 wide" lbm_d3q19:ux=0.05 256x256x256 f32 19 4 30 18 "$W" agent
rm -f "$R/one.json"
python3 "$here/fluid_table.py" "$R/tune.jsonl" | tee "$R/table.txt"
"$B/tessera" db export > "$R/records.jsonl" && python3 "$here/fluid_configs.py" "$R/records.jsonl" > "$R/configs.txt"
rm -f "$R/records.jsonl"
best=$(python3 -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f16=[r for r in rows if r["dtype"]=="f16" and r.get("best")]
print(min(f16,key=lambda r:r["best"]["time_ms"])["best"]["config_text"] if f16 else "")' "$R/tune.jsonl")
l=$(left)
if [ -n "$best" ] && [ "$l" -gt 25 ] && command -v ncu >/dev/null; then
  echo "== $(date +%T) ncu f16 $best (left $l s)"
  timeout $((l - 3)) ncu --target-processes all --kernel-name tess_lbm --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats "$B/tessera" tune lbm_d3q19:ux=0.05 --shape 256x256x256 --dtype f16 --backend cuda \
    --budget 1 --fix "$best" --transfer off --db "$R/ncu.db" > "$R/ncu-f16.txt" 2>&1
  rm -f "$R/ncu.db"
  grep -E "DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Duration" "$R/ncu-f16.txt" | head -12
fi
echo "== done $(date +%T) ($(( $(date +%s) - start )) s)"
