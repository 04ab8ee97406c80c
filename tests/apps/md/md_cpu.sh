#!/usr/bin/env bash
# tessera-md on the CPU: the LAMMPS in.lj lattice at step 0, a restart written by ncgen
# (data/md/lj256.nc) read and run for 400 NVE steps within the committed bounds
# (data/md/ci_bounds.txt), the transposed list's step 0, the Langevin thermostat's
# temperature, a restart and trajectory written and read back, and malformed input refused
# with a message and exit 1 (usage errors: 2).
set -u
md=$1
data=$2
[ -f "$data/lj256.nc" ] && [ -f "$data/ci_bounds.txt" ] || { echo "missing $data/lj256.nc"; exit 77; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TESSERA_DB="$scratch/records.db"
failures=0
total=0
bound() { awk -v k="$1" '$1 == k { print $2 }' "$data/ci_bounds.txt"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# column COL of the thermo line of STEP in FILE
thermo() { awk -v s="$2" -v c="$3" '$1 == s && NF == 7 { print $c; exit }' "$1"; }
same() { total=$((total + 1)); [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

# The LAMMPS lattice: every printed digit
total=$((total + 1))
"$md" --lattice fcc --density 0.8442 --cells 6 --temperature 1.44 --seed 87287 --dtype f64 >"$scratch/lattice" ||
    fail "lattice run"
same "lattice pe/atom" "$(thermo "$scratch/lattice" 0 4)" "$(bound lattice_pe)"
same "lattice pressure" "$(thermo "$scratch/lattice" 0 7)" "$(bound lattice_pressure)"

# The transposed list gives the same step 0
total=$((total + 1))
"$md" --lattice fcc --density 0.8442 --cells 6 --temperature 1.44 --seed 87287 --dtype f64 --layout cols \
    >"$scratch/cols" || fail "lattice run, layout cols"
same "lattice pe/atom, layout cols" "$(thermo "$scratch/cols" 0 4)" "$(bound lattice_pe)"

# The restart another tool wrote: step 0, then NVE
total=$((total + 1))
"$md" --restart "$data/lj256.nc" --dtype f64 >"$scratch/restart0" || fail "reading lj256.nc"
same "restart temperature" "$(thermo "$scratch/restart0" 0 3)" "$(bound restart_temperature)"
same "restart pe/atom" "$(thermo "$scratch/restart0" 0 4)" "$(bound restart_pe)"
same "restart pressure" "$(thermo "$scratch/restart0" 0 7)" "$(bound restart_pressure)"
total=$((total + 1))
"$md" --restart "$data/lj256.nc" --shift --steps 400 --thermo 10 --restart-out "$scratch/end.nc" \
    --trajectory "$scratch/traj.nc" --every 100 --svg "$scratch/e.svg" >"$scratch/nve" || fail "NVE run"
dev=$(awk '/energy drift/ { gsub(",", "", $7); print $7 }' "$scratch/nve")
total=$((total + 1))
awk -v d="$dev" -v b="$(bound nve_max_deviation)" 'BEGIN { exit !(d != "" && d + 0 < b + 0) }' ||
    fail "NVE: max |E-E0| per atom '$dev' not below $(bound nve_max_deviation)"
total=$((total + 1))
grep -q "<polyline" "$scratch/e.svg" || fail "the SVG has no curves"

# The Langevin thermostat brings the restart's T* = 1.2 to 0.8: the mean of the thermo lines
# from step 500 (2.5 time units, 2.5 times the friction's 1/gamma) on
total=$((total + 1))
"$md" --restart "$data/lj256.nc" --shift --langevin 0.8 --steps 1500 --thermo 20 >"$scratch/nvt" ||
    fail "Langevin run"
mean_t=$(awk '$1 ~ /^[0-9]+$/ && NF == 7 && $1 >= 500 { s += $3; n++ } END { if (n) printf "%.4f", s / n }' "$scratch/nvt")
total=$((total + 1))
awk -v t="$mean_t" 'BEGIN { exit !(t != "" && t > 0.74 && t < 0.86) }' ||
    fail "Langevin: mean temperature '$mean_t' not within 0.06 of 0.8"

# What it wrote reads back: the final state's thermo line is the restart's step 0
total=$((total + 1))
"$md" --restart "$scratch/end.nc" --shift >"$scratch/again" || fail "reading its own restart"
same "restart round trip temperature" "$(thermo "$scratch/again" 0 3)" "$(thermo "$scratch/nve" 400 3)"
same "restart round trip pe/atom" "$(thermo "$scratch/again" 0 4)" "$(thermo "$scratch/nve" 400 4)"
if command -v ncdump >/dev/null; then
    header=$(ncdump -h "$scratch/traj.nc")
    for want in ':Conventions = "AMBER"' ':ConventionVersion = "1.0"' 'frame = UNLIMITED ; // (5 currently)' \
        'coordinates:units = "angstrom"' 'cell_lengths(frame, cell_spatial)' 'cell_angles:units = "degree"'; do
        total=$((total + 1))
        grep -qF "$want" <<<"$header" || fail "trajectory header lacks $want"
    done
fi

# Malformed input: exit 1 (a bad file) or 2 (bad usage), one message naming the problem
expect() {
    local code=$1 pattern=$2
    shift 2
    total=$((total + 1))
    "$@" >"$scratch/out" 2>"$scratch/err"
    local rc=$?
    if [ "$rc" -ne "$code" ] || ! grep -q -- "$pattern" "$scratch/err"; then
        fail "$* -> exit $rc (want $code), stderr: $(cat "$scratch/err")"
    fi
}
expect 1 "lj256_nm.nc: variable 'coordinates' has units 'nanometer'" "$md" --restart "$data/lj256_nm.nc"
expect 1 "ci_bounds.txt: cannot open as netCDF" "$md" --restart "$data/ci_bounds.txt"
expect 1 "nosuch.nc: cannot open" "$md" --restart "$scratch/nosuch.nc"
head -c 2000 "$data/lj256.nc" >"$scratch/cut.nc"
expect 1 "cut.nc" "$md" --restart "$scratch/cut.nc"
expect 1 "less than twice rc + skin" "$md" --lattice fcc --density 0.8442 --cells 3 --temperature 1
expect 2 "either --restart FILE or --lattice fcc" "$md" --steps 10
expect 2 "--dt needs a number" "$md" --lattice fcc --cells 4 --density 0.8 --temperature 1 --dt fast
expect 2 "unknown option" "$md" --frobnicate
total=$((total + 1))
"$md" --help | grep -q -- "--langevin T" || fail "--help does not explain --langevin"

echo "$((total - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
