#!/usr/bin/env bash
# The app's stencils (sphadv, sphdiff) as tessera runs them: 50 steps of the
# generated CPU kernel against the float64 reference in f32 and f64, and the
# CUDA kernels compiled by NVRTC for an H200 (sm_90; that part skipped where
# NVRTC is not present).
source "$(dirname "$0")/harness.bash"
export TESSERA_STENCIL_PATH="$here/../../../apps/weather/stencils"
for op in sphadv sphdiff; do
    for dtype in f32 f64; do
        check "$op $dtype matches the float64 reference" "$tessera" run $op --shape 2x20x32 --dtype $dtype --steps 50 --check
    done
done >/dev/null
nvrtc=0
for op in sphadv sphdiff; do
    "$tessera" show $op --shape 4x68x128 --backend cuda --arch sm_90 >"$scratch/$op.cu" 2>&1
    if grep -q "compiled for sm_90 with NVRTC" "$scratch/$op.cu"; then nvrtc=1
    elif grep -qi "nvrtc" "$scratch/$op.cu" && grep -qi "not\|cannot" "$scratch/$op.cu"; then echo "NVRTC is not present: $op skipped"
    else check "$op compiles for sm_90" false; cat "$scratch/$op.cu" | tail -5; fi
done
[ $nvrtc -eq 1 ] && check "the CUDA kernels compiled" true
finish
