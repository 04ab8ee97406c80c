#!/usr/bin/env python3
"""fluid_table.py - the lattice Boltzmann benchmark's table: one row per
`tessera tune --json` object of TUNE.jsonl (fluid_h200.sh adds label, q and
pop_bytes to each), as GLUPS beside the copy bound, copy / (Q x 2 x bytes per
population), with the copy bandwidth calibrated in the same run. Rates are in
GLUPS (10^9 cell updates per second), or MLUPS where the bound is below 1 GLUPS
(a CPU's).

usage: fluid_table.py TUNE.jsonl
"""
import json
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    copy = rows[0].get("ceiling_gbps") if rows else None   # GB/s, calibrated in this run
    scale, unit = (1e9, "GLUPS") if copy and copy / (19 * 2 * 4) >= 1 else (1e6, "MLUPS")
    print("%-15s %-12s %9s %9s %11s %9s %7s  %s" % ("task", "shape", "ms/step", unit, "bound " + unit,
                                                    "of bound", "vs dflt", "best config"))
    for r in rows:
        cells = 1
        for e in r["shape"].split("x"):
            cells *= int(e)
        best = r.get("best") or {}
        ms = best.get("time_ms") or float("nan")
        rate = cells / (ms * 1e-3) / scale
        copy = r.get("ceiling_gbps") or 0.0
        bound = copy * 1e9 / (r["q"] * 2 * r["pop_bytes"]) / scale if copy else float("nan")
        sp = r.get("speedup_over_default")
        print("%-15s %-12s %9.4f %9.2f %11.2f %8.1f%% %7s  %s" % (
            r["label"], r["shape"], ms, rate, bound, 100 * rate / bound if copy else float("nan"),
            "%.2fx" % sp if sp else "n/a", best.get("config_text", "-")))
    print("bound: calibrated copy bandwidth (%s GB/s) / (Q x 2 x bytes per population); the kinds add"
          " 1 byte per cell on top" % ("%.0f" % copy if copy else "?"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fluid_table.py TUNE.jsonl")
    main(sys.argv[1])
