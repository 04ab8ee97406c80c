#!/usr/bin/env bash
# Multi-step runs: heat3d matches the float64 reference after 100 steps, fields
# go through netCDF files, and bad inputs get one-line errors.
source "$(dirname "$0")/harness.bash"
fails_with() {   # fails_with PATTERN command...: exit 1 and the message on one line
    local pattern=$1
    shift
    "$@" >/dev/null 2>"$scratch/err"
    [ $? -eq 1 ] && grep -q -- "$pattern" "$scratch/err" && [ "$(wc -l <"$scratch/err")" -eq 1 ]
}

"$tessera" run heat3d --shape 40x36x32 --steps 100 --check --output "$scratch/heat.nc" >"$scratch/heat.txt"
check "heat3d runs 100 steps and passes the check" test $? -eq 0
err=$(sed -n 's/.*after 100 steps: \([^ ]*\) .*/\1/p' "$scratch/heat.txt")
check "heat3d after 100 steps is within the f32 tolerance of float64 ($err)" \
    python3 -c "import sys; sys.exit(0 if float('$err') <= 1e-5 else 1)"
check "the output is netCDF with the field" sh -c "ncdump -h '$scratch/heat.nc' | grep -q 'float u(z, y, x)'"

"$tessera" run varcoef3d --shape 24x20x16 --steps 5 --output "$scratch/vc.nc" >/dev/null
check "varcoef3d writes u and k" sh -c "ncdump -h '$scratch/vc.nc' | grep -q 'float k(z, y, x)'"
"$tessera" run varcoef3d --shape 24x20x16 --steps 5 --input "$scratch/vc.nc" --check >/dev/null
check "a run restarts from its own output" test $? -eq 0

check "a missing variable is named" fails_with "no variable 'k'" \
    "$tessera" run varcoef3d --shape 40x36x32 --steps 1 --input "$scratch/heat.nc"
check "a wrong shape is named" fails_with "points along 'z'" \
    "$tessera" run heat3d --shape 41x36x32 --steps 1 --input "$scratch/heat.nc"
check "a wrong rank is named" fails_with "dimensions" \
    "$tessera" run heat2d --shape 36x32 --steps 1 --input "$scratch/heat.nc"
echo "not netcdf" >"$scratch/bad.nc"
check "an unreadable file is named" fails_with "bad.nc" \
    "$tessera" run heat3d --shape 40x36x32 --steps 1 --input "$scratch/bad.nc"
# A failing check still writes the output, then fails: hdiff with the
# Laplacian's sign flipped is an anti-diffusion that amplifies rounding.
mkdir -p "$scratch/stencils"
sed -e 's/^stencil hdiff/stencil antidiff/' \
    -e 's/^lap = .*/lap = 4 * u - (u[0,0,1] + u[0,0,-1] + u[0,1,0] + u[0,-1,0])/' \
    "$TESS_SOURCE_DIR/stencils/templates/hdiff.stencil" >"$scratch/stencils/antidiff.stencil"
TESSERA_STENCIL_PATH="$scratch/stencils" "$tessera" run antidiff --shape 4x32x32 --steps 60 --check \
    --output "$scratch/anti.nc" >"$scratch/anti.txt" 2>"$scratch/anti.err"
check "an unstable stencil fails the check" test $? -eq 1
check "saying by how much and where" grep -q "differs from the float64 reference by .* in 'u' at (z, y, x) = (" \
    "$scratch/anti.err"
check "its output is written all the same" sh -c "ncdump -h '$scratch/anti.nc' | grep -q 'float u(z, y, x)'"

"$tessera" run sum --steps 1 >/dev/null 2>&1
check "a non-stencil is refused as a usage error" test $? -eq 2

# An operator with integer inputs (the lattice's cell kinds) runs on its own
# test inputs, valid cell kinds included, and matches float64 over 50 steps.
"$tessera" run lbm_d2q9 --shape 24x20 --steps 50 --check >"$scratch/lbm.txt" 2>&1
check "lbm_d2q9 runs 50 steps on its own inputs and passes the check" test $? -eq 0
check "and says how close it came" grep -q "largest difference from the float64 reference after 50 steps" \
    "$scratch/lbm.txt"
"$tessera" run lbm_d2q9 --shape 24x20 --steps 5 --output "$scratch/lbm.nc" >/dev/null 2>"$scratch/lbm.err"
check "its distributions cannot go to netCDF: a usage error" test $? -eq 2
check "naming the buffer" grep -q "buffer 'g' is not one" "$scratch/lbm.err"
check "and nothing is written" test ! -e "$scratch/lbm.nc"

finish
