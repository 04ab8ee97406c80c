# fluid_bench_lib.sh - sourced by the lattice Boltzmann GPU benchmarks
# (fluid_flags_h200.sh, fluid_rows_h200.sh, fluid_tuned_h200.sh): a run of at
# most CAP seconds that calibrates the copy bandwidth first, and `t`, one tune
# appended to $R/tune.jsonl with its label, Q and population bytes (for
# fluid_table.py). Needs R (the output folder) and B (the build).
#
#   fluid_bench_start CAP CALIBRATE_SECONDS MARGIN
#       starts the clock, calibrates into $R/calibrate.txt and empties
#       $R/tune.jsonl; MARGIN is the seconds a tune may run beyond its
#       --seconds, and the least left for a tune to start at all.
#   t LABEL OP SHAPE DTYPE Q BYTES BUDGET SECONDS FIX [STRATEGY]
fluid_bench_start() {
    start=$(date +%s); cap=$1; margin=$3
    export TESSERA_DB=${TESSERA_DB:-$R/records.db}
    echo "== calibrate $(date +%T)"
    timeout "$2" "$B/tessera" calibrate --backend cuda | tee "$R/calibrate.txt"
    : > "$R/tune.jsonl"
}

left() { echo $((cap - ($(date +%s) - start))); }

t() {
    local l; l=$(left); [ "$l" -lt "$margin" ] && { echo "skip (time): $1"; return 0; }
    local lim=$(( $8 + margin )); [ "$lim" -gt "$l" ] && lim=$l
    local strategy=(); [ $# -ge 10 ] && strategy=(--strategy "${10}")
    echo "== $(date +%T) $1 (left $l s)"
    if timeout "$lim" "$B/tessera" tune "$2" --shape "$3" --dtype "$4" --backend cuda --budget "$7" --seconds "$8" \
         --fix "$9" "${strategy[@]}" --json > "$R/one.json" 2>> "$R/tune.log"; then
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["label"],d["q"],d["pop_bytes"]=sys.argv[2],int(sys.argv[3]),int(sys.argv[4]); print(json.dumps(d))' \
          "$R/one.json" "$1" "$5" "$6" >> "$R/tune.jsonl"
    else echo "rc=$? $1"; tail -3 "$R/tune.log"; fi
}
