#!/bin/bash
# search_tables.sh - regenerates the search and transfer tables of
# data/bench/search/ from recorded spaces, by replay (no GPU needed):
#   tests/bench/search_tables.sh BUILD_DIR SPACES_DIR [REPEATS] [BUDGET] [search|transfer]
# (the last: only that table; both unless given)
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
only=${5:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tessera="$build/tessera"
out="$root/data/bench/search"
[ -x "$tessera" ] || { echo "search_tables.sh: no tessera binary in $build" >&2; exit 2; }
[ -d "$spaces" ] || { echo "search_tables.sh: no folder $spaces" >&2; exit 2; }

# Every recorded space: the other labs' (dedispersion_A100_T4 holds the same
# data as dedispersion_A100, so it is left out) and every space tessera
# recorded on the H200, linked under names that tell the runs apart (two runs
# recorded heat3d4 512^3 with time_block=4, two parts of run 11 are both
# space-tb4.jsonl).
links=$(mktemp -d)
json=$(mktemp)
trap 'rm -rf "$links" "$json"' EXIT
files=()
for f in pnpoly_RTX_3090 gemm_RTX_3090 dedispersion_A4000 dedispersion_A100; do
    files+=("$spaces/$f.json.gz")
done
for f in "$root"/data/bench/gpu-h200-run*/space-*.jsonl "$root"/data/bench/gpu-h200-run*/*/space-*.jsonl; do
    [ -e "$f" ] || continue
    rel=${f#"$root"/data/bench/gpu-}
    name=$(echo "${rel%.jsonl}" | sed 's|/space-|-|; s|/|-|g')
    ln -s "$f" "$links/$name.jsonl"
    files+=("$links/$name.jsonl")
done
stamp="$(date -u +%Y-%m-%d), $(nproc)-core development machine"

if [ "$only" != transfer ]; then
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
strategies = ("random", "bayes", "model", "agent")
by_space = collections.OrderedDict()
for r in rows:
    by_space.setdefault(r["space"], []).append(r)
def evals(r):   # a run that never got within 5% counts twice the budget
    return r["evals_to_5pct_median"] or 2 * r["budget"]
def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))
# A run needs one evaluation at least: where random needs few, no strategy
# gets below 1 / E[random] (the floor column), and without a template's
# default (the other labs' files) its first configs are as blind as random's.
print("%-34s %8s %8s %7s  %-7s %8s %8s %8s %8s" % ("space", "rnd E", "rnd med", "floor", "", *strategies))
ratio = collections.defaultdict(dict)
for space, rs in by_space.items():
    e = {r["strategy"]: evals(r) for r in rs}
    exp, med = rs[0]["random_expected_5pct"], rs[0]["random_median_5pct"]
    print("%-34s %8.1f %8.0f %7.3f  %-7s %s" % (space, exp, med, 1 / exp, "evals", " ".join("%8.1f" % e[s] for s in strategies)))
    print("%-34s %8s %8s %7s  %-7s %s" % ("", "", "", "", "vs rnd", " ".join("%8.3f" % (e[s] / exp) for s in strategies)))
    for s in strategies:
        ratio[s][space] = e[s] / exp
    ratio["floor"][space] = 1 / exp
spaces = list(by_space)
hard = [space for space in spaces if by_space[space][0]["random_expected_5pct"] >= 40]
print()
for s in strategies + ("floor",):
    line = "geomean of vs rnd over %d spaces, %-7s %.3f" % (len(spaces), s, geomean(ratio[s].values()))
    if hard:
        line += "; over the %d where random expects >= 40 evaluations %.3f, worst %.3f" % (
            len(hard), geomean([ratio[s][h] for h in hard]), max(ratio[s][h] for h in hard))
    print(line)
if hard:
    print("spaces where random expects >= 40 evaluations: " + ", ".join(hard))
    over = [h for h in hard if ratio["agent"][h] > 0.25]
    print("agent at most 1/4 of random on %d of those %d%s" % (
        len(hard) - len(over), len(hard), "; over on " + ", ".join(over) if over else ""))
# median against median: random's own median is below its expectation
by_med = [evals(r) / r["random_median_5pct"] for rs in by_space.values() for r in rs if r["strategy"] == "agent"]
print("agent's median over random's exact median instead: geomean %.3f over the %d spaces" % (geomean(by_med), len(by_med)))
behind = [space for space in spaces if ratio["agent"][space] > min(ratio["bayes"][space], ratio["model"][space])]
print("agent at most its best member (bayes, model) on %d of %d spaces%s" % (
    len(spaces) - len(behind), len(spaces), "; behind on " + ", ".join(behind) if behind else ""))
PY
} > "$out/agent-members.txt"
fi
[ "$only" = search ] && { echo "wrote $out/agent-members.txt"; exit 0; }

# Related pairs, both ways: other shapes and operators of one family (run 4),
# the same task recorded in other runs (3 and 4; 8 and 9, whose kernels
# changed in between), other fixed parameters (time_block, ppt_x, the
# tile split) of heat3d4 512^3.
r4=gpu-h200-run4 r8=gpu-h200-run8
pairs=("$r4/space-heat3d-256x256x256 $r4/space-heat3d-512x512x512"
       "$r4/space-heat3d-384x384x384 $r4/space-heat3d-320x320x640"
       "$r4/space-heat3d-256x256x256 $r4/space-heat3d-384x384x384"
       "$r4/space-heat3d-256x256x256 $r4/space-box3d27-256x256x256"
       "$r4/space-heat3d-256x256x256 $r4/space-varcoef3d-256x256x256"
       "$r4/space-box3d27-256x256x256 $r4/space-varcoef3d-256x256x256"
       "$r4/space-sum-67108864 $r4/space-sum-1048576"
       "gpu-h200-run3/space-heat3d-256x256x256 $r4/space-heat3d-256x256x256"
       "gpu-h200-run3/space-sum-67108864 $r4/space-sum-67108864"
       "gpu-h200-run10/space-heat3d4-tb4-px2 $r8/space-heat3d4-512-time_block4"
       "$r8/space-heat3d4-512-time_block2 $r8/space-heat3d4-512-time_block4"
       "$r8/space-heat3d4-512-time_block4 $r8/space-heat3d4-512-time_block4-tile-split"
       "$r8/space-heat3d4-512-time_block4 gpu-h200-run9/space-heat3d4-512-time_block4"
       "gpu-h200-run11/part1/space-tb4 gpu-h200-run11/part2/space-tb4")
transfer() {   # transfer SOURCE TARGET (paths for the header line, files)
    echo "\$ tessera bench transfer $1 $2 --repeats $repeats --budget $budget"
    "$tessera" bench transfer "$3" "$4" --repeats "$repeats" --budget "$budget"
}
{
    echo "# bench transfer by replay, $stamp:"
    echo "#   tests/bench/search_tables.sh BUILD SPACES $repeats $budget${only:+ $only}"
    a=dedispersion_A100.json.gz b=dedispersion_A4000.json.gz
    transfer $a $b "$spaces/$a" "$spaces/$b"
    transfer $b $a "$spaces/$b" "$spaces/$a"
    for p in "${pairs[@]}"; do
        set -- $p
        transfer "$1.jsonl" "$2.jsonl" "$root/data/bench/$1.jsonl" "$root/data/bench/$2.jsonl"
        transfer "$2.jsonl" "$1.jsonl" "$root/data/bench/$2.jsonl" "$root/data/bench/$1.jsonl"
    done
} > "$out/transfer-pairs.txt.tmp"
# a summary of every pair: warm over cold evaluations to within 5%
# (3x fewer needs a cold search of 3 evaluations or more: where the default
# is within 5% both take one)
awk '/within 5% \(median\)/{n++; cold=$7; r=$9/$7; if (r>1.1) bad++; if (r>worst) worst=r}
     /alone reaches/{if ($7+0 >= 90) {near++; if (r <= 1/3) gain++; if (cold >= 3) room++}}
     END{printf "# warm over cold to within 5%%: at most 1.1x on %d of %d pairs (worst %.2fx); at least 3x fewer on %d of the %d pairs whose source best is within 10%% on the target (%d of them need 3 or more evaluations cold)\n", n-bad, n, worst, gain, near, room}' \
    "$out/transfer-pairs.txt.tmp" > "$out/transfer-pairs.txt"
cat "$out/transfer-pairs.txt.tmp" >> "$out/transfer-pairs.txt"
rm -f "$out/transfer-pairs.txt.tmp"
echo "wrote the tables in $out"
