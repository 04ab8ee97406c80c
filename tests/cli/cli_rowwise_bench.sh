#!/usr/bin/env bash
# cli_rowwise_bench.sh - the pieces of the GPU row-wise benchmark
# (tests/bench/rowwise_h200.sh), run on the cpu on small shapes: the PyTorch
# anchor first (n/a where torch is missing), calibration, a tune of every
# case with --json, and the table, whose tessera column is each case's best
# GB/s, whose PyTorch columns come from the anchor's lines and whose error
# column is the largest error each best kernel's verification saw.
source "$(dirname "$0")/harness.bash"
bench=${TESS_SOURCE_DIR:?}/tests/bench
command -v python3 > /dev/null || { echo "skipped: no python3"; exit 77; }

out=$scratch/bench
check "the benchmark runs on the cpu" \
    env TESSERA="$tessera" TESSERA_DB="$scratch/bench.db" bash "$bench/rowwise_h200.sh" --backend cpu \
    --small --budget 2 --torch-seconds 60 --out "$out"
check "one table row per case, under two header lines" \
    test "$(grep -vc '^  no shortcut' "$out/table.txt")" -eq 21
check "nineteen tune results" test "$(grep -c '"best"' "$out/tessera.jsonl")" -eq 19
check "the budget case takes gelu's shortcut parameter" grep -q '"approx"' "$out/tessera.jsonl"
check "every case's best kernel has a measured error, that of a working kernel (below 1e-2, bf16 rounding included)" \
    python3 - "$out/tessera.jsonl" <<'PY'
import json, sys
text, dec, i, errors = open(sys.argv[1]).read(), json.JSONDecoder(), 0, []
while i < len(text):
    if text[i].isspace(): i += 1
    elif text[i] == "#": i = text.index("\n", i) + 1
    else:
        obj, i = dec.raw_decode(text, i)
        errors.append(obj["best"]["error"])
assert len(errors) == 19 and all(0 <= e < 1e-2 for e in errors), errors
PY
check "the table shows the budget case's error" grep -q '^gelu (erf), error budget 1e-3 .* [0-9.]*e-[0-9]*  ' "$out/table.txt"
check "the bandwidths of this run head the table" grep -q '^bandwidth (tessera calibrate, this run): copy [0-9]' \
    "$out/table.txt"
check "the reductions are fractions of the read bandwidth" grep -q '^sum 100003 f32 .*% read' "$out/table.txt"

# the table joins an anchor's numbers by operator and shape
printf '%s\n' '{"op": "softmax", "shape": "64x1024", "eager_gbps": 12.5, "compile_gbps": null}' > "$scratch/torch.jsonl"
python3 "$bench/rowwise_table.py" "$out/tessera.jsonl" "$scratch/torch.jsonl" "$out/calibrate.txt" > "$scratch/table.txt"
check "anchor numbers in the softmax row" grep -q '^softmax 64x1024 .* 12.5 *n/a' "$scratch/table.txt"
check "a table without tessera results fails" \
    bash -c "! python3 '$bench/rowwise_table.py' /dev/null '$scratch/torch.jsonl' '$out/calibrate.txt' 2> /dev/null"
check "an unknown option is a usage error" \
    bash -c "TESSERA='$tessera' bash '$bench/rowwise_h200.sh' --bogus 2> /dev/null; test \$? -eq 2"
check "--only that matches no case is a usage error" \
    bash -c "TESSERA='$tessera' bash '$bench/rowwise_h200.sh' --only nothing-here --out '$scratch/none' 2> /dev/null; test \$? -eq 2"
finish
