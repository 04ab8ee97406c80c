#!/usr/bin/env python3
"""rowwise_table.py - the row-wise benchmark's table: tessera's results (the
JSON objects of `tessera tune --json`, one per line, each preceded by a line
"# LABEL" naming the case) beside PyTorch's (rowwise_torch.py's lines), as
GB/s, as fractions of the bandwidth calibrated in the same run (`tessera
calibrate`'s output: the copy bandwidth, or the read bandwidth for the
reductions, which write next to nothing) and as ratios to PyTorch eager,
with the largest error the best kernel's verification saw. A case whose
best config takes a shortcut (under an error budget) gets a second line:
the best config that takes none, its GB/s and error.

usage: rowwise_table.py TESSERA.jsonl TORCH.jsonl CALIBRATE.txt
"""
import json
import re
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


def read_lines(path, key):
    """The JSON lines of path by key(line); none when the file is missing."""
    found = {}
    try:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    found[key(r)] = r
    except FileNotFoundError:
        pass
    return found


def read_bandwidths(path):
    """{"copy": GB/s, "read": GB/s} from tessera calibrate's lines; missing ones left out."""
    found = {}
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"\s*(copy|read-only) bandwidth\s+([\d.]+) GB/s", line)
                if m:
                    found["copy" if m.group(1) == "copy" else "read"] = float(m.group(2))
    except FileNotFoundError:
        pass
    return found


def number(v, width, fmt):
    return f"{v:{width}{fmt}}" if isinstance(v, (int, float)) else " " * (width - 3) + "n/a"


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    rows = read_tessera(argv[1])
    anchors = read_lines(argv[2], lambda r: (r["op"], r["shape"]))
    bandwidth = read_bandwidths(argv[3])
    if not rows:
        print(f"rowwise_table.py: error: no tessera results in {argv[1]}", file=sys.stderr)
        return 1
    print("bandwidth (tessera calibrate, this run): " +
          ", ".join(f"{k} {v:.0f} GB/s" for k, v in sorted(bandwidth.items())) if bandwidth else
          "bandwidth: not calibrated")
    print(f"{'case':34} {'shape':>12} {'tessera':>8} {'of bw':>10} {'eager':>8} {'compile':>8} {'/eager':>6} "
          f"{'max error':>9}  best config")
    for label, r in rows:
        best = r.get("best") or {}
        t = anchors.get((r["op"], r["shape"]), {})
        ref = "read" if r["op"] == "sum" or r["op"].startswith("reduce") else "copy"
        gbps, bw, eager = best.get("gbps"), bandwidth.get(ref), t.get("eager_gbps")
        frac = f"{100 * gbps / bw:5.1f}% {ref}" if gbps and bw else "       n/a"
        ratio = f"{gbps / eager:5.2f}x" if gbps and eager else "   n/a"
        print(f"{label:34} {r['shape']:>12} {number(gbps, 8, '.1f')} {frac} {number(eager, 8, '.1f')} "
              f"{number(t.get('compile_gbps'), 8, '.1f')} {ratio} {number(best.get('error'), 9, '.2e')}  "
              f"{best.get('config_text', 'none')}")
        exact = r.get("best_exact")
        if gbps and not exact:
            print(f"{'  no shortcut':34} no config without shortcuts ran correctly")
        elif gbps and exact["config_text"] != best["config_text"]:
            exact_gbps = gbps * best["time_ms"] / exact["time_ms"]
            frac = f"{100 * exact_gbps / bw:5.1f}% {ref}" if bw else "       n/a"
            print(f"{'  no shortcut':34} {'':>12} {exact_gbps:8.1f} {frac} {'':>8} {'':>8} {'':>6} "
                  f"{number(exact.get('error'), 9, '.2e')}  {exact['config_text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
