#!/usr/bin/env bash
# md_h200.sh - tessera-md on a GPU host: the in.lj system (fcc at rho* = 0.8442, T* = 1.44,
# rc 2.5, skin 0.3) at 32,000, 256,000 and 1,000,188 atoms (cells 20, 40, 63). It calibrates
# the copy bandwidth, runs the app with the untuned default force kernel (an empty records
# database), tunes the force kernel (ljforce NxM) with a budget, runs the app again with the
# tuned kernel, and prints one table: the force kernel's time default and tuned, its memory
# traffic (tessera's compulsory bytes: positions, list entries, forces, energies) as a
# fraction of the calibrated copy bandwidth, the kernel alone in atom-steps/s, and the app's
# atom-steps/s default and tuned (the app integrates and builds its lists on the host and
# moves positions and forces over PCIe each step, which bounds it far below the kernel).
# Builds nothing: it takes the built binaries.
#
# usage: tests/bench/md_h200.sh --tessera PATH --md PATH [--backend cuda|cpu] [--budget N]
#                               [--small] --out DIR
#   --small   2048-, 4000- and 6912-atom systems (a quick check of the script on a CPU)
# Writes into DIR: calibrate.txt, tune-N.json, md-{default,tuned}-N.txt, records.db,
# table.txt. About 3 minutes on an H200.
set -euo pipefail

tessera="" md="" backend=cuda budget=24 small=0 out=""
while [ $# -gt 0 ]; do
    case $1 in
    --tessera) tessera=${2:?--tessera needs a path}; shift 2 ;;
    --md) md=${2:?--md needs a path}; shift 2 ;;
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --small) small=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "md_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || { echo "md_h200.sh: error: --out DIR is required" >&2; exit 2; }
for b in "$tessera" "$md"; do
    [ -x "$b" ] || { echo "md_h200.sh: error: no binary at '$b' (give --tessera and --md)" >&2; exit 1; }
done
mkdir -p "$out"
export TESSERA_DB="$out/records.db"

if [ "$small" = 1 ]; then cells=(8 10 12); steps=(40 40 40); else cells=(20 40 63); steps=(200 60 20); fi
system=(--lattice fcc --density 0.8442 --temperature 1.44 --seed 87287 --backend "$backend")
op="ljforce:density=0.8442"

echo "== calibrate ($backend)" >&2
"$tessera" calibrate --backend "$backend" | tee "$out/calibrate.txt" >&2

table() {   # the table of the sizes done so far (a run stopped by a time limit keeps them)
    python3 - "$out" "$@" <<'PY' >"$out/table.txt"
import json, re, sys
out, cells = sys.argv[1], [int(c) for c in sys.argv[2:]]
def rate(path):
    m = re.search(r"atom-steps/s ([0-9.e+-]+)", open(path).read())
    return float(m.group(1)) if m else float("nan")
def kernel(path):
    m = re.search(r"kernel (\S+) \((\w+)\)", open(path).read())
    return m.groups() if m else ("?", "?")
print(f"{'atoms':>9} {'default ms':>10} {'tuned ms':>9} {'speedup':>7} {'GB/s':>7} {'of copy':>7} "
      f"{'kernel atom-steps/s':>19} {'app default':>11} {'app tuned':>10}  tuned config (app's origin)")
for c in cells:
    n = 4 * c ** 3
    t = json.load(open(f"{out}/tune-{n}.json"))
    best, dflt = t["best"]["time_ms"], t["default_ms"]
    frac = t["best"]["gbps"] / t["ceiling_gbps"] if t.get("ceiling_gbps") else float("nan")
    cfg, origin = kernel(f"{out}/md-tuned-{n}.txt")
    print(f"{n:>9} {dflt:>10.4f} {best:>9.4f} {dflt / best:>7.2f} {t['best']['gbps']:>7.1f} {frac:>7.1%} "
          f"{n / (best * 1e-3):>19.3e} {rate(f'{out}/md-default-{n}.txt'):>11.3e} "
          f"{rate(f'{out}/md-tuned-{n}.txt'):>10.3e}  {cfg} ({origin})")
print(f"copy bandwidth (calibrated in this run): {t['ceiling_gbps']:.1f} GB/s; "
      "reference: the untuned default kernel, timed in the same tuning run")
PY
}

for i in "${!cells[@]}"; do
    c=${cells[$i]} n=$((4 * cells[$i] ** 3))
    echo "== $n atoms: the app with the default kernel" >&2
    TESSERA_DB="$out/untuned.db" "$md" "${system[@]}" --cells "$c" --steps "${steps[$i]}" --thermo 0 \
        >"$out/md-default-$n.txt"
    rm -f "$out/untuned.db"*
    width=$(awk '/list-width/ { for (k = 1; k < NF; k++) if ($k == "list-width") print $(k + 1) }' \
        "$out/md-default-$n.txt")
    echo "== $n atoms: tune $op ${n}x$width" >&2
    "$tessera" tune "$op" --shape "${n}x$width" --backend "$backend" --budget "$budget" --json \
        >"$out/tune-$n.json"
    echo "== $n atoms: the app with the tuned kernel" >&2
    "$md" "${system[@]}" --cells "$c" --steps "${steps[$i]}" --thermo 0 >"$out/md-tuned-$n.txt"
    table "${cells[@]:0:$((i + 1))}"
done
cat "$out/table.txt"

