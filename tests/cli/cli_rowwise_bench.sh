#!/usr/bin/env bash
# cli_rowwise_bench.sh - the pieces of the GPU row-wise benchmark
# (tests/bench/rowwise_h200.sh), run on the cpu on small shapes: calibration,
# a tune of every case with --json, the PyTorch anchor (n/a where torch is
# missing), the error of each best kernel against a float64 reference, and
# the table, whose tessera column is each case's best GB/s, whose PyTorch
# columns come from the anchor's lines and whose error column from the
# error measurement.
source "$(dirname "$0")/harness.bash"
bench=${TESS_SOURCE_DIR:?}/tests/bench
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }
python3 -c "import numpy" 2> /dev/null || { echo "skipped: no NumPy"; exit 77; }

# Python loads the library to measure errors: a sanitized one needs the
# sanitizers' runtimes first (as the bindings' tests preload them)
python=python3
if ldd "$(dirname "$tessera")/libtessera.so" 2> /dev/null | grep -q libasan; then
    printf '#!/bin/sh\nLD_PRELOAD="%s %s" ASAN_OPTIONS=detect_leaks=0 exec python3 "$@"\n' \
        "$(${CC:-cc} -print-file-name=libasan.so)" "$(${CC:-cc} -print-file-name=libubsan.so)" > "$scratch/python"
    chmod +x "$scratch/python"
    python=$scratch/python
fi

out=$scratch/bench
check "the benchmark runs on the cpu" \
    env TESSERA="$tessera" TESSERA_DB="$scratch/bench.db" PYTHON="$python" bash "$bench/rowwise_h200.sh" --backend cpu \
    --small --budget 2 --out "$out"
check "one table row per case, under two header lines" test "$(wc -l < "$out/table.txt")" -eq 20
check "eighteen tune results" test "$(grep -c '"best"' "$out/tessera.jsonl")" -eq 18
check "the budget case takes gelu's shortcut parameter" grep -q '"approx"' "$out/tessera.jsonl"
check "every case's best kernel has a measured error" \
    test "$(grep -c '"max_error": [0-9]' "$out/errors.jsonl")" -eq 18
check "the errors are those of working kernels (below 1e-2, bf16 rounding included)" \
    python3 -c "import json, sys; sys.exit(any(json.loads(l)['max_error'] >= 1e-2 for l in open('$out/errors.jsonl')))"
check "the table shows the budget case's error" grep -q '^gelu (erf), error budget 1e-3 .* [0-9.]*e-0[0-9] ' "$out/table.txt"
check "the copy bandwidth of this run heads the table" grep -q '^copy bandwidth (tessera calibrate, this run): [0-9]' \
    "$out/table.txt"

# the table joins an anchor's numbers by operator and shape
printf '%s\n' '{"op": "softmax", "shape": "64x1024", "eager_gbps": 12.5, "compile_gbps": null}' > "$scratch/torch.jsonl"
python3 "$bench/rowwise_table.py" "$out/tessera.jsonl" "$scratch/torch.jsonl" > "$scratch/table.txt"
check "anchor numbers in the softmax row" grep -q '^softmax 64x1024 .* 12.5 *n/a' "$scratch/table.txt"
check "a table without tessera results fails" \
    bash -c "! python3 '$bench/rowwise_table.py' /dev/null '$scratch/torch.jsonl' 2> /dev/null"
check "an unknown option is a usage error" \
    bash -c "TESSERA='$tessera' bash '$bench/rowwise_h200.sh' --bogus 2> /dev/null; test \$? -eq 2"
finish
