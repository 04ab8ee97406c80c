#!/usr/bin/env bash
# tessera run --backend cuda (label gpu; skipped without a GPU): the sample
# inputs run 100 steps in device memory within the tolerance of the float64
# reference, the output holds the last time level, and a NaN in an input is
# seen by the check as on the CPU.
source "$(dirname "$0")/harness.bash"
samples="$TESS_SOURCE_DIR/data/samples"
"$tessera" run heat3d --shape 16x16x16 --backend cuda --steps 1 >"$scratch/probe" 2>&1
if grep -q "backend cuda is unavailable" "$scratch/probe"; then
    echo "no GPU here: $(cat "$scratch/probe")"
    exit 77
fi
[ -d "$samples" ] || { echo "no samples at $samples"; exit 77; }

for spec in heat3d:32x32x32 hdiff:8x64x64 varcoef3d:24x32x32 advect2d:128x128; do
    name=${spec%%:*}
    shape=${spec#*:}
    "$tessera" run "$name" --shape "$shape" --backend cuda --steps 100 --input "$samples/$name.nc" --check \
        --output "$scratch/$name.nc" >"$scratch/$name.txt" 2>&1
    rc=$?
    check "$name on the GPU: 100 steps match the float64 reference ($(grep -o 'difference.*' "$scratch/$name.txt"))" \
        test $rc -eq 0
done
# the last time level comes back from the device: the CPU's run of the same steps agrees with it
"$tessera" run heat3d --shape 32x32x32 --backend cpu --steps 100 --input "$samples/heat3d.nc" \
    --output "$scratch/heat3d-cpu.nc" >/dev/null
check "the GPU's output is the CPU's to rounding" python3 - "$scratch/heat3d.nc" "$scratch/heat3d-cpu.nc" <<'PY'
import subprocess, sys
def values(path):
    text = subprocess.run(["ncdump", "-v", "u", path], capture_output=True, text=True).stdout
    data = text.split("u =", 1)[1].replace(";", "").replace("}", "")
    return [float(v) for v in data.replace("\n", " ").split(",")]
a, b = values(sys.argv[1]), values(sys.argv[2])
sys.exit(0 if len(a) == len(b) == 32768 and max(abs(x - y) for x, y in zip(a, b)) < 1e-5 and max(a) > 0.01 else 1)
PY

python3 -c "
import math
print('netcdf nan {\ndimensions:\n  z = 16 ;\n  y = 16 ;\n  x = 16 ;\nvariables:\n  float u(z, y, x) ;\ndata:\n  u = '
      + ', '.join('NaN' if i == 2000 else str(round(math.sin(0.01 * i), 5)) for i in range(4096)) + ' ;\n}')" \
    >"$scratch/nan.cdl"
if command -v ncgen >/dev/null && ncgen -o "$scratch/nan.nc" "$scratch/nan.cdl"; then
    "$tessera" run heat3d --shape 16x16x16 --backend cuda --steps 10 --input "$scratch/nan.nc" --check \
        >/dev/null 2>"$scratch/nan.err"
    rc=$?
    check "a NaN in an input fails the GPU run's check" test $rc -eq 1
    check "naming the NaN values" grep -q "NaN or infinite values in the run" "$scratch/nan.err"
fi
finish
