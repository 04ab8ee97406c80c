#!/usr/bin/env python3
"""rowwise_torch.py - the PyTorch anchor of the row-wise benchmark: torch eager
and torch.compile on the same operators and shapes as tessera, timed with CUDA
events (on a GPU; wall clock otherwise), the median of repeats. Prints one JSON
object per line: {"op", "shape", "dtype", "eager_gbps", "compile_gbps"}, GB/s counted
as tessera counts them (each input read once, the output written once, the
weights read once; cross_entropy: the logits read, int32 labels read, and a
loss and a log-sum-exp per row written, 4 bytes each; sum: its input read). A
form torch cannot run prints null for it and says why on stderr.

usage: rowwise_torch.py [--device cuda|cpu] [--dtype bf16|f16|f32] [--repeats N] [--forms eager,compile]
                        OP:SHAPE[:DTYPE]...
       (--forms: the forms to time; one left out prints null)
       (OP: softmax, log_softmax, cross_entropy, layernorm, rmsnorm, add_rmsnorm, gelu,
        gelu_tanh, silu, swiglu, sum (of all elements); SHAPE: RxC or N; DTYPE: the case's, else --dtype)
"""
import argparse
import json
import math
import statistics
import sys
import time


def parse_shape(text):
    dims = [int(d) for d in text.lower().split("x")]
    if not dims or any(d <= 0 for d in dims):
        raise ValueError(f"bad shape '{text}'")
    return dims


def make_case(torch, op, dims, dtype, device):
    """The function to time, its arguments and the compulsory bytes."""
    F = torch.nn.functional
    size = torch.tensor([], dtype=dtype).element_size()
    n = math.prod(dims)
    x = torch.randn(*dims, dtype=dtype, device=device)
    cols = dims[-1]
    if op == "softmax":
        return (lambda a: torch.softmax(a, dim=-1)), (x,), 2 * n * size
    if op == "log_softmax":
        return (lambda a: torch.log_softmax(a, dim=-1)), (x,), 2 * n * size
    if op == "cross_entropy":
        labels = torch.randint(0, cols, (dims[0],), device=device)

        def ce(a, k):
            return F.cross_entropy(a, k, reduction="none"), torch.logsumexp(a.float(), dim=-1)

        return ce, (x, labels), n * size + 3 * 4 * dims[0]
    if op == "layernorm":
        w = torch.randn(cols, dtype=dtype, device=device)
        b = torch.randn(cols, dtype=dtype, device=device)
        return (lambda a, w, b: F.layer_norm(a, (cols,), w, b, 1e-5)), (x, w, b), (2 * n + 2 * cols) * size
    if op == "rmsnorm":
        w = torch.randn(cols, dtype=dtype, device=device)

        def rms(a, w):
            af = a.float()
            return (af * torch.rsqrt(af.pow(2).mean(-1, keepdim=True) + 1e-5)).to(a.dtype) * w

        return rms, (x, w), (2 * n + cols) * size
    if op == "add_rmsnorm":
        w = torch.randn(cols, dtype=dtype, device=device)
        res = torch.randn(*dims, dtype=dtype, device=device)

        def add_rms(a, r, w):
            h = a + r
            hf = h.float()
            return (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(a.dtype) * w, h

        return add_rms, (x, res, w), (4 * n + cols) * size
    if op == "gelu":
        return (lambda a: F.gelu(a)), (x,), 2 * n * size
    if op == "gelu_tanh":
        return (lambda a: F.gelu(a, approximate="tanh")), (x,), 2 * n * size
    if op == "silu":
        return (lambda a: F.silu(a)), (x,), 2 * n * size
    if op == "sum":
        return (lambda a: torch.sum(a)), (x,), n * size
    if op == "swiglu":
        up = torch.randn(*dims, dtype=dtype, device=device)
        return (lambda g, u: F.silu(g) * u), (x, up), 3 * n * size
    raise ValueError(f"unknown operator '{op}'")


def median_ms(torch, fn, args, repeats, device):
    for _ in range(3):   # warm-up (and compilation)
        fn(*args)
    times = []
    for _ in range(repeats):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn(*args)
            times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--forms", default="eager,compile")
    p.add_argument("cases", nargs="+", metavar="OP:SHAPE")
    a = p.parse_args()
    forms = a.forms.split(",")
    if not forms or any(f not in ("eager", "compile") for f in forms):
        print(f"rowwise_torch.py: error: --forms takes eager and/or compile, not '{a.forms}'", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        print(f"rowwise_torch.py: error: PyTorch is not installed here ({e})", file=sys.stderr)
        return 1
    if a.device == "cuda" and not torch.cuda.is_available():
        print("rowwise_torch.py: error: --device cuda, but torch sees no GPU", file=sys.stderr)
        return 1
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    for case in a.cases:
        op, _, rest = case.partition(":")
        shape, _, dtype_name = rest.partition(":")
        try:
            if (dtype_name or a.dtype) not in dtypes:
                raise ValueError(f"unknown dtype '{dtype_name}'")
            fn, args, nbytes = make_case(torch, op, parse_shape(shape), dtypes[dtype_name or a.dtype], a.device)
        except ValueError as e:
            print(f"rowwise_torch.py: error: {case}: {e}", file=sys.stderr)
            return 2
        row = {"op": op, "shape": shape, "dtype": dtype_name or a.dtype}
        for form, f in (("eager", fn), ("compile", None)):
            if form not in forms:
                row[form + "_gbps"] = None
                continue
            try:
                f = f or torch.compile(fn)
                row[form + "_gbps"] = nbytes / (median_ms(torch, f, args, a.repeats, a.device) * 1e6)
            except Exception as e:   # a form that fails is reported, the others still run
                print(f"rowwise_torch.py: {case} {form}: {type(e).__name__}: {e}", file=sys.stderr)
                row[form + "_gbps"] = None
        print(json.dumps(row), flush=True)
        del args
        if a.device == "cuda":
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
