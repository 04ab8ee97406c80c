#!/usr/bin/env python3
"""md_nist.py - the NIST state point (LJ truncated at 3 sigma with long-range
corrections, N = 500, T* = 0.85, rho* = 0.776) from independent tessera-md runs.

    python3 tests/bench/md_nist.py RUN.txt...

Each RUN.txt is the output of the NIST command of the top-level README (any
seeds, --average-from given). Prints each run's block averages, plain and
reweighted to the truncated potential's ensemble where the run has them, and
their combination: the inverse-variance weighted mean of the runs, its
standard error from the runs' block errors, and the runs' scatter about it
(chi^2 per degree of freedom; above about 2 the block errors are too small)."""
import math
import re
import sys

NIST = {"pe": (-5.5121, 0.0004), "press": (6.7714e-03, None)}
NUM = r"(-?[0-9.]+(?:e[-+]?[0-9]+)?|-?nan)"
PLAIN = re.compile(r"^average from step \d+: pe/atom %s \+- %s, pressure %s \+- %s" % ((NUM,) * 4))
REWEIGHTED = re.compile(r"^truncated potential's ensemble .*fraction %s\): pe/atom %s \+- %s, pressure %s \+- %s"
                        % ((NUM,) * 5))
TEMP = re.compile(r"^\s*(\d+)\s+[0-9.]+\s+([0-9.]+)\s")


def parse(path):
    run = {"path": path}
    temps, start = [], None
    for line in open(path):
        m = PLAIN.match(line)
        if m:
            run["plain"] = tuple(float(v) for v in m.groups())
        m = REWEIGHTED.match(line)
        if m:
            run["ess"] = float(m.group(1))
            run["reweighted"] = tuple(float(v) for v in m.groups()[1:])
        m = re.search(r"--average-from (\d+)", line)
        if m and start is None:
            start = int(m.group(1))
        m = TEMP.match(line)
        if m:
            temps.append((int(m.group(1)), float(m.group(2))))
    from_step = re.search(r"^average from step (\d+)", open(path).read(), re.M)
    if from_step:
        start = int(from_step.group(1))
    sel = [t for s, t in temps if start is not None and s >= start]
    run["temp"] = sum(sel) / len(sel) if sel else math.nan
    return run


def combine(values):
    """values: (mean, error) of independent runs -> weighted mean, its error, chi^2/dof."""
    w = [1 / e ** 2 for _, e in values]
    mean = sum(wi * m for wi, (m, _) in zip(w, values)) / sum(w)
    err = 1 / math.sqrt(sum(w))
    chi2 = sum(((m - mean) / e) ** 2 for m, e in values) / max(1, len(values) - 1)
    return mean, err, chi2


def main(paths):
    runs = [r for r in (parse(p) for p in paths) if "plain" in r]
    if not runs:
        sys.exit("md_nist.py: no run with averages among %s" % " ".join(paths))
    print("%-28s %22s %22s %8s %22s %22s %6s" % ("run", "pe/atom", "pressure", "mean T", "pe/atom reweighted",
                                                 "pressure reweighted", "ess"))
    for r in runs:
        pe, dpe, p, dp = r["plain"]
        rw = r.get("reweighted")
        print("%-28s %12.5f +- %.5f %12.5f +- %.5f %8.5f %s" % (
            r["path"].rsplit("/", 1)[-1][:28], pe, dpe, p, dp, r["temp"],
            "%12.5f +- %.5f %12.5f +- %.5f %6.3f" % (rw[0], rw[1], rw[2], rw[3], r["ess"]) if rw else ""))
    for label, key in (("plain", "plain"), ("reweighted to the truncated potential's ensemble", "reweighted")):
        sel = [r[key] for r in runs if key in r]
        if not sel:
            continue
        pe = combine([(v[0], v[1]) for v in sel])
        p = combine([(v[2], v[3]) for v in sel])
        npe, dn = NIST["pe"]
        diff = pe[0] - npe
        both = math.hypot(pe[1], dn)
        print("%s, %d runs: pe/atom %.5f +- %.5f (chi2/dof %.2f), %+.5f from NIST's %.4f +- %.4f: %.2f of the "
              "two uncertainties combined (%.5f), %s; pressure %.5f +- %.5f (chi2/dof %.2f), NIST %.4g: %+.2f of ours"
              % (label, len(sel), pe[0], pe[1], pe[2], diff, npe, dn, abs(diff) / both, both,
                 "within" if abs(diff) <= both else "outside", p[0], p[1], p[2], NIST["press"][0],
                 (p[0] - NIST["press"][0]) / p[1]))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
