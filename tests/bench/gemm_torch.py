#!/usr/bin/env python3
"""gemm_torch.py - the cuBLAS and cuDNN anchor of the GEMM benchmark, through
PyTorch in the same run: torch.matmul of a bf16 M x K operand with the
transpose of an N x K one (cuBLAS; the layout nt of tessera's cases, as
torch.nn.functional.linear multiplies by weights)
torch._scaled_mm of float8_e4m3fn operands with per-tensor scales and a
bf16 output (cuBLASLt fp8; "ms" with use_fast_accum, which like tessera's
kernel keeps every product in the tensor cores' accumulator, "ms_promoted"
without it), and torch.nn.functional.conv2d on channels-last bf16 tensors
with torch.backends.cudnn.benchmark (cuDNN), timed with CUDA events, the
median of repeats. Prints one JSON object per line: {"case", "ms",
"tflops"}, FLOPs counted as tessera counts them (2 M N K; a convolution as
its implicit GEMM), and "ms_stream": the mean of the same call launched
`repeats` times back to back between one pair of events, as tessera times
its kernels (no launch gap in it), and "ms_rotate": the same back-to-back
mean over copies of the operands taken in turn, as many as tessera's timing
rotates (3 L2 / working set + 1, at most 8, when the working set is under
twice the L2; one otherwise), so that neither reads its operands from a warm
L2: the like-for-like figure for a working set the L2 could hold.

usage: gemm_torch.py [--repeats N] CASE...
       CASE: gemm:MxNxK, gemm_fp8:MxNxK or conv2d:NxHxWxCxK:FILTER:STRIDE:PAD
"""
import argparse
import json
import statistics
import sys


STREAM = {}   # the last timed call's back-to-back means, ms: over one set of operands and rotated


def copies(torch, tensors):
    """How many sets of operands tessera's timing would rotate for this working set."""
    ws = sum(t.numel() * t.element_size() for t in tensors)
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)
    return min(8, 3 * l2 // ws + 1) if 0 < ws < 2 * l2 else 1


def back_to_back(torch, fns, repeats):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(repeats):
        fns[i % len(fns)]()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / repeats


def timed(torch, fns, repeats):
    """fns: the call on each set of operands; single calls and the plain back-to-back mean use the first."""
    for fn in fns:
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fns[0]()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    STREAM["ms"] = back_to_back(torch, fns[:1], repeats)
    STREAM["ms_rotate"] = back_to_back(torch, fns, max(repeats, 4 * len(fns))) if len(fns) > 1 else STREAM["ms"]
    return statistics.median(times)


def operand_sets(torch, make, output_bytes):
    """make() gives one set of operands; as many sets as copies() asks for (the output counted once)."""
    first = make()
    out = torch.empty(output_bytes, dtype=torch.uint8, device="cuda")
    n = copies(torch, list(first) + [out])
    del out
    return [first] + [make() for _ in range(n - 1)]


def run_case(torch, case, repeats):
    kind, rest = case.split(":", 1)
    if kind == "gemm":
        m, n, k = (int(v) for v in rest.split("x"))
        sets = operand_sets(torch, lambda: (torch.randn(m, k, dtype=torch.bfloat16, device="cuda"),
                                            torch.randn(n, k, dtype=torch.bfloat16, device="cuda")), 2 * m * n)
        fns = [lambda a=a, w=w: torch.matmul(a, w.t()) for a, w in sets]
        return timed(torch, fns, repeats), 2.0 * m * n * k, {}
    if kind == "gemm_fp8":
        m, n, k = (int(v) for v in rest.split("x"))
        sets = operand_sets(torch, lambda: (torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn),
                                            torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)), 2 * m * n)
        scale_a, scale_b = torch.tensor(0.5, device="cuda"), torch.tensor(0.75, device="cuda")

        def scaled_mm(fast):
            return [lambda a=a, w=w: torch._scaled_mm(a, w.t(), scale_a=scale_a, scale_b=scale_b,
                                                      out_dtype=torch.bfloat16, use_fast_accum=fast)
                    for a, w in sets]
        promoted = timed(torch, scaled_mm(False), repeats)
        return timed(torch, scaled_mm(True), repeats), 2.0 * m * n * k, {"ms_promoted": promoted}
    if kind == "conv2d":
        shape, filt, stride, pad = rest.split(":")
        n, h, w, c, k = (int(v) for v in shape.split("x"))
        filt, stride, pad = int(filt), int(stride), int(pad)
        torch.backends.cudnn.benchmark = True
        p, q = (h + 2 * pad - filt) // stride + 1, (w + 2 * pad - filt) // stride + 1
        cl = torch.channels_last
        sets = operand_sets(torch, lambda: (
            torch.randn(n, c, h, w, dtype=torch.bfloat16, device="cuda").to(memory_format=cl),
            torch.randn(k, c, filt, filt, dtype=torch.bfloat16, device="cuda").to(memory_format=cl)), 2 * n * p * q * k)
        conv = torch.nn.functional.conv2d
        fns = [lambda x=x, wt=wt: conv(x, wt, stride=stride, padding=pad) for x, wt in sets]
        return timed(torch, fns, repeats), 2.0 * n * p * q * k * filt * filt * c, {}
    raise ValueError(f"unknown case '{case}'")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("gemm_torch.py: error: PyTorch is not installed", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("gemm_torch.py: error: no CUDA device for PyTorch", file=sys.stderr)
        return 1
    for case in args.cases:
        ms, flops, extra = run_case(torch, case, args.repeats)
        print(json.dumps({"case": case, "ms": ms, "tflops": flops / ms / 1e9, "ms_stream": STREAM["ms"],
                          "ms_rotate": STREAM["ms_rotate"], **extra}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
