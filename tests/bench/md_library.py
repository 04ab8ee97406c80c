#!/usr/bin/env python3
"""md_library.py - a kernel library (the format `tessera db export --device`
writes and `tessera db import` reads) of the best configs of earlier tune
reports, so that a later run on the same device uses them without tuning
again.

    python3 tests/bench/md_library.py BASE.json OUT.json REPORT.json...

BASE.json: a library exported from the records the configs go into (its
device block and kernels are kept, the reports' added); REPORT.json: `tessera tune
--json` reports of that device. A report's task key is rebuilt from its
operator text with the attributes the md operators take by default added."""
import json
import sys

# attributes of the md tasks that tessera-md leaves at their defaults
DEFAULTS = {"ljforce": {"skin": "0.3"}, "md_verlet": {"thermostat": "none"}}


def task_key(report):
    name, _, attrs = report["op"].partition(":")
    values = dict(DEFAULTS.get(name, {}))
    values.update(kv.split("=", 1) for kv in attrs.split(",") if kv)
    text = ",".join(f"{k}={values[k]}" for k in sorted(values))
    return f"{name}:{report['dtype']}:{report['shape']}" + (f":{text}" if text else "")


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    library = json.load(open(sys.argv[1]))
    kernels = library.get("kernels", [])
    for path in sys.argv[3:]:
        try:
            report = json.load(open(path))
        except (OSError, ValueError):
            continue   # a tune that did not finish
        best = report.get("best")
        if not best:
            continue
        config = ",".join(f"{k}={v}" for k, v in best["config"].items())
        kernels.append({"task": task_key(report), "family": "reductions", "config": config,
                        "time_ms": best["time_ms"], "gbps": best.get("gbps", 0), "gflops": best.get("gflops", 0),
                        "created_at": "2026-12-02T03:30:00.000Z"})
    library["kernels"] = kernels
    # the library's tag first: `db import` looks for it at the start of the file
    tagged = {k: library[k] for k in library if k.startswith("tessera_")}
    tagged.update((k, v) for k, v in library.items() if not k.startswith("tessera_"))
    with open(sys.argv[2], "w") as out:
        json.dump(tagged, out)
    print(f"{len(kernels)} kernels in {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
