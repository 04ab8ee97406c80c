#!/usr/bin/env python3
"""Kernel Tuner's own strategies on the recorded spaces that `tessera bench search`
replays, with the same budget and repeats, printed as a comparable table.

Kernel Tuner (pip install kernel_tuner) replays a cache file in its simulation
mode; a `tessera record` export (JSON lines) is converted to one first. Each strategy runs REPEATS times with seeds SEED, SEED+1, ...; per space and
strategy the table gives the median evaluations to get within 5% and 1% of the
space's optimum (">budget" when most runs never got there), the ratio of the
former to the exact expectation of uniform random sampling without replacement,
(N+1)/(K+1), and the mean optimum/best-found at 20, 50, 100 and 200 evaluations.

usage: kernel_tuner_compare.py SPACE.json[.gz]... [--strategies a,b] [--budget N]
                               [--repeats R] [--seed K] [--json]
"""
import argparse
import gzip
import json
import math
import os
import statistics
import sys
import tempfile
import warnings

BUDGETS = (20, 50, 100, 200)
DEFAULT_STRATEGIES = "random_sample,simulated_annealing,genetic_algorithm,bayes_opt,greedy_ils,diff_evo,pso"


# Kernel Tuner's spelling of tessera's failure statuses.
KT_FAILURES = {"compile_error": "CompilationFailedConfig", "invalid": "InvalidConfig"}


def cache_from_records(lines):
    """A Kernel Tuner cache dict from the lines of a `tessera record` export: the
    first line's task only, a config recorded twice keeping its fastest ok result
    (as tessera's replay reads it)."""
    records = [json.loads(line) for line in lines if line.strip()]
    task = records[0]["task"]
    records = [r for r in records if r["task"] == task]
    keys = list(records[0]["params"].keys())
    values = {k: [] for k in keys}
    entries = {}
    for r in records:
        for k in keys:
            if r["params"][k] not in values[k]:
                values[k].append(r["params"][k])
        key = ",".join(str(r["params"][k]) for k in keys)
        ok = r["status"] == "ok" and isinstance(r.get("time_ms"), (int, float))
        time = r["time_ms"] if ok else KT_FAILURES.get(r["status"], "RuntimeFailedConfig")
        old = entries.get(key)
        if old is None or (ok and (not isinstance(old["time"], float) or time < old["time"])):
            entries[key] = dict(r["params"], time=float(time) if ok else time)
    for k in keys:   # numbers in order; labels as first seen
        if all(isinstance(v, (int, float)) for v in values[k]):
            values[k].sort()
    return {"device_name": records[0]["device"]["name"], "kernel_name": task.split(":")[0],
            "problem_size": 1, "tune_params_keys": keys, "tune_params": values,
            "objective": "time", "cache": entries}   # "cache" last: Kernel Tuner checks the file's end


def load_cache(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:   # JSON lines: a tessera record export
        return cache_from_records(text.splitlines())


def space_stats(cache):
    times = [r["time"] for r in cache["cache"].values()]
    ok = [t for t in times if isinstance(t, (int, float))]
    best = min(ok)
    n = len(times)
    k5 = sum(1 for t in ok if t <= 1.05 * best)
    k1 = sum(1 for t in ok if t <= 1.01 * best)
    return {"n": n, "nok": len(ok), "best": best, "k5": k5, "k1": k1,
            "random5": (n + 1) / (k5 + 1), "random1": (n + 1) / (k1 + 1)}


def run_once(kernel_tuner, cache, cache_file, strategy, budget, seed):
    """One simulated run; returns the best time after each evaluation."""
    params = cache["tune_params"]
    keys = cache["tune_params_keys"]
    recorded = set(cache["cache"].keys())

    # Only the recorded configurations form the space (what the replay in tessera does too).
    def recorded_only(p):
        return ",".join(str(p[k]) for k in keys) in recorded

    size = cache.get("problem_size", 1)
    results, _ = kernel_tuner.tune_kernel(
        cache["kernel_name"], "/* replayed */", size, [], params,
        restrictions=recorded_only, cache=cache_file, simulation_mode=True, strategy=strategy,
        strategy_options={"max_fevals": budget}, seed=seed, quiet=True, verbose=False,
        objective=cache.get("objective", "time"))
    trace, best = [], math.inf
    for r in results[:budget]:
        t = r.get("time")
        if isinstance(t, (int, float)) and t < best:
            best = t
        trace.append(best)
    while len(trace) < budget:
        trace.append(best)
    return trace


def evals_to(trace, target):
    for i, t in enumerate(trace):
        if t <= target:
            return i + 1
    return math.inf


def summarize(space, strategy, stats, traces, budget):
    e5 = [evals_to(t, 1.05 * stats["best"]) for t in traces]
    e1 = [evals_to(t, 1.01 * stats["best"]) for t in traces]
    score = {}
    for b in BUDGETS:
        if b <= budget:
            score[str(b)] = statistics.mean(stats["best"] / t[b - 1] if math.isfinite(t[b - 1]) else 0
                                            for t in traces)
        else:
            score[str(b)] = None
    med5, med1 = statistics.median(e5), statistics.median(e1)
    return {"space": space, "strategy": "kt:" + strategy, "runs": len(traces), "budget": budget,
            "evals_to_5pct_median": med5 if math.isfinite(med5) else None,
            "evals_to_1pct_median": med1 if math.isfinite(med1) else None,
            "random_expected_5pct": stats["random5"], "random_expected_1pct": stats["random1"],
            "score_at": score}


def fmt_evals(v, budget):
    return ">%d" % budget if v is None else "%.1f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spaces", nargs="+")
    ap.add_argument("--strategies", default=DEFAULT_STRATEGIES)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        import kernel_tuner
    except ImportError:
        print("kernel_tuner is not installed (pip install kernel_tuner)", file=sys.stderr)
        return 77
    warnings.simplefilter("ignore")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.spaces:
            cache = load_cache(path)
            if "cache" not in cache:
                print("%s: not a Kernel Tuner cache file, skipped" % path, file=sys.stderr)
                continue
            name = os.path.basename(path).split(".")[0]
            stats = space_stats(cache)
            cache_file = os.path.join(tmp, name + ".json")
            with open(cache_file, "w") as f:
                json.dump(cache, f)
            if not args.json:
                print("\n%s: %d configs (%d ok), optimum %.4g ms, %d within 5%%, %d within 1%%"
                      % (name, stats["n"], stats["nok"], stats["best"], stats["k5"], stats["k1"]))
                print("random sampling expects %.1f evaluations to 5%%, %.1f to 1%%; %d runs of %d evaluations"
                      % (stats["random5"], stats["random1"], args.repeats, args.budget))
                print("  %-24s %10s %10s %8s %8s %8s %8s %8s"
                      % ("strategy", "to 5%", "to 1%", "vs rnd", "@20", "@50", "@100", "@200"))
            for strategy in args.strategies.split(","):
                traces = []
                try:
                    for k in range(args.repeats):
                        traces.append(run_once(kernel_tuner, cache, cache_file, strategy, args.budget, args.seed + k))
                except Exception as e:   # a strategy's own bug (greedy_ils on sparse spaces) skips it only
                    print("  %-24s failed: %s: %s" % ("kt:" + strategy, type(e).__name__, e), file=sys.stderr)
                    continue
                row = summarize(name, strategy, stats, traces, args.budget)
                rows.append(row)
                if not args.json:
                    e5 = row["evals_to_5pct_median"]
                    ratio = "%.2f" % (e5 / stats["random5"]) if e5 is not None else "-"
                    at = ["-" if row["score_at"][str(b)] is None else "%.3f" % row["score_at"][str(b)]
                          for b in BUDGETS]
                    print("  %-24s %10s %10s %8s %8s %8s %8s %8s"
                          % (row["strategy"], fmt_evals(e5, args.budget),
                             fmt_evals(row["evals_to_1pct_median"], args.budget), ratio, *at), flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
