#!/usr/bin/env python3
"""transfer_hw_summary.py - the table of bench_transfer_hw.sh: cold against
warm-started runs of each target, measured against the best config known
from all of them.

    python3 tests/bench/transfer_hw_summary.py OUT_DIR

Reads OUT_DIR/experiments.txt and OUT_DIR/runs/TARGET-{off,auto}-SEED.json
(the tuner's report) and .jsonl.gz (the run's results in the order they were
measured); prints the table and writes OUT_DIR/summary.json."""
import glob
import gzip
import json
import math
import os
import statistics
import sys

THRESHOLDS = (0.05, 0.02, 0.01)


def load_run(path):
    report = json.load(open(path))
    rows = [json.loads(line) for line in gzip.open(path[:-5] + ".jsonl.gz", "rt")]
    return report, rows


def evals_to(rows, limit):
    """1-based evaluation at which a result within limit (ms) was first measured."""
    for i, r in enumerate(rows, 1):
        if r["status"] == "ok" and r["time_ms"] <= limit:
            return i
    return math.inf


def median(values):
    return statistics.median(values) if values else math.nan


def text_evals(v):
    return "never" if math.isinf(v) else ("%.1f" % v if not math.isnan(v) else "-")


def pct(v):
    return "-" if v is None or math.isnan(v) else "%+.1f%%" % (100 * v)


def summarize(out, target, sources):
    runs = {}
    for mode in ("off", "auto"):
        paths = sorted(glob.glob(os.path.join(out, "runs", "%s-%s-*.json" % (target, mode))),
                       key=lambda p: int(p.rsplit("-", 1)[1][:-5]))
        runs[mode] = [load_run(p) for p in paths]
    times = [r["time_ms"] for mode in runs for _, rows in runs[mode] for r in rows if r["status"] == "ok"]
    if not times:
        return None
    best = min(times)
    s = {"target": target, "sources": sources, "best_known_ms": best, "modes": {}}
    for mode, label in (("off", "cold"), ("auto", "warm")):
        m = {"seeds": len(runs[mode]), "evals_to": {}, "per_seed": {}}
        for th in THRESHOLDS:
            e = [evals_to(rows, best * (1 + th)) for _, rows in runs[mode]]
            m["per_seed"]["%g" % th] = e
            m["evals_to"]["%g" % th] = median(e)

        def dist(pred, rows):
            ok = [r["time_ms"] for r in rows if pred(r) and r["status"] == "ok"]
            return min(ok) / best - 1 if ok else math.nan

        m["default"] = median([dist(lambda r: r["strategy"] == "default", rows) for _, rows in runs[mode]])
        # the first proposal after the default: the most promising warm-start
        # config in a warm run, the strategy's first measured one in a cold run
        firsts = []
        for _, rows in runs[mode]:
            if mode == "auto":
                firsts.append(dist(lambda r: r["strategy"] == "transfer:1", rows))
            else:
                rest = [r for r in rows if r["strategy"] != "default"]
                firsts.append(dist(lambda r: True, rest[:1]))
        m["first_proposal"] = median([f for f in firsts if not math.isnan(f)])
        m["best_warm_config"] = median([d for d in (dist(lambda r: r["strategy"].startswith("transfer:"), rows)
                                                    for _, rows in runs[mode]) if not math.isnan(d)])
        m["final"] = median([dist(lambda r: True, rows) for _, rows in runs[mode]])
        m["warm_configs"] = sorted({rep["warm_configs"] for rep, _ in runs[mode]})
        m["transfer_from"] = sorted({rep["transfer_from"] for rep, _ in runs[mode] if rep["transfer_from"]})
        m["budget"] = max((rep["evaluations"] for rep, _ in runs[mode]), default=0)
        s["modes"][label] = m
    return s


def finite(v):
    """The same data with never-reached (inf) and missing (nan) values as null, for strict JSON."""
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return None if isinstance(v, float) and not math.isfinite(v) else v


def print_table(s):
    cold, warm = s["modes"]["cold"], s["modes"]["warm"]
    print("%s, from %s: best known %.5g ms over %d cold and %d warm runs of %d evaluations"
          % (s["target"], s["sources"], s["best_known_ms"], cold["seeds"], warm["seeds"], cold["budget"]))
    print("  %-44s %10s %10s %10s" % ("", "cold", "warm", "cold/warm"))
    for th in THRESHOLDS:
        c, w = cold["evals_to"]["%g" % th], warm["evals_to"]["%g" % th]
        ratio = c / w if not (math.isinf(c) or math.isinf(w) or math.isnan(c) or math.isnan(w)) else math.nan
        ratio_text = "-" if math.isnan(ratio) else "%.1fx" % ratio
        if math.isinf(c) and not math.isinf(w):
            ratio_text = "> %.1fx" % (cold["budget"] / w)
        print("  %-44s %10s %10s %10s" % ("evaluations to within %g%% (median)" % (100 * th), text_evals(c),
                                         text_evals(w), ratio_text))
    print("  %-44s %10s %10s" % ("default config (evaluation 1), median", pct(cold["default"]), pct(warm["default"])))
    print("  %-44s %10s %10s" % ("first proposal after the default, median", pct(cold["first_proposal"]),
                                 pct(warm["first_proposal"])))
    print("  %-44s %10s %10s" % ("best warm-start config, median", "", pct(warm["best_warm_config"])))
    print("  %-44s %10s %10s" % ("best found by the end, median", pct(cold["final"]), pct(warm["final"])))
    for th in THRESHOLDS:
        print("  per seed, evaluations to within %g%%: cold %s, warm %s" % (
            100 * th, " ".join(text_evals(v) for v in cold["per_seed"]["%g" % th]),
            " ".join(text_evals(v) for v in warm["per_seed"]["%g" % th])))
    print("  warm runs: %s warm-start configs, from %s" % (
        "/".join(map(str, warm["warm_configs"])), " | ".join(warm["transfer_from"]) or "nothing"))
    print()


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    print("Evaluation 1 of every run is the template's default; a warm run then measures its warm-start")
    print("configs (first proposal = the most promising one), a cold run the strategy's proposals.")
    print("Distances are to the best known config (the fastest of all runs of both modes).\n")
    summaries = []
    for line in open(os.path.join(out, "experiments.txt")):
        target, sources = line.split(maxsplit=1)
        s = summarize(out, target, sources.strip())
        if s is None:
            print("%s: no successful run" % target)
            continue
        print_table(s)
        summaries.append(s)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(finite(summaries), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
