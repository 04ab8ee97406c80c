#!/usr/bin/env bash
# Bad input gets a one-line error naming the problem and exit code 1 or 2.
source "$(dirname "$0")/harness.bash"

# expect CODE PATTERN -- command...: exit code and a stderr line matching PATTERN
expect() {
    local code=$1 pattern=$2
    total=$((total + 1))
    shift 3
    "$@" >"$scratch/out" 2>"$scratch/err"
    local rc=$?
    local lines
    lines=$(wc -l <"$scratch/err")
    if [ "$rc" -ne "$code" ] || ! grep -q -- "$pattern" "$scratch/err" || [ "$lines" -gt 2 ]; then
        echo "FAIL: $* -> exit $rc (want $code), stderr:"; cat "$scratch/err"
        failures=$((failures + 1))
    fi
}

expect 2 "unknown command" -- "$tessera" frobnicate
expect 2 "missing operator" -- "$tessera" tune
expect 2 "unknown operator 'nosuch'" -- "$tessera" tune nosuch
expect 2 "malformed shape '12xfoo'" -- "$tessera" tune heat3d --shape 12xfoo
expect 2 "out of range" -- "$tessera" tune heat3d --shape 0x4x4
expect 2 "needs a 3D shape" -- "$tessera" tune heat3d --shape 64x64
expect 2 "unknown dtype 'f7'" -- "$tessera" tune heat3d --dtype f7
expect 2 "--budget expects an integer" -- "$tessera" tune heat3d --budget many
expect 2 "--compile-timeout" -- "$tessera" tune heat3d --compile-timeout -5
expect 2 "unknown option '--frob'" -- "$tessera" tune heat3d --frob
expect 2 "unknown strategy 'psychic'" -- "$tessera" tune heat3d --shape 8x8x8 --strategy psychic --budget 2
expect 2 "unknown backend 'tpu'" -- "$tessera" tune heat3d --backend tpu
expect 1 "no-such-dir" -- "$tessera" tune heat3d --shape 8x8x8 --budget 1 --db /proc/no-such-dir/records.db
echo "this is not a database" >"$scratch/text.db"
expect 1 "not a tessera records database" -- "$tessera" db list --db "$scratch/text.db"
expect 2 "unknown action 'shrink'" -- "$tessera" db shrink
printf '{"task": "heat3d:f32:8x8x8"\n' >"$scratch/bad.jsonl"
expect 1 "bad.jsonl:1" -- "$tessera" db import "$scratch/bad.jsonl"
expect 1 "cannot open" -- "$tessera" db import "$scratch/missing.jsonl"
expect 2 "config" -- "$tessera" show heat3d --shape 8x8x8 --config tile_z=3
# usage errors are 2 in every parser: options, values, fixed parameters, configs
expect 2 "item 'tile_y' is not name=value" -- "$tessera" tune heat3d --shape 8x8x8 --budget 1 --fix tile_y
expect 2 "unknown parameter 'nosuch'" -- "$tessera" tune heat3d --shape 8x8x8 --budget 1 --fix nosuch=3
expect 2 "item 'garbage' is not name=value" -- "$tessera" show heat3d --shape 8x8x8 --config garbage
expect 2 "unknown dtype" -- "$tessera" show heat3d --dtype f7
expect 2 "unknown backend 'tpu'" -- "$tessera" devices --backend tpu
expect 2 "unknown backend 'tpu'" -- "$tessera" calibrate --backend tpu
expect 2 "unexpected argument" -- "$tessera" ops extra
expect 2 "--output belongs to db export" -- "$tessera" db list -o x.jsonl
expect 2 "per device: add --device" -- "$tessera" db export -o lib.json
expect 2 "unknown action 'bogus'" -- "$tessera" cache bogus
expect 2 "--keep expects a size" -- "$tessera" cache clean --keep lots
expect 2 "bad value 'x' for --budget" -- "$tessera" bench search --budget x space.json
expect 2 "--top expects an integer" -- "$tessera" bench transfer a.json b.json --top 0
expect 2 "--output belongs to tessera record" -- "$tessera" tune heat3d -o x.jsonl

for cmd in tune record show ops strategies devices calibrate db cache bench; do
    total=$((total + 1))
    if ! "$tessera" $cmd --help >/dev/null 2>&1; then
        echo "FAIL: tessera $cmd --help"; failures=$((failures + 1))
    fi
done
finish
