#!/usr/bin/env bash
# tessera run --ranks: stencil runs split into slabs along the slowest axis
# write the same fields as the run of the whole grid, bit for bit (compared
# at 9 significant digits, which round-trips f32), for several rank counts,
# uneven slabs and overlap settings; bad splits are usage errors with one
# line saying why, and write nothing.
source "$(dirname "$0")/harness.bash"
values() {   # values FILE VAR: the variable's values as ncdump prints them exactly
    ncdump -p 9,17 -v "$2" "$1" | sed -n '/^data:/,$p'
}
same_fields() {   # same_fields A B VAR...
    local a=$1 b=$2
    shift 2
    for v in "$@"; do
        [ "$(values "$a" "$v")" = "$(values "$b" "$v")" ] || return 1
    done
}
usage_error() {   # usage_error PATTERN command...: exit 2, the message on one line, no output file
    local pattern=$1
    shift
    "$@" >/dev/null 2>"$scratch/err"
    [ $? -eq 2 ] && grep -q -- "$pattern" "$scratch/err" && [ "$(wc -l <"$scratch/err")" -eq 1 ] &&
        [ ! -e "$scratch/refused.nc" ]
}

run() {   # run NAME OP SHAPE STEPS [OPTIONS...]
    local name=$1 op=$2 shape=$3 steps=$4
    shift 4
    "$tessera" run "$op" --shape "$shape" --steps "$steps" --output "$scratch/$name.nc" "$@" >"$scratch/$name.txt"
}

run heat heat3d 19x12x10 40
for split in "--ranks 2" "--ranks 3" "--ranks 5" "--ranks 3 --split overlap=none" \
             "--ranks 3 --split halo_chunks=4,exchange_every=2"; do
    run heat_split heat3d 19x12x10 40 $split
    check "heat3d 19x12x10 $split ran" test $? -eq 0
    check "heat3d $split equals the whole run" same_fields "$scratch/heat.nc" "$scratch/heat_split.nc" u
done
check "the split is reported (slabs of 4 planes, some of 3)" \
    grep -q "3 slabs along z (planes 0-6 7-12 13-18), halos of 2 planes.*halo_chunks 4, exchange_every 2" \
    "$scratch/heat_split.txt"
check "the history names the split" sh -c "ncdump -h '$scratch/heat_split.nc' | grep -q 'ranks 3 --split'"

run heat4 heat3d4 16x8x8 5
run heat4_split heat3d4 16x8x8 5 --ranks 3 --check
check "heat3d4 (four fused steps, halos of 4) in 3 slabs passes the check" test $? -eq 0
check "heat3d4 in 3 slabs equals the whole run" same_fields "$scratch/heat4.nc" "$scratch/heat4_split.nc" u
run hdiff hdiff 6x16x16 30
run hdiff_split hdiff 6x16x16 30 --ranks 4
check "hdiff (no reach along z) in 4 slabs equals the whole run" \
    same_fields "$scratch/hdiff.nc" "$scratch/hdiff_split.nc" u coeff
run vc varcoef3d 11x8x8 20
run vc_split varcoef3d 11x8x8 20 --ranks 2
check "varcoef3d in 2 slabs equals the whole run" same_fields "$scratch/vc.nc" "$scratch/vc_split.nc" u k

out=(--output "$scratch/refused.nc")
check "--ranks 0 is refused" usage_error "--ranks" "$tessera" run heat3d --shape 8x8x8 --ranks 0 "${out[@]}"
check "more slabs than planes are refused" usage_error "cannot split 8 planes along z into 9 slabs" \
    "$tessera" run heat3d --shape 8x8x8 --ranks 9 "${out[@]}"
check "a slab thinner than the halo is refused" usage_error "thinnest slab has 3 planes and the halo needs 4" \
    "$tessera" run star3d25 --shape 17x10x10 --ranks 5 "${out[@]}"
check "a halo deeper than a slab is refused" usage_error "exchange_every \* halo of one application" \
    "$tessera" run heat3d --shape 12x8x8 --ranks 3 --split exchange_every=8 "${out[@]}"
check "an unknown split parameter is refused" usage_error "streams" \
    "$tessera" run heat3d --shape 12x8x8 --ranks 3 --split streams=2 "${out[@]}"
check "a periodic slowest axis is refused" usage_error "wraps around along y" \
    "$tessera" run advect2d --shape 32x32 --ranks 2 "${out[@]}"
check "an unknown backend is refused" usage_error "backend" \
    "$tessera" run heat3d --shape 12x8x8 --ranks 2 --backend rocm "${out[@]}"
check "fewer visible GPUs than ranks are refused" usage_error "CUDA_VISIBLE_DEVICES lists 1 GPU for 2 ranks" \
    env CUDA_VISIBLE_DEVICES=0 "$tessera" run heat3d --shape 12x8x8 --ranks 2 --backend cuda "${out[@]}"
check "--split without --ranks is refused" usage_error "needs --ranks" \
    "$tessera" run heat3d --shape 12x8x8 --split overlap=none "${out[@]}"
check "--tune with --ranks is refused" usage_error "tune" \
    "$tessera" run heat3d --shape 12x8x8 --ranks 2 --tune 3 "${out[@]}"
finish
