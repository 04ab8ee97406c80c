#!/usr/bin/env python3
"""rowwise_error.py - the error the row-wise benchmark's best kernels make:
each case's best recorded kernel (tessera's Python package, the records of
$TESSERA_DB) runs once on random inputs in [-1, 1], and its outputs are
compared with a float64 reference computed here with NumPy, on the first
and last rows (the first elements of an activation), as tessera verifies:
the largest |out - ref| / (scale + |ref|), scale 1/C for softmax, n/2 for a
sum over n, else 1. The reference is not rounded to the storage here, so a
bf16 output's own rounding (up to 2^-9 relative) is part of the error. Prints one JSON object per line: {"label", "max_error"}
(null, and the reason on stderr, where the case cannot be measured).

usage: rowwise_error.py [--backend cuda|cpu] [--dtype bf16|f16|f32] LABEL|OP|SHAPE|BUDGET...
       (BUDGET: the case's --error-budget, empty for none)
"""
import argparse
import json
import math
import sys

import numpy as np

ROWS = 128         # rows compared at each end of a row-wise output
ELEMENTS = 1 << 20   # elements compared of an activation


def to_storage(v, dtype):
    """float64 values as the storage's NumPy array (bf16: the bits, rounded to nearest even)."""
    if dtype == "f32":
        return v.astype(np.float32)
    if dtype == "f16":
        return v.astype(np.float16)
    bits = v.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_storage(a, dtype):
    if dtype == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def parse_op(spec):
    name, _, attrs = spec.partition(":")
    return name, dict(kv.split("=", 1) for kv in attrs.split(",") if kv)


def rows_of(shape):
    """The rows compared: the first and last ROWS."""
    r = shape[0]
    return np.unique(np.concatenate([np.arange(min(ROWS, r)), np.arange(max(0, r - ROWS), r)]))


def reference(name, attrs, shape, values, real):
    """(output name, reference values, the indices of the output compared,
    scale) for each output; values holds the inputs as passed, real(a)
    widens (part of) one to float64."""
    eps = float(attrs.get("eps", 1e-5))
    if name in ("gelu", "gelu_tanh", "silu"):
        v = real(values["x"][:ELEMENTS])
        if name == "gelu":
            y = 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))
        elif name == "gelu_tanh":
            y = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
        else:
            y = v / (1 + np.exp(-v))
        return [("y", y, np.s_[:ELEMENTS], 1.0)]
    if name == "reduce":
        kind, axis = attrs.get("kind", "sum"), int(attrs.get("axis", 2))
        x = real(values["x"]).reshape(shape)
        y = {"sum": x.sum, "max": x.max, "mean": x.mean}[kind](axis=axis).ravel()
        return [("y", y, np.s_[:], shape[axis] / 2 if kind == "sum" else 1.0)]
    cols = shape[1]
    rows = rows_of(shape)
    xr = real(values["x"].reshape(shape)[rows])
    pick = np.s_[(rows[:, None] * cols + np.arange(cols)).ravel()]
    if name in ("softmax", "log_softmax", "cross_entropy"):
        m = xr.max(axis=1, keepdims=True)
        s = np.exp(xr - m).sum(axis=1, keepdims=True)
        if name == "softmax":
            return [("y", (np.exp(xr - m) / s).ravel(), pick, 1.0 / cols)]
        if name == "log_softmax":
            return [("y", (xr - m - np.log(s)).ravel(), pick, 1.0)]
        lse = (m + np.log(s)).ravel()
        scale = 1.0 + math.sqrt(np.mean(xr * xr))   # the logits' root mean square, from the rows compared
        loss = lse - xr[np.arange(len(rows)), values["labels"][rows]]
        return [("loss", loss, np.s_[rows], scale), ("lse", lse, np.s_[rows], scale)]
    w = real(values["weight"])
    if name == "layernorm":
        mean = xr.mean(axis=1, keepdims=True)
        var = ((xr - mean) ** 2).mean(axis=1, keepdims=True)
        return [("y", ((xr - mean) / np.sqrt(var + eps) * w + real(values["bias"])).ravel(), pick, 1.0)]
    h, out = xr, []
    if name == "add_rmsnorm":   # h as stored is what the norm sees
        h = real(values["stored"](xr + real(values["residual"].reshape(shape)[rows])))
        out.append(("h", h.ravel(), pick, 1.0))
    if name in ("rmsnorm", "add_rmsnorm"):
        out.append(("y", (h / np.sqrt((h * h).mean(axis=1, keepdims=True) + eps) * w).ravel(), pick, 1.0))
        return out
    raise ValueError(f"no reference here for '{name}'")


_inputs = {}


def uniform(count, dtype):
    """count values uniform in [-1, 1] in the storage, the same for every case (made once)."""
    key = (count, dtype)
    if key not in _inputs:
        _inputs.clear()   # one size kept: the largest take gigabytes
        rng = np.random.default_rng(7)
        _inputs[key] = to_storage(rng.random(count, dtype=np.float32) * 2 - 1, dtype)
    return _inputs[key]


def measure(ctx, spec, shape, dtype, backend, budget):
    """The largest error of the best kernel of a case."""
    name, attrs = parse_op(spec)
    if budget:
        spec = f"{spec}{',' if ':' in spec else ':'}error_budget={budget}"
    kernel = ctx.kernel(spec, shape, dtype, backend)
    values, arrays = {"stored": lambda v: to_storage(v, dtype)}, []
    for i, b in enumerate(kernel.buffers):
        if b["role"] != "in":
            a = np.zeros(b["count"], dtype=np.float32 if b["dtype"] == "f32" else to_storage(np.zeros(1), dtype).dtype)
        elif b["name"] == "labels":
            a = np.random.default_rng(i).integers(0, shape[1], b["count"], dtype=np.int32)
        else:
            a = uniform(b["count"], dtype) if i == 0 else to_storage(np.random.default_rng(i).uniform(-1, 1, b["count"]), dtype)
        values[b["name"]] = a
        arrays.append(a)
    # through the kernel's own memory (device memory for cuda) on either backend
    memory = []
    for a in arrays:
        m = kernel.alloc(a.nbytes)
        m.upload(a)
        memory.append(m)
    kernel.run(*memory)
    got = {}
    for b, a, m in zip(kernel.buffers, arrays, memory):
        if b["role"] != "in":
            m.download(a)
            got[b["name"]] = a
        m.free()
    worst = 0.0
    for out, ref, pick, scale in reference(name, attrs, shape, values, lambda a: from_storage(a, dtype)):
        g = got[out][pick]
        g = g.astype(np.float64) if g.dtype == np.float32 else from_storage(g, dtype)
        if not np.all(np.isfinite(g)):
            return math.inf
        worst = max(worst, float(np.max(np.abs(g - ref) / (scale + np.abs(ref)))))
    kernel.close()
    return worst


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    p.add_argument("cases", nargs="+", metavar="LABEL|OP|SHAPE|BUDGET")
    a = p.parse_args()
    try:
        import tessera
    except (ImportError, OSError) as e:
        print(f"rowwise_error.py: error: the tessera package does not load ({e})", file=sys.stderr)
        return 1
    with tessera.Context() as ctx:
        for case in a.cases:
            try:
                label, op, shape, budget = case.split("|")
                dims = [int(d) for d in shape.split("x")]
            except ValueError:
                print(f"rowwise_error.py: error: '{case}' is not LABEL|OP|SHAPE|BUDGET", file=sys.stderr)
                return 2
            try:
                err = measure(ctx, op, dims, a.dtype, a.backend, budget)
            except (tessera.Error, ValueError, MemoryError) as e:
                print(f"rowwise_error.py: {label}: {e}", file=sys.stderr)
                err = None
            print(json.dumps({"label": label, "max_error": err}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
