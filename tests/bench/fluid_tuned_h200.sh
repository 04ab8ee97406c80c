#!/usr/bin/env bash
# fluid_tuned_h200.sh - the lattice Boltzmann performance table on a GPU
# host in one run of at most 145 s: the copy bandwidth, then tunes of D3Q19
# 256^3 f32 and f16 storage and D2Q9 8192^2 f32 on the operator's test inputs
# (30% of the cells solid, lid, inlet or outlet, at random), each beside the
# copy bound of the same run (fluid_table.py), every measured config with its
# registers (fluid_configs.py); then, while time is left, the 3D cavity on
# 256^3 cells (a real flow: walls on the faces) with the tuned D3Q19 configs
# and their boundary=branch variants (fluid_flow.sh). Builds nothing.
# usage: R=OUTDIR TESSERA_BUILD=BUILD tests/bench/fluid_tuned_h200.sh
# Writes under R: calibrate.txt, tune.jsonl, tune.log, table.txt, configs.txt,
# records.db, flow-f32/ and flow-f16/ (fluid_flow.sh's files, without databases).
set -u
B=${TESSERA_BUILD:-build-gpu}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fluid_bench_lib.sh"
fluid_bench_start "${FLUID_CAP:-145}" 8 6
W=compute=f32,boundary=select,flags=global
t "D3Q19 f32 soa" lbm_d3q19:ux=0.05 256x256x256 f32 19 4 30 18 "$W"
t "D3Q19 f16 soa" lbm_d3q19:ux=0.05 256x256x256 f16 19 2 30 18 "$W"
t "D2Q9 f32 soa" lbm_d2q9:ux=0.05 8192x8192 f32 9 4 30 18 "$W"
rm -f "$R/one.json"
python3 "$here/fluid_table.py" "$R/tune.jsonl" | tee "$R/table.txt"
"$B/tessera" db export > "$R/records.jsonl" && python3 "$here/fluid_configs.py" "$R/records.jsonl" > "$R/configs.txt"
rm -f "$R/records.jsonl"
# the real flow with each tuned D3Q19 config, and with its rules behind the branch
for dt in f32 f16; do
  best=$(python3 -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
b=[r for r in rows if r["dtype"]==sys.argv[2] and r["op"].startswith("lbm_d3q19") and r.get("best")]
print(b[0]["best"]["config_text"] if b else "")' "$R/tune.jsonl" "$dt")
  l=$(left)
  [ -n "$best" ] && [ "$l" -gt 20 ] || { echo "skip (time): flow $dt"; continue; }
  echo "== $(date +%T) flow $dt (left $l s)"
  timeout $((l - 2)) bash "$here/fluid_flow.sh" --tessera "$B/tessera" --fluid "$B/tessera-fluid" --out "$R/flow-$dt" \
    --dtype "$dt" "${best/boundary=select/boundary=branch}" "$best" 2>&1 | grep -E "==|kernel|run " || echo "flow $dt: rc=$?"
  rm -f "$R/flow-$dt"/*.db
done
echo "== done $(date +%T) ($(( $(date +%s) - start )) s)"
