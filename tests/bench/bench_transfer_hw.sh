#!/usr/bin/env bash
# bench_transfer_hw.sh - warm starts on real hardware: tasks tuned cold
# (--transfer off) against the same tasks warm-started (--transfer auto) from
# source tasks tuned beforehand, with the same budget and seeds.
#
#   tests/bench/bench_transfer_hw.sh [--tessera PATH] [--backend cuda|cpu]
#       [--budget N] [--source-budget N] [--repeats R] [--out DIR]
#       [--experiment "SOURCES>TARGETS"]...
#
# An experiment is "op:shape,...>op:shape,...": its sources are tuned once
# (--transfer off, --source-budget evaluations, seed 1) into one database;
# every target is then tuned R times (seeds 1..R) in each mode, each run on
# a fresh copy of that database. Each run's results are exported in the
# order they were measured. Evaluation 1 of every run, cold or warm, is the
# template's default config; a warm run then measures its warm-start configs
# (labelled transfer:1, transfer:2, ... in the records, 1 the most promising)
# before the strategy's own proposals.
#
# The best known config of a target is the fastest over all its runs in both
# modes. The summary (OUT/summary.txt, also printed) gives per target the
# median evaluations to get within 5%, 2% and 1% of it, cold and warm, their
# ratio, how far the default and the first warm-start config are from it,
# and which tasks the warm runs learned from.
#
# Defaults: the cuda backend; heat3d tuned at 256^3 and 384^3 -> heat3d
# 512^3 and 320x320x640; heat3d 256^3 -> varcoef3d and box3d27 at 256^3;
# 25 evaluations per run (40 for the sources), 5 seeds. That is 80 runs, about
# 4 minutes on an H200 host with 16 cores. Exit status 1 if a tune fails.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cli=""
backend=cuda
budget=25
source_budget=40
repeats=5
out=""
experiments=()
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) cli=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --source-budget) source_budget=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --experiment) experiments+=("$2"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench_transfer_hw: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ ${#experiments[@]} -eq 0 ]; then
    experiments=("heat3d:256x256x256,heat3d:384x384x384>heat3d:512x512x512,heat3d:320x320x640"
                 "heat3d:256x256x256>varcoef3d:256x256x256,box3d27:256x256x256")
fi
if [ -z "$cli" ]; then
    for c in "$root/build-gpu/tessera" "$root/build/tessera"; do [ -x "$c" ] && { cli=$c; break; }; done
fi
[ -n "$cli" ] && [ -x "$cli" ] || { echo "bench_transfer_hw: no tessera binary (use --tessera PATH)" >&2; exit 2; }
out=${out:-$root/data/bench/transfer/hw-$backend}
mkdir -p "$out/runs" "$out/db"
out=$(cd "$out" && pwd)
work=$out/db

# Libraries of the offline bundle and the driver, when the loader lacks them.
if ! "$cli" ops > /dev/null 2>&1; then
    libs=${TESSERA_DEPS_PREFIX:-/tmp/tessera-deps}/runtime-libs
    [ -d "$libs" ] && export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64-nvidia; do
        [ -e "$d/libcuda.so.1" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
    done
    "$cli" ops > /dev/null || { echo "bench_transfer_hw: $cli does not run" >&2; exit 1; }
fi

t0=$(date +%s)
log() { printf '[%4ds] %s\n' $(($(date +%s) - t0)) "$*" | tee -a "$out/bench.log"; }
: > "$out/bench.log"
key() { echo "${1%%:*}:f32:${1#*:}"; }          # op:shape -> task key
name() { echo "${1%%:*}-${1#*:}"; }              # op:shape -> file name part

# tune OPSHAPE DB MODE SEED BUDGET JSON: one run, its results exported next to JSON.
tune() {
    local op=${1%%:*} shape=${1#*:} start=$(date +%s.%N)
    if ! "$cli" tune "$op" --shape "$shape" --backend "$backend" --budget "$5" --seed "$4" \
        --transfer "$3" --db "$2" --json > "$6" 2> "${6%.json}.err"; then
        log "FAILED: tune $op $shape --transfer $3 --seed $4 (see ${6%.json}.err)"
        exit 1
    fi
    "$cli" db export --db "$2" --task "$(key "$1")" -o "${6%.json}.jsonl" > /dev/null || exit 1
    gzip -f "${6%.json}.jsonl"
    [ -s "${6%.json}.err" ] || rm -f "${6%.json}.err"
    log "$op $shape --transfer $3 --seed $4: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); b=r["best"]
print("best %.5g ms, default %.5g ms, %d warm configs" % (b["time_ms"] if b else float("nan"), r["default_ms"], r["warm_configs"]))' "$6") ($(python3 -c "import sys,time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$start") s)"
}

log "tessera $cli, backend $backend, budget $budget (sources $source_budget), $repeats seeds"
log "calibrating once; every database starts from this one"
"$cli" calibrate --backend "$backend" --db "$work/base.db" > "$out/calibrate.txt" || { log "FAILED: calibrate"; exit 1; }

# Sources: each tuned once into one database, then exported per task.
declare -A tuned=()
for e in "${experiments[@]}"; do
    IFS=, read -ra srcs <<< "${e%%>*}"
    for s in "${srcs[@]}"; do
        [ -n "${tuned[$s]:-}" ] && continue
        [ -e "$work/sources.db" ] || cp "$work/base.db" "$work/sources.db"
        tune "$s" "$work/sources.db" off 1 "$source_budget" "$out/runs/source-$(name "$s").json"
        tuned[$s]=1
    done
done

: > "$out/experiments.txt"
i=0
for e in "${experiments[@]}"; do
    i=$((i + 1))
    IFS=, read -ra srcs <<< "${e%%>*}"
    IFS=, read -ra targets <<< "${e#*>}"
    exp_db=$work/experiment-$i.db
    cp "$work/base.db" "$exp_db"
    for s in "${srcs[@]}"; do
        "$cli" db export --db "$work/sources.db" --task "$(key "$s")" -o "$work/source.jsonl" > /dev/null &&
            "$cli" db import "$work/source.jsonl" --db "$exp_db" > /dev/null || { log "FAILED: importing $s"; exit 1; }
    done
    for tgt in "${targets[@]}"; do
        echo "$(name "$tgt") ${e%%>*}" >> "$out/experiments.txt"
        for seed in $(seq 1 "$repeats"); do
            for mode in off auto; do
                cp "$exp_db" "$work/run.db"
                rm -f "$work/run.db-wal" "$work/run.db-shm"
                tune "$tgt" "$work/run.db" "$mode" "$seed" "$budget" "$out/runs/$(name "$tgt")-$mode-$seed.json"
            done
        done
    done
done
rm -rf "$work"
log "done"
python3 "$root/tests/bench/transfer_hw_summary.py" "$out" | tee "$out/summary.txt"
