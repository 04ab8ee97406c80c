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
#             each kernel of its step tuned (ljforce and md_list with --budget, the others
#             with a quarter of it), the app again with the tuned kernels; one table: the
#             force kernel's time default and tuned, its memory traffic (tessera's
#             compulsory bytes) as a fraction of the copy bandwidth calibrated in this run,
#             the force kernel alone in atom-steps/s, the tuned kernels of a step summed
#             (the list build weighted by how often the run rebuilt it), and the app's
#             atom-steps/s default and tuned
#   transfer  ljforce tuned cold at 32,000 atoms (--transfer off), then 256,000, 1,000,188
#             and 32,000 atoms at density 0.6 each tuned cold and warm-started from it with
#             the same budget and seed; evaluations to within 5%, 2% and 1% of the best
#             known config (tests/bench/transfer_hw_summary.py)
# Builds nothing: it takes the built binaries.
#
# usage: tests/bench/md_h200.sh --tessera PATH --md PATH --out DIR [--backend cuda|cpu]
#            [--budget N] [--transfer-budget N] [--phases check,calibrate,table,transfer]
#            [--cells "20 40 63"] [--small]
#   --small   cells 5 6 8 and few steps (a quick check of the script on a CPU)
# Writes into DIR: log.txt, check-*.json, md-step0-f64.txt, calibrate.txt, md-{default,tuned}-N.txt,
# tune-N-KERNEL.json, table.txt, transfer/ (runs, summary.txt), records.db.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tessera="" md="" backend=cuda budget=16 tbudget=10 small=0 out="" phases="check,calibrate,table,transfer" cells=""
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a path}; shift 2 ;;
    --md) md=${2:?--md needs a path}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --transfer-budget) tbudget=${2:?--transfer-budget needs a value}; shift 2 ;;
    --phases) phases=${2:?--phases needs a list}; shift 2 ;;
    --cells) cells=${2:?--cells needs a list}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --small) small=1; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "md_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || { echo "md_h200.sh: error: --out DIR is required" >&2; exit 2; }
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
}

phase_table() {
    for c in $cells; do
        n=$((4 * c ** 3)) steps=$(steps_for "$c")
        log "$n atoms: the app with the default kernels, $steps steps"
        rm -f "$out/untuned.db"*
        TESSERA_DB="$out/untuned.db" "$md" "${system[@]}" --cells "$c" --steps "$steps" --thermo 0 \
            >"$out/md-default-$n.txt" 2>&1 || { log "FAILED: $(tail -1 "$out/md-default-$n.txt")"; failed=1; continue; }
        rm -f "$out/untuned.db"*
        log "  $(grep -E '^steps' "$out/md-default-$n.txt")"
        while read -r kernel op shape; do
            b=$budget
            [ "$kernel" = force ] || [ "$kernel" = list ] || b=$(((budget + 3) / 4))
            "$tessera" tune "$op" --shape "$shape" --backend "$backend" --budget "$b" --json \
                >"$out/tune-$n-$kernel.json" 2>"$out/tune-$n-$kernel.err" ||
                { log "  FAILED: tune $op $shape: $(tail -1 "$out/tune-$n-$kernel.err")"; failed=1; }
            [ -s "$out/tune-$n-$kernel.err" ] || rm -f "$out/tune-$n-$kernel.err"
        done < <(kernels "$out/md-default-$n.txt")
        log "  tuned; the app with the tuned kernels"
        "$md" "${system[@]}" --cells "$c" --steps "$steps" --thermo 0 >"$out/md-tuned-$n.txt" 2>&1 ||
            { log "FAILED: $(tail -1 "$out/md-tuned-$n.txt")"; failed=1; continue; }
        log "  $(grep -E '^steps' "$out/md-tuned-$n.txt")"
        python3 "$root/tests/bench/md_table.py" "$out" | tee "$out/table.txt" >&2
    done
}

phase_transfer() {
    [ "$small" = 0 ] || return 0
    tr=$out/transfer
    mkdir -p "$tr/runs" "$tr/db"
    attrs="density=0.8442,layout=rows,rc=2.5,shift=0,skin=0.3"
    base=$tr/db/base.db
    # the calibration of this run, without any tuned task
    "$tessera" calibrate --backend "$backend" --db "$base" >/dev/null 2>&1 || { log "FAILED: calibrate for transfer"; failed=1; }
    tune_run() {   # OP SHAPE KEY DB MODE NAME
        "$tessera" tune "$1" --shape "$2" --backend "$backend" --budget "$tbudget" --seed 1 --transfer "$5" \
            --db "$4" --json >"$tr/runs/$6.json" 2>"$tr/runs/$6.err" || { log "FAILED: tune $1 $2 --transfer $5"; return 1; }
        "$tessera" db export --db "$4" --task "$3" -o "$tr/runs/$6.jsonl" >/dev/null && gzip -f "$tr/runs/$6.jsonl"
        [ -s "$tr/runs/$6.err" ] || rm -f "$tr/runs/$6.err"
        log "  $6: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("best %.4g ms, default %.4g ms, %d warm configs" % (r["best"]["time_ms"], r["default_ms"], r["warm_configs"]))' "$tr/runs/$6.json")"
    }
    log "transfer: ljforce 32000x128 tuned cold as the source ($tbudget evaluations per run)"
    cp "$base" "$tr/db/source.db"
    tune_run ljforce 32000x128 "ljforce:f32:32000x128:$attrs" "$tr/db/source.db" off source-ljforce-32000x128
    : >"$tr/experiments.txt"
    for target in "ljforce 256000x128 $attrs ljforce-256000x128" "ljforce 1000188x128 $attrs ljforce-1000188x128" \
        "ljforce:density=0.6 32000x96 density=0.6,layout=rows,rc=2.5,shift=0,skin=0.3 ljforce_rho0.6-32000x96"; do
        read -r op shape key name <<<"$target"
        echo "$name ljforce:32000x128" >>"$tr/experiments.txt"
        for mode in off auto; do
            db=$tr/db/run.db
            if [ $mode = off ]; then cp "$base" "$db"; else cp "$tr/db/source.db" "$db"; fi
            rm -f "$db-wal" "$db-shm"
            tune_run "$op" "$shape" "ljforce:f32:$shape:$key" "$db" $mode "$name-$mode-1" || failed=1
        done
    done
    rm -rf "$tr/db"
    python3 "$root/tests/bench/transfer_hw_summary.py" "$tr" >"$tr/summary.txt" 2>&1 && cat "$tr/summary.txt" >&2
}

IFS=, read -ra order <<<"$phases"
for ph in "${order[@]}"; do
    case $ph in
    check|calibrate|table|transfer) ;;
    *) echo "md_h200.sh: error: unknown phase '$ph' (check, calibrate, table, transfer)" >&2; exit 2 ;;
    esac
done
for ph in "${order[@]}"; do "phase_$ph"; done
log "done"
exit $failed
