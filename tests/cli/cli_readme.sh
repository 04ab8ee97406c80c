#!/usr/bin/env bash
# Every command README.md shows (but tessera run, which cli_run covers), in
# the README's order, on small inputs on the CPU: exit codes and key output.
# Recorded spaces of other labs are used where TESSERA_SPACES names them.
source "$(dirname "$0")/harness.bash"
cd "$scratch" || exit 1
runs() {   # runs DESCRIPTION PATTERN -- command...: exit 0 and stdout+stderr matching PATTERN
    local what=$1 pattern=$2
    shift 3
    total=$((total + 1))
    if ! "$@" >out.txt 2>&1 || ! grep -q -- "$pattern" out.txt; then
        echo "FAIL: $what: $*"; cat out.txt; failures=$((failures + 1))
    fi
}

runs "tune a stencil" "best config" -- "$tessera" tune heat3d --shape 16x16x24 --dtype f32 --backend cpu --budget 4
runs "tune a reduction for some seconds, as JSON" '"op": "sum"' -- \
    "$tessera" tune sum --shape 100000 --backend cpu --strategy random --seconds 3 --json
runs "tune a sub-space" "time_tile=2" -- \
    "$tessera" tune heat3d4 --shape 16x16x16 --backend cpu --budget 2 --fix time_tile=2
runs "tune with an attribute" "rmsnorm:eps=1e-6 bf16" -- \
    "$tessera" tune rmsnorm:eps=1e-6 --shape 16x256 --dtype bf16 --backend cpu --budget 2
printf 'heat3d 16x16x24 f32 cpu\nsum 100000 cpu 2\n' >tasks.txt
runs "tune a task list and write its library" "exported a library of" -- \
    "$tessera" tune-all tasks.txt --budget 2 -o lib.json
runs "show the best config and its source" "best recorded" -- "$tessera" show heat3d --shape 16x16x24
if "$tessera" show heat3d4 --shape 64x64x64 --arch sm_90 >out.txt 2>&1 || ! grep -qi "nvrtc\|unknown backend 'cuda'" out.txt; then
    runs "show CUDA source for an architecture" "^// device  cuda:NVIDIA H200:sm_90" -- \
        "$tessera" show heat3d4 --shape 64x64x64 --arch sm_90
else
    echo "no NVRTC here: show --arch not run"
fi
runs "calibrate" "copy bandwidth" -- "$tessera" calibrate --backend cpu
runs "ops" "heat3d" -- "$tessera" ops
runs "strategies" "(default)" -- "$tessera" strategies
runs "devices" "copy bandwidth .* calibrated" -- "$tessera" devices
runs "db list" "heat3d:f32:16x16x24" -- "$tessera" db list
runs "db export" "exported" -- "$tessera" db export -o records.jsonl
check "the export holds every result" test "$(wc -l <records.jsonl)" -ge 10
runs "db export a library" "exported a library" -- "$tessera" db export --device cpu: -o lib.json
runs "db import" "imported" -- "$tessera" db import lib.json --db imported.db
runs "record a space" "exported to space.jsonl" -- \
    "$tessera" record heat3d --shape 8x8x8 --backend cpu --budget 4 -o space.jsonl
"$tessera" record heat3d --shape 8x8x12 --backend cpu --budget 4 -o space2.jsonl >/dev/null
spaces=${TESSERA_SPACES:-}
cache=space2.jsonl a=space.jsonl b=space2.jsonl
if [ -n "$spaces" ] && [ -r "$spaces/dedispersion_A100.json.gz" ] && [ -r "$spaces/dedispersion_A4000.json.gz" ]; then
    cache=$spaces/pnpoly_RTX_3090.json.gz a=$spaces/dedispersion_A100.json.gz b=$spaces/dedispersion_A4000.json.gz
fi
runs "bench search" "random sampling expects" -- \
    "$tessera" bench search "$cache" space.jsonl --strategies random,agent --repeats 2 --budget 4
runs "bench transfer" "cold" -- "$tessera" bench transfer "$a" "$b" --repeats 2 --budget 4
runs "cache" "kernel files" -- "$tessera" cache
runs "cache clean" "removed" -- "$tessera" cache clean --keep 500M
finish
