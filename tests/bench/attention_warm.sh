#!/usr/bin/env bash
# attention_warm.sh - warm starts of attention tasks not tuned on, on a GPU
# host: each target is tuned cold (--transfer off) and warm-started
# (--transfer auto) from the tasks a database already holds (the
# benchmark's tuned shapes, attention_h200.sh), with the same budget and
# seeds, each run on a fresh copy of that database. The runs are laid out
# as bench_transfer_hw.sh lays out its own (OUT/experiments.txt,
# OUT/runs/LABEL-{off,auto}-SEED.json and .jsonl.gz, the target's results
# in the order they were measured), and transfer_hw_summary.py gives the
# table: evaluations to within 5%, 2% and 1% of the best known config,
# cold against warm.
#
# usage: tests/bench/attention_warm.sh --db DB [--budget N] [--seeds "1 2"] [--dtype D] [--backend B] [--out DIR]
#                                      LABEL|OP|SHAPE|SOURCES...
#   LABEL    a name without spaces ("decode-B8-H32-KV16384-paged16")
#   OP       the operator with attributes (attention_decode:page_size=16)
#   SOURCES  what the report names as the sources (text)
# Environment: TESSERA (the binary, default build/tessera), PYTHON (python3).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
db="" budget=8 seeds="1" dtype=bf16 backend=cuda out=""
while [ $# -gt 0 ]; do
    case $1 in
    --db) db=${2:?--db needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --seeds) seeds=${2:?--seeds needs a value}; shift 2 ;;
    --dtype) dtype=${2:?--dtype needs a value}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "attention_warm.sh: error: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ -n "$db" ] && [ -e "$db" ] || { echo "attention_warm.sh: error: --db names no database" >&2; exit 2; }
[ $# -gt 0 ] || { echo "attention_warm.sh: error: no target" >&2; exit 2; }
out=${out:-data/bench/attention-warm-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/runs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$out/experiments.txt"
status=0
for target in "$@"; do
    IFS='|' read -r label op shape sources <<< "$target"
    echo "$label $sources" >> "$out/experiments.txt"
    for seed in $seeds; do
        for mode in off auto; do
            echo "== $(date -u +%H:%M:%S) $label --transfer $mode --seed $seed" >&2
            run=$out/runs/$label-$mode-$seed
            cp "$db" "$work/run.db"
            if ! "$tessera" tune "$op" --shape "$shape" --dtype "$dtype" --backend "$backend" --budget "$budget" \
                    --seed "$seed" --transfer "$mode" --db "$work/run.db" --json > "$run.json" 2> "$run.err"; then
                echo "attention_warm.sh: error: tune $label --transfer $mode failed (see $run.err)" >&2
                status=1
                continue
            fi
            # the target's own results, in the order they were measured
            "$tessera" db export --db "$work/run.db" -o "$work/all.jsonl" > /dev/null &&
                "$python" -c 'import gzip, json, sys
want = "%s:%s:%s:" % (sys.argv[2].split(":")[0], sys.argv[3], sys.argv[4])
with gzip.open(sys.argv[5], "wt") as out:
    for line in open(sys.argv[1]):
        if json.loads(line)["task"].startswith(want):
            out.write(line)' "$work/all.jsonl" "$op" "$dtype" "$shape" "$run.jsonl.gz" || status=1
            [ -s "$run.err" ] || rm -f "$run.err"
        done
    done
done
"$python" "$here/transfer_hw_summary.py" "$out" | tee "$out/summary.txt"
exit $status
