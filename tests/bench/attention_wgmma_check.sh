#!/usr/bin/env bash
# attention_wgmma_check.sh - a quick check of the sm_90a prefill kernel
# (kernel=wgmma) on a GPU host: small tasks tuned with a few configs each,
# every one verified against the float64 reference (causal and not, Sq < Skv,
# GQA, bf16 and f16, D 64 and 128), then the issue's prefill shapes timed on
# their default wgmma config beside the default mma.sync kernel in the same
# run. Prints one line per task (statuses, best time, TFLOP/s) and exits 1
# when any config is not verified ok.
#
# usage: tests/bench/attention_wgmma_check.sh [--out DIR] [--step-seconds S]
#   --step-seconds S  each tune is stopped after S seconds (default 12)
# Environment: TESSERA (the binary, default build/tessera), PYTHON (python3).
set -uo pipefail

tessera=${TESSERA:-build/tessera}
python=${PYTHON:-python3}
out="" step=12
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --step-seconds) step=${2:?--step-seconds needs a value}; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "attention_wgmma_check.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$tessera" ] || { echo "attention_wgmma_check.sh: error: no tessera binary at $tessera" >&2; exit 1; }
out=${out:-data/bench/attention-wgmma-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export TESSERA_DB=${TESSERA_DB:-$out/records.db}

# operator with attributes|shape|dtype|budget|pinned parameters
cases=(
    "attention:causal=1,kv_heads=2|2x4x512x1024x128|bf16|3|kernel=wgmma"
    "attention:causal=1,kv_heads=2|2x4x512x1024x128|bf16|2|kernel=wgmma,block_q=128,warps=8,pingpong=1"
    "attention|4x16x4096x4096x128|bf16|1|kernel=wgmma"
    "attention|4x16x4096x4096x128|bf16|1|kernel=wgmma,block_q=128,block_kv=128,warps=8,stages=2,pingpong=1"
    "attention|1x4x256x512x64|f16|3|kernel=wgmma"
    "attention:causal=1|4x16x4096x4096x128|bf16|1|kernel=wgmma"
    "attention|4x16x4096x4096x128|bf16|1|kernel=mma"
    "attention|4x16x4096x4096x64|bf16|1|kernel=wgmma"
    "attention:causal=1|1x2x128x128x64|bf16|2|kernel=wgmma,block_q=64,warps=4"
)
status=0
: > "$out/tessera.jsonl"
for c in "${cases[@]}"; do
    IFS='|' read -r op shape dtype budget fix <<< "$c"
    echo "# $op $shape $dtype $fix" >> "$out/tessera.jsonl"
    if ! timeout "$step" "$tessera" tune "$op" --shape "$shape" --dtype "$dtype" --backend cuda --budget "$budget" \
            --transfer off --fix "$fix" --json >> "$out/tessera.jsonl" 2>> "$out/tune.log"; then
        echo "attention_wgmma_check.sh: error: tune $op $shape $fix failed or timed out (see $out/tune.log)" >&2
        status=1
    fi
done
"$tessera" db export -o "$out/records.jsonl" 2>> "$out/tune.log" || true
"$python" - "$out/tessera.jsonl" <<'PY' || status=1
import json, sys
text, dec, i, label, bad = open(sys.argv[1]).read(), json.JSONDecoder(), 0, "", 0
while i < len(text):
    if text[i].isspace():
        i += 1
    elif text[i] == "#":
        end = text.find("\n", i)
        label, i = text[i + 1:end].strip(), end + 1
    else:
        r, i = dec.raw_decode(text, i)
        st = r.get("statuses", {})
        best = r.get("best") or {}
        bad += sum(v for k, v in st.items() if k != "ok")
        print(f"{label:70s} ok {st.get('ok', 0)} of {r.get('evaluations', 0)}  "
              f"best {best.get('time_ms', float('nan')):9.3f} ms {best.get('gflops', 0) / 1e3:7.1f} TFLOP/s  "
              f"{best.get('config_text', '')}")
sys.exit(1 if bad else 0)
PY
exit $status
