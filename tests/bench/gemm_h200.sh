#!/usr/bin/env bash
# gemm_h200.sh - the GEMM benchmark on a GPU host: calibrates the device (the
# tensor-core ceiling included), tunes gemm (layout nt: A M x K, B stored
# N x K, as a linear layer's weights) on the issue's bf16 shapes, the two
# large ones in fp8 (e4m3 inputs, f32 accumulation, bf16 output) as well, and
# conv2d on the six ResNet-50 layers of the issue's table with a modest budget each, measures cuBLAS
# (torch.matmul; torch._scaled_mm for fp8) and cuDNN (conv2d, benchmark mode)
# through PyTorch in the same run (gemm_torch.py, first, so a run cut short still has them), and prints one table (gemm_table.py): TFLOP/s,
# the ratio to cuBLAS/cuDNN and the fraction of the calibrated ceiling.
# Every tessera number is of a kernel verified against the float64 reference
# (sampled rows and columns for the large shapes). The shapes of few rows
# of A (decoding steps of 1 to 32 rows, GEMV, a batch of 128) are bound by
# reading B: their fraction of the ceiling is their bytes (B + A + D) at the
# copy bandwidth calibrated in the same run over their time.
#
# usage: tests/bench/gemm_h200.sh [--seconds S] [--budget N] [--out DIR] [--skip-calibrate] [--quick]
#                                  [--only REGEX] [--fix NAME=VALUE,...] [--wgmma]
#   --seconds  wall-clock limit of each case's tuning (default 20)
#   --budget   evaluations per case at most (default 24)
#   --quick    all but the 1x1 convolution
#   --only     the cases whose name (gemm:MxNxK, conv2d:...) matches the regex
#   --fix      passed to every tune (a sub-space: path=skinny, or path=wgmma,cluster=2)
#   --wgmma    the cases with a wgmma sub-space only, each searched exhaustively
#              in it (a short session: the tiles, slices, stages and, for the
#              large GEMMs, the TMA's stores held; clusters of one and two blocks
#              compared, and for a 1x1 convolution the two ways of storing D)
# Environment: TESSERA (the binary, default build/tessera), PYTHON (python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
seconds=20 budget=24 out="" calibrate=1 quick=0 only="" fix="" wgmma=0
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --skip-calibrate) calibrate=0; shift ;;
    --quick) quick=1; shift ;;
    --only) only=${2:?--only needs a regex}; shift 2 ;;
    --fix) fix=${2:?--fix needs a value}; shift 2 ;;
    --wgmma) wgmma=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "gemm_h200.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "gemm_h200.sh: error: no tessera binary at $tessera (build first, or set TESSERA)" >&2; exit 1; }
out=${out:-data/bench/gemm-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA_DB=${TESSERA_DB:-$out/records.db}

# anchor case (gemm_torch.py's), operator with attributes, shape[, dtypes (bf16,f32,bf16 when empty)[, the
# case's wgmma sub-space]]
large=path=wgmma,bm=128,bn=256,bk=64,wm=2,group_m=8,stages=4,tma_store=1
large_fp8=path=wgmma,bm=128,bn=128,bk=128,wm=2,group_m=8,stages=5,promote=1,tma_store=1
convolution=path=wgmma,bm=128,bn=64,bk=64,wm=2,group_m=8,stages=4
convolution_wide=path=wgmma,bm=128,bn=128,bk=64,wm=2,group_m=8,stages=4
cases=(
    "gemm:8192x8192x8192|gemm:layout=nt|8192x8192x8192||$large"
    "gemm_fp8:8192x8192x8192|gemm:layout=nt|8192x8192x8192|e4m3,f32,bf16|$large_fp8"
    "gemm:4096x14336x4096|gemm:layout=nt|4096x14336x4096||$large"
    "gemm_fp8:4096x14336x4096|gemm:layout=nt|4096x14336x4096|e4m3,f32,bf16|$large_fp8"
    "conv2d:32x56x56x64x64:3:1:1|conv2d|32x56x56x64x64||$convolution"
    "gemm:4096x4096x4096|gemm:layout=nt|4096x4096x4096||$large"
    "conv2d:32x56x56x256x64:1:1:0|conv2d:filter=1,pad=0|32x56x56x256x64||$convolution"
    "conv2d:32x28x28x128x128:3:1:1|conv2d|32x28x28x128x128||$convolution_wide"
    "conv2d:32x14x14x256x256:3:1:1|conv2d|32x14x14x256x256||$convolution_wide"
    "conv2d:32x7x7x512x512:3:1:1|conv2d|32x7x7x512x512||$convolution_wide"
    "conv2d:32x112x112x64x128:3:2:1|conv2d:stride=2|32x112x112x64x128"
    "gemm:128x8192x8192|gemm:layout=nt|128x8192x8192"
    "gemm:16x4096x4096|gemm:layout=nt|16x4096x4096"
    "gemm:1x8192x8192|gemm:layout=nt|1x8192x8192"
    "gemm:4x8192x8192|gemm:layout=nt|4x8192x8192"
    "gemm:8x4096x14336|gemm:layout=nt|8x4096x14336"
    "gemm:32x8192x8192|gemm:layout=nt|32x8192x8192"
)
if [ -n "$only" ] || [ "$wgmma" = 1 ] || [ "$quick" = 1 ]; then
    selected=()
    for c in "${cases[@]}"; do
        IFS='|' read -r anchor _ _ _ subspace <<< "$c"
        if [[ $anchor =~ $only ]] && { [ "$wgmma" = 0 ] || [ -n "$subspace" ]; } &&
            { [ "$quick" = 0 ] || [[ $anchor != conv2d:32x56x56x256x64* ]]; }; then selected+=("$c"); fi
    done
    [ ${#selected[@]} -gt 0 ] || { echo "gemm_h200.sh: error: no case matches --only '$only'" >&2; exit 2; }
    cases=("${selected[@]}")
fi

if [ "$calibrate" = 1 ]; then
    echo "== calibrate (cuda)" >&2
    "$tessera" calibrate --backend cuda | tee "$out/calibrate.txt" >&2
fi

anchors=()
for c in "${cases[@]}"; do anchors+=("${c%%|*}"); done
echo "== cuBLAS and cuDNN through PyTorch" >&2
if ! "$python" "$here/gemm_torch.py" "${anchors[@]}" > "$out/torch.jsonl" 2> "$out/torch.log"; then
    echo "gemm_h200.sh: the PyTorch anchor failed, its columns are n/a: $(tail -1 "$out/torch.log")" >&2
fi

: > "$out/tessera.jsonl"
failed=0
for c in "${cases[@]}"; do
    IFS='|' read -r anchor op shape dtypes subspace <<< "$c"
    dtypes=${dtypes:-bf16,f32,bf16}
    search=(${fix:+--fix "$fix"})
    if [ "$wgmma" = 1 ]; then search=(--fix "$subspace" --strategy exhaustive); fi
    echo "== tune $op $shape $dtypes (${seconds} s)" >&2
    echo "# $anchor" >> "$out/tessera.jsonl"
    if ! "$tessera" tune "$op" --shape "$shape" --dtype "$dtypes" --backend cuda --budget "$budget" \
            --seconds "$seconds" "${search[@]}" --json >> "$out/tessera.jsonl" 2>> "$out/tune.log"; then
        echo "gemm_h200.sh: tune $op $shape failed (see $out/tune.log)" >&2
        failed=1
    fi
done

"$python" "$here/gemm_table.py" "$out/tessera.jsonl" "$out/torch.jsonl" | tee "$out/table.txt"
exit "$failed"
