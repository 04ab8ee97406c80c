#!/usr/bin/env bash
# tests/bench/multigpu_h200.sh end to end on the cpu with a 64^3 grid: it
# calibrates, times the whole grid and the two slabs, writes its files to
# --out and prints the table; without two GPUs the split rows say why they
# were not measured.
source "$(dirname "$0")/harness.bash"
bench_halo=$(dirname "$tessera")/tests/bench_halo_nccl
bash "$TESS_SOURCE_DIR/tests/bench/multigpu_h200.sh" --tessera "$tessera" --bench-halo "$bench_halo" \
    --backend cpu --small --steps 5 --out "$scratch/out" >"$scratch/table.txt" 2>"$scratch/log"
check "the benchmark runs" test $? -eq 0
for f in calibrate.txt run-whole.txt run-slab-strong.txt run-slab-weak.txt halo.txt table.txt; do
    check "it writes $f" test -s "$scratch/out/$f"
done
check "the table gives the copy bandwidth" grep -q "^copy bandwidth (tessera calibrate, this run) *[0-9.,]* GB/s" \
    "$scratch/table.txt"
check "the table gives the whole grid's time and its fraction of copy" \
    grep -q "^heat3d 64^3 f32 on the cpu *[0-9.]* ms/step, .*% of copy" "$scratch/table.txt"
check "the table gives both slabs" sh -c "grep -q '33x64x64 (strong) *[0-9.]* ms/step' '$scratch/table.txt' &&
    grep -q '65x64x64 (weak) *[0-9.]* ms/step' '$scratch/table.txt'"
if grep -q "^halo .* median" "$scratch/out/halo.txt"; then
    check "with two GPUs the split runs give their efficiencies" grep -q "(strong) .*efficiency" "$scratch/table.txt"
else
    check "without two GPUs the split rows say why" \
        grep -q "halo exchange and split runs over two GPUs *not measured: " "$scratch/table.txt"
    check "and no efficiency is given" sh -c "! grep -q 'efficiency' '$scratch/table.txt'"
fi
"$TESS_SOURCE_DIR/tests/bench/multigpu_h200.sh" --backend rocm >/dev/null 2>"$scratch/err"
check "an unknown backend is a usage error" sh -c "[ $? -eq 2 ] && grep -q rocm '$scratch/err'"
finish
