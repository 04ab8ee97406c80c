#!/usr/bin/env bash
# fluid_h200.sh - the lattice Boltzmann benchmark on a GPU host: calibrates
# the copy bandwidth, tunes the stream-collide step (D3Q19 256^3 in f32 and
# in f16 storage, both layouts in f32; D2Q9 8192^2 in f32) and prints its
# GLUPS beside the copy bound copy / (Q * 2 * bytes per population), the
# traffic of reading and writing every population once. Then tessera-fluid
# runs the 2D cavity at Re 100 on the GPU against Ghia et al. and a 3D cavity
# checked against the float64 reference. Builds nothing; about 3 minutes.
#
# usage: tests/bench/fluid_h200.sh --tessera PATH --fluid PATH --out DIR [--budget N] [--backend cuda|cpu]
#   --tessera, --fluid   the built tessera and tessera-fluid binaries
#   --out                the directory receiving every result (created)
#   --budget             evaluations per task (default 24)
# Writes: calibrate.txt, tune.jsonl (one tune --json per task), tune.log,
# table.txt (the printed table), cavity2d_re100.txt/.svg, cavity3d.txt, records.db.
set -euo pipefail

tessera="" fluid="" out="" budget=24 backend=cuda
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a path}; shift 2 ;;
    --fluid) fluid=${2:?--fluid needs a path}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "fluid_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$tessera" ] && [ -n "$fluid" ] && [ -n "$out" ] || { echo "fluid_h200.sh: error: --tessera, --fluid and --out are required" >&2; exit 2; }
[ -x "$tessera" ] || { echo "fluid_h200.sh: error: no tessera binary at $tessera" >&2; exit 1; }
[ -x "$fluid" ] || { echo "fluid_h200.sh: error: no tessera-fluid binary at $fluid" >&2; exit 1; }
command -v python3 >/dev/null || { echo "fluid_h200.sh: error: python3 prints the table" >&2; exit 1; }
mkdir -p "$out"
export TESSERA_DB=$out/records.db

echo "== calibrate ($backend)" >&2
"$tessera" calibrate --backend "$backend" | tee "$out/calibrate.txt" >&2

# label|operator with attributes|shape|dtype|Q|bytes per population
cases=(
    "D3Q19 f32 soa|lbm_d3q19:ux=0.05|256x256x256|f32|19|4"
    "D3Q19 f32 aos|lbm_d3q19:ux=0.05,layout=aos|256x256x256|f32|19|4"
    "D3Q19 f16 soa|lbm_d3q19:ux=0.05|256x256x256|f16|19|2"
    "D2Q9 f32 soa|lbm_d2q9:ux=0.05|8192x8192|f32|9|4"
)
: > "$out/tune.jsonl"
for c in "${cases[@]}"; do
    IFS='|' read -r label op shape dtype q bytes <<< "$c"
    echo "== tune $label ($shape)" >&2
    if ! "$tessera" tune "$op" --shape "$shape" --dtype "$dtype" --backend "$backend" --budget "$budget" \
            --seconds 30 --json > "$out/tune.one" 2>> "$out/tune.log"; then
        echo "fluid_h200.sh: error: tune $label failed (see $out/tune.log)" >&2
        exit 1
    fi
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["label"],d["q"],d["pop_bytes"]=sys.argv[2],int(sys.argv[3]),int(sys.argv[4]); print(json.dumps(d))' \
        "$out/tune.one" "$label" "$q" "$bytes" >> "$out/tune.jsonl"
done
rm -f "$out/tune.one"

python3 - "$out/tune.jsonl" <<'PY' | tee "$out/table.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("%-15s %-12s %9s %9s %11s %9s %7s  %s" % ("task", "shape", "ms/step", "GLUPS", "bound GLUPS", "of bound", "vs dflt", "best config"))
for r in rows:
    cells = 1
    for e in r["shape"].split("x"): cells *= int(e)
    best = r.get("best") or {}
    ms = best.get("time_ms") or float("nan")
    glups = cells / (ms * 1e-3) / 1e9
    copy = r.get("ceiling_gbps") or 0.0   # GB/s, calibrated in this run
    bound = copy / (r["q"] * 2 * r["pop_bytes"]) if copy else float("nan")
    sp = r.get("speedup_over_default")
    print("%-15s %-12s %9.4f %9.2f %11.2f %8.1f%% %7s  %s" % (r["label"], r["shape"], ms, glups, bound,
          100 * glups / bound if copy else float("nan"), "%.2fx" % sp if sp else "n/a", best.get("config_text", "-")))
print("bound: calibrated copy bandwidth / (Q x 2 x bytes per population); the flags add 4 bytes per cell on top")
PY

echo "== tessera-fluid: 2D cavity, Re 100, 129 x 129, against Ghia et al." >&2
"$fluid" --case cavity2d --size 129 --re 100 --backend "$backend" --check 100 --max-deviation 0.02 \
    --table "$out/cavity2d_re100.txt" --svg "$out/cavity2d_re100.svg" | tee "$out/cavity2d_run.txt"
echo "== tessera-fluid: 3D cavity, Re 100, 64^3, 3000 steps" >&2
"$fluid" --case cavity3d --size 64 --re 100 --backend "$backend" --steps 3000 --check 50 \
    --table "$out/cavity3d.txt" | tee "$out/cavity3d_run.txt"
