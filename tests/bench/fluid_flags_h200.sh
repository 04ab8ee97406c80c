#!/usr/bin/env bash
# fluid_flags_h200.sh - the neighbours' kinds from a shared-memory tile (flags=shared) against
# global loads (flags=global), D3Q19 256^3 f16 and f32, in one run of at most 48 s.
# usage: R=OUTDIR TESSERA_BUILD=BUILD tests/bench/fluid_flags_h200.sh
set -u
B=${TESSERA_BUILD:-build-gpu}
start=$(date +%s); cap=48
left() { echo $((cap - ($(date +%s) - start))); }
export TESSERA_DB=${TESSERA_DB:-$R/records.db}
echo "== calibrate $(date +%T)"
timeout 6 "$B/tessera" calibrate --backend cuda | tee "$R/calibrate.txt"
: > "$R/tune.jsonl"
t() { # LABEL OP SHAPE DTYPE Q BYTES BUDGET SECONDS FIX
  local l; l=$(left); [ "$l" -lt 4 ] && { echo "skip (time): $1"; return 0; }
  local lim=$(( $8 + 4 )); [ "$lim" -gt "$l" ] && lim=$l
  echo "== $(date +%T) $1 (left $l s)"
  if timeout "$lim" "$B/tessera" tune "$2" --shape "$3" --dtype "$4" --backend cuda --budget "$7" --seconds "$8" \
       --fix "$9" --json > "$R/one.json" 2>> "$R/tune.log"; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["label"],d["q"],d["pop_bytes"]=sys.argv[2],int(sys.argv[3]),int(sys.argv[4]); print(json.dumps(d))' \
      "$R/one.json" "$1" "$5" "$6" >> "$R/tune.jsonl"
  else echo "rc=$? $1"; tail -3 "$R/tune.log"; fi
}
F3=block_x=128,block_y=1,cpt=1,compute=f32,boundary=select
# the first tune also fills the inputs and computes the reference: a longer limit
t "D3Q19 f16 glob" lbm_d3q19:ux=0.05 256x256x256 f16 19 2 1 9 "$F3,min_blocks=2,cpz=2,flags=global"
t "D3Q19 f16 tile" lbm_d3q19:ux=0.05 256x256x256 f16 19 2 6 6 "$F3,flags=shared"
t "D3Q19 f32 glob" lbm_d3q19:ux=0.05 256x256x256 f32 19 4 1 6 "$F3,min_blocks=2,cpz=2,flags=global"
t "D3Q19 f32 tile" lbm_d3q19:ux=0.05 256x256x256 f32 19 4 6 6 "$F3,flags=shared"
python3 tests/bench/fluid_table.py "$R/tune.jsonl" | tee "$R/table.txt"
echo "== done $(date +%T) ($(( $(date +%s) - start )) s)"
