#!/usr/bin/env bash
# Inputs that a run must not take as they are: a NaN planted in an input is
# seen by --check (which fails, after writing the output); the netCDF reader
# refuses wrong types, wrong dimensions, missing points and corrupt files
# with the file, the variable and the reason, and undoes CF packing; outputs
# are checked before the run starts.
source "$(dirname "$0")/harness.bash"
command -v ncgen >/dev/null || { echo "ncgen (netcdf-bin) is not installed"; exit 77; }
fails_with() {   # fails_with PATTERN command...: exit 1 and the message on one line
    local pattern=$1
    shift
    "$@" >"$scratch/out" 2>"$scratch/err"
    [ $? -eq 1 ] && grep -q -- "$pattern" "$scratch/err" && [ "$(wc -l <"$scratch/err")" -eq 1 ]
}
# netcdf FILE TYPE DIMS ATTRIBUTES VALUES: a file with one variable u on a
# 4x6x8 grid; VALUES is a Python expression of the index i (NaN allowed)
netcdf() {
    python3 - "$2" "$3" "$4" "$5" >"$scratch/$1.cdl" <<'PY'
import math, sys
vtype, dims, atts, expr = sys.argv[1:]
names = dims.split(",")
print("netcdf f {\ndimensions:")
for n, size in zip(names, (4, 6, 8)):
    print(f"  {n} = {size} ;")
print("variables:")
print(f"  {vtype} u({', '.join(names)}) ;")
for a in filter(None, atts.split(";")):
    print(f"    {a.strip()} ;")
print("data:\n  u = " + ", ".join(str(eval(expr, {"math": math, "i": i})) for i in range(4 * 6 * 8)) + " ;\n}")
PY
    ncgen -k nc4 -o "$scratch/$1.nc" "$scratch/$1.cdl"
}
run() { "$tessera" run heat3d --shape 4x6x8 --steps 20 "$@"; }

netcdf good float z,y,x "" "round(math.sin(0.1 * i), 6)"
run --input "$scratch/good.nc" --check >/dev/null
check "a float field on (z, y, x) runs and checks" test $? -eq 0

netcdf nan float z,y,x "" "'NaN' if i == 100 else round(math.sin(0.1 * i), 6)"
check "a NaN in an input fails the check" fails_with "NaN or infinite values in the run" \
    run --input "$scratch/nan.nc" --check --output "$scratch/nan-out.nc"
check "the message says where the first one is" grep -q "first at (z, y, x) = (" "$scratch/err"
check "the failing run's output is written" sh -c "ncdump -h '$scratch/nan-out.nc' | grep -q 'float u(z, y, x)'"

netcdf int int z,y,x "" "'_'"
check "an int variable is refused" fails_with "int.nc: variable 'u' is of type int" run --input "$scratch/int.nc"
netcdf dims float a,b,c "" "0.5"
check "dimensions that are not the grid's are named" fails_with "has dimensions (a, b, c), the grid's are (z, y, x)" \
    run --input "$scratch/dims.nc"
netcdf fill float z,y,x "u:_FillValue = -999.f" "-999"
check "a field of fill values is refused" fails_with "192 of 192 points are missing (_FillValue -999" \
    run --input "$scratch/fill.nc"
netcdf missing float z,y,x "u:missing_value = 1.e+20f" "1e20 if i == 7 else 0.25"
check "one missing point is counted" fails_with "1 of 192 points are missing (missing_value 1e+20, first at index 7)" \
    run --input "$scratch/missing.nc"
netcdf unwritten float z,y,x "" "'_'"
check "points never written (the default fill value) are missing" \
    fails_with "192 of 192 points are missing (the netCDF default fill value" run --input "$scratch/unwritten.nc"

# CF packing: short values times scale_factor plus add_offset give the same
# run as the unpacked floats; CF axis attributes stand in for dimension names
netcdf packed short z,y,x "u:scale_factor = 0.001; u:add_offset = 0.5" "i * 5 - 400"
netcdf unpacked float z,y,x "" "(i * 5 - 400) * 0.001 + 0.5"
run --steps 3 --input "$scratch/packed.nc" --output "$scratch/packed-out.nc" >/dev/null
run --steps 3 --input "$scratch/unpacked.nc" --output "$scratch/unpacked-out.nc" >/dev/null
check "a CF-packed field runs as its unpacked values" \
    cmp <(ncdump -v u "$scratch/packed-out.nc" | sed -n '/^data:/,$p') \
        <(ncdump -v u "$scratch/unpacked-out.nc" | sed -n '/^data:/,$p')
python3 - >"$scratch/axes.cdl" <<'PY'
print("netcdf axes {\ndimensions:\n  lev = 4 ;\n  lat = 6 ;\n  lon = 8 ;\nvariables:")
for name, axis in (("lev", "Z"), ("lat", "Y"), ("lon", "X")):
    print(f"  int {name}({name}) ;\n    {name}:axis = \"{axis}\" ;")
print("  double u(lev, lat, lon) ;\ndata:")
print("  lev = 0, 1, 2, 3 ;\n  lat = 0, 1, 2, 3, 4, 5 ;\n  lon = 0, 1, 2, 3, 4, 5, 6, 7 ;")
print("  u = " + ", ".join(str(i / 192) for i in range(192)) + " ;\n}")
PY
ncgen -k nc4 -o "$scratch/axes.nc" "$scratch/axes.cdl"
run --input "$scratch/axes.nc" --check >/dev/null
check "dimensions with CF axis attributes Z, Y, X are the grid's" test $? -eq 0

head -c 3000 "$scratch/good.nc" >"$scratch/truncated.nc"
check "a truncated file is refused, naming it" fails_with "truncated.nc" run --input "$scratch/truncated.nc"

# outputs are checked before the run
check "an output in a directory that does not exist fails before the run" \
    fails_with "cannot write $scratch/nodir/out.nc: directory $scratch/nodir does not exist" \
    run --steps 100000 --output "$scratch/nodir/out.nc"
check "nothing ran" test ! -s "$scratch/out"
check "an output that is a directory is refused" fails_with "cannot write $scratch: it is a directory" \
    run --output "$scratch"

run --input "$scratch/good.nc" --check --progress >/dev/null 2>"$scratch/progress"
check "--progress shows the reference's steps" grep -q "float64 reference: step 20 of 20" "$scratch/progress"
finish
