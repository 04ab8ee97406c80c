#!/usr/bin/env bash
# fluid_h200.sh - the lattice Boltzmann benchmark on a GPU host: calibrates
# the copy bandwidth, tunes the stream-collide step (D3Q19 256^3 in f32 and
# in f16 storage, both layouts in f32; D2Q9 8192^2 in f32) and prints its
# GLUPS beside the copy bound copy / (Q * 2 * bytes per population), the
# traffic of reading and writing every population once (fluid_table.py).
# Then tessera-fluid runs the 2D cavity at Re 100 on the GPU against Ghia et
# al., a 3D cavity checked against the float64 reference over 50 steps, and
# the 3D cavity on a 256^3 grid (walls on its faces, fluid inside: the
# throughput of a real flow, whose boundary cells are few, where the tuning
# inputs scatter 30% solid cells), checked over its first 2 steps. Builds nothing.
#
# usage: tests/bench/fluid_h200.sh --tessera PATH --fluid PATH --out DIR [--budget N] [--seconds S]
#                                  [--cases LIST] [--no-app] [--backend cuda|cpu] [--small]
#   --tessera, --fluid   the built tessera and tessera-fluid binaries
#   --out                the directory receiving every result (created)
#   --budget             evaluations per task (default 24)
#   --seconds            time limit of each tune (default 30)
#   --cases              comma-separated subset, run in this order: d3q19-f32,d3q19-f16,d2q9,d3q19-aos
#                        (default: all)
#   --no-app             skip the tessera-fluid runs
#   --small              D3Q19 128^3 and D2Q9 2048^2 (a CPU's table; still far beyond its caches)
# Writes: calibrate.txt, tune.jsonl (one tune --json per task), tune.log,
# table.txt (rewritten after each task), cavity2d_re100.txt/.svg, cavity3d.txt, the runs'
# summaries (*_run.txt), records.db.
set -euo pipefail

tessera="" fluid="" out="" budget=24 seconds=30 backend=cuda app=1 shape3=256x256x256 shape2=8192x8192
selected=d3q19-f32,d3q19-f16,d2q9,d3q19-aos
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a path}; shift 2 ;;
    --fluid) fluid=${2:?--fluid needs a path}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --cases) selected=${2:?--cases needs a list}; shift 2 ;;
    --no-app) app=0; shift ;;
    --small) shape3=128x128x128 shape2=2048x2048; shift ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "fluid_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$tessera" ] && [ -n "$fluid" ] && [ -n "$out" ] || { echo "fluid_h200.sh: error: --tessera, --fluid and --out are required" >&2; exit 2; }
[ -x "$tessera" ] || { echo "fluid_h200.sh: error: no tessera binary at $tessera" >&2; exit 1; }
[ -x "$fluid" ] || { echo "fluid_h200.sh: error: no tessera-fluid binary at $fluid" >&2; exit 1; }
command -v python3 >/dev/null || { echo "fluid_h200.sh: error: python3 prints the table" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export TESSERA_DB=$out/records.db

# name|label|operator with attributes|shape|dtype|Q|bytes per population
cases=(
    "d3q19-f32|D3Q19 f32 soa|lbm_d3q19:ux=0.05|$shape3|f32|19|4"
    "d3q19-f16|D3Q19 f16 soa|lbm_d3q19:ux=0.05|$shape3|f16|19|2"
    "d2q9|D2Q9 f32 soa|lbm_d2q9:ux=0.05|$shape2|f32|9|4"
    "d3q19-aos|D3Q19 f32 aos|lbm_d3q19:ux=0.05,layout=aos|$shape3|f32|19|4"
)
for want in ${selected//,/ }; do
    printf '%s\n' "${cases[@]}" | grep -q "^$want|" || { echo "fluid_h200.sh: error: unknown case '$want' in --cases" >&2; exit 2; }
done
echo "== $(date -u +%T) calibrate ($backend)" >&2
"$tessera" calibrate --backend "$backend" | tee "$out/calibrate.txt" >&2

: > "$out/tune.jsonl"
for c in "${cases[@]}"; do
    IFS='|' read -r name label op shape dtype q bytes <<< "$c"
    case ",$selected," in *",$name,"*) ;; *) continue ;; esac
    echo "== $(date -u +%T) tune $label ($shape)" >&2
    if ! "$tessera" tune "$op" --shape "$shape" --dtype "$dtype" --backend "$backend" --budget "$budget" \
            --seconds "$seconds" --json > "$out/tune.one" 2>> "$out/tune.log"; then
        echo "fluid_h200.sh: error: tune $label failed (see $out/tune.log)" >&2
        exit 1
    fi
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["label"],d["q"],d["pop_bytes"]=sys.argv[2],int(sys.argv[3]),int(sys.argv[4]); print(json.dumps(d))' \
        "$out/tune.one" "$label" "$q" "$bytes" >> "$out/tune.jsonl"
    python3 "$here/fluid_table.py" "$out/tune.jsonl" > "$out/table.txt"
done
rm -f "$out/tune.one"
cat "$out/table.txt"
[ "$app" = 1 ] || exit 0

echo "== tessera-fluid: 2D cavity, Re 100, 129 x 129, against Ghia et al." >&2
"$fluid" --case cavity2d --size 129 --re 100 --backend "$backend" --check 100 --max-deviation 0.02 \
    --table "$out/cavity2d_re100.txt" --svg "$out/cavity2d_re100.svg" | tee "$out/cavity2d_run.txt"
echo "== tessera-fluid: 3D cavity, Re 100, 64^3, 3000 steps" >&2
"$fluid" --case cavity3d --size 64 --re 100 --backend "$backend" --steps 3000 --check 50 \
    --table "$out/cavity3d.txt" | tee "$out/cavity3d_run.txt"
echo "== tessera-fluid: 3D cavity on 256^3 cells, 200 steps, the first 2 checked" >&2
"$fluid" --case cavity3d --size 254 --re 100 --backend "$backend" --steps 200 --tolerance 0 --check 2 \
    | tee "$out/cavity3d_256_run.txt"
