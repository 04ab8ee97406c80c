#!/usr/bin/env bash
# fluid_flow.sh - the stream-collide step's throughput on a real flow, one
# config at a time: the 3D lid-driven cavity (walls on the faces, fluid
# inside: boundary cells are few, where the tuning inputs scatter 30% solid
# cells). For each config, `tessera tune --fix` records it (verified and
# timed on the test inputs) as the only result of the cavity's own task in a
# database of its own, and tessera-fluid then runs the cavity with it (the
# kernel tessera dispatches: that exact record) and prints its MLUPS. The
# copy bandwidth is calibrated first, in the same run.
#
# usage: tests/bench/fluid_flow.sh --tessera PATH --fluid PATH --out DIR [--size N] [--steps S]
#                                  [--dtype f32|f16] [--backend cuda|cpu] CONFIG...
#   --size     fluid cells across the cavity (default 254: a 256^3 grid)
#   --steps    steps of each run (default 200)
#   CONFIG     a full config of the cuda (or cpu) space, "block_x=128,...,boundary=branch"
# Writes: calibrate.txt, and flow-K.db, flow-K-tune.txt and flow-K-run.txt for the K-th config.
set -euo pipefail

tessera="" fluid="" out="" size=254 steps=200 dtype=f32 backend=cuda
configs=()
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a path}; shift 2 ;;
    --fluid) fluid=${2:?--fluid needs a path}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --size) size=${2:?--size needs a value}; shift 2 ;;
    --steps) steps=${2:?--steps needs a value}; shift 2 ;;
    --dtype) dtype=${2:?--dtype needs a value}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "fluid_flow.sh: error: unknown option '$1'" >&2; exit 2 ;;
    *) configs+=("$1"); shift ;;
    esac
done
[ -n "$tessera" ] && [ -n "$fluid" ] && [ -n "$out" ] || { echo "fluid_flow.sh: error: --tessera, --fluid and --out are required" >&2; exit 2; }
[ ${#configs[@]} -gt 0 ] || { echo "fluid_flow.sh: error: no config given" >&2; exit 2; }
mkdir -p "$out"
"$tessera" calibrate --backend "$backend" --db "$out/calibrate.db" > "$out/calibrate.txt"

# The cavity's task as tessera-fluid names it (run.c): Re 100 at lid speed 0.1.
omega=$(python3 -c "import sys; n=float(sys.argv[1]); print('%.17g' % (1.0 / (3.0 * (0.1 * n / 100.0) + 0.5)))" "$size")
spec="lbm_d3q19:collision=bgk,layout=soa,omega=$omega,ux=0.10000000000000001"
cells=$((size + 2))
k=0
for config in "${configs[@]}"; do
    k=$((k + 1))
    db=$out/flow-$k.db
    rm -f "$db"
    echo "== $(date -u +%T) config $k: $config" >&2
    "$tessera" tune "$spec" --shape "${cells}x${cells}x${cells}" --dtype "$dtype" --backend "$backend" \
        --fix "$config" --budget 1 --transfer off --db "$db" > "$out/flow-$k-tune.txt"
    "$fluid" --case cavity3d --size "$size" --re 100 --backend "$backend" --dtype "$dtype" --steps "$steps" \
        --tolerance 0 --db "$db" | tee "$out/flow-$k-run.txt"
    grep -q "(exact)" "$out/flow-$k-run.txt" || { echo "fluid_flow.sh: error: the run did not use config $k" >&2; exit 1; }
done
