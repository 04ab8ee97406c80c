#!/usr/bin/env python3
"""rowwise_variants.py - every measured config of a row-wise run, fastest
first per task: time, GB/s, the fraction of the copy bandwidth calibrated in
the same run, the ratio to PyTorch eager on the same task, and the kernel's
registers, occupancy and local (spilled) bytes.

usage: rowwise_variants.py RECORDS.jsonl TORCH.jsonl CALIBRATE.txt
       (RECORDS: tessera db export; TORCH: rowwise_torch.py; CALIBRATE: tessera calibrate)
"""
import json
import re
import sys


def json_lines(path):
    try:
        with open(path) as f:
            for line in f:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue
    except OSError as e:
        print(f"rowwise_variants.py: {path}: {e.strerror}", file=sys.stderr)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    records, torch_file, calib = sys.argv[1:]
    copy = None
    try:
        with open(calib) as f:
            for line in f:
                m = re.search(r"copy bandwidth\s+([\d.]+) GB/s", line)
                if m:
                    copy = float(m.group(1))
    except OSError as e:
        print(f"rowwise_variants.py: {calib}: {e.strerror}", file=sys.stderr)
    torch = {(d["op"], d["shape"]): d.get("eager_gbps") for d in json_lines(torch_file)}
    print(f"copy bandwidth (same run): {copy:.0f} GB/s" if copy else "copy bandwidth: n/a")
    for (op, shape), g in torch.items():
        print(f"PyTorch eager {op} {shape}: " + (f"{g:.0f} GB/s" if g else "n/a"))
    rows = []
    for d in json_lines(records):
        parts = d.get("task", "").split(":")
        op, shape = parts[0], parts[2] if len(parts) > 2 else "?"
        m = d.get("metrics") or {}
        rows.append((op, shape, d.get("config", ""), d.get("status", ""), d.get("time_ms"), d.get("gbps"),
                     m.get("registers"), m.get("occupancy"), m.get("local_bytes")))
    rows.sort(key=lambda r: (r[0], r[1], -(r[5] or 0)))
    print(f"{'task':22s} {'config':82s} {'status':12s} {'ms':>8s} {'GB/s':>6s} {'copy':>5s} {'torch':>6s} regs occ local")
    for op, shape, cfg, status, ms, gbps, regs, occ, local in rows:
        t = torch.get((op, shape))
        frac = f"{gbps / copy:5.0%}" if gbps and copy else "  n/a"
        ratio = f"{gbps / t:5.2f}x" if gbps and t else "   n/a"
        print(f"{op + ' ' + shape:22s} {cfg:82s} {status:12s} {ms or 0:8.4f} {gbps or 0:6.0f} {frac} {ratio} "
              f"{regs} {occ} {local}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
