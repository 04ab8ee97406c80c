#!/usr/bin/env python3
"""gemm_table.py - the GEMM benchmark's table: tessera's results (the JSON
objects of `tessera tune --json`, each preceded by a line "# CASE" naming the
anchor's case) beside cuBLAS/cuDNN's from gemm_torch.py, as TFLOP/s, their
ratio, and the fraction of the calibrated ceiling that bounds the task
(the tensor-core rate for bf16 here, or the copy bandwidth for skinny ones).
For fp8 the anchor is cuBLASLt with fast accumulation (the tensor cores'
sums kept to the end); "vs promoted" is the ratio to it with its sums
moved into f32 on the way, as tessera's verified fp8 kernels do. "vs
stream" is the ratio to the reference's calls launched back to back
(ms_stream), timed as tessera times its kernels; "vs rotated" the ratio to
those calls taking copies of their operands in turn (ms_rotate), as tessera
rotates its own where the L2 could hold them.

usage: gemm_table.py TESSERA.jsonl TORCH.jsonl
"""
import json
import sys


def read_tessera(path):
    rows, label = [], None
    decoder = json.JSONDecoder()
    with open(path) as f:
        text = f.read()
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("#", i):
            end = text.find("\n", i)
            end = end if end >= 0 else len(text)
            label, i = text[i + 1:end].strip(), end + 1
        else:
            obj, i = decoder.raw_decode(text, i)
            rows.append((label, obj))
            label = None
    return rows


def read_anchor(path):
    anchor = {}
    try:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    anchor[r["case"]] = r
    except FileNotFoundError:
        pass
    return anchor


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows, anchor = read_tessera(sys.argv[1]), read_anchor(sys.argv[2])
    print(f"{'case':<34} {'tessera TFLOP/s':>15} {'cuBLAS/cuDNN':>12} {'ratio':>6} {'vs promoted':>11} "
          f"{'vs stream':>9} {'vs rotated':>10} {'of ceiling':>10} {'bound':<22} best config")
    for label, r in rows:
        best = r.get("best") or {}
        tf = best.get("gflops", 0) / 1e3
        ref = anchor.get(label, {}).get("tflops")
        ratio = f"{tf / ref:6.2f}" if ref else "   n/a"
        promoted_ms = anchor.get(label, {}).get("ms_promoted")
        promoted = f"{tf / (ref * anchor[label]['ms'] / promoted_ms):11.2f}" if ref and promoted_ms else "        n/a"
        ref_text = f"{ref:12.1f}" if ref else "         n/a"
        stream_ms = anchor.get(label, {}).get("ms_stream")
        stream = f"{tf / (ref * anchor[label]['ms'] / stream_ms):9.2f}" if ref and stream_ms else "      n/a"
        rotate_ms = anchor.get(label, {}).get("ms_rotate")
        rotate = f"{tf / (ref * anchor[label]['ms'] / rotate_ms):10.2f}" if ref and rotate_ms else "       n/a"
        frac = r.get("fraction_of_ceiling")
        frac_text = f"{frac:10.1%}" if frac is not None else "       n/a"
        print(f"{label:<34} {tf:15.1f} {ref_text} {ratio} {promoted} {stream} {rotate} {frac_text} {r.get('bound', ''):<22} "
              f"{best.get('config_text', '(none)')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
