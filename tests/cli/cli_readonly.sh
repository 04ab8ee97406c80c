#!/usr/bin/env bash
# Commands that only read create nothing, a missing --transfer source is an
# error, and a records database is read where it cannot be written (a
# read-only file in a read-only directory, as an installed kernel library)
# and while a tuner writes it.
source "$(dirname "$0")/harness.bash"
chmod 755 "$scratch"
mkdir -m 777 "$scratch/cache" "$scratch/out"
# the reader is a user who may not write the library: nobody, when the tests run as root
as_reader() {
    if [ "$(id -u)" -eq 0 ]; then
        TESSERA_CACHE="$scratch/cache" setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
    else
        TESSERA_CACHE="$scratch/cache" "$@"
    fi
}

# --- a mistyped path creates nothing -------------------------------------
missing="$scratch/no-such-dir/records.db"
for action in list export; do
    "$tessera" db $action --db "$missing" >/dev/null 2>"$scratch/err"
    rc=$?
    check "db $action of a missing database fails (exit $rc)" test $rc -eq 1
    check "db $action names the missing path" grep -q "no records database at $missing" "$scratch/err"
done
"$tessera" show heat3d --shape 8x8x8 --db "$missing" >"$scratch/show.txt"
check "show without a database shows the default" grep -q "(the template's default)" "$scratch/show.txt"
"$tessera" devices --db "$missing" >"$scratch/devices.txt"
check "devices without a database lists the cpu" grep -q "^cpu:" "$scratch/devices.txt"
check "nothing was created for them" test ! -e "$scratch/no-such-dir"
for source in "$scratch/nonexistent.db" "$scratch/nonexistent.jsonl"; do
    "$tessera" tune heat3d --shape 8x8x8 --budget 2 --transfer "$source" >/dev/null 2>"$scratch/err"
    rc=$?
    check "a missing --transfer source fails (exit $rc)" test $rc -eq 1
    check "its message names it" grep -q "$source" "$scratch/err"
    check "and it is not created" test ! -e "$source"
done

# --- a kernel library installed read-only ---------------------------------
lib="$scratch/lib/records.db"
"$tessera" tune heat3d --shape 12x12x12 --backend cpu --budget 3 --strategy random --db "$lib" >/dev/null
check "the library is tuned" test $? -eq 0
chmod 444 "$lib"
chmod 555 "$scratch/lib"
as_reader "$tessera" db list --db "$lib" >"$scratch/list.txt" 2>"$scratch/err"
check "db list reads it" grep -q "heat3d:f32:12x12x12" "$scratch/list.txt"
as_reader "$tessera" db export --db "$lib" >"$scratch/all.jsonl" 2>"$scratch/err"
check "db export reads all 3 results" test "$(wc -l <"$scratch/all.jsonl")" -eq 3
as_reader "$tessera" db export --db "$lib" --device cpu: -o "$scratch/out/lib.json" 2>"$scratch/err"
check "a kernel library is exported from it" grep -q '"tessera_library"' "$scratch/out/lib.json"
as_reader "$tessera" show heat3d --shape 12x12x12 --backend cpu --db "$lib" >"$scratch/best.c" 2>"$scratch/err"
check "show finds its best config" grep -q "best recorded" "$scratch/best.c"
as_reader "$tessera" devices --backend cpu --db "$lib" >"$scratch/devices.txt" 2>"$scratch/err"
check "devices reads its ceilings" grep -q "copy bandwidth .* calibrated" "$scratch/devices.txt"
as_reader "$tessera" tune heat3d --shape 12x12x16 --backend cpu --budget 2 --transfer "$lib" --json \
    --db "$scratch/out/warm.db" >"$scratch/warm.json" 2>"$scratch/err"
check "it warm-starts a search elsewhere" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['warm_configs'] >= 1 and 'heat3d:f32:12x12x12' in r['transfer_from'], r" "$scratch/warm.json"
as_reader "$tessera" tune heat3d --shape 12x12x12 --backend cpu --budget 2 --db "$lib" >/dev/null 2>"$scratch/err"
rc=$?
check "tuning into it fails (exit $rc)" test $rc -eq 1
check "saying it is read-only" grep -q "readonly\|read-only" "$scratch/err"
check "no -wal or -shm was left beside it" test ! -e "$lib-wal" -a ! -e "$lib-shm"
chmod 755 "$scratch/lib"

# --- read while a tuner writes ----------------------------------------------
shared="$scratch/shared/records.db"
count() { "$@" 2>/dev/null | wc -l; }
"$tessera" tune sum --shape 200000 --backend cpu --budget 1000 --strategy random --db "$shared" \
    >/dev/null 2>&1 &
tuner=$!
for _ in $(seq 1 300); do
    [ "$(count "$tessera" db export --db "$shared")" -ge 3 ] && break
    sleep 0.2
done
chmod 555 "$scratch/shared"   # the tuner's files exist; the reader can make none
seen=$(count as_reader "$tessera" db export --db "$shared")
check "a reader sees the tuner's results ($seen)" test "$seen" -ge 3
for _ in $(seq 1 300); do
    [ "$(count as_reader "$tessera" db export --db "$shared")" -gt "$seen" ] && break
    sleep 0.2
done
check "and later ones as they are committed" test "$(count as_reader "$tessera" db export --db "$shared")" -gt "$seen"
kill $tuner
wait $tuner 2>/dev/null
chmod 755 "$scratch/shared"
finish
