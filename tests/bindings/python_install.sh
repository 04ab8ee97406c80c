#!/usr/bin/env bash
# The Python package as `cmake --install` leaves it: under the prefix's
# site-packages, finding the installed libtessera by itself (no
# TESSERA_LIBRARY), and as `pip install` builds it from the checkout.
#   python_install.sh BUILD_DIR PYTHON PYTHON_DIR
set -euo pipefail
build=$1 python=$2 pydir=$3
"$python" -c "import numpy" 2>/dev/null || { echo "skipped: NumPy is not installed"; exit 77; }
prefix=$PWD/prefix
rm -rf "$prefix" wheel
cmake --install "$build" --prefix "$prefix" >/dev/null
[ -f "$prefix/$pydir/tessera/_installed.py" ] || { echo "FAIL: $pydir/tessera/_installed.py not installed"; exit 1; }
env -u TESSERA_LIBRARY PYTHONPATH="$prefix/$pydir" "$python" - "$prefix" <<'PY'
import sys, numpy as np, tessera
assert tessera.__file__.startswith(sys.argv[1]), tessera.__file__
u = np.zeros((12, 12, 12), np.float32)
u[6, 6, 6] = 1
out = tessera.run("heat3d", u, steps=2, backend="cpu")
assert abs(out.sum() - 1) < 1e-5 and out.max() < 1, out.sum()
print("installed package:", tessera.__file__, "heat kept", out.sum())
PY
# pip builds the package from a copy of the checkout's python/ without a
# compiler or a network, where setuptools can build wheels.
if "$python" -c "import setuptools.command.bdist_wheel" 2>/dev/null || "$python" -c "import setuptools, wheel" 2>/dev/null; then
  rm -rf src && mkdir src && cp -r "$TESS_SOURCE_DIR/python/pyproject.toml" "$TESS_SOURCE_DIR/python/tessera" src/
  "$python" -m pip wheel --no-deps --no-build-isolation -q -w wheel ./src
  ls wheel/tessera-*.whl
else
  echo "pip wheel not tried: setuptools here cannot build wheels (pip install wheel)"
fi
