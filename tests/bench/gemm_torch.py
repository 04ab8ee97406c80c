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
its kernels (no launch gap in it).

usage: gemm_torch.py [--repeats N] CASE...
       CASE: gemm:MxNxK, gemm_fp8:MxNxK or conv2d:NxHxWxCxK:FILTER:STRIDE:PAD
"""
import argparse
import json
import statistics
import sys


STREAM = {}   # the last timed call's back-to-back mean, ms


def timed(torch, fn, repeats):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    end.synchronize()
    STREAM["ms"] = start.elapsed_time(end) / repeats
    return statistics.median(times)


def run_case(torch, case, repeats):
    kind, rest = case.split(":", 1)
    if kind == "gemm":
        m, n, k = (int(v) for v in rest.split("x"))
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(n, k, dtype=torch.bfloat16, device="cuda")
        return timed(torch, lambda: torch.matmul(a, w.t()), repeats), 2.0 * m * n * k, {}
    if kind == "gemm_fp8":
        m, n, k = (int(v) for v in rest.split("x"))
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        scale_a, scale_b = torch.tensor(0.5, device="cuda"), torch.tensor(0.75, device="cuda")

        def scaled_mm(fast):
            return lambda: torch._scaled_mm(a, w.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16,
                                            use_fast_accum=fast)
        promoted = timed(torch, scaled_mm(False), repeats)
        return timed(torch, scaled_mm(True), repeats), 2.0 * m * n * k, {"ms_promoted": promoted}
    if kind == "conv2d":
        shape, filt, stride, pad = rest.split(":")
        n, h, w, c, k = (int(v) for v in shape.split("x"))
        filt, stride, pad = int(filt), int(stride), int(pad)
        torch.backends.cudnn.benchmark = True
        x = torch.randn(n, c, h, w, dtype=torch.bfloat16, device="cuda").to(memory_format=torch.channels_last)
        wt = torch.randn(k, c, filt, filt, dtype=torch.bfloat16, device="cuda").to(memory_format=torch.channels_last)
        p, q = (h + 2 * pad - filt) // stride + 1, (w + 2 * pad - filt) // stride + 1
        conv = torch.nn.functional.conv2d
        return (timed(torch, lambda: conv(x, wt, stride=stride, padding=pad), repeats),
                2.0 * n * p * q * k * filt * filt * c, {})
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
        print(json.dumps({"case": case, "ms": ms, "tflops": flops / ms / 1e9, "ms_stream": STREAM["ms"], **extra}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
