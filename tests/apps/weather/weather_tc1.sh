#!/usr/bin/env bash
# Williamson's test case 1 at a coarse resolution (32 x 64 cells), both flow
# angles, float64 on the CPU: the normalized errors within the committed
# bounds, the global integral kept to round-off, no new extrema, and the
# files the validation writes (table, JSON, a well-formed SVG).
source "$(dirname "$0")/harness.bash"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
"$weather" tc1 --rows 32 --alpha 0,1.5207963 --out "$scratch/tc1" >"$scratch/log" 2>&1
check "tc1 runs" test $? -eq 0 || cat "$scratch/log"
for f in tc1.txt tc1.json tc1.svg; do check "tc1 writes $f" test -s "$scratch/tc1/$f"; done
check "the picture is well-formed SVG" python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$scratch/tc1/tc1.svg"
check "errors, mass and extrema within the committed bounds" python3 - "$scratch/tc1/tc1.json" "$here/tc1_bounds.json" <<'PY'
import json, sys
got, bounds = (json.load(open(p)) for p in sys.argv[1:])
ok = True
for want in bounds["cases"]:
    case = [c for c in got["cases"] if abs(c["alpha"] - want["alpha"]) < 1e-6 and c["rows"] == bounds["rows"]]
    if len(case) != 1:
        print("no case for", want); sys.exit(1)
    c = case[0]
    for norm in ("l1", "l2", "linf"):
        if not 0 < c[norm] <= want[norm]:
            print(f"alpha {want['alpha']}: {norm} {c[norm]} above {want[norm]}"); ok = False
    if abs(c["mass_change"]) > bounds["mass_change"]:
        print(f"alpha {want['alpha']}: mass changed by {c['mass_change']}"); ok = False
    # no new extrema: the limiter keeps the bell within its initial range (to round-off)
    if c["min"] < c["min0"] - 1e-12 * c["max0"] or c["max"] > c["max0"] * (1 + 1e-12):
        print(f"alpha {want['alpha']}: new extrema {c['min']}, {c['max']}"); ok = False
    if c["steps"] < 1 or abs(c["steps"] * c["dt_s"] - 12 * 86400) > 1e-3:
        print("not one revolution"); ok = False
sys.exit(0 if ok else 1)
PY
fails_with 2 "--rows takes" "$weather" tc1 --rows 2 --out "$scratch/x"
check "a usage error writes nothing" test ! -e "$scratch/x"
finish
