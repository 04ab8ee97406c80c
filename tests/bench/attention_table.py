#!/usr/bin/env python3
"""attention_table.py - the attention benchmark's table: tessera's results
(the JSON objects of `tessera tune --json`, each preceded by a line
"# LABEL|TORCH_CASE") beside PyTorch's SDPA flash and cuDNN backends
(attention_torch.py's lines, matched by TORCH_CASE's order), as TFLOP/s for
prefill and GB/s for decode, with tessera's ratio to each.

usage: attention_table.py TESSERA.jsonl TORCH.jsonl
"""
import json
import sys


def read_tessera(path):
    rows, label = [], None
    with open(path) as f:
        text = f.read()
    decoder, i = json.JSONDecoder(), 0
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("#", i):
            end = text.find("\n", i)
            label = text[i + 1:end if end >= 0 else len(text)].strip()
            i = end + 1 if end >= 0 else len(text)
        else:
            obj, i = decoder.raw_decode(text, i)
            rows.append((label or obj["op"], obj))
            label = None
    return rows


def read_torch(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def num(v, width=8, digits=1):
    """v right-aligned in width, or n/a."""
    return f"{v:{width}.{digits}f}" if isinstance(v, (int, float)) else " " * (width - 3) + "n/a"


def ratio(a, b):
    return f"{a / b:6.2f}x" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 else "    n/a"


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows, anchors = read_tessera(argv[1]), read_torch(argv[2])
    if not rows:
        print(f"attention_table.py: error: no tessera results in {argv[1]}", file=sys.stderr)
        return 1
    by_case = {}
    for a in anchors:
        by_case.setdefault((a["op"], a["shape"], a["causal"], a["kv_heads"]), a)
    print(f"{'case':40} {'unit':>6} {'tessera':>8} {'flash':>8} {'cuDNN':>8} {'/flash':>7} {'/cuDNN':>7}  best config")
    for label, r in rows:
        name, _, case = label.partition("|")
        best = r.get("best") or {}
        parts = case.split(":")
        decode = parts[0] == "attention_decode"
        unit, key = ("GB/s", "gbps") if decode else ("TFLOP/s", "tflops")
        mine = best.get("gbps") if decode else (best.get("gflops") / 1e3 if best.get("gflops") else None)
        causal = "causal" in parts[2:]
        kv = next((int(p[3:]) for p in parts[2:] if p.startswith("kv=")), 0)
        dims = [int(d) for d in parts[1].split("x")] if len(parts) > 1 else [0, 0]
        t = by_case.get((parts[0], parts[1] if len(parts) > 1 else "", causal, kv or dims[1]), {})
        flash, cudnn = t.get(f"flash_{key}"), t.get(f"cudnn_{key}")
        print(f"{name:40} {unit:>6} {num(mine)} {num(flash)} {num(cudnn)} {ratio(mine, flash)} {ratio(mine, cudnn)}"
              f"  {best.get('config_text', 'none')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
