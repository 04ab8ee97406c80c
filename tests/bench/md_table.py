#!/usr/bin/env python3
"""md_table.py - the table of tests/bench/md_h200.sh from its outputs in DIR:
md-default-N.txt and md-tuned-N.txt (tessera-md's summaries) and
tune-N-KERNEL.json (the tuner's reports of each kernel of the step).

    python3 tests/bench/md_table.py DIR

Per size: the force kernel (ljforce) default and tuned, its compulsory bytes
per second as a fraction of the copy bandwidth calibrated in the same run,
the force kernel alone in atom-steps/s, the tuned kernels of one step summed
(md_bin and md_list weighted by the rebuilds of the tuned run), and the app's
atom-steps/s with the untuned defaults and with the tuned kernels."""
import glob
import json
import math
import os
import re
import sys

STEP = ("verlet-first", "displace", "force", "verlet-second")
REBUILD = ("bin", "list")


def run_summary(path):
    text = open(path).read()
    rate = re.search(r"atom-steps/s ([0-9.e+-]+)", text)
    steps = re.search(r"^steps (\d+)", text, re.M)
    builds = re.search(r"builds (\d+)", text)
    force = re.search(r"^  force .*: (\S+) \((\w+)\)$", text, re.M)
    return {"rate": float(rate.group(1)) if rate else math.nan,
            "steps": int(steps.group(1)) if steps else 0,
            "builds": int(builds.group(1)) if builds else 0,
            "force": force.groups() if force else ("?", "?")}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    sizes = sorted({int(re.search(r"md-tuned-(\d+)\.txt$", p).group(1))
                    for p in glob.glob(os.path.join(out, "md-tuned-*.txt"))})
    print(f"{'atoms':>9} {'force default ms':>16} {'tuned ms':>9} {'speedup':>7} {'GB/s':>7} {'of copy':>7} "
          f"{'force atom-steps/s':>18} {'step kernels ms':>15} {'kernels atom-steps/s':>20} "
          f"{'app default':>11} {'app tuned':>10} {'app speedup':>11}  tuned force config")
    copy = math.nan
    for n in sizes:
        reports = {}
        for p in glob.glob(os.path.join(out, f"tune-{n}-*.json")):
            reports[re.search(rf"tune-{n}-(.+)\.json$", p).group(1)] = json.load(open(p))
        default, tuned = run_summary(os.path.join(out, f"md-default-{n}.txt")), \
            run_summary(os.path.join(out, f"md-tuned-{n}.txt"))
        f = reports.get("force")
        if not f or not f.get("best"):
            print(f"{n:>9} (no tuned force kernel)")
            continue
        best, dflt = f["best"]["time_ms"], f["default_ms"]
        copy = f.get("ceiling_gbps") or math.nan
        frac = f["best"]["gbps"] / copy if copy == copy else math.nan
        per_build = tuned["builds"] / tuned["steps"] if tuned["steps"] else math.nan
        step_ms = sum(reports[k]["best"]["time_ms"] for k in STEP if k in reports and reports[k].get("best")) + \
            per_build * sum(reports[k]["best"]["time_ms"] for k in REBUILD if k in reports and reports[k].get("best"))
        print(f"{n:>9} {dflt:>16.4f} {best:>9.4f} {dflt / best:>7.2f} {f['best']['gbps']:>7.1f} {frac:>7.1%} "
              f"{n / (best * 1e-3):>18.3e} {step_ms:>15.4f} {n / (step_ms * 1e-3):>20.3e} "
              f"{default['rate']:>11.3e} {tuned['rate']:>10.3e} {tuned['rate'] / default['rate']:>11.2f}  "
              f"{tuned['force'][0]} ({tuned['force'][1]}); {tuned['builds']} builds in {tuned['steps']} steps")
    print(f"copy bandwidth (calibrated in this run): {copy:.1f} GB/s; references: the untuned default kernels "
          "and app run in the same run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
