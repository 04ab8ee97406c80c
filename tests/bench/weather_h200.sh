#!/usr/bin/env bash
# weather_h200.sh - tessera-weather's benchmark on a GPU host, about three
# minutes on an H200: calibrates the copy bandwidth in the same run; tunes
# the app's kernels (sphadv, sphdiff) on an ERA5-sized grid (0.25 degrees,
# 137 levels: 137 x 725 x 1440 with the rows beyond the poles) against their
# untuned default, each as a fraction of the copy bandwidth; tunes sphadv at
# 1 degree with 30 levels and then, warm (from those records) and cold (a
# database of its own), at 0.5 degrees, 0.25 degrees x 137 and a
# cubed-sphere-face-sized grid (64 x 388 x 384), reporting evaluations to
# within 5% of the best either found and the first warm proposal's speed;
# and runs the test case 1 validation at 2.8, 1.4 and 0.7 degrees on the GPU.
# Builds nothing: it takes the built programs.
#
# usage: tests/bench/weather_h200.sh --weather build/tessera-weather --tessera build/tessera --out DIR
#                                    [--backend cuda|cpu] [--budget N] [--small]
#   --small   small grids and budgets (to try the script on a CPU)
# Writes DIR/calibrate.txt, DIR/tune-*.json, DIR/records-*.jsonl, DIR/transfer.txt, DIR/tc1/ and
# DIR/summary.txt (the table it prints).
set -euo pipefail

weather="" tessera="" out="" backend=cuda budget=16 small=0
while [ $# -gt 0 ]; do
    case $1 in
    --weather) weather=${2:?--weather needs a value}; shift 2 ;;
    --tessera) tessera=${2:?--tessera needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --small) small=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "weather_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
for p in "$weather" "$tessera"; do
    [ -x "$p" ] || { echo "weather_h200.sh: error: --weather and --tessera name the built programs ('$p' is not one)" >&2; exit 2; }
done
[ -n "$out" ] || { echo "weather_h200.sh: error: --out DIR is required" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
stencils=$(cd "$(dirname "$weather")" && pwd)/weather-stencils
[ -d "$stencils" ] || stencils=$(cd "$(dirname "$0")/../../apps/weather/stencils" && pwd)
export TESSERA_STENCIL_PATH=$stencils
warm_db=$out/records-warm.db cold_db=$out/records-cold.db
rm -f "$warm_db" "$cold_db"

if [ "$small" = 1 ]; then
    era5=2x36x64 source=2x20x32 targets="2x36x64 4x20x32 2x20x16" rows=16,32 budget=${budget:-6}
else
    era5=137x725x1440 source=30x185x360 targets="30x365x720 137x725x1440 64x388x384" rows=64,128,256
fi

echo "== calibrate ($backend)" >&2
"$tessera" calibrate --backend "$backend" --db "$warm_db" | tee "$out/calibrate.txt" >&2
"$tessera" calibrate --backend "$backend" --db "$cold_db" >/dev/null

tune() {   # tune NAME DB OP SHAPE TRANSFER
    echo "== tune $3 $4 ($1)" >&2
    "$tessera" tune "$3" --shape "$4" --dtype f32 --backend "$backend" --budget "$budget" --transfer "$5" \
        --db "$2" --json >"$out/tune-$1.json"
}
tune sphdiff-era5 "$cold_db" sphdiff "$era5" off
tune sphadv-source "$warm_db" sphadv "$source" off
for t in $targets; do
    tune "sphadv-$t-warm" "$warm_db" sphadv "$t" auto
    tune "sphadv-$t-cold" "$cold_db" sphadv "$t" off
done
"$tessera" db export --db "$warm_db" -o "$out/records-warm.jsonl" >&2
"$tessera" db export --db "$cold_db" -o "$out/records-cold.jsonl" >&2

echo "== test case 1 on $backend (float64)" >&2
TESSERA_DB=$out/records-tc1.db "$weather" tc1 --backend "$backend" --rows "$rows" --out "$out/tc1" | tee "$out/tc1.log" >&2

python3 - "$out" "$era5" "$targets" <<'PY' | tee "$out/summary.txt"
import json, sys
out, era5, targets = sys.argv[1], sys.argv[2], sys.argv[3].split()
def load(name): return json.load(open(f"{out}/tune-{name}.json"))
def records(db):
    rows = {}
    for line in open(f"{out}/records-{db}.jsonl"):
        r = json.loads(line)
        rows.setdefault(r["task"], []).append(r)
    return rows
print("per kernel at %s (f32), tuned against the untuned default, in the same run as the copy bandwidth" % era5)
print("%-8s %10s %10s %8s %9s %8s" % ("kernel", "default_ms", "best_ms", "speedup", "GB/s", "of copy"))
for name in ("sphadv-%s-cold" % era5, "sphdiff-era5"):
    r = load(name)
    b = r["best"]
    print("%-8s %10.3f %10.3f %8.2f %9.1f %7.1f%%" % (r["op"], r["default_ms"], b["time_ms"],
          r["default_ms"] / b["time_ms"], b["gbps"], 100 * r["fraction_of_ceiling"]))
warm, cold = records("warm"), records("cold")
print("\nsphadv tuned at the source grid, then warm (from its records) and cold on each target")
print("%-14s %11s %11s %8s %18s" % ("target", "cold to 5%", "warm to 5%", "ratio", "first warm / best"))
lines = []
for t in targets:
    key = "sphadv:f32:" + t
    runs = {m: [r for r in recs.get(key, [])] for m, recs in (("warm", warm), ("cold", cold))}
    ok = [r["time_ms"] for rs in runs.values() for r in rs if r["status"] == "ok"]
    if not ok:
        print("%-14s no correct result" % t); continue
    best = min(ok)
    def to5(rs):
        for i, r in enumerate(rs, 1):
            if r["status"] == "ok" and r["time_ms"] <= 1.05 * best: return i
        return float("inf")
    first = [r for r in runs["warm"] if r["strategy"].startswith("transfer")]
    fw = best / first[0]["time_ms"] if first and first[0]["status"] == "ok" else float("nan")
    c, w = to5(runs["cold"]), to5(runs["warm"])
    print("%-14s %11s %11s %8.2f %17.1f%%" % (t, c, w, c / w if w else float("nan"), 100 * fw))
PY
echo "wrote $out" >&2
