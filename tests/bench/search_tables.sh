#!/bin/bash
# search_tables.sh - regenerates the search and transfer tables of
# data/bench/search/ from recorded spaces, by replay (no GPU needed):
#   tests/bench/search_tables.sh BUILD_DIR SPACES_DIR [REPEATS] [BUDGET]
# SPACES_DIR holds the Kernel Tuner cache files (pnpoly, gemm, dedispersion);
# the H200 recordings come from data/bench. Writes
#   data/bench/search/agent-members.txt   bench search of agent, bayes, model
#                                          and random, with the geometric mean
#                                          of the ratios to random's expectation
#   data/bench/search/transfer-pairs.txt  bench transfer (cold, warm, best
#                                          only) for every related pair
set -euo pipefail
build=${1:?usage: search_tables.sh BUILD_DIR SPACES_DIR [REPEATS] [BUDGET]}
spaces=${2:?usage: search_tables.sh BUILD_DIR SPACES_DIR [REPEATS] [BUDGET]}
repeats=${3:-10}
budget=${4:-300}
root=$(cd "$(dirname "$0")/../.." && pwd)
tessera="$build/tessera"
out="$root/data/bench/search"
h200="$root/data/bench/gpu-h200-run4"
[ -x "$tessera" ] || { echo "search_tables.sh: no tessera binary in $build" >&2; exit 2; }
[ -d "$spaces" ] || { echo "search_tables.sh: no folder $spaces" >&2; exit 2; }

files=("$spaces/pnpoly_RTX_3090.json.gz" "$spaces/gemm_RTX_3090.json.gz"
       "$spaces/dedispersion_A4000.json.gz" "$spaces/dedispersion_A100.json.gz"
       "$h200"/space-*.jsonl "$root/data/bench/gpu-h200-run10/space-heat3d4-tb4-px2.jsonl"
       "$root/data/bench/gpu-h200-run8/space-heat3d4-512-time_block4.jsonl")
stamp="$(date -u +%Y-%m-%d), $(nproc)-core development machine"

json=$(mktemp)
trap 'rm -f "$json"' EXIT
"$tessera" bench search "${files[@]}" --strategies random,bayes,model,agent \
    --repeats "$repeats" --budget "$budget" --json > "$json"
{
    echo "# bench search by replay, $stamp:"
    echo "#   tests/bench/search_tables.sh BUILD SPACES $repeats $budget"
    echo "# ratio: median evaluations to within 5% of the optimum over random sampling's exact"
    echo "# expectation (rnd med: its exact median); a run that never got there counts 2x the budget."
    python3 - "$json" <<'PY'
import json, math, sys, collections
rows = json.load(open(sys.argv[1]))
by_space = collections.OrderedDict()
for r in rows:
    by_space.setdefault(r["space"], []).append(r)
logs = collections.defaultdict(list)
print("%-34s %8s %8s  %-7s %8s %8s %8s %8s" % ("space", "rnd E", "rnd med", "", "random", "bayes", "model", "agent"))
for space, rs in by_space.items():
    e = {r["strategy"]: (r["evals_to_5pct_median"] or 2 * r["budget"]) for r in rs}
    exp, med = rs[0]["random_expected_5pct"], rs[0]["random_median_5pct"]
    print("%-34s %8.1f %8.0f  %-7s %s" % (space, exp, med, "evals", " ".join("%8.1f" % e[s] for s in ("random", "bayes", "model", "agent"))))
    print("%-34s %8s %8s  %-7s %s" % ("", "", "", "vs rnd", " ".join("%8.3f" % (e[s] / exp) for s in ("random", "bayes", "model", "agent"))))
    for s in e:
        logs[s].append(math.log(e[s] / exp))
print()
for s in ("random", "bayes", "model", "agent"):
    print("geomean of vs rnd over %d spaces, %-7s %.3f" % (len(logs[s]), s, math.exp(sum(logs[s]) / len(logs[s]))))
behind = [space for space, rs in by_space.items()
          if (lambda e: e["agent"] > min(e["bayes"], e["model"]))(
              {r["strategy"]: (r["evals_to_5pct_median"] or 2 * r["budget"]) for r in rs})]
print("agent at most its best member (bayes, model) on %d of %d spaces%s" % (
    len(by_space) - len(behind), len(by_space), "; behind on " + ", ".join(behind) if behind else ""))
PY
} > "$out/agent-members.txt"

pairs=("heat3d-256x256x256 heat3d-512x512x512" "heat3d-512x512x512 heat3d-256x256x256"
       "heat3d-384x384x384 heat3d-320x320x640" "heat3d-320x320x640 heat3d-384x384x384"
       "heat3d-256x256x256 heat3d-384x384x384" "heat3d-384x384x384 heat3d-256x256x256"
       "heat3d-256x256x256 box3d27-256x256x256" "box3d27-256x256x256 heat3d-256x256x256"
       "heat3d-256x256x256 varcoef3d-256x256x256" "varcoef3d-256x256x256 heat3d-256x256x256"
       "box3d27-256x256x256 varcoef3d-256x256x256" "varcoef3d-256x256x256 box3d27-256x256x256"
       "sum-67108864 sum-1048576" "sum-1048576 sum-67108864")
{
    echo "# bench transfer by replay, $stamp:"
    echo "#   tests/bench/search_tables.sh BUILD SPACES $repeats $budget"
    echo "\$ tessera bench transfer dedispersion_A100.json.gz dedispersion_A4000.json.gz --repeats $repeats --budget $budget"
    "$tessera" bench transfer "$spaces/dedispersion_A100.json.gz" "$spaces/dedispersion_A4000.json.gz" --repeats "$repeats" --budget "$budget"
    echo "\$ tessera bench transfer dedispersion_A4000.json.gz dedispersion_A100.json.gz --repeats $repeats --budget $budget"
    "$tessera" bench transfer "$spaces/dedispersion_A4000.json.gz" "$spaces/dedispersion_A100.json.gz" --repeats "$repeats" --budget "$budget"
    for p in "${pairs[@]}"; do
        set -- $p
        echo "\$ tessera bench transfer gpu-h200-run4/space-$1.jsonl gpu-h200-run4/space-$2.jsonl --repeats $repeats --budget $budget"
        "$tessera" bench transfer "$h200/space-$1.jsonl" "$h200/space-$2.jsonl" --repeats "$repeats" --budget "$budget"
    done
    tb4="gpu-h200-run10/space-heat3d4-tb4-px2.jsonl" t512="gpu-h200-run8/space-heat3d4-512-time_block4.jsonl"
    for p in "$tb4 $t512" "$t512 $tb4"; do
        set -- $p
        echo "\$ tessera bench transfer $1 $2 --repeats $repeats --budget $budget"
        "$tessera" bench transfer "$root/data/bench/$1" "$root/data/bench/$2" --repeats "$repeats" --budget "$budget"
    done
} > "$out/transfer-pairs.txt.tmp"
# a summary of every pair: warm over cold evaluations to within 5%
awk '/within 5% \(median\)/{n++; r=$9/$7; if (r>1.1) bad++; if (r>worst) worst=r}
     /alone reaches/{if ($7+0 >= 90) {near++; if (r <= 1/3) gain++}}
     END{printf "# warm over cold to within 5%%: at most 1.1x on %d of %d pairs (worst %.2fx); at least 3x fewer on %d of the %d pairs whose source best is within 10%% on the target\n", n-bad, n, worst, gain, near}' \
    "$out/transfer-pairs.txt.tmp" > "$out/transfer-pairs.txt"
cat "$out/transfer-pairs.txt.tmp" >> "$out/transfer-pairs.txt"
rm -f "$out/transfer-pairs.txt.tmp"
echo "wrote $out/agent-members.txt and $out/transfer-pairs.txt"
