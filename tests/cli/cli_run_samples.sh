#!/usr/bin/env bash
# The sample inputs of data/samples: make_samples writes exactly the files in
# the tree, each runs 100 steps within the tolerance of the float64
# reference, and the README's `tessera run` examples work as written (the
# cuda one where a GPU is present).
source "$(dirname "$0")/harness.bash"
samples="$TESS_SOURCE_DIR/data/samples"
[ -d "$samples" ] || { echo "no samples at $samples"; exit 77; }
if [ -n "${TESS_MAKE_SAMPLES:-}" ]; then
    mkdir "$scratch/made"
    "$TESS_MAKE_SAMPLES" "$scratch/made" >/dev/null
    for f in "$samples"/*.nc; do
        check "make_samples writes $(basename "$f") as shipped" cmp -s "$f" "$scratch/made/$(basename "$f")"
    done
    check "and nothing else" test "$(ls "$scratch/made" | wc -l)" -eq "$(ls "$samples"/*.nc | wc -l)"
fi

for f in "$samples"/*.nc; do
    name=$(basename "$f" .nc)
    shape=$(ncdump -h "$f" | awk '/^dimensions:/ { on = 1; next } /^variables:/ { on = 0 }
                                  on { s = s (s ? "x" : "") $3 } END { print s }')
    "$tessera" run "$name" --shape "$shape" --steps 100 --input "$f" --check >"$scratch/$name.txt" 2>&1
    rc=$?
    check "$name $shape from its sample: 100 steps match the float64 reference" test $rc -eq 0
done

# the README's examples, with the sample paths of the tree and outputs in the scratch directory
grep -E '^build/tessera run ' "$TESS_SOURCE_DIR/README.md" | sed 's/ *#.*//' >"$scratch/examples"
check "the README shows run examples" test -s "$scratch/examples"
while read -r line; do
    cmd=${line#build/tessera }
    cmd=${cmd//data\/samples\//$samples/}
    cmd=${cmd//--output /--output $scratch/}
    (cd "$scratch" && eval "\"$tessera\" $cmd") >"$scratch/example.out" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && grep -q "backend cuda is unavailable" "$scratch/example.out"; then
        echo "skipped (no GPU here): $line"
        continue
    fi
    check "README: $line" test $rc -eq 0
done <"$scratch/examples"
finish
