#!/usr/bin/env python3
"""fluid_configs.py - every config a lattice Boltzmann benchmark measured:
one block per task of `tessera db export` (JSON lines), its configs fastest
first with their status, time, registers and occupancy, so that the effect
of one parameter (cpx, min_blocks) reads across the rows of a run.

usage: fluid_configs.py RECORDS.jsonl
"""
import json
import sys


def main(path):
    tasks = {}
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            tasks.setdefault(r["task"], []).append(r)
    for task, rows in tasks.items():
        print(task)
        rows.sort(key=lambda r: (r["status"] != "ok", r.get("time_ms") or float("inf")))
        for r in rows:
            m = r.get("metrics") or {}
            t = "%9.4f ms" % r["time_ms"] if r["status"] == "ok" else "%12s" % r["status"]
            print("  %s  regs %3d  occ %5.2f  %s" % (t, m.get("registers", -1), m.get("occupancy", -1.0),
                                                   r["config"]))
        print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fluid_configs.py RECORDS.jsonl")
    main(sys.argv[1])
