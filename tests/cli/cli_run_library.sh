#!/usr/bin/env bash
# Every stencil of the library is numerically sound for long runs: 100 steps
# on a small grid from the analytic initial condition stay within the
# tolerance of the float64 reference (an unstable default range amplifies
# rounding until the check fails).
source "$(dirname "$0")/harness.bash"
library="$TESS_SOURCE_DIR/stencils/templates"
[ -d "$library" ] || { echo "no stencil library at $library"; exit 77; }
for file in "$library"/*.stencil; do
    name=$(basename "$file" .stencil)
    rank=$(awk '$1 == "grid" { print gsub("x", "x", $2) + 1 }' "$file")
    shape=$([ "$rank" -eq 2 ] && echo 48x40 || echo 16x20x24)
    "$tessera" run "$name" --shape "$shape" --steps 100 --check >"$scratch/$name.txt" 2>&1
    rc=$?
    check "$name $shape: 100 steps match the float64 reference ($(grep -o 'differ.*' "$scratch/$name.txt"))" \
        test $rc -eq 0
done
finish
