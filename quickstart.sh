#!/usr/bin/env bash
# tessera quick start.
#   ./quickstart.sh        install what is missing, build, and tune the 3D heat stencil
#                          on the best backend present (the GPU if there is one, else the CPU)
#   ./quickstart.sh test   install what is missing, build, and run the whole test suite
# Environment: BUILD_DIR (default build), TESSERA_SANITIZE=1 for an ASan+UBSan build.
set -euo pipefail
cd "$(dirname "$0")"

mode=${1:-demo}
case "$mode" in
  demo|test) ;;
  -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
  *) echo "usage: $0 [test]" >&2; exit 2 ;;
esac

packages="build-essential gfortran cmake pkg-config libgsl-dev libsqlite3-dev libnetcdf-dev netcdf-bin libjansson-dev zlib1g-dev"
missing=()
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "tessera needs these packages; install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

build=${BUILD_DIR:-build}
sanitize=OFF
[ "${TESSERA_SANITIZE:-0}" = 1 ] && sanitize=ON
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=$sanitize -DTESSERA_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"

if [ "$mode" = test ]; then
  ctest --test-dir "$build" --output-on-failure -j2
else
  "$build/tessera" tune heat3d --shape 256x256x256 --budget 30
fi
