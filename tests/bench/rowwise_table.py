#!/usr/bin/env python3
"""rowwise_table.py - the row-wise benchmark's table: tessera's results (the
JSON objects of `tessera tune --json`, one per line, each preceded by a line
"# LABEL" naming the case) beside PyTorch's (rowwise_torch.py's lines), as
GB/s and as fractions of the copy bandwidth calibrated in the same run, and
with ERRORS.jsonl (rowwise_error.py's lines) the error each best kernel
measured against a float64 reference.

usage: rowwise_table.py TESSERA.jsonl TORCH.jsonl [ERRORS.jsonl]
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


def gbps(v):
    return f"{v:8.1f}" if isinstance(v, (int, float)) else "     n/a"


def error(v):
    return f"{v:9.2e}" if isinstance(v, (int, float)) else "      n/a"


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    rows = read_tessera(argv[1])
    anchors = read_lines(argv[2], lambda r: (r["op"], r["shape"]))
    errors = read_lines(argv[3], lambda r: r["label"]) if len(argv) == 4 else {}
    if not rows:
        print(f"rowwise_table.py: error: no tessera results in {argv[1]}", file=sys.stderr)
        return 1
    copy = rows[0][1].get("ceiling_gbps", 0)
    print(f"copy bandwidth (tessera calibrate, this run): {copy:.0f} GB/s")
    print(f"{'case':34} {'shape':>12} {'tessera':>8} {'of copy':>8} {'eager':>8} {'compile':>8} {'max error':>9}"
          "  best config")
    for label, r in rows:
        best = r.get("best") or {}
        t = anchors.get((r["op"], r["shape"]), {})
        frac = f"{100 * best['gbps'] / copy:7.1f}%" if best and copy else "     n/a"
        print(f"{label:34} {r['shape']:>12} {gbps(best.get('gbps'))} {frac} {gbps(t.get('eager_gbps'))} "
              f"{gbps(t.get('compile_gbps'))} {error(errors.get(label, {}).get('max_error'))}  "
              f"{best.get('config_text', 'none')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
