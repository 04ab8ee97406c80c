#!/usr/bin/env bash
# The stencil files of TESSERA_STENCIL_PATH that fail: a file that does not
# parse, a stencil with a built-in's name and a directory that does not exist
# are errors that name it, where a stencil or the list of operators is
# needed; commands that need no stencil, and the other stencils, still work.
source "$(dirname "$0")/harness.bash"
fails() {   # fails CODE PATTERN command...: that exit code and the message
    local code=$1 pattern=$2
    shift 2
    "$@" >/dev/null 2>"$scratch/err"
    local rc=$?
    [ $rc -eq "$code" ] && grep -q -- "$pattern" "$scratch/err" && ! grep -q "registering built-ins" "$scratch/err"
}
quiet() { "$@" >/dev/null 2>&1; }
mkdir -p "$scratch/mine"
printf 'stencil heat2d2\ngrid 64x64\nfield u in\nfield u_new out advances u\nu_new = u + 0.2 * (u[1,0] + u[-1,0] + u[0,1] + u[0,-1] - 4 * u)\n' \
    >"$scratch/mine/heat2d2.stencil"
printf 'stencil bad\ngrid 4x4\nfield u in\nfield v out\nv = u[1,0] + q\n' >"$scratch/mine/bad.stencil"
export TESSERA_STENCIL_PATH="$scratch/mine"

: >"$scratch/empty.jsonl"
"$tessera" db import "$scratch/empty.jsonl" 2>/dev/null   # db list reads a database that exists
"$tessera" db list >/dev/null 2>"$scratch/err"
check "a bad stencil file does not break db list" test $? -eq 0
"$tessera" run heat2d2 --shape 16x16 --steps 2 >/dev/null 2>&1
check "nor the other stencils of its directory" test $? -eq 0
check "the stencil it defines fails with file, line and column" \
    fails 1 "TESSERA_STENCIL_PATH: $scratch/mine/bad.stencil:5:14: unknown name 'q'" \
    "$tessera" run bad --shape 16x16 --steps 1
check "and so does the list of operators" fails 1 "bad.stencil:5:14: unknown name 'q'" "$tessera" ops
check "an unknown operator says which file failed" fails 2 "unknown operator 'nosuch'.*bad.stencil:5:14" \
    "$tessera" tune nosuch --budget 1
rm "$scratch/mine/bad.stencil"

# a built-in's name is refused, not silently shadowed
sed 's/^stencil heat2d2/stencil heat3d/' "$scratch/mine/heat2d2.stencil" >"$scratch/mine/heat3d.stencil"
check "a user stencil named like a built-in is refused where it is used" \
    fails 2 "heat3d.stencil: stencil 'heat3d' has the name of a built-in operator (rename it)" \
    "$tessera" run heat3d --shape 16x16x16 --steps 1
rm "$scratch/mine/heat3d.stencil"

TESSERA_STENCIL_PATH="$scratch/mine:$scratch/nowhere" "$tessera" ops >/dev/null 2>"$scratch/err"
check "a directory that does not exist is an error naming it" \
    fails 1 "TESSERA_STENCIL_PATH: directory $scratch/nowhere does not exist" env \
    TESSERA_STENCIL_PATH="$scratch/mine:$scratch/nowhere" "$tessera" ops
check "heat2d2 is still found next to it" quiet env TESSERA_STENCIL_PATH="$scratch/mine:$scratch/nowhere" \
    "$tessera" run heat2d2 --shape 16x16 --steps 1

printf 'stencil far\ngrid 32x32\nfield u in\nfield v out\nv = u[0,99]\n' >"$scratch/mine/far.stencil"
check "an offset out of range reports the range the format allows" \
    fails 1 "far.stencil:5:9: offset 99 is not between -8 and 8" "$tessera" run far --steps 1
finish
