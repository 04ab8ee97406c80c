#!/usr/bin/env bash
# The Fortran module as a user gets it: `cmake --install` into a scratch
# prefix, then the example compiled by a plain gfortran command line with
# pkg-config (its run path: run without LD_LIBRARY_PATH) and by a CMake project through
# find_package(tessera) and tessera::tessera_fortran.
#   fortran_install.sh BUILD_DIR FORTRAN_COMPILER [SANITIZE_FLAGS]
# A library built with sanitizers needs programs built with them too: the
# third argument gives their flags.
set -euo pipefail
build=$1 fc=$2 sanitize=${3:-}
prefix=$PWD/prefix
rm -rf "$prefix" consumer
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(cd "$prefix" && ls -d lib*/pkgconfig | head -1 | xargs dirname)
for f in include/tessera.mod include/tessera_c.mod "$libdir/pkgconfig/tessera-fortran.pc"; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
# shellcheck disable=SC2046
"$fc" "$TESS_SOURCE_DIR/apps/examples/hdiff_example.f90" $(pkg-config --cflags --libs tessera-fortran) \
  $sanitize -o hdiff_pkgconfig
env -u LD_LIBRARY_PATH ./hdiff_pkgconfig 3 0

mkdir consumer
cat > consumer/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES C Fortran)
find_package(tessera REQUIRED)
add_executable(hdiff_cmake $TESS_SOURCE_DIR/apps/examples/hdiff_example.f90)
target_link_libraries(hdiff_cmake PRIVATE tessera::tessera_fortran)
CMAKE
cmake -S consumer -B consumer/build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_Fortran_COMPILER="$fc" \
  -DCMAKE_Fortran_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" >/dev/null
cmake --build consumer/build >/dev/null
env -u LD_LIBRARY_PATH consumer/build/hdiff_cmake 3 0
