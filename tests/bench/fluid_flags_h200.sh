#!/usr/bin/env bash
# fluid_flags_h200.sh - the neighbours' kinds from a shared-memory tile (flags=shared) against
# global loads (flags=global), D3Q19 256^3 f16 and f32, in one run of at most 48 s.
# usage: R=OUTDIR TESSERA_BUILD=BUILD tests/bench/fluid_flags_h200.sh
set -u
B=${TESSERA_BUILD:-build-gpu}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fluid_bench_lib.sh"
fluid_bench_start 48 6 4
F3=block_x=128,block_y=1,cpt=1,compute=f32,boundary=select
# the first tune also fills the inputs and computes the reference: a longer limit
t "D3Q19 f16 glob" lbm_d3q19:ux=0.05 256x256x256 f16 19 2 1 9 "$F3,min_blocks=2,cpz=2,flags=global"
t "D3Q19 f16 tile" lbm_d3q19:ux=0.05 256x256x256 f16 19 2 6 6 "$F3,flags=shared"
t "D3Q19 f32 glob" lbm_d3q19:ux=0.05 256x256x256 f32 19 4 1 6 "$F3,min_blocks=2,cpz=2,flags=global"
t "D3Q19 f32 tile" lbm_d3q19:ux=0.05 256x256x256 f32 19 4 6 6 "$F3,flags=shared"
python3 tests/bench/fluid_table.py "$R/tune.jsonl" | tee "$R/table.txt"
echo "== done $(date +%T) ($(( $(date +%s) - start )) s)"
