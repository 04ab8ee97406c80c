#!/usr/bin/env bash
# The CF reader, through `tessera-weather run`: a packed short tracer with
# _FillValue and missing_value points, on dimensions in the order (lon,
# time, lat) with latitudes north to south and winds found by their
# standard names under other names; the time taken by index; the output
# with the input's coordinates, attributes and missing points; and files it
# must refuse (curvilinear, rotated pole, unstructured, corrupt, a missing
# variable or time) with exit 1 and a one-line message naming the variable.
source "$(dirname "$0")/harness.bash"
command -v ncgen >/dev/null && command -v ncdump >/dev/null || { echo "ncgen/ncdump (netcdf-bin) not installed"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }

# cdl KIND: the CDL text of a test file of that kind, on 8 latitudes by 16 longitudes
cdl() {
    python3 - "$1" <<'PY'
import math, sys
kind = sys.argv[1]
nlat, nlon, nt = 8, 16, 2
lats = [90 - 180 * (j + 0.5) / nlat for j in range(nlat)]       # north to south
lons = [360 * i / nlon for i in range(nlon)]
def packed(t, i, j):                                             # file order (lon, time, lat)
    if (i, j) in ((3, 2), (4, 2)): return -32767                 # _FillValue: land
    if (i, j) == (10, 5): return -32000                          # missing_value
    return int(round(100 * (1 + math.sin(math.radians(lons[i])) * math.cos(math.radians(lats[j]))) + 7 * t))
print("netcdf f {\ndimensions:\n  longitude = %d ;\n  t = %d ;\n  latitude = %d ;" % (nlon, nt, nlat))
if kind == "unstructured": print("  ncells = 5 ;")
print("variables:")
print('  double longitude(longitude) ;\n    longitude:units = "degrees_east" ;')
print('  double latitude(latitude) ;\n    latitude:units = "degrees_north" ;')
print('  double t(t) ;\n    t:units = "hours since 2001-01-01 00:00:00" ;')
dims = "longitude, t, latitude"
if kind == "curvilinear":
    print('  double glat(latitude, longitude) ;\n    glat:units = "degrees_north" ;')
if kind == "unstructured":
    print("  float cellq(t, ncells) ;")
print("  short tracer(%s) ;" % dims)
print('    tracer:long_name = "test tracer" ;\n    tracer:units = "kg kg-1" ;')
print("    tracer:scale_factor = 0.01 ;\n    tracer:add_offset = 5. ;")
print("    tracer:_FillValue = -32767s ;\n    tracer:missing_value = -32000s ;")
if kind == "curvilinear": print('    tracer:coordinates = "glat longitude" ;')
if kind == "rotated":
    print('    tracer:grid_mapping = "rp" ;')
    print('  int rp ;\n    rp:grid_mapping_name = "rotated_latitude_longitude" ;')
print('  float uwnd(%s) ;\n    uwnd:standard_name = "eastward_wind" ;' % dims)
print('  float vwnd(%s) ;\n    vwnd:standard_name = "northward_wind" ;' % dims)
print('\n// global attributes:\n  :source = "weather_cf test" ;\n  :history = "made by the test" ;')
print("data:")
print("  longitude = " + ", ".join(map(str, lons)) + " ;")
print("  latitude = " + ", ".join(map(str, lats)) + " ;")
print("  t = 0, 6 ;")
if kind == "curvilinear": print("  glat = " + ", ".join(str(lats[j]) for j in range(nlat) for i in range(nlon)) + " ;")
if kind == "unstructured": print("  cellq = " + ", ".join(["1"] * 10) + " ;")
print("  tracer = " + ", ".join(str(packed(t, i, j)) for i in range(nlon) for t in range(nt) for j in range(nlat)) + " ;")
print("  uwnd = " + ", ".join(str(round(10 * math.cos(math.radians(lats[j])), 4)) for i in range(nlon) for t in range(nt) for j in range(nlat)) + " ;")
print("  vwnd = " + ", ".join("0" for i in range(nlon) for t in range(nt) for j in range(nlat)) + " ;\n}")
PY
}
make_nc() { cdl "$1" >"$scratch/$1.cdl" && ncgen -k nc4 -o "$scratch/$1.nc" "$scratch/$1.cdl"; }
for k in good curvilinear rotated; do make_nc $k; done
"$weather" gen --rows 16 --alpha 0.5 -o "$scratch/tc1.nc" >/dev/null
check "a generated file (time unlimited) runs with its own winds" "$weather" run "$scratch/tc1.nc" --hours 12 --every 6 \
    -o "$scratch/tc1-out.nc" --svg "$scratch/tc1.svg"
check "its output holds three times" grep -q "time = UNLIMITED ; // (3 currently)" <(ncdump -h "$scratch/tc1-out.nc")

run() { "$weather" run "$@" --hours 6 >"$scratch/log" 2>&1; }
run "$scratch/good.nc" --var tracer --time 1 -o "$scratch/out.nc"
check "a packed tracer with fill values runs" test $? -eq 0 || cat "$scratch/log"
check "it says what it read" grep -q "3 missing points, unpacked by scale_factor/add_offset" "$scratch/log"
ncdump "$scratch/out.nc" >"$scratch/out.cdl"
check "the output keeps the input's attributes and extends its history" \
    grep -q 'tracer:long_name = "test tracer"' "$scratch/out.cdl"
check "the output keeps the global attributes" grep -q ':source = "weather_cf test"' "$scratch/out.cdl"
check "the history is extended" grep -q 'tessera-weather run .*made by the test' <(tr -d '\n' <"$scratch/out.cdl")
check "the first output record is time index 1, unpacked, south to north, fill values kept" python3 - "$scratch/out.cdl" <<'PY'
import math, re, sys
text = open(sys.argv[1]).read()
data = text[text.index("data:"):]
def values(name):
    body = re.search(r"\b%s =(.*?);" % name, data, re.S).group(1)
    return [None if v.strip() == "_" else float(v) for v in body.replace("\n", " ").split(",")]
nlat, nlon = 8, 16
t = values("t")
assert t == [6.0, 12.0], t
lat = values("latitude")
assert lat == sorted(lat), lat
q = values("tracer")[: nlat * nlon]          # record 0: (lat, lon), lat south to north
for j in range(nlat):
    jn = nlat - 1 - j                        # the file's row (north to south)
    for i in range(nlon):
        got = q[j * nlon + i]
        if (i, jn) in ((3, 2), (4, 2), (10, 5)):
            assert got is None, (i, j, got)
            continue
        lats = 90 - 180 * (jn + 0.5) / nlat
        raw = round(100 * (1 + math.sin(math.radians(360 * i / nlon)) * math.cos(math.radians(lats)))) + 7
        assert abs(got - (raw * 0.01 + 5)) < 1e-5, (i, j, got, raw)
PY
check "the tracer's missing points stay missing at the end" test "$(grep -o '_,\|_ ;' <(sed -n '/tracer =/,/;/p' "$scratch/out.cdl") | wc -l)" -eq 6

check "a curvilinear grid is refused" fails_with 1 "variable 'tracer' has 2D latitudes 'glat'" \
    "$weather" run "$scratch/curvilinear.nc" --var tracer -o "$scratch/x.nc"
check "a rotated pole is refused" fails_with 1 "'tracer' is on a rotated_latitude_longitude grid" \
    "$weather" run "$scratch/rotated.nc" --var tracer -o "$scratch/x.nc"
make_nc unstructured
check "an unstructured mesh is refused" fails_with 1 "variable 'cellq': dimension 'ncells'" \
    "$weather" run "$scratch/unstructured.nc" --var cellq -o "$scratch/x.nc"
head -c 4000 "$scratch/good.nc" >"$scratch/corrupt.nc"
check "a truncated file is refused" fails_with 1 "corrupt.nc: cannot open" "$weather" run "$scratch/corrupt.nc" -o "$scratch/x.nc"
check "a missing variable is refused" fails_with 1 "no variable 'salt'" "$weather" run "$scratch/good.nc" --var salt -o "$scratch/x.nc"
check "a time index out of range is refused" fails_with 1 "time index 5 is out of range (the file has 2 times)" \
    "$weather" run "$scratch/good.nc" --var tracer --time 5 -o "$scratch/x.nc"
check "no output is left by a refusal" test ! -e "$scratch/x.nc"
check "a usage error exits 2" fails_with 2 "unknown option" "$weather" run "$scratch/good.nc" --bogus -o "$scratch/x.nc"
finish
