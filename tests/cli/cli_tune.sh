#!/usr/bin/env bash
# End to end: tune records every result, show prints source that compiles,
# export/import round-trips, a killed tuner keeps what it recorded, and two
# tuners can write one database at once.
source "$(dirname "$0")/harness.bash"
count_results() { "$tessera" db export --db "$1" 2>/dev/null | wc -l; }

"$tessera" calibrate --backend cpu >"$scratch/cal.txt"
check "calibrate prints the copy bandwidth" grep -q "copy bandwidth" "$scratch/cal.txt"

"$tessera" tune heat3d --shape 24x20x36 --backend cpu --budget 6 --strategy random --json >"$scratch/tune.json"
check "tune exits 0" test $? -eq 0
check "tune JSON has the required fields" python3 - "$scratch/tune.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["evaluations"] == 6, r
assert sum(r["statuses"].values()) == 6 and r["statuses"]["ok"] >= 1, r
b = r["best"]
assert b["time_ms"] > 0 and b["gbps"] > 0 and isinstance(b["config"], dict) and "tile_y" in b["config"], b
assert r["ceiling_gbps"] > 0 and 0 < r["fraction_of_ceiling"], r
PY
check "the database holds all 6 results" test "$(count_results "$TESSERA_DB")" -eq 6

"$tessera" show heat3d --shape 24x20x36 >"$scratch/best.c"
check "show names the best recorded config" grep -q "best recorded" "$scratch/best.c"
check "shown source compiles" cc -O2 -fopenmp -c "$scratch/best.c" -o "$scratch/best.o"

"$tessera" db export -o "$scratch/all.jsonl" 2>/dev/null
"$tessera" db import "$scratch/all.jsonl" --db "$scratch/copy.db" 2>/dev/null
check "import reproduces every result" test "$(count_results "$scratch/copy.db")" -eq 6
"$tessera" db import "$scratch/all.jsonl" --db "$scratch/copy.db" 2>"$scratch/again.txt"
check "importing twice adds nothing" grep -q "imported 0 results" "$scratch/again.txt"
"$tessera" db list --db "$scratch/copy.db" >"$scratch/list.txt"
check "list shows the task" grep -q "heat3d:f32:24x20x36" "$scratch/list.txt"

# A kernel library: the best config per task of one device, merged elsewhere.
"$tessera" db export --device cpu: -o "$scratch/lib.json" 2>/dev/null
check "library export names its format and device" grep -q '"tessera_library"' "$scratch/lib.json"
"$tessera" db import "$scratch/lib.json" --db "$scratch/lib.db" 2>/dev/null
"$tessera" db list --db "$scratch/lib.db" >"$scratch/liblist.txt"
check "an imported library holds the tuned task" grep -q "heat3d:f32:24x20x36" "$scratch/liblist.txt"

# SIGKILL mid-run: everything committed before the kill stays.
"$tessera" tune sum --shape 300000 --backend cpu --budget 1000 --strategy random \
    --db "$scratch/killed.db" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    [ "$(count_results "$scratch/killed.db")" -ge 3 ] && break
    sleep 0.2
done
seen=$(count_results "$scratch/killed.db")
kill -9 $pid
wait $pid 2>/dev/null
check "results recorded before SIGKILL survive ($seen)" test "$seen" -ge 3 -a "$(count_results "$scratch/killed.db")" -ge "$seen"

# Two tuners writing one database at once.
"$tessera" tune sum --shape 100000 --backend cpu --budget 5 --seed 1 --db "$scratch/shared.db" >/dev/null 2>&1 &
a=$!
"$tessera" tune sum --shape 120000 --backend cpu --budget 5 --seed 2 --db "$scratch/shared.db" >/dev/null 2>&1 &
b=$!
wait $a; ra=$?
wait $b; rb=$?
check "both concurrent tuners succeed" test $ra -eq 0 -a $rb -eq 0
check "the shared database holds both runs" test "$(count_results "$scratch/shared.db")" -eq 10

# A user's own stencils, from the directories of TESSERA_STENCIL_PATH: a
# 2D stencil of several steps (time-tiled on the CPU) tunes and verifies
# (cli_stencil_path.sh tests files that fail).
mkdir -p "$scratch/mine"
printf 'stencil heat2d2 "heat2d, two steps"\ngrid 64x64\nsteps 2\nfield u in\nfield u_new out advances u\n%s\n' \
    'u_new = u + 0.2 * (u[1,0] + u[-1,0] + u[0,1] + u[0,-1] - 4 * u)' >"$scratch/mine/heat2d2.stencil"
TESSERA_STENCIL_PATH="$scratch/none:$scratch/mine" "$tessera" tune heat2d2 --shape 40x36 --backend cpu --budget 3 \
    --json >"$scratch/mine.json" 2>"$scratch/mine.err"
check "a stencil of TESSERA_STENCIL_PATH tunes" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['evaluations'] == 3 and r['statuses']['ok'] == 3, r" "$scratch/mine.json"
TESSERA_STENCIL_PATH="$scratch/mine" "$tessera" tune heat2d2 --shape 40x36 --backend cpu --budget 3 \
    --fix time_tile=2 --json >"$scratch/mine2.json" 2>&1
check "its time tiles verify" grep -q '"ok": 3' "$scratch/mine2.json"

# Under an error budget the report gives the best config's largest error and,
# beside it, the best config that takes no shortcut; the records keep every
# verified result's error.
"$tessera" tune softmax --shape 16x256 --dtype bf16 --backend cpu --error-budget 1e-3 --strategy exhaustive \
    --budget 4 --fix threads=1,simd=1,online=0,exp=poly --db "$scratch/budget.db" --json >"$scratch/budget.json" 2>&1
check "a budget's report has the errors and the best exact config" python3 - "$scratch/budget.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["statuses"]["ok"] >= 1, r
b, e = r["best"], r["best_exact"]
assert 0 <= b["error"] < 0.01, b
assert e["config"]["max_sub"] == 1 and e["config"]["fast_math"] == 0, e
assert e["time_ms"] >= b["time_ms"] and 0 <= e["error"] < 0.01, (b, e)
PY
"$tessera" db export --db "$scratch/budget.db" -o "$scratch/budget.jsonl" 2>/dev/null
check "the records hold each verified result's error" python3 - "$scratch/budget.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all((r["metrics"]["max_error"] >= 0) == (r["status"] == "ok") for r in rows), rows
PY
"$tessera" tune softmax --shape 16x256 --dtype bf16 --backend cpu --error-budget 1e-3 --strategy exhaustive \
    --budget 4 --fix threads=1,simd=1,online=0,exp=poly --db "$scratch/budget.db" >"$scratch/budget.txt" 2>&1
check "the table gives the error" grep -q "^  error " "$scratch/budget.txt"

finish
