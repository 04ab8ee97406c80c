#!/bin/bash
# tessera-fluid refuses bad input with a message saying what and where:
# usage errors exit 2, unreadable or malformed inputs exit 1, and nothing is
# written when a refusal comes before the run.
fluid=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fails=0

# expect STATUS PATTERN ARGS...: the exit status and a pattern of the message
expect() {
    local want=$1 pattern=$2
    shift 2
    "$fluid" "$@" >out.txt 2>err.txt
    local got=$?
    if [ "$got" != "$want" ] || ! grep -q -- "$pattern" err.txt; then
        echo "FAIL: tessera-fluid $* exited $got (want $want), stderr:"
        cat err.txt
        fails=$((fails + 1))
    fi
}

expect 2 "either --case or --input"
expect 2 "either --case or --input" --case cavity2d --input x.nc
expect 2 "unknown case 'pipe'" --case pipe --no-run --write-input a.nc
expect 2 "--size 'ten' is not a whole number" --case cavity2d --size ten
expect 2 "--re '-5'" --case cavity2d --re -5
expect 2 "unknown option '--frobnicate'" --case cavity2d --frobnicate 1
expect 2 "--backend 'tpu'" --case cavity2d --backend tpu
expect 2 "f16 is for the cuda backend" --case cavity2d --dtype f16
expect 2 "--no-run needs --write-input" --case cavity2d --no-run
expect 2 "too close to 1/2" --case cavity2d --size 16 --re 5000 --no-run --write-input a.nc
expect 1 "nosuchdir" --case cavity2d --no-run --write-input nosuchdir/a.nc
expect 1 "missing.nc" --input missing.nc
[ -e a.nc ] && { echo "FAIL: a refused run wrote a.nc"; fails=$((fails + 1)); }
# An output that cannot be written stops the run before the input is written.
expect 1 "nosuchdir" --case cavity2d --size 8 --write-input a.nc --output nosuchdir/out.nc
[ -e a.nc ] && { echo "FAIL: a refused run wrote a.nc"; fails=$((fails + 1)); }

# Malformed inputs, written with ncgen where it is installed.
if command -v ncgen >/dev/null; then
    cat >bad_kind.cdl <<'CDL'
netcdf bad_kind {
dimensions: y = 4 ; x = 4 ;
variables: int mask(y, x) ;
:lattice = "d2q9" ; :reynolds = 10. ; :velocity = 0.05 ; :length = 2. ; :steps = 10. ; :output_interval = 5. ;
data: mask = 1, 1, 1, 1, 1, 0, 7, 1, 1, 0, 0, 1, 2, 2, 2, 2 ;
}
CDL
    ncgen -k nc4 -o bad_kind.nc bad_kind.cdl
    expect 1 "bad_kind.nc: mask value 7 at cell 6" --input bad_kind.nc
    sed -e 's/:reynolds = 10. ; //' -e 's/bad_kind/no_re/' -e 's/0, 7, 1/0, 0, 1/' bad_kind.cdl >no_re.cdl
    ncgen -k nc4 -o no_re.nc no_re.cdl
    expect 1 "no_re.nc: global attribute 'reynolds'" --input no_re.nc
    sed -e 's/d2q9/d4q1/' -e 's/bad_kind/bad_lattice/' bad_kind.cdl >bad_lattice.cdl
    ncgen -k nc4 -o bad_lattice.nc bad_lattice.cdl
    expect 1 "lattice 'd4q1'" --input bad_lattice.nc
else
    echo "ncgen not installed: malformed netCDF inputs not tested"
fi

# A case written and read back runs the same flow (a few steps, no output files).
"$fluid" --case cavity2d --size 8 --no-run --write-input round.nc >/dev/null || fails=$((fails + 1))
# Its outputs: a well-formed SVG, and CF netCDF holding every field and the history.
"$fluid" --input round.nc --steps 2000 --interval 500 --tolerance 0 --svg round.svg --output flow.nc >out.txt 2>err.txt ||
    { echo "FAIL: round.nc did not run"; cat err.txt; fails=$((fails + 1)); }
grep -q "2000 steps" out.txt || { echo "FAIL: round.nc ran other than 2000 steps"; fails=$((fails + 1)); }
if command -v python3 >/dev/null; then
    python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' round.svg ||
        { echo "FAIL: round.svg is not well-formed XML"; fails=$((fails + 1)); }
fi
if command -v ncdump >/dev/null; then
    ncdump -h flow.nc >header.txt
    for want in "time = UNLIMITED ; // (4 currently)" "float u(time, y, x)" "float v(time, y, x)" "float rho(time, y, x)" \
                "float vorticity(time, y, x)" "history_residual(sample)" ':Conventions = "CF-1.8"'; do
        grep -qF "$want" header.txt || { echo "FAIL: flow.nc lacks '$want'"; fails=$((fails + 1)); }
    done
fi
[ "$fails" = 0 ] && echo "all refusals as expected"
exit $((fails > 0))
