#!/usr/bin/env bash
# tests/bench/weather_h200.sh on the CPU at its small sizes: every step ends
# in time with exit 0, and the tables hold a measured line for each kernel,
# the app's step and each kernel on each target grid; options it does not
# take are usage errors.
source "$(dirname "$0")/harness.bash"
bench=$here/../../bench/weather_h200.sh
out=$scratch/bench
number='[0-9]+\.[0-9]+'
bash "$bench" --weather "$weather" --tessera "$tessera" --out "$out" --backend cpu --sizes small --budget 3 \
    --seconds 600 --parts kernels,transfer >/dev/null 2>"$scratch/bench.err"
rc=$?
check "the benchmark exits 0" test $rc -eq 0
[ $rc -eq 0 ] || tail -5 "$scratch/bench.err"
check "every step ran to its end" test "$(grep -c 'exit 0$' "$out/steps.txt")" -eq 15
for k in sphadv sphdiff step; do
    check "a measured line for $k" grep -Eq "^$k +2x36x64 +$number +$number +$number" "$out/summary.txt"
done
for k in sphadv sphdiff; do
    for t in 4x36x64 4x20x32 2x36x64; do
        check "a transfer line for $k on $t" grep -Eq "^$k +$t +$number +([0-9]+|inf)/3 +([0-9]+|inf)/3 " "$out/summary.txt"
    done
    check "records of each $k tune" test "$(ls "$out"/records-$k-*.jsonl | wc -l)" -eq 7
done
check "an unknown kernel is a usage error" fails_with 2 "--ops takes" bash "$bench" --weather "$weather" \
    --tessera "$tessera" --out "$out" --ops hdiff
check "no database left behind" test -z "$(ls "$out"/*.db 2>/dev/null)"
check "an unknown part is a usage error" fails_with 2 "--parts takes" bash "$bench" --weather "$weather" \
    --tessera "$tessera" --out "$out" --parts nothing
check "unknown sizes are a usage error" fails_with 2 "--sizes is" bash "$bench" --weather "$weather" \
    --tessera "$tessera" --out "$out" --sizes huge
finish
