#!/usr/bin/env bash
# weather_h200.sh - tessera-weather's benchmark on a GPU host, within a time
# limit (--seconds): the most telling measurements first, each step under its
# share of the time left (in proportion to its estimated cost), and a table
# line printed (and added to DIR/summary.txt) as soon as its step ends, so a
# run cut short still leaves numbers. In order:
#   1. the copy bandwidth, calibrated once in this run (every database of the
#      run starts as a copy of that one, so every fraction refers to it);
#   2. test case 1 on the GPU in float64 at 2.8, 1.4 and 0.7 degrees, both
#      flow angles (the convergence table: l1, l2, linf and their orders);
#   3. sphadv and sphdiff tuned on an ERA5-sized grid (0.25 degrees, 137
#      levels: 137 x 725 x 1440 with the rows beyond the poles) against the
#      untuned default, each as a fraction of the copy bandwidth; each tune
#      is also that kernel's cold run of step 5 on that grid;
#   4. each kernel of --ops tuned at 1 degree with 30 levels (the source of
#      the warm starts);
#   5. each kernel warm (from the source's records alone) and cold (a database
#      without them) at 0.5 degrees x 30, a cubed-sphere face (64 x 388 x 384)
#      and the ERA5 grid: evaluations to within 5% of the best either found,
#      and the first warm proposal's time as a fraction of the best.
# Every candidate is verified against the float64 reference before it is
# timed; on the large grids that reference, computed on the host for two sets
# of inputs, is most of a tune's time (on the H200 host a whole sphdiff tune
# on the ERA5 grid took 17 s, about 0.09 s per million points; sphadv's did
# not finish its setup in 30 s, more than 0.19 s per million points), so each
# grid is tuned once per database and nothing twice, and --era5 puts a grid of
# fewer levels in its place where the time is short.
# Builds nothing: it takes the built programs.
#
# usage: tests/bench/weather_h200.sh --weather build/tessera-weather --tessera build/tessera --out DIR
#                                    [--backend cuda|cpu] [--budget N] [--seconds S] [--sizes full|reduced|small]
#                                    [--parts tc1,kernels,transfer,counters] [--import FILE,...]
#                                    [--targets SHAPE,...] [--era5 SHAPE] [--ops OP,...]
#                                    [--sources FILE,...]
#   --budget   evaluations of each tune (default 10)
#   --seconds  the whole run's limit (default 150)
#   --sizes    full: the grids above; reduced: the ERA5 grid at 1 degree (137 x 185 x 360), the
#              others halved; small: a few thousand points (to try the script on a CPU)
#   --parts    the steps to run (default all): tc1 (step 2), kernels (step 3), transfer (steps 4
#              and 5; without kernels the ERA5 grid's cold run is its own tune)
#              (not by default) counters: each kernel's dispatched config on the --era5 grid run
#              once under Nsight Compute (ncu): DRAM bytes and instructions per point, issue
#              utilization and occupancy (with --import, the records of an earlier run's tunes
#              make that config the tuned one)
#   --import   FILE,...: records (JSON lines) the counters step dispatches from
#   --targets  the grids of step 5 (default the three above)
#   --era5     the grid of step 3 in place of the ERA5 grid (a target of step 5 too: its cold run)
#   --ops      the kernels of steps 4 and 5 (default sphadv,sphdiff)
#   --sources  FILE,...: records (JSON lines) of an earlier run's step 4, imported as the
#              source of the warm starts instead of tuning it again
# Writes DIR/calibrate.txt, DIR/tc1/ (tc1.txt, tc1.json, tc1.svg), DIR/tune-*.json,
# DIR/records-*.jsonl, DIR/steps.txt (each step's wall time) and DIR/summary.txt.
set -euo pipefail

weather="" tessera="" out="" backend=cuda budget=10 seconds=150 sizes=full parts=tc1,kernels,transfer only_targets="" only_era5="" imports="" ops=sphadv,sphdiff sources=""
while [ $# -gt 0 ]; do
    case $1 in
    --weather) weather=${2:?--weather needs a value}; shift 2 ;;
    --tessera) tessera=${2:?--tessera needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --sizes) sizes=${2:?--sizes needs a value}; shift 2 ;;
    --parts) parts=${2:?--parts needs a value}; shift 2 ;;
    --targets) only_targets=${2:?--targets needs a value}; shift 2 ;;
    --era5) only_era5=${2:?--era5 needs a value}; shift 2 ;;
    --import) imports=${2:?--import needs a value}; shift 2 ;;
    --ops) ops=${2:?--ops needs a value}; shift 2 ;;
    --sources) sources=${2:?--sources needs a value}; shift 2 ;;
    -h|--help) sed -n '2,52p' "$0"; exit 0 ;;
    *) echo "weather_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
for p in "$weather" "$tessera"; do
    [ -x "$p" ] || { echo "weather_h200.sh: error: --weather and --tessera name the built programs ('$p' is not one)" >&2; exit 2; }
done
[ -n "$out" ] || { echo "weather_h200.sh: error: --out DIR is required" >&2; exit 2; }
case $budget$seconds in *[!0-9]*) echo "weather_h200.sh: error: --budget and --seconds take whole numbers" >&2; exit 2 ;; esac
case $sizes in
full) era5=137x725x1440 source=30x185x360 others="30x365x720 64x388x384" rows=64,128,256 ;;
reduced) era5=137x185x360 source=30x93x180 others="30x185x360 64x196x192" rows=64,128,256 ;;
small) era5=2x36x64 source=2x20x32 others="4x36x64 4x20x32" rows=16,32 ;;
*) echo "weather_h200.sh: error: --sizes is full, reduced or small, not '$sizes'" >&2; exit 2 ;;
esac
for p in ${parts//,/ }; do
    case $p in tc1|kernels|transfer|counters) ;; *) echo "weather_h200.sh: error: --parts takes tc1, kernels, transfer and counters, not '$p'" >&2; exit 2 ;; esac
done
has() { case ,$parts, in *,$1,*) return 0 ;; esac; return 1; }
for o in ${ops//,/ }; do
    case $o in sphadv|sphdiff) ;; *) echo "weather_h200.sh: error: --ops takes sphadv and sphdiff, not '$o'" >&2; exit 2 ;; esac
done
[ -z "$only_era5" ] || era5=$only_era5
targets="$others $era5"
[ -z "$only_targets" ] || targets=${only_targets//,/ }
mkdir -p "$out"
out=$(cd "$out" && pwd)
stencils=$(cd "$(dirname "$weather")" && pwd)/weather-stencils
[ -d "$stencils" ] || stencils=$(cd "$(dirname "$0")/../../apps/weather/stencils" && pwd)
export TESSERA_STENCIL_PATH=$stencils
base_db=$out/records-base.db warm_db=$out/records-warm.db cold_db=$out/records-cold.db
rm -f "$base_db" "$warm_db" "$cold_db" "$out/summary.txt" "$out/steps.txt"

# The steps run twice through plan: first dry, adding up their estimated
# seconds, then for real, each under a limit of the time left in proportion
# to its estimate among those still to run (with 30% slack), so that a step
# that runs long takes time from the later ones, not the whole run.
dry=1 todo=0
say() { [ "$dry" = 1 ] || echo "$@" | tee -a "$out/summary.txt"; }
left() { echo $((seconds - ($(date +%s) - start))); }
points() { local p=1 n; for n in ${1//x/ }; do p=$((p * n)); done; echo $p; }
# The seconds a tune of OP on SHAPE is expected to take on the H200: the
# float64 references of its two input sets on the host (sphdiff measured at
# about 0.09 microseconds a point; sphadv more than 0.19, taken as 0.3),
# starting, and its evaluations.
tune_estimate() {
    awk -v p="$(points "$2")" -v c="$([ "$1" = sphdiff ] && echo 0.09e-6 || echo 0.3e-6)" -v b="$budget" \
        'BEGIN { printf "%d", 3 + c * p + 0.3 * b + 0.5 }'
}
# step NAME ESTIMATE COMMAND...: runs COMMAND under its share of the time left
# (at least 5 s), an argument @S@ replaced by that limit less a reserve (a
# tune's --seconds, so that it stops on its own and reports), and records its
# wall time and exit status. At the limit it gets SIGINT (a tune then reports
# what it measured), and SIGKILL 8 s later.
step() {
    local name=$1 estimate=$2 t0 rc=0 limit a args=()
    shift 2
    if [ "$dry" = 1 ]; then todo=$((todo + estimate)); return 0; fi
    limit=$(( $(left) * estimate * 13 / (10 * todo) ))
    [ "$limit" -le "$(left)" ] || limit=$(left)
    [ "$limit" -ge 5 ] || limit=5
    todo=$((todo - estimate))
    for a in "$@"; do [ "$a" = @S@ ] && args+=($((limit > 8 ? limit - 4 : limit / 2))) || args+=("$a"); done
    t0=$(date +%s.%N)
    echo "== $name (at most ${limit} s)" >&2
    timeout -s INT -k 8 "$limit" "${args[@]}" || rc=$?
    awk -v n="$name" -v t0="$t0" -v t1="$(date +%s.%N)" -v rc="$rc" \
        'BEGIN { printf "%-34s %7.1f s  exit %d\n", n, t1 - t0, rc }' >>"$out/steps.txt"
    [ "$rc" = 0 ] || echo "   $name: exit $rc (124 or 130: cut off at ${limit} s)" >&2
    return 0
}

tune() {   # tune NAME DB OP SHAPE TRANSFER [OPTION...]
    local name=$1 db=$2 op=$3 shape=$4 transfer=$5
    shift 5
    step "tune $name" "$(tune_estimate "$op" "$shape")" "$tessera" tune "$op" --shape "$shape" --dtype f32 \
        --backend "$backend" --budget "$budget" --seconds @S@ --transfer "$transfer" --db "$db" --json "$@" \
        >"$out/tune-$name.json"
    [ "$dry" = 1 ] || "$tessera" db export --db "$db" --task "$op:f32:$shape" -o "$out/records-$name.jsonl" >/dev/null 2>&1 || true
}

# table KIND NAME...: the table lines of the tunes named (python reads their JSON and records)
table() {
    [ "$dry" = 1 ] && return 0
    python3 - "$out" "$@" <<'PY' | tee -a "$out/summary.txt"
import json, math, sys
out, kind, names = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(name):
    try: return json.load(open(f"{out}/tune-{name}.json"))
    except (OSError, ValueError): return None
def records(name):
    try: return [json.loads(l) for l in open(f"{out}/records-{name}.jsonl")]
    except OSError: return []
if kind == "kernel":
    r = load(names[0])
    if not r: print("%-8s no result (cut off)" % names[0].split("-")[0]); sys.exit()
    b = r["best"]
    points = math.prod(int(n) for n in r["shape"].split("x"))
    per_point = b["gbps"] * b["time_ms"] * 1e6 / points   # the compulsory bytes, each field once
    print("%-8s %-14s %10.3f %10.3f %8.2f %6.2f %9.1f %7.1f%% %5d" % (r["op"], r["shape"], r["default_ms"], b["time_ms"],
          r["default_ms"] / b["time_ms"], per_point, b["gbps"], 100 * b["gbps"] / r["ceiling_gbps"], r["evaluations"]))
elif kind == "step":
    rs = [load(n) for n in names]
    if all(rs):
        d, b = sum(r["default_ms"] for r in rs), sum(r["best"]["time_ms"] for r in rs)
        print("%-8s %-14s %10.3f %10.3f %8.2f   (sphadv + sphdiff: one time step of the app)" % ("step", rs[0]["shape"], d, b, d / b))
else:
    warm, cold = records(names[0]), records(names[1])
    ok = [x["time_ms"] for x in warm + cold if x["status"] == "ok"]
    op, shape = names[0].split("-")[:2]
    if not ok or not warm or not cold:
        print("%-8s %-14s cut off (%d warm, %d cold results)" % (op, shape, len(warm), len(cold))); sys.exit()
    best = min(ok)
    def to5(rs):
        return next((i for i, x in enumerate(rs, 1) if x["status"] == "ok" and x["time_ms"] <= 1.05 * best), math.inf)
    first = next((x for x in warm if x["strategy"].startswith("transfer")), None)
    fw = best / first["time_ms"] if first and first["status"] == "ok" else float("nan")
    c, w = to5(cold), to5(warm)
    print("%-8s %-14s %8.3f %6s/%-3d %6s/%-3d %6.2f %12.1f%%" % (op, shape, best, c, len(cold), w, len(warm),
          c / w if w != math.inf else float("nan"), 100 * fw))
PY
}

# counters OP: OP's dispatched kernel on the --era5 grid, its first launch
# (the dispatch's check) measured by ncu, and the line of the table it makes
ncu_metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum
ncu_metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
counters() {
    local op=$1
    step "counters $op" "$(tune_estimate "$op" "$era5")" ncu --metrics "$ncu_metrics" -k "regex:${op}_cuda" \
        --launch-count 1 --csv --print-units base "$tessera" run "$op" --shape "$era5" --backend cuda --steps 1 \
        --db "$out/records-counters.db" >"$out/counters-$op.csv" 2>"$out/counters-$op.err"
    [ "$dry" = 1 ] && return 0
    python3 - "$out/counters-$op.csv" "$op" "$era5" <<'PY' | tee -a "$out/summary.txt"
import csv, math, sys
path, op, shape = sys.argv[1:]
rows = list(csv.reader(open(path)))   # the program's own output lines, then ncu's table
head = next((i for i, r in enumerate(rows) if "Metric Name" in r and "Metric Value" in r), None)
if head is None:
    print("%-8s no counters (see counters-%s.err)" % (op, op)); sys.exit()
h = rows[head]
m = {r[h.index("Metric Name")]: float(r[h.index("Metric Value")].replace(",", ""))
     for r in rows[head + 1:] if len(r) == len(h)}
pts = math.prod(int(n) for n in shape.split("x"))
dram = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
print("%-8s %-14s %9.4f %8.2f %10.1f %9.1f%% %9.1f%%" % (op, shape, m["gpu__time_duration.sum"] * 1e-6, dram / pts,
      32 * m["smsp__inst_executed.sum"] / pts, m["smsp__issue_active.avg.pct_of_peak_sustained_active"],
      m["sm__warps_active.avg.pct_of_peak_sustained_active"]))
PY
}

plan() {
    step calibrate 2 "$tessera" calibrate --backend "$backend" --db "$base_db" >"$out/calibrate.txt"
    if [ "$dry" = 0 ]; then
        for db in "$warm_db" "$cold_db"; do cp "$base_db" "$db"; done
    fi
    say "tessera-weather benchmark ($backend, sizes $sizes, budget $budget per tune)"
    say "$(grep -m1 'copy bandwidth' "$out/calibrate.txt" 2>/dev/null || echo 'copy bandwidth: not calibrated')"

    if has tc1; then
        step tc1 6 env TESSERA_DB="$out/records-tc1.db" "$weather" tc1 --backend "$backend" --rows "$rows" \
            --out "$out/tc1" >"$out/tc1.log" 2>&1
        [ "$dry" = 1 ] || { [ -f "$out/tc1/tc1.txt" ] && say "" && tee -a "$out/summary.txt" <"$out/tc1/tc1.txt"; }
    fi

    if has kernels; then
        say ""
        say "per kernel (f32), tuned against the untuned default, fraction of the copy bandwidth above"
        say "$(printf '%-8s %-14s %10s %10s %8s %6s %9s %8s %5s' kernel shape default_ms best_ms speedup B/pt GB/s 'of copy' evals)"
        # batches of 2, as the transfer step's tunes (below): this is its cold run on the ERA5 grid
        tune "sphadv-$era5-cold" "$cold_db" sphadv "$era5" off --batch 2
        table kernel "sphadv-$era5-cold"
        tune "sphdiff-$era5-cold" "$cold_db" sphdiff "$era5" off --batch 2
        table kernel "sphdiff-$era5-cold"
        table step "sphadv-$era5-cold" "sphdiff-$era5-cold"
    fi

    if has counters; then
        if [ "$dry" = 0 ]; then
            cp "$base_db" "$out/records-counters.db"
            for f in ${imports//,/ }; do "$tessera" db import "$f" --db "$out/records-counters.db" >&2; done
        fi
        say ""
        say "each kernel's dispatched config, its first launch under ncu (DRAM bytes, instructions per point)"
        say "$(printf '%-8s %-14s %9s %8s %10s %10s %10s' kernel shape ms DRAM_B/pt instr/pt issue occupancy)"
        counters sphadv
        counters sphdiff
    fi

    if has transfer; then
        say ""
        say "each kernel tuned at $source, then warm (from its records alone) and cold on each target"
        # Batches of 2 for these tunes, warm and cold alike: unless the source
        # measured its default more than 10% slower than its best, the search
        # places the source's best after its own first batch, which by default
        # (32 on cuda) would be later than the whole budget.
        local op t
        if [ -z "$sources" ]; then
            for op in ${ops//,/ }; do tune "$op-$source" "$warm_db" $op "$source" off --batch 2; done
        elif [ "$dry" = 0 ]; then
            for f in ${sources//,/ }; do "$tessera" db import "$f" --db "$warm_db" >&2; done
        fi
        say "$(printf '%-8s %-14s %8s %10s %10s %6s %13s' kernel target best_ms 'cold to5%' 'warm to5%' ratio 'first warm')"
        for t in $targets; do
            for op in ${ops//,/ }; do
                # the sources' records alone, not the other targets' nor the other kernel's on this one
                [ "$dry" = 1 ] || cp "$warm_db" "$out/records-warm-$op-$t.db"
                tune "$op-$t-warm" "$out/records-warm-$op-$t.db" $op "$t" auto --batch 2
                # the kernels' step tuned the ERA5 grid cold already
                { [ "$t" = "$era5" ] && has kernels; } || tune "$op-$t-cold" "$cold_db" $op "$t" off --batch 2
                table transfer "$op-$t-warm" "$op-$t-cold"
            done
        done
    fi
}

plan
dry=0
start=$(date +%s)
plan

say ""
say "wall time of each step:"
cat "$out/steps.txt" | tee -a "$out/summary.txt"
rm -f "$out"/records-*.db "$out"/records-*.db-*   # their records are in the .jsonl files
echo "wrote $out" >&2
