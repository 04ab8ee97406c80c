#!/usr/bin/env bash
# md_h200.sh - tessera-md on a GPU host: the in.lj system (fcc at rho* = 0.8442, T* = 1.44,
# rc 2.5, skin 0.3, NVE, dt 0.005) at 32,000, 256,000 and 1,000,188 atoms (cells 20, 40, 63),
# every part of a step on the device (tessera's operators md_verlet, md_displace, md_bin,
# md_list and ljforce). Phases, run in the order --phases gives, each logged with its start time:
#   check     each operator of a step tuned with a budget of 2 at 32,000 atoms (compiled,
#             verified against its float64 reference, timed), and the LAMMPS step-0 digits
#             in f64 on the backend (pe/atom -6.7733681, pressure -5.0197073)
#   calibrate the copy bandwidth, into the records the tuned runs use
#   table     per size: the app with the untuned defaults (an empty records database),
#             each kernel of its step tuned (ljforce with --budget, default 12, md_list with
#             --list-budget, default --budget, the others with --small-budget, default 3; 0:
#             left at their defaults), the app
#             again with the tuned kernels; one table: the force kernel's time default and
#             tuned, its memory traffic (tessera's
#             compulsory bytes) as a fraction of the copy bandwidth calibrated in this run,
#             the force kernel alone in atom-steps/s, the tuned kernels of a step summed
#             (the list build weighted by how often the run rebuilt it), and the app's
#             atom-steps/s default and tuned
#   transfer  the table's ljforce tunes at the larger sizes (warm-started from the records of
#             the sizes before) against the same tasks tuned cold from the calibration alone,
#             and the first size's atoms at density 0.6 cold and warm, all with the same budget and
#             seed; evaluations to within 5%, 2% and 1% of the best known config
#             (tests/bench/transfer_hw_summary.py); with the backend's default batch (all of
#             a small budget at once), the order the results are recorded in is the order
#             they finished, not the search's: --batch 1 makes them the same
#   import    the best configs of the tune reports in --reports DIR (an earlier run's
#             tune-N-KERNEL.json on this device) imported into the records
#             (tests/bench/md_library.py), after at least one tune of this run
#   apps      per size: the app with the untuned defaults and with the recorded configs,
#             tuning nothing
# Builds nothing: it takes the built binaries.
#
# usage: tests/bench/md_h200.sh --tessera PATH --md PATH --out DIR [--backend cuda|cpu]
#            [--budget N] [--list-budget N] [--small-budget N] [--batch N] [--phases check,calibrate,table,transfer]
#            [--cells "20 40 63"] [--reports DIR] [--small]
#   --small   cells 5 6 8 and few steps (a quick check of the script on a CPU)
# Writes into DIR: log.txt, check-*.json, md-step0-f64.txt, calibrate.txt, md-{default,tuned}-N.txt,
# tune-N-KERNEL.json, table.txt, transfer/ (runs, summary.txt), records.db, calibrated.db.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tessera="" md="" backend=cuda budget=12 list_budget="" small_budget=3 batch= small=0 out="" phases="check,calibrate,table,transfer" cells="" reports=""
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a path}; shift 2 ;;
    --md) md=${2:?--md needs a path}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --list-budget) list_budget=${2:?--list-budget needs a value}; shift 2 ;;
    --batch) batch=${2:?--batch needs a value}; shift 2 ;;
    --small-budget) small_budget=${2:?--small-budget needs a value}; shift 2 ;;
    --phases) phases=${2:?--phases needs a list}; shift 2 ;;
    --cells) cells=${2:?--cells needs a list}; shift 2 ;;
    --reports) reports=${2:?--reports needs a directory}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --small) small=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "md_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || { echo "md_h200.sh: error: --out DIR is required" >&2; exit 2; }
list_budget=${list_budget:-$budget}
for b in "$tessera" "$md"; do
    [ -x "$b" ] || { echo "md_h200.sh: error: no binary at '$b' (give --tessera and --md)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
export TESSERA_DB="$out/records.db"
if [ "$small" = 1 ]; then cells=${cells:-"5 6 8"}; else cells=${cells:-"20 40 63"}; fi
steps_for() {   # enough steps for a stable rate, a few seconds at most
    if [ "$small" = 1 ]; then echo 20; else case $1 in 20) echo 2000 ;; 40) echo 1000 ;; *) echo 400 ;; esac; fi
}
t0=$(date +%s)
log() { printf '[%4ds] %s\n' $(($(date +%s) - t0)) "$*" | tee -a "$out/log.txt" >&2; }
system=(--lattice fcc --density 0.8442 --temperature 1.44 --seed 87287 --backend "$backend")
failed=0
# the kernels of a run's step, as its summary names them: NAME OP SHAPE
kernels() { awk '/^  [a-z-]+ +[a-z_]+:/ { s = $3; sub(":$", "", s); print $1, $2, s }' "$1"; }

phase_check() {
    c=${cells%% *}
    n=$((4 * c ** 3))
    log "check: the step's kernels at $n atoms, each compiled, verified and timed"
    "$md" "${system[@]}" --cells "$c" --dtype f64 >"$out/md-step0-f64.txt" 2>&1 || { log "FAILED: step 0 in f64"; failed=1; }
    log "step 0, f64: $(awk '$1 == 0 && NF == 7 { print "pe/atom " $4 ", pressure " $7 }' "$out/md-step0-f64.txt")"
    while read -r kernel op shape; do
        if "$tessera" tune "$op" --shape "$shape" --backend "$backend" --budget 2 --json \
            >"$out/check-$kernel.json" 2>"$out/check-$kernel.err"; then
            log "  $kernel $op $shape: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%s, best %.4g ms (%s)" % (r["stop_reason"], r["best"]["time_ms"], r["statuses"]))' "$out/check-$kernel.json")"
        else
            log "  FAILED: $kernel $op $shape: $(tail -2 "$out/check-$kernel.err")"
            failed=1
        fi
    done < <(kernels "$out/md-step0-f64.txt")
}

phase_calibrate() {
    log "calibrate ($backend)"
    "$tessera" calibrate --backend "$backend" >"$out/calibrate.txt" 2>&1 || { log "FAILED: calibrate"; failed=1; }
    # the calibration without any tuned task: where the transfer phase's cold runs start
    for f in "$TESSERA_DB" "$TESSERA_DB-wal"; do [ -e "$f" ] && cp "$f" "$out/calibrated.db${f#"$TESSERA_DB"}"; done
}

tune_one() {   # OP SHAPE BUDGET JSON [tune options]: one tune, its report in JSON
    local op=$1 shape=$2 b=$3 json=$4
    shift 4
    "$tessera" tune "$op" --shape "$shape" --backend "$backend" --budget "$b" --seed 1 --json \
        ${batch:+--batch "$batch"} "$@" \
        >"$json" 2>"${json%.json}.err" || { log "  FAILED: tune $op $shape: $(tail -1 "${json%.json}.err")"; failed=1; return 1; }
    [ -s "${json%.json}.err" ] || rm -f "${json%.json}.err"
    log "  $op $shape: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); b=r["best"]
bad = ", ".join("%d %s" % (v, k) for k, v in r["statuses"].items() if k != "ok" and v)
print("best %.4g ms, default %.4g ms, %d evaluations (%s), %d warm configs" % (b["time_ms"] if b else float("nan"), r["default_ms"], r["evaluations"], bad or "all ok", r["warm_configs"]))' "$json")"
}

app_run() {   # CELLS default|tuned: the app for its steps, into md-MODE-N.txt
    local c=$1 n=$((4 * $1 ** 3)) steps
    steps=$(steps_for "$1")
    log "$n atoms: the app with the $2 kernels, $steps steps"
    rm -f "$out/untuned.db"*
    local db=$TESSERA_DB
    [ "$2" = default ] && db=$out/untuned.db
    TESSERA_DB="$db" "$md" "${system[@]}" --cells "$c" --steps "$steps" --thermo 0 >"$out/md-$2-$n.txt" 2>&1 ||
        { log "FAILED: $(tail -1 "$out/md-$2-$n.txt")"; failed=1; rm -f "$out/untuned.db"*; return 1; }
    rm -f "$out/untuned.db"*
    log "  $(grep -E '^steps' "$out/md-$2-$n.txt"); list and force: $(awk '$1 == "list" || $1 == "force" { printf "%s %s ", $4, $5 }' "$out/md-$2-$n.txt")"
}

phase_apps() {
    for c in $cells; do app_run "$c" default && app_run "$c" tuned; done
}

phase_import() {
    [ -d "$reports" ] || { log "import: no --reports DIR"; failed=1; return 0; }
    "$tessera" db export --device "${backend}" -o "$out/base-library.json" >/dev/null &&
        python3 "$root/tests/bench/md_library.py" "$out/base-library.json" "$out/library.json" "$reports"/tune-*.json \
            >/dev/null && "$tessera" db import "$out/library.json" >/dev/null ||
        { log "FAILED: importing the configs of $reports"; failed=1; return 0; }
    log "imported $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["kernels"]))' "$out/library.json") configs from $reports"
}

phase_table() {
    for c in $cells; do
        n=$((4 * c ** 3))
        app_run "$c" default || continue
        # the force kernel first, so that at the first size it starts from no records at all
        while read -r kernel op shape; do
            b=$small_budget
            [ "$kernel" = force ] && b=$budget
            [ "$kernel" = list ] && b=$list_budget
            [ "$b" -gt 0 ] && tune_one "$op" "$shape" "$b" "$out/tune-$n-$kernel.json"
        done < <(kernels "$out/md-default-$n.txt" | awk '{ print ($1 == "force" ? 0 : $1 == "list" ? 1 : 2), $0 }' |
                 sort -s -k1,1n | cut -d' ' -f2-)
        app_run "$c" tuned || continue
        python3 "$root/tests/bench/md_table.py" "$out" >"$out/table.txt" && cat "$out/table.txt" >&2
    done
}

# Cold against warm: the table tuned ljforce at the first size from no records, and the larger
# sizes warm-started from what was recorded before them (tess_tune's default, --transfer
# auto); each larger size is tuned again here cold (--transfer off) from the calibration
# alone, with the same budget and seed. A task at density 0.6 is tuned cold and warm-started
# from every record of the table.
phase_transfer() {
    [ -e "$out/calibrated.db" ] || { log "transfer: skipped (it needs the calibrate phase first)"; return 0; }
    local tr=$out/transfer attrs="layout=rows,rc=2.5,shift=0,skin=0.3"
    mkdir -p "$tr/runs" "$tr/db"
    : >"$tr/experiments.txt"
    fresh() {   # DB FROM: DB becomes a copy of FROM (and its write-ahead log)
        rm -f "$1" "$1-wal" "$1-shm"
        cp "$2" "$1"
        [ -e "$2-wal" ] && cp "$2-wal" "$1-wal"
        return 0
    }
    export_run() {   # DB KEY NAME
        "$tessera" db export --db "$1" --task "$2" -o "$tr/runs/$3.jsonl" >/dev/null && gzip -f "$tr/runs/$3.jsonl"
    }
    local first=${cells%% *}
    for c in $cells; do
        [ "$c" = "$first" ] && continue
        local n=$((4 * c ** 3))
        [ -e "$out/tune-$n-force.json" ] || continue
        local shape
        shape=$(kernels "$out/md-default-$n.txt" | awk '$1 == "force" { print $3 }')
        local name=ljforce-$shape key="ljforce:f32:$shape:density=0.8442,$attrs"
        echo "$name ljforce:$((4 * first ** 3))x128" >>"$tr/experiments.txt"
        cp "$out/tune-$n-force.json" "$tr/runs/$name-auto-1.json"
        export_run "$TESSERA_DB" "$key" "$name-auto-1"
        fresh "$tr/db/run.db" "$out/calibrated.db"
        log "transfer: $name cold"
        tune_one ljforce "$shape" "$budget" "$tr/runs/$name-off-1.json" --transfer off --db "$tr/db/run.db" &&
            export_run "$tr/db/run.db" "$key" "$name-off-1"
    done
    local n0=$((4 * first ** 3))
    local name=ljforce_rho0.6-${n0}x96 key="ljforce:f32:${n0}x96:density=0.6,$attrs"
    echo "$name every ljforce task of the table" >>"$tr/experiments.txt"
    for mode in off auto; do
        if [ $mode = off ]; then fresh "$tr/db/run.db" "$out/calibrated.db"; else fresh "$tr/db/run.db" "$TESSERA_DB"; fi
        log "transfer: $name --transfer $mode"
        tune_one ljforce:density=0.6 "${n0}x96" "$budget" "$tr/runs/$name-$mode-1.json" --transfer $mode \
            --db "$tr/db/run.db" && export_run "$tr/db/run.db" "$key" "$name-$mode-1"
    done
    rm -rf "$tr/db"
    python3 "$root/tests/bench/transfer_hw_summary.py" "$tr" >"$tr/summary.txt" 2>&1
    cat "$tr/summary.txt" >&2
}

IFS=, read -ra order <<<"$phases"
for ph in "${order[@]}"; do
    case $ph in
    check|calibrate|table|transfer|import|apps) ;;
    *) echo "md_h200.sh: error: unknown phase '$ph' (check, calibrate, table, transfer, import, apps)" >&2; exit 2 ;;
    esac
done
for ph in "${order[@]}"; do "phase_$ph"; done
log "done"
exit $failed
