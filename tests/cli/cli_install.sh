#!/usr/bin/env bash
# The example program runs from the build tree, and a program built against an
# installed tessera with pkg-config's flags alone runs (the run path).
source "$(dirname "$0")/harness.bash"
build=$(dirname "$tessera")
src=${TESS_SOURCE_DIR:?}
command -v cc >/dev/null && command -v pkg-config >/dev/null || { echo "no cc or pkg-config: skipped"; exit 77; }

"$build/heat_example" 32 >"$scratch/example.txt" 2>&1
check "heat_example from the build tree succeeds" test $? -eq 0
check "it tunes, runs and conserves heat" grep -q "heat before .*, after 50 steps" "$scratch/example.txt"

cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
check "the install has the pkg-config file" test -f "$scratch/prefix/lib/pkgconfig/tessera.pc"
flags=$(PKG_CONFIG_PATH="$scratch/prefix/lib/pkgconfig" pkg-config --cflags --libs tessera)
check "pkg-config gives a run path" grep -q -- "-Wl,-rpath," <<<"$flags"
# a sanitized library needs the sanitizer runtime in the program too
sanitize=$(ldd "$build/libtessera.so" | grep -q libasan && echo "-fsanitize=address,undefined")
cc $sanitize "$src/apps/examples/heat_example.c" $flags -lm -o "$scratch/heat_example" 2>"$scratch/cc.txt"
check "the example builds against the installed package" test $? -eq 0
env -u LD_LIBRARY_PATH TESSERA_DB="$scratch/installed.db" "$scratch/heat_example" 32 >"$scratch/installed.txt" 2>&1
check "the installed example runs without LD_LIBRARY_PATH" test $? -eq 0
check "and prints its result" grep -q "heat before" "$scratch/installed.txt"
finish
