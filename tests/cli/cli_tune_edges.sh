#!/usr/bin/env bash
# What tune says and does at the edges: JSON that stays valid whatever the
# paths hold, Ctrl-C, times that are noise or from the cache, a compile cache
# that cannot be used, keeping the cache small, CUDA source without a GPU.
source "$(dirname "$0")/harness.bash"
py_runs() {   # py_runs DB: finished_at, stop_reason and evaluations of each run
    python3 -c "
import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute('SELECT finished_at, stop_reason, evaluations FROM runs'):
    print('|'.join(map(str, row)))" "$1"
}

# --- --json escapes what it prints ----------------------------------------------
odd="$scratch/it's \"quoted\" \\ and	tabbed.db"
"$tessera" tune heat3d --shape 8x8x8 --backend cpu --budget 2 --db "$odd" --json >"$scratch/odd.json"
check "tune --json with an odd database path succeeds" test $? -eq 0
check "its JSON parses and names the path" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['db'] == sys.argv[2], r['db']
assert r['evaluations'] == 2 and r['best']['config']['tile_y'] > 0, r" "$scratch/odd.json" "$odd"

# --- the summary says when a time is noise or from the cache ------------------
"$tessera" tune heat3d --shape 8x8x8 --backend cpu --budget 1 >"$scratch/one.txt"
check "one evaluation is one, not 1 evaluations" grep -q "1 evaluation in" "$scratch/one.txt"
check "a working set in cache is no fraction of memory bandwidth" grep -q "no fraction of it" "$scratch/one.txt"
check "nor is its speedup a plain one" sh -c "! grep -q 'tuned is [0-9.]*x faster\$' '$scratch/one.txt'"
check "the default against itself is no faster" grep -q "tuned is no faster" "$scratch/one.txt"

# --- Ctrl-C: a partial summary, and the run is closed as interrupted ----------
# In a process group of its own, as a terminal's foreground job: Ctrl-C
# reaches the tuner and the runner process it started.
set -m
"$tessera" tune sum --shape 300000 --backend cpu --budget 1000 --strategy random --db "$scratch/int.db" \
    >"$scratch/int.txt" 2>"$scratch/int.err" &
pid=$!
set +m
for _ in $(seq 1 300); do
    [ "$("$tessera" db export --db "$scratch/int.db" 2>/dev/null | wc -l)" -ge 3 ] && break
    sleep 0.2
done
kill -INT -- -$pid
wait $pid
rc=$?
check "an interrupted tune exits 130 ($rc)" test $rc -eq 130
check "it prints the summary so far" grep -q "best config" "$scratch/int.txt"
check "which says it was interrupted" grep -q "; interrupted" "$scratch/int.txt"
check "the run has finished_at and stop_reason" grep -q "^20.*|interrupted|[0-9]" <(py_runs "$scratch/int.db")
check "the candidate in flight was not recorded as a crash" \
    test "$("$tessera" db export --db "$scratch/int.db" | grep -c runtime_error)" -eq 0

# --- a compile cache that cannot be used fails up front ------------------------
echo "a file" >"$scratch/cache-file"
TESSERA_CACHE="$scratch/cache-file" "$tessera" tune heat3d --shape 8x8x8 --budget 2 >/dev/null 2>"$scratch/err"
rc=$?
check "a TESSERA_CACHE that is a file fails the tune (exit $rc)" test $rc -eq 1
check "saying so" grep -q "cache-file exists and is not a directory" "$scratch/err"

# --- tessera cache: its size, and cleaning it, least recently used first ---------
kc="$scratch/kernels"
TESSERA_CACHE="$kc" "$tessera" tune heat3d --shape 8x8x8 --backend cpu --budget 2 --strategy random >/dev/null
TESSERA_CACHE="$kc" "$tessera" cache >"$scratch/info.txt"
check "cache info counts the kernels compiled" grep -q "$kc: [1-9][0-9]* kernel files" "$scratch/info.txt"
old=0123456789abcdef0123456789abcdef new=fedcba9876543210fedcba9876543210
head -c 3000 /dev/zero >"$kc/cpu/$old.so"
head -c 3000 /dev/zero >"$kc/cpu/$new.so"
touch -d "2001-01-01" "$kc/cpu/$old.so"
touch -d "2002-01-01" "$kc/cpu/$new.so"
find "$kc" -type f ! -name "$old.so" ! -name "$new.so" -exec touch -d 2000-01-01 {} +
echo "mine" >"$kc/cpu/notes.txt"
TESSERA_CACHE="$kc" "$tessera" cache clean --keep 3000 >"$scratch/clean.txt"
check "clean keeps the most recently used within the size" test -e "$kc/cpu/$new.so" -a ! -e "$kc/cpu/$old.so"
check "and says what it removed" grep -q "removed [1-9][0-9]* files .*, kept 1 " "$scratch/clean.txt"
TESSERA_CACHE="$kc" "$tessera" cache clean >/dev/null
TESSERA_CACHE="$kc" "$tessera" cache >"$scratch/info.txt"
check "clean without --keep empties it" grep -q ": 0 kernel files" "$scratch/info.txt"
check "files not named like kernels stay" test -e "$kc/cpu/notes.txt"
TESSERA_CACHE="$scratch/no-cache" "$tessera" cache >/dev/null
check "cache info creates nothing" test ! -e "$scratch/no-cache"

# --- CUDA source for a named architecture, without a GPU ------------------------
"$tessera" show heat3d --shape 64x64x64 --arch sm_90 >"$scratch/h200.cu" 2>"$scratch/err"
rc=$?
if [ $rc -ne 0 ] && grep -qi "nvrtc\|unknown backend 'cuda'" "$scratch/err"; then
    echo "no NVRTC here: show --arch not checked"
else
    check "show --arch sm_90 succeeds ($rc)" test $rc -eq 0
    check "for the typical sm_90 device" grep -q "^// device  cuda:NVIDIA H200:sm_90:132" "$scratch/h200.cu"
    check "with CUDA launches" grep -q "^// launch  heat3d grid" "$scratch/h200.cu"
    check "and NVRTC compiled it" grep -q "compiled for sm_90 with NVRTC" "$scratch/h200.cu"
fi
"$tessera" show heat3d --arch sm_42 >/dev/null 2>"$scratch/err"
check "an unknown architecture is a usage error" test $? -eq 2
check "that lists the known ones" grep -q "known: sm_70" "$scratch/err"
finish
